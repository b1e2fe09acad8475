import type { ResumableEntry } from '../../worker/dead-letter-entries.ts';
import type { ReplayResult } from '../../worker/replay-tool-failure.ts';
import { parseRestatePointer } from './restate-pointer.ts';

/** Options of {@link replayRestateEntry}. */
export interface ReplayRestateEntryOptions {
  /** Restate's HTTP ingress, e.g. `http://127.0.0.1:8080`. */
  ingressUrl: string;
  /** Headers of the ingress request (an `Authorization` for Restate Cloud…). @defaultValue none */
  headers?: Record<string, string>;
  /** How long to wait for the replay's invocation to end, in ms. @defaultValue 600_000 */
  timeoutMs?: number;
  /** Stops waiting (the replay's invocation goes on in Restate). */
  signal?: AbortSignal;
}

/**
 * Replays a tool-DLQ entry of a run that ran in Restate (`originalMessageId`
 * `restate:<service>/<runId>`): sends the entry to the `replay` handler of the run's virtual
 * object through Restate's ingress and waits for its result. The replay is a new invocation on
 * the run's key (after any invocation of the run still in flight, which Restate runs one at a
 * time), resuming from the run's checkpoint in toolrun's stores: the failed call runs again, the
 * model is called only for the remaining steps, and each of those is a journaled step.
 *
 * Resolves with toolrun's replay result (`completed`, `already_completed` for a run replayed
 * already, `in_progress` when toolrun's own replay outside Restate holds the run, `tool_failed`
 * again, …); `invalid_entry` for an entry without a Restate pointer. It never touches the DLQ
 * (see `replayDeadLetter` for settling the entry).
 *
 * @throws Error when the ingress cannot be reached or answers with an error (the invocation
 * failed outside toolrun's control: its service is not registered, or was cancelled).
 */
export async function replayRestateEntry(entry: ResumableEntry, options: ReplayRestateEntryOptions): Promise<ReplayResult> {
  const pointer = parseRestatePointer(entry.originalMessageId);
  if (pointer === undefined || pointer.runId !== entry.runId) return { status: 'invalid_entry', runId: entry.runId ?? null, modelCalls: 0, text: null };
  const url = `${options.ingressUrl.replace(/\/+$/, '')}/${encodeURIComponent(pointer.service)}/${encodeURIComponent(pointer.runId)}/replay`;
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 600_000);
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
