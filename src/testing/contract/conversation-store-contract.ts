import { describe, expect, it } from 'vitest';
import type { RunCheckpoint, StepCommit, Stores } from '../../ground/ports/stores.ts';
import { useStoresHarness, type MakeStores } from './stores-contract-harness.ts';

const SEVEN_DAYS_MS = 7 * 24 * 60 * 60 * 1000;

function stepCheckpoint(stepIndex: number, conversationRef = 'conv_a'): RunCheckpoint {
  return {
    runId: 'run_a',
    messageId: 'm_a',
    status: 'running',
    stepIndex,
    conversationRef,
    tokensSpent: { input: 10 * stepIndex, output: stepIndex },
    toolAttempts: { lookup: stepIndex },
    data: { pendingStep: false },
    updatedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, stepIndex)).toISOString(),
  };
}

/** `commitStep` of the bundle, or `undefined` when the backend has none (then its cases have nothing to check). */
function commitStepOf(stores: Stores): ((step: StepCommit) => Promise<boolean>) | undefined {
  const { conversations } = stores;
  if (conversations.commitStep === undefined) return undefined;
  return (step) => conversations.commitStep!(step, stores);
}

/**
 * Contract of `ConversationStore`: round trips, replacement, isolation from callers, TTL; and, for a
 * store with the optional `commitStep`, one atomic step: appended messages, checkpoint and ledger
 * rows, replacement when the stored length differs, refusal of stores that are not its own.
 */
