/**
 * Replays started from the dashboard: one entry, a bulk replay by filter, a rate-limited drain.
 * Every one goes through `drainToolDlq` — the CLI's drain, built on the claimed, idempotent
 * `replayToolFailure` — over a view of the tool DLQ that lists only the chosen entries, so the page,
 * `toolrun dlq replay|drain` and the workers can run at once without repeating a side effect, and an
 * entry is removed, kept or replaced exactly as the CLI's drain does it.
 */
import type { Clock } from '../ground/ports/clock.ts';
import type { DeadLetterQueue, DeadLetterRecord } from '../ground/ports/stores.ts';
import type { ResumableEntry } from '../ground/dead-letter-entries.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { drainToolDlq, type DrainReport } from '../worker/drain-tool-dlq.ts';
import type { ReplayOptions } from '../worker/replay-tool-failure.ts';
import type { ReplayStatus } from '../worker/replay-status.ts';
import { resolveRuntime } from '../worker/resolve-runtime.ts';

/** A tool DLQ whose `list` returns only `records` (the rest of its methods are the queue's own). */
export function dlqView<T>(dlq: DeadLetterQueue<T>, records: readonly DeadLetterRecord<T>[]): DeadLetterQueue<T> {
  return {
    push: (entry) => dlq.push(entry),
    pushOnce: (key, entry) => dlq.pushOnce(key, entry),
    get: (id) => dlq.get(id),
    list: async (options) => {
      const offset = Math.max(0, options?.offset ?? 0);
      return records.slice(offset, options?.limit !== undefined ? offset + options.limit : undefined);
    },
    remove: (id) => dlq.remove(id),
    size: () => dlq.size(),
    bytes: () => dlq.bytes(),
    oldest: () => dlq.oldest(),
    purge: () => dlq.purge(),
  };
}

/** The outcome of one entry of a job. */
export interface JobEntryOutcome {
  id: string;
  runId: string | null;
  status: ReplayStatus | 'error';
  error?: string;
  /** Whether the entry is still in the tool DLQ after its replay (failed again, expired, in progress elsewhere). */
  stillQueued?: boolean;
}

/** A replay job's state, as `GET /api/jobs/:id` returns it. */
export interface ReplayJob {
  id: string;
  /** `replay` (one entry), `bulk` (entries matching a filter), `drain` (the whole queue). */
  type: 'replay' | 'bulk' | 'drain';
  state: 'running' | 'done' | 'cancelled' | 'failed';
  total: number;
  done: number;
  removed: number;
  outcomes: Partial<Record<ReplayStatus | 'error', number>>;
  entries: JobEntryOutcome[];
  /** Replays started per second at most (`null`: no limit). */
  ratePerSecond: number | null;
  concurrency: number;
  startedAt: string;
  finishedAt: string | null;
  error?: string;
}

/** Options of {@link runReplayJob}. */
export interface ReplayJobOptions {
  dlq: DeadLetterQueue<ResumableEntry>;
  replay: ReplayOptions;
  records: readonly DeadLetterRecord<ResumableEntry>[];
  /** Replays at once. @defaultValue 1 */
  concurrency?: number;
  /**
   * At most this many replays started per second, from {@link MIN_REPLAY_RATE_PER_SECOND} (one every
   * 10 s) to 10000. @defaultValue no limit
   */
  ratePerSecond?: number | null;
  removeExpired?: boolean;
  clock: Clock;
  /**
   * Sleeps `ms` (injected for tests); must settle (resolve or reject) once `signal` aborts.
   * @defaultValue a timer, cleared when `signal` aborts
   */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Called after each batch with the job as it stands. */
  onProgress?: (job: ReplayJob) => void;
  /** Checked between batches: `true` stops the job (`cancelled`). */
  cancelled?: () => boolean;
  /**
   * Cancels the job: a wait between batches ends at once, and no further batch starts (`cancelled`).
   * The replays of a batch already started finish first.
   */
  signal?: AbortSignal;
}

/** The lowest `ratePerSecond` a replay job takes: one replay every 10 s. */
export const MIN_REPLAY_RATE_PER_SECOND = 0.1;

const defaultSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

/**
 * Replays `records` with `drainToolDlq` in batches of `concurrency`, waiting between batches so
 * that no more than `ratePerSecond` replays start per second, and updates `job` after each batch.
 * Resolves when every record was replayed or the job was cancelled; never rejects for a replay
 * (a throw is counted `error`, as the drain does).
 *
 * @throws ToolrunError `INVALID_OPTIONS` for a concurrency outside 1–100 or a rate outside 0.1–10000.
 */
