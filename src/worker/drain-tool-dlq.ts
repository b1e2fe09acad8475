import type { DeadLetterQueue } from '../ground/ports/stores.ts';
import type { ResumableEntry } from '../ground/dead-letter-entries.ts';

import { resolveRuntime } from './resolve-runtime.ts';
import { optionProblems, throwIfProblems } from './check-options.ts';
import { replayDeadLetter } from './replay-dead-letter.ts';
import type { ReplayOptions, ReplayResult } from './replay-tool-failure.ts';
import type { ReplayStatus } from './replay-status.ts';

/** Options of {@link drainToolDlq}. */
export interface DrainOptions extends ReplayOptions {
  /** The tool DLQ to drain. @defaultValue `stores.toolDlq` */
  dlq?: DeadLetterQueue<ResumableEntry>;
  /** Replays running at once: an integer from 1 to 10000, as a worker's `concurrency` (each replay runs a run as a worker's handler does). @defaultValue 4 */
  concurrency?: number;
  /** Drain at most this many entries (oldest first): an integer ≥ 0. @defaultValue all */
  limit?: number;
  /** Also remove entries whose conversation expired (they stay, counted, by default). @defaultValue false */
  removeExpired?: boolean;
  /** Called after each entry, for a progress bar. */
  onProgress?: (progress: { done: number; total: number; id: string; status: ReplayStatus | 'error' }) => void;
}

/** Counts per outcome of a drain. */
export interface DrainReport {
  total: number;
  /** Entries removed from the DLQ (their run completed). */
  removed: number;
  outcomes: Partial<Record<ReplayStatus | 'error', number>>;
  /**
   * Per entry: its id and how its replay ended (errors carry the message; a `completed` replay
   * whose calls run again failed again, the model going on without them, carries `failedAgain`).
   */
  entries: Array<{
    id: string;
    runId: string | null;
    status: ReplayStatus | 'error';
    error?: string;
    failedAgain?: ReplayResult['failedAgain'];
    /** For an entry of a host run: the host (its replay was routed to `hosts[host]`, or it stayed). */
    host?: string;
    /** Why the entry was not replayed or did not complete, when the replay said (a host not registered…). */
    message?: string;
  }>;
}

/**
 * Replays tool-DLQ entries (tool, model and poison-run failures alike) with bounded concurrency
 * and reports counts per outcome. An entry whose run completes (or had completed) is removed; one
 * that fails again stays (replaced by its new entry when it failed at another step or in another
 * way, keeping `firstSeenAt`, pushed with `pushOnce` under the worker's key for it); an expired one
 * stays unless `removeExpired`. An entry whose run is claimed by another drain, replay or worker
 * is counted `in_progress` and left alone: two drains at once run each entry once. One bad entry
 * never stops the drain: a throw is counted as `error` and the drain goes on. An entry of an SDK
 * host's or a durable engine's run is replayed with `hosts[host]`, or left in place (`invalid_entry`
 * with its `host` and a `message`) when that host is not registered.
 *
 * @throws ToolrunError `INVALID_OPTIONS` for `options` that is not an object, a `concurrency` that is not an integer from 1 to
 * 10000 or a `limit` that is not an integer ≥ 0 (checked before the DLQ is read);
 * `TypeError` without `dlq` or `stores`.
 */
export async function drainToolDlq(options: DrainOptions): Promise<DrainReport> {
  throwIfProblems(optionProblems(options, ['concurrency', 'limit']), 'INVALID_OPTIONS', 'drainToolDlq');
  const dlq = options.dlq ?? options.stores?.toolDlq;
  if (!dlq) throw new TypeError('drainToolDlq needs `dlq` or `stores`');
  const records = await dlq.list({ ...(options.limit !== undefined ? { limit: options.limit } : {}) });
  // one runtime and one breaker for the whole drain (schemas compiled once), unless the caller gave them
  const resolved = options.stores ? resolveRuntime(options, options.stores) : undefined;
  const replayOptions: ReplayOptions = resolved
    ? { ...options, runtime: resolved.runtime, ...(resolved.breaker ? { modelBreaker: resolved.breaker } : {}) }
    : options;
  const report: DrainReport = { total: records.length, removed: 0, outcomes: {}, entries: [] };
  const concurrency = options.concurrency ?? 4;
  let next = 0;
  let done = 0;
  const workerLoop = async () => {
    while (next < records.length) {
      const record = records[next++]!;
      let status: ReplayStatus | 'error';
      let runId: string | null = null;
      let error: string | undefined;
      let failedAgain: ReplayResult['failedAgain'];
      let detail: { host?: string; message?: string } = {};
      try {
        const result = await replayDeadLetter(record, {
          ...replayOptions,
          dlq,
          removeExpired: options.removeExpired === true,
        });
        status = result.status;
        runId = result.runId;
        failedAgain = result.failedAgain;
        detail = { ...(result.host !== undefined ? { host: result.host } : {}), ...(result.message !== undefined ? { message: result.message } : {}) };
        if (result.removed && result.replacedBy === undefined) report.removed += 1;
      } catch (thrown) {
        status = 'error';
        error = thrown instanceof Error ? thrown.message : String(thrown);
      }
      report.outcomes[status] = (report.outcomes[status] ?? 0) + 1;
      report.entries.push({
        id: record.id,
        runId,
        status,
        ...(error !== undefined ? { error } : {}),
        ...(failedAgain !== undefined ? { failedAgain } : {}),
        ...detail,
      });
      done += 1;
      options.onProgress?.({ done, total: records.length, id: record.id, status });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, records.length)) }, workerLoop));
  return report;
}