export function describeConversationStoreContract(makeStores: MakeStores): void {
  describe('ConversationStore', () => {
    const harness = useStoresHarness(makeStores);
    const sample = () => [
      { role: 'system', content: 'You are a helpful agent.' },
      { role: 'user', content: 'Réservez un vol — 東京 ✈️ "quoted"\nnext line' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', name: 'search', args: { q: 'x', n: 3, exact: true } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"status":"failed"}', numbers: [0, -1, 0.1, 1e21, 9007199254740991] },
    ];

    it('returns undefined for a conversation that was never stored', async () => {
      expect(await harness().stores.conversations.get('conv_missing')).toBeUndefined();
    });

    it('round-trips the messages exactly', async () => {
      const { conversations } = harness().stores;
      await conversations.put('conv_a', sample());
      expect(await conversations.get('conv_a')).toEqual(sample());
      await conversations.put('conv_empty', []);
      expect(await conversations.get('conv_empty')).toEqual([]);
    });

    it('replaces the whole conversation on put and keeps conversations apart', async () => {
      const { conversations } = harness().stores;
      await conversations.put('conv_a', sample());
      await conversations.put('conv_b', [{ role: 'user', content: 'b' }]);
      await conversations.put('conv_a', [{ role: 'user', content: 'replaced' }]);
      expect(await conversations.get('conv_a')).toEqual([{ role: 'user', content: 'replaced' }]);
      expect(await conversations.get('conv_b')).toEqual([{ role: 'user', content: 'b' }]);
    });

    it('does not let callers mutate stored messages', async () => {
      const { conversations } = harness().stores;
      const messages: { role: string; content: string }[] = [{ role: 'user', content: 'original' }];
      await conversations.put('conv_a', messages);
      messages[0]!.content = 'changed after put';
      messages.push({ role: 'user', content: 'pushed after put' });
      const read = (await conversations.get('conv_a')) as { content: string }[];
      read[0]!.content = 'changed after get';
      expect(await conversations.get('conv_a')).toEqual([{ role: 'user', content: 'original' }]);
    });

    it('deletes a conversation, and deleting an unknown one is a no-op', async () => {
      const { conversations } = harness().stores;
      await conversations.put('conv_a', sample());
      await conversations.delete('conv_a');
      await conversations.delete('conv_never');
      expect(await conversations.get('conv_a')).toBeUndefined();
    });

    it('expires a conversation exactly when its TTL has passed', async () => {
      const { stores, clock, conversationTtlMs = SEVEN_DAYS_MS } = harness();
      await stores.conversations.put('conv_a', sample());
      await clock.advance(conversationTtlMs - 1);
      expect(await stores.conversations.get('conv_a')).toEqual(sample());
      await clock.advance(1);
      expect(await stores.conversations.get('conv_a')).toBeUndefined();
    });

    it('drops no conversation before its time while others expire', async () => {
      const { stores, clock, conversationTtlMs = SEVEN_DAYS_MS } = harness();
      await stores.conversations.put('conv_first', [{ n: 1 }]);
      await clock.advance(1);
      await stores.conversations.put('conv_second', [{ n: 2 }]);
      await clock.advance(conversationTtlMs - 1);
      await stores.conversations.put('conv_third', [{ n: 3 }]);
      expect(await stores.conversations.get('conv_first')).toBeUndefined();
      expect(await stores.conversations.get('conv_second')).toEqual([{ n: 2 }]);
      expect(await stores.conversations.get('conv_third')).toEqual([{ n: 3 }]);
    });

    it('commitStep: commits the messages, the checkpoint and the ledger rows of a step, appending after storedCount', async () => {
      const { stores } = harness();
      const commit = commitStepOf(stores);
      if (commit === undefined) return; // the port's fallback (one store at a time) is covered by the other suites
      const messages: unknown[] = sample().slice(0, 2);
      expect(await commit({ conversationRef: 'conv_a', messages, storedCount: 0, checkpoint: stepCheckpoint(0), ledger: [] })).toBe(true);
      expect(await stores.conversations.get('conv_a')).toEqual(sample().slice(0, 2));
      expect(await stores.runs.get('run_a')).toEqual(stepCheckpoint(0));
      messages.push(...sample().slice(2));
      const outcome = { status: 'ok', data: { n: [1, 2.5, null, '東京'] } };
      const step = { conversationRef: 'conv_a', messages, storedCount: 2, checkpoint: stepCheckpoint(1), ledger: [{ key: 'run_a:1:0', value: outcome }] };
      expect(await commit(step)).toBe(true);
      messages.push({ role: 'user', content: 'changed after the commit' });
      outcome.status = 'changed after the commit';
      expect(await stores.conversations.get('conv_a')).toEqual(sample());
      expect(await stores.runs.get('run_a')).toEqual(stepCheckpoint(1));
      expect(await stores.ledger.get('run_a:1:0')).toEqual({ status: 'ok', data: { n: [1, 2.5, null, '東京'] } });
    });

    it('commitStep: keeps the first ledger value, replaces a conversation whose stored length is not storedCount, restarts the TTL', async () => {
      const { stores, clock, conversationTtlMs = SEVEN_DAYS_MS } = harness();
      const commit = commitStepOf(stores);
      if (commit === undefined) return;
      await stores.ledger.putIfAbsent('run_a:0:0', 'first');
      await stores.conversations.put('conv_a', [{ n: 1 }, { n: 2 }, { n: 3 }]);
      // storedCount 2 while 3 are stored: the whole array replaces it (nothing is appended to the wrong place)
      const ledger = [{ key: 'run_a:0:0', value: 'second' }];
      expect(await commit({ conversationRef: 'conv_a', messages: [{ n: 1 }, { n: 9 }], storedCount: 2, checkpoint: stepCheckpoint(0), ledger })).toBe(true);
      expect(await stores.conversations.get('conv_a')).toEqual([{ n: 1 }, { n: 9 }]);
      expect(await stores.ledger.get('run_a:0:0')).toBe('first');
      // storedCount beyond the messages, or a conversation never stored: the whole array
      expect(await commit({ conversationRef: 'conv_a', messages: [{ n: 0 }], storedCount: 5, checkpoint: stepCheckpoint(1), ledger: [] })).toBe(true);
      expect(await stores.conversations.get('conv_a')).toEqual([{ n: 0 }]);
      expect(await commit({ conversationRef: 'conv_new', messages: [{ n: 7 }], storedCount: 1, checkpoint: stepCheckpoint(2, 'conv_new'), ledger: [] })).toBe(
        true,
      );
      expect(await stores.conversations.get('conv_new')).toEqual([{ n: 7 }]);
      // every commit restarts the TTL; an expired conversation is not appended to
      await clock.advance(conversationTtlMs - 1);
      await commit({ conversationRef: 'conv_a', messages: [{ n: 0 }, { n: 1 }], storedCount: 1, checkpoint: stepCheckpoint(3), ledger: [] });
      await clock.advance(conversationTtlMs - 1);
      expect(await stores.conversations.get('conv_a')).toEqual([{ n: 0 }, { n: 1 }]);
      expect(await stores.conversations.get('conv_new')).toBeUndefined();
      await clock.advance(1);
      expect(await stores.conversations.get('conv_a')).toBeUndefined();
      await commit({ conversationRef: 'conv_a', messages: [{ n: 0 }, { n: 1 }, { n: 2 }], storedCount: 2, checkpoint: stepCheckpoint(4), ledger: [] });
      expect(await stores.conversations.get('conv_a')).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
    });

    it('commitStep: writes nothing and returns false for stores that are not its own or whose write methods were replaced', async () => {
      const { stores } = harness();
      if (stores.conversations.commitStep === undefined) return;
      const step = { conversationRef: 'conv_a', messages: [{ n: 1 }], storedCount: 0, checkpoint: stepCheckpoint(0), ledger: [{ key: 'run_a:0:0', value: 1 }] };
      const foreignRuns = { get: stores.runs.get.bind(stores.runs), put: async () => undefined };
      expect(await stores.conversations.commitStep(step, { ...stores, runs: foreignRuns })).toBe(false);
      const put = stores.ledger.putIfAbsent;
      stores.ledger.putIfAbsent = async (key, value) => put.call(stores.ledger, key, value);
      expect(await stores.conversations.commitStep(step, stores)).toBe(false);
      stores.ledger.putIfAbsent = put;
      expect(await stores.conversations.get('conv_a')).toBeUndefined();
      expect(await stores.runs.get('run_a')).toBeUndefined();
      expect(await stores.ledger.get('run_a:0:0')).toBeUndefined();
      expect(await stores.conversations.commitStep(step, stores)).toBe(true);
      expect(await stores.ledger.get('run_a:0:0')).toBe(1);
    });

    it("commitStep with releaseClaim: releases the holder's claim with the step, or returns false writing nothing (another bundle's claims, a replaced release)", async () => {
      const { stores } = harness();
      if (stores.conversations.commitStep === undefined) return;
      const step = {
        conversationRef: 'conv_a',
        messages: [{ n: 1 }],
        storedCount: 0,
        checkpoint: { ...stepCheckpoint(0), status: 'completed' as const },
        ledger: [{ key: 'run_a:0:0', value: 1 }],
        releaseClaim: { key: 'run:run_a', holder: 'worker-1' },
      };
      expect(await stores.claims.acquire('run:run_a', 'worker-1', 60_000)).toBe(true);
      const foreignClaims = { ...stores.claims, release: async () => true };
      expect(await stores.conversations.commitStep(step, { ...stores, claims: foreignClaims })).toBe(false);
      expect(await stores.conversations.commitStep(step, { conversations: stores.conversations, runs: stores.runs, ledger: stores.ledger })).toBe(false);
      expect(await stores.conversations.get('conv_a')).toBeUndefined();
      expect(await stores.runs.get('run_a')).toBeUndefined();
      expect(await stores.ledger.get('run_a:0:0')).toBeUndefined();
      expect((await stores.claims.get('run:run_a'))?.holder).toBe('worker-1');
      if (!(await stores.conversations.commitStep(step, stores))) {
        // a store that cannot release a claim with a step refuses every such step, and writes nothing
        expect(await stores.conversations.get('conv_a')).toBeUndefined();
        expect((await stores.claims.get('run:run_a'))?.holder).toBe('worker-1');
        return;
      }
      expect(await stores.conversations.get('conv_a')).toEqual([{ n: 1 }]);
      expect((await stores.runs.get('run_a'))?.status).toBe('completed');
      expect(await stores.ledger.get('run_a:0:0')).toBe(1);
      expect(await stores.claims.get('run:run_a')).toBeUndefined();
      // another holder's claim is left as it is
      expect(await stores.claims.acquire('run:run_b', 'drain-a', 60_000)).toBe(true);
      const other = {
        ...step,
        conversationRef: 'conv_b',
        checkpoint: { ...step.checkpoint, runId: 'run_b', conversationRef: 'conv_b' },
        ledger: [],
        releaseClaim: { key: 'run:run_b', holder: 'worker-1' },
      };
      expect(await stores.conversations.commitStep(other, stores)).toBe(true);
      expect((await stores.claims.get('run:run_b'))?.holder).toBe('drain-a');
    });

    it('restarts the TTL on every put', async () => {
      const { stores, clock, conversationTtlMs = SEVEN_DAYS_MS } = harness();
      await stores.conversations.put('conv_a', [{ n: 1 }]);
      await stores.conversations.put('conv_old', [{ n: 0 }]);
      await clock.advance(conversationTtlMs - 10);
      await stores.conversations.put('conv_a', [{ n: 2 }]);
      await clock.advance(20);
      expect(await stores.conversations.get('conv_a')).toEqual([{ n: 2 }]);
      expect(await stores.conversations.get('conv_old')).toBeUndefined();
    });
  });
}