export async function runReplayJob(job: ReplayJob, options: ReplayJobOptions): Promise<ReplayJob> {
  const concurrency = options.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 100) {
    throw new ToolrunError('INVALID_OPTIONS', `concurrency must be an integer from 1 to 100, received ${String(concurrency)}`);
  }
  const rate = options.ratePerSecond ?? null;
  if (rate !== null && !(typeof rate === 'number' && Number.isFinite(rate) && rate >= MIN_REPLAY_RATE_PER_SECOND && rate <= 10_000)) {
    throw new ToolrunError('INVALID_OPTIONS', `ratePerSecond must be a number from 0.1 to 10000, received ${String(rate)}`);
  }
  const sleep = options.sleep ?? defaultSleep;
  const { clock } = options;
  const stores = options.replay.stores;
  if (!stores) throw new ToolrunError('INVALID_OPTIONS', 'a replay job needs the stores in its replay options');
  // one runtime and one model breaker for the whole job (schemas compiled once), as a drain does
  const resolved = resolveRuntime(options.replay, stores);
  const replay: ReplayOptions = { ...options.replay, runtime: resolved.runtime, ...(resolved.breaker ? { modelBreaker: resolved.breaker } : {}) };
  for (let start = 0; start < options.records.length; start += concurrency) {
    if (options.cancelled?.() || options.signal?.aborted) {
      job.state = 'cancelled';
      break;
    }
    const batch = options.records.slice(start, start + concurrency);
    const batchStartedMs = clock.now();
    const report: DrainReport = await drainToolDlq({
      ...replay,
      stores,
      dlq: dlqView(options.dlq, batch),
      concurrency,
      ...(options.removeExpired ? { removeExpired: true } : {}),
    });
    job.removed += report.removed;
    for (const outcome of report.entries) {
      job.outcomes[outcome.status] = (job.outcomes[outcome.status] ?? 0) + 1;
      const stillQueued = (await options.dlq.get(outcome.id)) !== undefined;
      job.entries.push({ ...outcome, stillQueued });
    }
    job.done += batch.length;
    options.onProgress?.(job);
    if (rate !== null && start + concurrency < options.records.length) {
      const spacingMs = (batch.length / rate) * 1000;
      const waitMs = spacingMs - (clock.now() - batchStartedMs);
      if (waitMs > 0) await sleep(waitMs, options.signal).catch(() => undefined);
    }
  }
  if (job.state === 'running') job.state = 'done';
  job.finishedAt = new Date(clock.now()).toISOString();
  return job;
}

/** The dry-run estimate of a bulk replay. */
export interface ReplayEstimate {
  entries: number;
  /** Entries by kind (`tool`, `model`, `run`). */
  byKind: Record<string, number>;
  /** Tokens the matching runs spent so far (what is at stake). */
  tokensSpent: { input: number; output: number };
  /**
   * Model calls and input tokens a replay of them needs at least: one model call per entry (after
   * the re-executed call, or the model call that failed), each about the run's mean input per call
   * so far (`tokensSpent.input / (stepIndex + 1)`). A lower bound: a run may need more steps.
   */
  estimatedModelCalls: number;
  estimatedInputTokens: number;
}

/** The estimate of replaying `records` (see {@link ReplayEstimate}). */
export function estimateReplay(records: readonly DeadLetterRecord<unknown>[]): ReplayEstimate {
  const byKind: Record<string, number> = {};
  const tokensSpent = { input: 0, output: 0 };
  let estimatedInputTokens = 0;
  for (const record of records) {
    const entry = (typeof record.entry === 'object' && record.entry !== null ? record.entry : {}) as {
      kind?: string;
      stepIndex?: number;
      tokensSpent?: { input?: number; output?: number };
    };
    const kind = typeof entry.kind === 'string' ? entry.kind : 'unknown';
    byKind[kind] = (byKind[kind] ?? 0) + 1;
    const input = Number(entry.tokensSpent?.input ?? 0) || 0;
    tokensSpent.input += input;
    tokensSpent.output += Number(entry.tokensSpent?.output ?? 0) || 0;
    const steps = Number.isInteger(entry.stepIndex) ? (entry.stepIndex as number) + 1 : 1;
    estimatedInputTokens += Math.round(input / Math.max(1, steps));
  }
  return { entries: records.length, byKind, tokensSpent, estimatedModelCalls: records.length, estimatedInputTokens };
}
