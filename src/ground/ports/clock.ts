/**
 * The source of time. Injected everywhere so retry and breaker tests tick a fake clock instead of
 * sleeping (`toolrun/testing` ships `createFakeClock`).
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /**
   * Resolves after `ms` milliseconds; rejects with the signal's reason as soon as `signal` aborts.
   * A non-positive `ms` resolves on the next tick.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Optional fast path for timeouts: calls `callback` after `ms` milliseconds unless the returned
   * function is called first. Clocks without it get timeouts through `sleep` with an AbortSignal.
   */
  setTimer?(ms: number, callback: () => void): () => void;
  /**
   * Optional: calls `callback` once the promise jobs and I/O callbacks of the current turn of the
   * event loop have run (`setImmediate` on the system clock). The SQLite stores commit the writes
   * asked for in one turn together through it; with a clock without it, each write commits at once.
   */
  atEndOfTurn?(callback: () => void): void;
}

/** A source of uniform random numbers in [0, 1), used for jitter. */
export type RandomSource = () => number;

/** `setImmediate` as the module found it when it loaded (a test's fake timers installed later do not replace it here). */
const loadedSetImmediate: ((callback: () => void) => unknown) | undefined = typeof setImmediate === 'function' ? setImmediate : undefined;

/** The real clock: `Date.now()`, `setTimeout`, and `setImmediate` for the end of a turn. */
export const systemClock: Clock = {
  now: () => Date.now(),
  ...(loadedSetImmediate !== undefined ? { atEndOfTurn: (callback: () => void) => void loadedSetImmediate(callback) } : {}),
  setTimer: (ms, callback) => {
    const timer = setTimeout(callback, Math.max(0, ms));
    return () => clearTimeout(timer);
  },
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const timer = setTimeout(
        () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        Math.max(0, ms),
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/** The real random source, `Math.random`. */
export const systemRandom: RandomSource = Math.random;
