import type { DeadLetterQueue, DeadLetterRecord } from '../ground/ports/stores.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import type { ResumableEntry } from '../ground/dead-letter-entries.ts';
import { resumableDeadLetterKey } from './resumable-dead-letters.ts';
import { replayToolFailure, type ReplayOptions, type ReplayResult } from './replay-tool-failure.ts';
import { hostOfEntry } from './host-entry.ts';
import { isHostReplayer, registeredHost } from './host-continuation.ts';
import { replayHostRun } from './replay-host-run.ts';
import { resolveRuntime } from './resolve-runtime.ts';

/** Options of {@link replayDeadLetter}: those of `replayToolFailure`, plus what happens to the entry. */
export interface ReplayDeadLetterOptions extends ReplayOptions {
  /** The tool DLQ the record is in. @defaultValue `stores.toolDlq` */
  dlq?: DeadLetterQueue<ResumableEntry>;
  /** Also remove the entry when its conversation has expired (nothing is left to replay). @defaultValue false */
  removeExpired?: boolean;
}

/** What {@link replayDeadLetter} did: the replay's result, and where the entry is now. */
export interface ReplayDeadLetterResult extends ReplayResult {
  /** The record's id. */
  id: string;
  /** The entry left the DLQ (the run completed, had completed, or expired with `removeExpired`). */
  removed: boolean;
  /** The run failed again at another step (or the model failed this time): the id of the entry that replaced it. */
  replacedBy?: string;
}

/**
 * Replays one tool-DLQ record and settles the DLQ, the same way for the library,
 * `toolrun dlq replay`, `toolrun dlq drain`, `drainToolDlq` and the dashboard:
 * - `completed` or `already_completed`: the entry leaves the DLQ;
 * - `expired`: it leaves only with `removeExpired` (its conversation is gone);
 * - failed again at another step, or at the model: the new entry (pushed first, keyed like the
 *   worker's push, so a repeat after a crash adds it once) replaces the old one, so the DLQ shows
 *   where the run fails now;
 * - failed again at the same step, `in_progress` (another replay, drain or worker holds the run),
 *   `invalid_entry`: the entry stays.
 * Safe with two operators at once: the run's claim lets one replay run it, and `remove` of an
 * entry already removed is a no-op.
 *
 * An entry of an SDK host's or a durable engine's run (`originalMessageId` `<host>:<runId>`) is
 * routed to `hosts[host]`, settled by the same rules: a continuation (toolrun's replay skeleton,
 * `replayHostRun`) or a replayer of its own (a durable engine). A host not registered, or no
 * `stores`, leaves the entry where it is (`invalid_entry` with a `message` saying what to
 * register): it is never run by toolrun's own loop and never removed.
 *
 * `replayToolFailure(entry)` is the primitive under it: it resumes the run and never touches a DLQ.
 *
 * @throws ToolrunError `INVALID_OPTIONS` without `dlq` or `stores`; whatever the stores throw.
 */
export async function replayDeadLetter(record: DeadLetterRecord<ResumableEntry>, options: ReplayDeadLetterOptions): Promise<ReplayDeadLetterResult> {
  const dlq = options.dlq ?? options.stores?.toolDlq;
  if (dlq === undefined) throw new ToolrunError('INVALID_OPTIONS', 'replayDeadLetter needs `stores` or `dlq` (the tool DLQ the record is in)');
  const { dlq: _dlq, removeExpired, hosts: _hosts, ...replayOptions } = options;
  const old = record.entry;
  const host = hostOfEntry(old);
  if (host !== undefined) return replayHostEntry(record, host, options, dlq);
  const result = await replayToolFailure(old, replayOptions);
  const done = result.status === 'completed' || result.status === 'already_completed';
  if (done || (result.status === 'expired' && removeExpired === true)) {
    return { ...result, id: record.id, removed: await dlq.remove(record.id) };
  }
  if (result.entry && (result.entry.stepIndex !== old.stepIndex || result.entry.kind !== old.kind)) {
    const pushed = await dlq.pushOnce(resumableDeadLetterKey(result.entry), result.entry);
    // the old entry goes only once the new one is there: nothing is lost between the two writes
    if (pushed.id !== record.id && (await dlq.get(pushed.id)) !== undefined) {
      await dlq.remove(record.id);
      return { ...result, id: record.id, removed: true, replacedBy: pushed.id };
    }
  }
  return { ...result, id: record.id, removed: false };
}

/** Replays the record of a host run (`host`, from its `originalMessageId`) with what the app registered for that host in `options.hosts`. */
async function replayHostEntry(
  record: DeadLetterRecord<ResumableEntry>,
  host: string,
  options: ReplayDeadLetterOptions,
  dlq: Pick<DeadLetterQueue<ResumableEntry>, 'remove'>,
): Promise<ReplayDeadLetterResult> {
  const runId = typeof record.entry?.runId === 'string' ? record.entry.runId : null;
  const base = { id: record.id, host, runId, modelCalls: 0, text: null, removed: false };
  const registration = registeredHost(options.hosts, host);
  if (registration === undefined)
    return {
      ...base,
      status: 'invalid_entry',
      message: `an entry of a ${host} run: no continuation is registered for host "${host}" (\`hosts["${host}"]\` of the config or of createToolrun); left in the tool DLQ`,
    };
  if (options.stores === undefined)
    return {
      ...base,
      status: 'invalid_entry',
      message: `an entry of a ${host} run: its replay needs the stores it was dead-lettered into; left in the tool DLQ`,
    };
  const { stores } = options;
  const runtime = ('runtime' in registration && registration.runtime) || resolveRuntime(options, stores).runtime;
  const claimLeaseMs = options.claimLeaseMs ?? 300_000;
  const signal = options.signal ? { signal: options.signal } : {};
  if (isHostReplayer(registration)) {
    const outcome = await registration.replay(record, { stores, runtime, claimLeaseMs, ...signal });
    const done = outcome.status === 'completed' || outcome.status === 'already_completed';
    return {
      ...base,
      status: outcome.status,
      modelCalls: outcome.modelCalls ?? 0,
      text: outcome.text ?? null,
      removed: done ? await dlq.remove(record.id) : false,
      ...(outcome.holder !== undefined ? { holder: outcome.holder } : {}),
      ...(outcome.message !== undefined ? { message: outcome.message } : {}),
    };
  }
  const removeExpired = options.removeExpired !== undefined ? { removeExpired: options.removeExpired } : {};
  const replayed = await replayHostRun(record, registration, { stores, runtime, dlq, claimLeaseMs, ...removeExpired, ...signal });
  return { ...replayed, host };
}
