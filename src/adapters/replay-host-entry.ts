import type { ResumableEntry } from '../ground/dead-letter-entries.ts';
import type { DeadLetterRecord } from '../ground/ports/stores.ts';
import type { HostContinuation } from '../worker/host-continuation.ts';
import { hostOfEntry } from '../worker/host-entry.ts';
import { replayHostRun, type HostRunReplayOptions, type HostRunReplayResult } from '../worker/replay-host-run.ts';

/**
 * An adapter's replay of one tool-DLQ entry: `replayHostRun` with the adapter's continuation when
 * the entry was dead-lettered by `expected.host`; an entry of another host (or of none) is
 * `invalid_entry` with the message "not an entry of <runName>", nothing claimed or run.
 *
 * @throws whatever `replayHostRun` throws.
 */
export async function replayEntryOfHost(
  record: DeadLetterRecord<ResumableEntry>,
  expected: { host: string; runName: string },
  continuation: HostContinuation,
  options: Pick<HostRunReplayOptions, 'stores' | 'runtime' | 'claimLeaseMs'>,
): Promise<HostRunReplayResult> {
  const host = hostOfEntry(record?.entry) ?? null;
  if (host !== expected.host) {
    const message = `not an entry of ${expected.runName}`;
    return { status: 'invalid_entry', runId: null, host, modelCalls: 0, text: null, id: record?.id ?? '', removed: false, message };
  }
  const { stores, runtime, claimLeaseMs } = options;
  return replayHostRun(record, continuation, { stores, runtime, ...(claimLeaseMs !== undefined ? { claimLeaseMs } : {}) });
}
