import type { ResumableEntry } from '../../ground/dead-letter-entries.ts';
import type { HostReplayer } from '../../worker/host-continuation.ts';
import { hostOfEntry } from '../../worker/host-entry.ts';
import type { ReplayResult } from '../../worker/replay-tool-failure.ts';
import { resumableDeadLetterKey } from '../../worker/resumable-dead-letters.ts';
import { RESTATE_HOST } from './restate-pointer.ts';

/** Options of {@link replayRestateEntry} and {@link restateReplayer}. */
export interface ReplayRestateEntryOptions {
  /** Restate's HTTP ingress, e.g. `http://127.0.0.1:8080`. */
  ingressUrl: string;
  /** The agent's virtual object name (`createRestateAgent`'s `name`). @defaultValue `'toolrun'` */
  service?: string;
  /** Headers of the ingress request (an `Authorization` for Restate Cloud…). @defaultValue none */
  headers?: Record<string, string>;
  /**
   * How long to wait for the replay's invocation to end, in ms: a replay Restate pauses (a bug that
   * fails it outside any step) never ends by itself; `sweepRestatePaused` kills it, which ends the wait.
   * @defaultValue 300_000
   */
  timeoutMs?: number;
  /** Stops waiting (the replay's invocation goes on in Restate). */
  signal?: AbortSignal;
}

/**
 * Replays a tool-DLQ entry of a run that ran in Restate (`originalMessageId` `restate:<runId>`):
 * sends the entry to the `replay` handler of the run's virtual object through Restate's ingress
 * and waits for its result. The replay is a new invocation on the run's key (after any invocation
 * of the run still in flight: Restate runs them one at a time), resuming from the run's checkpoint
 * in toolrun's stores: the failed call runs again, the model is called only for the remaining
 * steps, and each of those is a journaled step.
 *
 * Resolves with toolrun's replay result (`completed`, `already_completed` for a run replayed
 * already, `in_progress` while toolrun's own replay outside Restate holds the run, `tool_failed`
 * again with its new entry, …); `invalid_entry` for an entry of another host. It never touches the
 * DLQ ({@link restateReplayer} does, through `replayDeadLetter`).
 *
 * @throws Error when the ingress cannot be reached or answers with an error (the invocation failed
 * outside toolrun's control: the service is not registered, or the invocation was cancelled).
 */
export async function replayRestateEntry(entry: ResumableEntry, options: ReplayRestateEntryOptions): Promise<ReplayResult> {
  if (hostOfEntry(entry) !== RESTATE_HOST)
    return { status: 'invalid_entry', runId: typeof entry?.runId === 'string' ? entry.runId : null, modelCalls: 0, text: null };
  const service = encodeURIComponent(options.service ?? 'toolrun');
  const url = `${options.ingressUrl.replace(/\/+$/, '')}/${service}/${encodeURIComponent(entry.runId)}/replay`;
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 300_000);
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: JSON.stringify({ entry }),
    signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`Restate replay of run ${entry.runId} failed: ${response.status} ${text.slice(0, 500)}`);
  return JSON.parse(text) as ReplayResult;
}

/**
 * The Restate host for toolrun's replay routing: register it as `hosts.restate` (of the config
 * `toolrun dlq replay|drain` and `toolrun dashboard` load, of `createToolrun`, or of
 * `replayDeadLetter` / `drainToolDlq`), and an entry with `originalMessageId` `restate:<runId>`
 * is replayed by {@link replayRestateEntry}. The entry leaves the DLQ when the run completes (or
 * had); when it fails again at another step (or at the model), the new entry — pushed by key, so a
 * repeat adds it once — replaces it; otherwise it stays. An ingress that cannot be reached throws
 * (the drain counts it as `error` and goes on; the entry stays).
 */
export function restateReplayer(options: Omit<ReplayRestateEntryOptions, 'signal'>): HostReplayer {
  return {
    async replay(record, context) {
      const result = await replayRestateEntry(record.entry, { ...options, ...(context.signal ? { signal: context.signal } : {}) });
      const outcome = {
        status: result.status,
        modelCalls: result.modelCalls,
        text: result.text,
        ...(result.holder !== undefined ? { holder: result.holder } : {}),
      };
      const moved = result.entry && (result.entry.stepIndex !== record.entry.stepIndex || result.entry.kind !== record.entry.kind);
      if (!moved || result.entry === undefined) return outcome;
      const pushed = await context.stores.toolDlq.pushOnce(resumableDeadLetterKey(result.entry), result.entry);
      // the old entry goes only once the new one is there: nothing is lost between the two writes
      if (pushed.id !== record.id && (await context.stores.toolDlq.get(pushed.id)) !== undefined) await context.stores.toolDlq.remove(record.id);
      return { ...outcome, message: `failed again at step ${result.entry.stepIndex}: entry ${pushed.id} replaces this one` };
    },
  };
}
