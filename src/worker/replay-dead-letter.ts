import type { DeadLetterQueue, DeadLetterRecord } from '../ground/ports/stores.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import type { ResumableEntry } from '../ground/dead-letter-entries.ts';
import { resumableDeadLetterKey } from './resumable-dead-letters.ts';
import { replayToolFailure, type ReplayOptions, type ReplayResult } from './replay-tool-failure.ts';
import { hostOfEntry } from './host-entry.ts';
import { routeHostReplay } from './route-host-replay.ts';

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
 * routed to `hosts[host]` (see `routeHostReplay`), settled by the same rules.
 *
 * `replayToolFailure(entry)` is the primitive under it: it resumes the run and never touches a DLQ.
 *
 * @throws ToolrunError `INVALID_OPTIONS` without `dlq` or `stores`; whatever the stores throw.
 */
export async function replayDeadLetter(record: DeadLetterRecord<ResumableEntry>, options: ReplayDeadLetterOptions): Promise<ReplayDeadLetterResult> {
  const dlq = options.dlq ?? options.stores?.toolDlq;
  if (dlq === undefined) throw new ToolrunError('INVALID_OPTIONS', 'replayDeadLetter needs `stores` or `dlq` (the tool DLQ the record is in)');
  const { dlq: _dlq, removeExpired, hosts, ...replayOptions } = options;
  const old = record.entry;
  const host = hostOfEntry(old);
  if (host !== undefined) {
    const { host: _host, ...routed } = await routeHostReplay(record, host, { ...replayOptions, hosts, removeExpired }, dlq);
    return { ...routed, host };
  }
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
