import type { RandomSource } from '../ground/ports/clock.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';

/**
 * How long to wait between attempts: exponential backoff with additive jitter.
 *
 * The wait before retry `n` (0-based) is `min(baseDelayMs * factor^n, maxDelayMs) + random() * jitterMs`.
 */
export interface BackoffOptions {
  /** The wait before the first retry (the 2nd attempt), before jitter, in ms. @defaultValue 500 */
  baseDelayMs: number;
  /** The multiplier between consecutive waits (≥ 1; 1 gives a constant wait). @defaultValue 2 */
  factor: number;
  /** The cap on the exponential part, in ms; jitter is added after the cap. @defaultValue 30_000 */
  maxDelayMs: number;
  /** The upper bound (exclusive) of the uniform random amount added to each wait, in ms. @defaultValue 100 */
  jitterMs: number;
}

/**
 * The default backoff of SPEC.md §1.4: waits of about 0.5 s, 1 s, 2 s…, each plus up to 0.1 s random,
 * never more than 30 s (+ jitter).
 */
export const DEFAULT_BACKOFF: BackoffOptions = Object.freeze({ baseDelayMs: 500, factor: 2, maxDelayMs: 30_000, jitterMs: 100 });

/**
 * The wait before a retry, in whole milliseconds.
 *
 * `retryIndex` 0 is the wait before the 2nd attempt: with {@link DEFAULT_BACKOFF} the waits are
 * 500, 1000, 2000… ms, each plus `floor(random() * jitterMs)` (the sum floored to whole ms), the exponential part capped at
 * `maxDelayMs`. Large indexes do not overflow: `factor^n` reaching `Infinity` is capped like any
 * other value. A `random` source that strays outside [0, 1) is clamped into it.
 *
 * Pure: the same inputs and random value give the same result.
 *
 * @throws ToolrunError `INVALID_OPTIONS` when `retryIndex` is not a non-negative integer.
 * @see SPEC.md §1.4
 */
export function computeBackoffMs(retryIndex: number, options: BackoffOptions, random: RandomSource): number {
  if (!Number.isInteger(retryIndex) || retryIndex < 0) {
    throw new ToolrunError('INVALID_OPTIONS', `retryIndex must be a non-negative integer, received ${String(retryIndex)}`);
  }
  const exponential = options.baseDelayMs * Math.pow(options.factor, retryIndex);
  const capped = Math.min(Number.isNaN(exponential) ? options.maxDelayMs : exponential, options.maxDelayMs);
  const unit = clampUnit(random());
  return Math.floor(capped) + Math.floor(unit * options.jitterMs);
}

/** Clamps a random value into [0, 1); NaN becomes 0. */
function clampUnit(value: number): number {
  if (!(value > 0)) return 0;
  return value < 1 ? value : 1 - Number.EPSILON;
}
