import type { Clock } from '../ground/ports/clock.ts';
import type { Outcome } from '../ground/tool-result.ts';

/**
 * How long to wait before the next attempt: `delayMs` on the clock, `'at-once'` (no wait: an attempt
 * that does not count, such as the one after a credential refresh), or `undefined` to stop retrying.
 */
export type RetryWait = number | 'at-once' | undefined;

/** The attempts a {@link executeWithRetry} loop runs, and what it does after each failed one. */
export interface RetryLoop<T, F> {
  /** Runs attempt `attempt` (1-based): its outcome, or `undefined` when no time is left to start it. */
  attempt(attempt: number): Promise<Outcome<T, F> | undefined>;
  /** After failed attempt `attempt`: how long to wait before the next one, or `undefined` to stop. */
  retryAfter(failure: F, attempt: number): RetryWait | Promise<RetryWait>;
}

/**
 * How a retry loop ended: the first success, or the last failure (`undefined` when not even the
 * first attempt had time to start); `cancelled` when `signal` aborted a wait between attempts.
 */
export type RetryLoopEnd<T, F> = { ok: true; value: T } | { ok: false; failure: F | undefined; cancelled: boolean };

/** Options of {@link executeWithRetry}. */
export interface ExecuteWithRetryOptions<F> {
  /** Where the waits between attempts are slept (a fake clock in tests). */
  clock: Clock;
  /** Aborts a wait between attempts: the loop then ends with `cancelled: true`. */
  signal?: AbortSignal | undefined;
  /** The failure of attempt 1 when the caller ran it already: the loop goes on from its retry decision. */
  firstFailure?: F | undefined;
}

/**
 * Runs `loop.attempt(1)`, `loop.attempt(2)`… until one succeeds, `loop.retryAfter` says stop, an
 * attempt finds no time left, or `signal` aborts a wait. Never throws of its own (what `loop`
 * throws rejects the promise). The shape of cockatiel's `RetryPolicy.execute`, with the decision
 * and the attempts as the caller's and the waits on the injected clock.
 */
export async function executeWithRetry<T, F>(loop: RetryLoop<T, F>, options: ExecuteWithRetryOptions<F>): Promise<RetryLoopEnd<T, F>> {
  let last: F | undefined;
  for (let attempt = 1; ; attempt++) {
    let failure: F;
    if (attempt === 1 && options.firstFailure !== undefined) failure = options.firstFailure;
    else {
      const outcome = await loop.attempt(attempt);
      if (outcome === undefined) return { ok: false, failure: last, cancelled: false };
      if (outcome.ok) return outcome;
      failure = outcome.failure;
    }
    last = failure;
    const wait = await loop.retryAfter(failure, attempt);
    if (wait === undefined) return { ok: false, failure, cancelled: false };
    if (wait === 'at-once') continue;
    try {
      await options.clock.sleep(wait, options.signal);
    } catch {
      return { ok: false, failure, cancelled: true };
    }
  }
}
