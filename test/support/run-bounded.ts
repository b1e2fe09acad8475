/**
 * Runs a function in a worker thread under a hard time bound: the thread is terminated on overrun,
 * so a test of something that could hang (a catastrophic regular expression, a tool that never
 * yields, an unbounded loop) fails in bounded time instead of freezing the suite.
 *
 * The function is named by module and export (worker threads cannot receive closures); its input
 * and its result must be structured-cloneable.
 */
import { Worker } from 'node:worker_threads';

export type BoundedOutcome<T> =
  | { ok: true; value: T; elapsedMs: number }
  | { ok: false; reason: 'timeout'; elapsedMs: number }
  | { ok: false; reason: 'error'; message: string; elapsedMs: number };

const ENTRY = new URL('./bounded-entry.mjs', import.meta.url);

/**
 * @param moduleUrl a `file:` URL of the module (e.g. `new URL('./fixture.ts', import.meta.url).href`)
 * @param exportName the exported (possibly async) function to call with `input`
 * @param timeoutMs the hard bound, wall time, including the module's load
 */
export function runBounded<T>(moduleUrl: string, exportName: string, input: unknown, timeoutMs: number): Promise<BoundedOutcome<T>> {
  const startedAt = performance.now();
  return new Promise((resolve) => {
    const worker = new Worker(ENTRY, { workerData: { moduleUrl, exportName, input }, resourceLimits: { maxOldGenerationSizeMb: 512 } });
    let settled = false;
    const settle = (outcome: BoundedOutcome<T>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(outcome);
    };
    const timer = setTimeout(() => settle({ ok: false, reason: 'timeout', elapsedMs: performance.now() - startedAt }), timeoutMs);
    worker.once('message', (message: { ok: boolean; value?: T; elapsedMs?: number; message?: string }) => {
      if (message.ok) settle({ ok: true, value: message.value as T, elapsedMs: message.elapsedMs ?? performance.now() - startedAt });
      else settle({ ok: false, reason: 'error', message: message.message ?? 'unknown error', elapsedMs: performance.now() - startedAt });
    });
    worker.once('error', (error) => settle({ ok: false, reason: 'error', message: error.message, elapsedMs: performance.now() - startedAt }));
    worker.once('exit', (code) => settle({ ok: false, reason: 'error', message: `worker exited with code ${code}`, elapsedMs: performance.now() - startedAt }));
  });
}
