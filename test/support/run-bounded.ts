/**
 * Runs a function in a worker thread under a hard time bound: the thread is terminated on overrun,
 * so a test of something that could hang (a catastrophic regular expression, a tool that never
 * yields, an unbounded loop) fails in bounded time instead of freezing the suite.
 *
 * The function is named by module and export (worker threads cannot receive closures); its input
 * and its result must be structured-cloneable.
 *
 * The bound is either wall time (a number, for a computation that must end in a known time) or a
 * bound that follows progress (`{ idleMs, maxSteps }`, for scenarios whose speed depends on the
 * machine): the function reports steps of work (`reportProgress` in ./bounded-progress.ts); the run
 * ends as a hang when no step comes for `idleMs` after the module loaded, and as a loop when the
 * steps pass `maxSteps`. Loading the module (tsx compiles it in the thread) is bounded apart, by
 * `loadMs`.
 */
import { Worker } from 'node:worker_threads';

export type BoundedOutcome<T> =
  | { ok: true; value: T; elapsedMs: number; steps: number }
  | { ok: false; reason: 'timeout'; elapsedMs: number }
  | { ok: false; reason: 'runaway'; steps: number; elapsedMs: number }
  | { ok: false; reason: 'error'; message: string; elapsedMs: number };

const ENTRY = new URL('./bounded-entry.mjs', import.meta.url);

/** A bound that follows progress: no step for `idleMs` is a hang, more than `maxSteps` steps a loop. */
export interface ProgressBound {
  idleMs: number;
  maxSteps: number;
  /** The bound on loading the module, before the first step. @defaultValue 120_000 */
  loadMs?: number;
}

type WorkerMessage =
  | { type: 'progress'; steps: number }
  | { type: 'loaded' }
  | { type?: undefined; ok: boolean; value?: unknown; elapsedMs?: number; steps?: number; message?: string };

/**
 * @param moduleUrl a `file:` URL of the module (e.g. `new URL('./fixture.ts', import.meta.url).href`)
 * @param exportName the exported (possibly async) function to call with `input`
 * @param bound the hard bound: wall time in ms including the module's load, or a {@link ProgressBound}
 */
export function runBounded<T>(moduleUrl: string, exportName: string, input: unknown, bound: number | ProgressBound): Promise<BoundedOutcome<T>> {
  const startedAt = performance.now();
  return new Promise((resolve) => {
    const worker = new Worker(ENTRY, { workerData: { moduleUrl, exportName, input }, resourceLimits: { maxOldGenerationSizeMb: 512 } });
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const settle = (outcome: BoundedOutcome<T>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(outcome);
    };
    const arm = (ms: number) => {
      clearTimeout(timer);
      timer = setTimeout(() => settle({ ok: false, reason: 'timeout', elapsedMs: performance.now() - startedAt }), ms);
    };
    arm(typeof bound === 'number' ? bound : (bound.loadMs ?? 120_000));
    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'loaded' || message.type === 'progress') {
        if (typeof bound === 'number') return;
        if (message.type === 'progress' && message.steps > bound.maxSteps)
          settle({ ok: false, reason: 'runaway', steps: message.steps, elapsedMs: performance.now() - startedAt });
        else arm(bound.idleMs);
        return;
      }
      if (message.ok) settle({ ok: true, value: message.value as T, elapsedMs: message.elapsedMs ?? performance.now() - startedAt, steps: message.steps ?? 0 });
      else settle({ ok: false, reason: 'error', message: message.message ?? 'unknown error', elapsedMs: performance.now() - startedAt });
    });
    worker.once('error', (error) => settle({ ok: false, reason: 'error', message: error.message, elapsedMs: performance.now() - startedAt }));
    worker.once('exit', (code) => settle({ ok: false, reason: 'error', message: `worker exited with code ${code}`, elapsedMs: performance.now() - startedAt }));
  });
}
