import { describe, expect, it } from 'vitest';
import type { RunCheckpoint } from '../../ground/ports/run-journal.ts';
import { useStoresHarness, type MakeStores } from './stores-contract-harness.ts';

function checkpoint(runId: string, stepIndex: number): RunCheckpoint {
  return {
    runId,
    messageId: `message-${runId}`,
    status: 'running',
    stepIndex,
    conversationRef: `conv_${runId}`,
    tokensSpent: { input: 120 * stepIndex, output: 30 * stepIndex },
    toolAttempts: { search_web: stepIndex, book_flight: 1 },
    data: { finalText: null, nested: { list: [1, 'two', false], unicode: 'ü東' } },
    updatedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, stepIndex)).toISOString(),
  };
}

/** Contract of `RunStore`: round trips, replacement per run id, isolation from callers. */
export function describeRunStoreContract(makeStores: MakeStores): void {
  describe('RunStore', () => {
    const harness = useStoresHarness(makeStores);

    it('returns undefined for an unknown run', async () => {
      expect(await harness().stores.runs.get('run_missing')).toBeUndefined();
    });

    it('round-trips a checkpoint exactly, including the optional data', async () => {
      const { runs } = harness().stores;
      await runs.put(checkpoint('run_1', 2));
      expect(await runs.get('run_1')).toEqual(checkpoint('run_1', 2));
      const withoutData = checkpoint('run_2', 0);
      delete withoutData.data;
      await runs.put(withoutData);
      const read = await runs.get('run_2');
      expect(read).toEqual(withoutData);
      expect(read && 'data' in read).toBe(false);
    });

    it('keeps only the last checkpoint of a run, and runs apart', async () => {
      const { runs } = harness().stores;
      await runs.put(checkpoint('run_1', 1));
      await runs.put(checkpoint('run_2', 5));
      await runs.put({ ...checkpoint('run_1', 3), status: 'completed' });
      expect(await runs.get('run_1')).toEqual({ ...checkpoint('run_1', 3), status: 'completed' });
      expect(await runs.get('run_2')).toEqual(checkpoint('run_2', 5));
    });

    it('does not let callers mutate a stored checkpoint', async () => {
      const { runs } = harness().stores;
      const written = checkpoint('run_1', 1);
      await runs.put(written);
      written.toolAttempts.search_web = 99;
      written.tokensSpent.input = -1;
      const read = await runs.get('run_1');
      read!.toolAttempts.book_flight = 42;
      expect(await runs.get('run_1')).toEqual(checkpoint('run_1', 1));
    });
  });
}
