import type { ToolRuntime } from '../core/create-tool-runtime.ts';
import type { ResumableEntry, ToolFailureEntry } from '../ground/dead-letter-entries.ts';
import { ledgerKey, type JsonValue } from '../ground/ports/run-journal.ts';
import type { DeadLetterQueue, DeadLetterRecord, Stores } from '../ground/ports/stores.ts';
import type { ToolSuccess } from '../ground/tool-result.ts';
import type { HostContinuation } from './host-continuation.ts';
import { hostEntryMessageId, hostOfEntry } from './host-entry.ts';
import type { ReplayStatus } from './replay-status.ts';
import { claimRun, newClaimHolder } from './run-claim.ts';

/** Options of {@link replayHostRun}. */
export interface HostRunReplayOptions {
  /** The stores the run dead-lettered into: its journal (the claim, the conversation, the replayed call's outcome, the completion) and the DLQ. */
  stores: Pick<Stores, 'toolDlq' | 'journal'>;
  /** The runtime whose tool failed (its fixed configuration). */
  runtime: ToolRuntime;
  /** The DLQ the record is in. @defaultValue `stores.toolDlq` */
  dlq?: Pick<DeadLetterQueue<ResumableEntry>, 'remove'>;
  /** How long the replay's claim on the run (`run:<runId>`) lasts without renewal, in ms; renewed every third of it. @defaultValue 300_000 */
  claimLeaseMs?: number;
  /** Also remove the entry when its conversation has expired. @defaultValue false */
  removeExpired?: boolean;
  signal?: AbortSignal;
}

/** How one host replay ended, in toolrun's replay statuses. */
export interface HostRunReplayResult {
  status: ReplayStatus;
  runId: string | null;
  /** The host that dead-lettered the entry (`null` for an entry that is not a host's). */
  host: string | null;
  /** Model calls the continued loop made (the remaining steps only). */
  modelCalls: number;
  text: string | null;
  /** The record's id. */
  id: string;
  /** The entry left the DLQ (the run completed, had completed, or expired with `removeExpired`). */
  removed: boolean;
  /** For `in_progress`: who holds the run's claim. */
  holder?: string;
  /** A word on why the replay did not complete (for the CLI, the dashboard and logs). */
  message?: string;
}

/**
 * The ledger key of the failed call's outcome in a replay (`<host>:<runId>:<stepIndex>:<toolCallId>`):
 * the journal's key of the call recorded under the host run id `<host>:<runId>`, by its tool-call id.
 */
export function hostCallLedgerKey(host: string, entry: Pick<ToolFailureEntry, 'runId' | 'stepIndex'>, toolCallId: string): string {
  return ledgerKey(hostEntryMessageId(host, entry.runId), entry.stepIndex, toolCallId);
}

/**
 * Replays a tool-DLQ entry a host run wrote (`originalMessageId` `<host>:<runId>`) in the host's
 * own loop, the same way for every host:
 * 1. claims the run (`run:<runId>` through `stores.journal`, renewed every third of `claimLeaseMs`):
 *    a second replay at once gets `in_progress` and does nothing; a replayer killed mid-way frees
 *    it when the lease expires;
 * 2. a run a replay already completed (its journal's completion mark) → `already_completed` (the entry is removed);
 * 3. reads the conversation (`journal.conversation`, or `continuation.readConversation`): gone → `expired`;
 * 4. runs the failed call again with its recorded arguments, its outcome recorded in the journal
 *    under the host run id `<host>:<runId>` by step and call id: a write an earlier replay applied
 *    is read back, not applied again. Still failing → `tool_failed`, the model not called, the entry stays;
 * 5. appends `continuation.resultMessages` and calls `continuation.continueRun`: the host's loop
 *    runs the remaining steps;
 * 6. marks the run completed in the journal, then stores the whole conversation (for a stored
 *    one; until then it ends with the failed call, so a replayer killed in between leaves it
 *    replayable) and removes the entry (`completed`).
 *
 * @throws whatever the stores or the continuation throw (the claim is released first; the entry stays).
 */
export async function replayHostRun(
  record: DeadLetterRecord<ResumableEntry>,
  continuation: HostContinuation,
  options: HostRunReplayOptions,
): Promise<HostRunReplayResult> {
  const { stores, runtime } = options;
  const dlq = options.dlq ?? stores.toolDlq;
  const entry = record.entry;
  const host = hostOfEntry(entry) ?? null;
  const base = { id: record.id, host, modelCalls: 0, text: null, removed: false };
  if (host === null || entry?.kind !== 'tool' || typeof entry.conversationRef !== 'string' || !Number.isInteger(entry.stepIndex))
    return { ...base, status: 'invalid_entry', runId: null, message: 'not a tool failure dead-lettered by a host run' };
  const { runId } = entry;
  const { journal } = stores;
  const hostRunId = hostEntryMessageId(host, runId);
  const claimed = await claimRun(stores.journal, runId, {
    holder: newClaimHolder(`${host}-replay`),
    leaseMs: options.claimLeaseMs ?? 300_000,
    clock: runtime.clock,
  });
  if (!claimed.ok) return { ...base, status: 'in_progress', runId, ...(claimed.holder !== undefined ? { holder: claimed.holder } : {}) };
  try {
    const completed = await journal.completion(hostRunId);
    if (completed !== undefined) return { ...base, status: 'already_completed', runId, text: completed.text, removed: await dlq.remove(record.id) };
    const stored = continuation.readConversation ? await continuation.readConversation(entry) : await journal.conversation(entry.conversationRef);
    if (stored === undefined) {
      const removed = options.removeExpired === true ? await dlq.remove(record.id) : false;
      return { ...base, status: 'expired', runId, removed, message: `the conversation ${entry.conversationRef} is gone (its time to live passed)` };
    }
    const messages = [...stored];
    const call = continuation.failedCall(messages, entry);
    if (call === undefined) return { ...base, status: 'invalid_entry', runId, message: 'the stored conversation does not end with the failed call' };

    const key = hostCallLedgerKey(host, entry, call.toolCallId);
    let result = (await journal.recorded(hostRunId, entry.stepIndex, call.toolCallId)) as ToolSuccess | undefined;
    if (result === undefined) {
      const ran = await runtime.run({
        name: call.toolName,
        args: call.args,
        callId: call.toolCallId,
        runId,
        idempotencyKey: key,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (ran.status !== 'success')
        return { ...base, status: 'tool_failed', runId, message: `${call.toolName} failed again: ${ran.error.code}: ${ran.error.message}` };
      // the first outcome recorded stays: a replayer whose claim lapsed meanwhile may have recorded one
      const outcome = ran as unknown as JsonValue;
      result = (await journal.record(hostRunId, { stepIndex: entry.stepIndex, callIndex: call.toolCallId, outcome })) as unknown as ToolSuccess;
    }
    const resumed = [...messages, ...continuation.resultMessages(call, result)];
    // the stored conversation keeps ending with the failed call until the run is recorded completed:
    // a replayer killed in between leaves it as the next replay needs it
    const continued = await continuation.continueRun({ runId, entry, messages: resumed, runtime, ...(options.signal ? { signal: options.signal } : {}) });
    await journal.markCompleted(hostRunId, continued.text ?? null);
    if (continuation.readConversation === undefined) await journal.putConversation(entry.conversationRef, [...resumed, ...(continued.newMessages ?? [])]);
    const removed = await dlq.remove(record.id);
    return { ...base, status: 'completed', runId, modelCalls: continued.modelCalls, text: continued.text ?? null, removed };
  } finally {
    await claimed.claim.release();
  }
}
