import type { RandomSource } from '../ground/ports/clock.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { computeBackoffMs, DEFAULT_BACKOFF, type BackoffOptions } from './backoff.ts';

/** How a tool's environment failures (timeouts, 5xx, 429, network errors) are retried inside the runtime, before the model sees a failure. */
export interface RetryPolicy {
  /** Attempts in all, the first included (1 = no retry). @defaultValue 3 */
  maxAttempts: number;
  /** The waits between attempts. @defaultValue base 500 ms, factor 2, at most 30_000 ms, jitter 100 ms */
  backoff: BackoffOptions;
  /** The minimum wait between attempts, in ms: applied when a server asks for 0 and to every backoff wait, so nothing ever retries in a hot loop. @defaultValue 100 */
  minDelayMs: number;
}

/** The default retry policy: 3 attempts, exponential backoff (base 500 ms, factor 2, at most 30 s, jitter 100 ms), at least 100 ms between attempts. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({ maxAttempts: 3, backoff: DEFAULT_BACKOFF, minDelayMs: 100 });

/** A partial retry policy as a caller writes it (runtime default, per-tool override…); `backoff` may be partial too. */
export type RetryPolicyOverride = Partial<Omit<RetryPolicy, 'backoff'>> & { backoff?: Partial<BackoffOptions> };

/**
 * Merges {@link DEFAULT_RETRY_POLICY} with `overrides`, later ones winning field by field (also
 * inside `backoff`); `undefined` overrides and `undefined` fields are skipped.
 *
 * @throws ToolrunError `INVALID_OPTIONS` when `maxAttempts` is not an integer ≥ 1, a delay
 * (`minDelayMs`, `baseDelayMs`, `maxDelayMs`, `jitterMs`) is negative or not finite, or `factor` is
 * below 1 or not finite.
 */
export function resolveRetryPolicy(...overrides: Array<RetryPolicyOverride | undefined>): RetryPolicy {
  let maxAttempts = DEFAULT_RETRY_POLICY.maxAttempts;
  let minDelayMs = DEFAULT_RETRY_POLICY.minDelayMs;
  const backoff: BackoffOptions = { ...DEFAULT_RETRY_POLICY.backoff };
  for (const override of overrides) {
    if (override === undefined) continue;
    if (override.maxAttempts !== undefined) maxAttempts = override.maxAttempts;
    if (override.minDelayMs !== undefined) minDelayMs = override.minDelayMs;
    if (override.backoff !== undefined) {
      for (const key of ['baseDelayMs', 'factor', 'maxDelayMs', 'jitterMs'] as const) {
        const value = override.backoff[key];
        if (value !== undefined) backoff[key] = value;
      }
    }
  }
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) invalid('maxAttempts', maxAttempts, 'an integer ≥ 1');
  requireDelay('minDelayMs', minDelayMs);
  requireDelay('backoff.baseDelayMs', backoff.baseDelayMs);
  requireDelay('backoff.maxDelayMs', backoff.maxDelayMs);
  requireDelay('backoff.jitterMs', backoff.jitterMs);
  if (typeof backoff.factor !== 'number' || !Number.isFinite(backoff.factor) || backoff.factor < 1) {
    invalid('backoff.factor', backoff.factor, 'a finite number ≥ 1');
  }
  return { maxAttempts, backoff, minDelayMs };
}

function requireDelay(name: string, value: number): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) invalid(name, value, 'a finite number of ms ≥ 0');
}

function invalid(name: string, value: unknown, expected: string): never {
  throw new ToolrunError('INVALID_OPTIONS', `retry policy: ${name} must be ${expected}, received ${String(value)}`);
}

/** What the runtime knows about a failed attempt, as far as retrying goes. */
export interface AttemptFailure {
  /** An environment failure (timeout, network, 5xx, 429): a retry may help. */
  transient: boolean;
  /** The work may have happened (timeout, connection reset mid-call): only idempotent tools may retry. */
  ambiguous: boolean;
  /** The wait the server asked for (`Retry-After`), in ms; used instead of backoff when finite and ≥ 0. */
  retryAfterMs?: number;
}

/**
 * Whether to try again, and after how long.
 * - `{ retry: true, delayMs, reason }`: wait `delayMs` ms, then attempt again; `reason` says whether
 *   the wait came from the backoff or from the server's `Retry-After`;
 * - `{ retry: false, reason, retryAfterMs? }`: return the failure; `retryAfterMs` (with
 *   `retry-after-exceeds-budget`) is the server's wait, for the envelope's `retry_after_ms`.
 */
export type RetryDecision =
  | { retry: true; delayMs: number; reason: 'backoff' | 'retry-after' }
  | {
      retry: false;
      reason: 'not-transient' | 'attempts-exhausted' | 'ambiguous-not-idempotent' | 'budget-exhausted' | 'retry-after-exceeds-budget';
      retryAfterMs?: number;
    };

/** The inputs of {@link decideRetry}. */
export interface DecideRetryInput {
  /** The 1-based attempt that just failed. */
  attempt: number;
  failure: AttemptFailure;
  policy: RetryPolicy;
  /** The tool may safely run twice (declared `idempotent`, or takes an idempotency key). */
  idempotent: boolean;
  /** The time left in the call's (and run's) budget, in ms; `undefined` = unbounded. */
  remainingBudgetMs: number | undefined;
  random: RandomSource;
}

/**
 * Decides whether a failed attempt is retried, in this order:
 * 1. not transient → `not-transient`;
 * 2. `attempt ≥ maxAttempts` → `attempts-exhausted`;
 * 3. ambiguous and the tool not idempotent → `ambiguous-not-idempotent`;
 * 4. a usable `retryAfterMs` (finite, ≥ 0) → wait `max(minDelayMs, retryAfterMs)`, reason
 *    `retry-after`; when that wait does not fit the budget → `retry-after-exceeds-budget` with it;
 * 5. otherwise wait `max(minDelayMs, computeBackoffMs(attempt - 1))`, reason `backoff`; when that
 *    wait does not fit the budget → `budget-exhausted`.
 *
 * A wait fits the budget only when it is strictly shorter than `remainingBudgetMs` (some time must
 * remain for the attempt itself). A negative, `NaN` or infinite `retryAfterMs` is treated as absent
 * (the backoff is used). Every retry waits at least `minDelayMs`: no input produces a hot loop.
 *
 * Pure (the random source aside).
 *
 * @see RFC 9110 §10.2.3 (Retry-After)
 */
export function decideRetry(input: DecideRetryInput): RetryDecision {
  const { attempt, failure, policy, idempotent, remainingBudgetMs, random } = input;
  if (!failure.transient) return { retry: false, reason: 'not-transient' };
  if (attempt >= policy.maxAttempts) return { retry: false, reason: 'attempts-exhausted' };
  if (failure.ambiguous && !idempotent) return { retry: false, reason: 'ambiguous-not-idempotent' };
  const retryAfterMs = failure.retryAfterMs;
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0) {
    const delayMs = Math.max(policy.minDelayMs, retryAfterMs);
    if (!fitsBudget(delayMs, remainingBudgetMs)) return { retry: false, reason: 'retry-after-exceeds-budget', retryAfterMs: delayMs };
    return { retry: true, delayMs, reason: 'retry-after' };
  }
  const retryIndex = Math.max(0, Math.floor(attempt) - 1);
  const delayMs = Math.max(policy.minDelayMs, computeBackoffMs(retryIndex, policy.backoff, random));
  if (!fitsBudget(delayMs, remainingBudgetMs)) return { retry: false, reason: 'budget-exhausted' };
  return { retry: true, delayMs, reason: 'backoff' };
}

function fitsBudget(delayMs: number, remainingBudgetMs: number | undefined): boolean {
  if (remainingBudgetMs === undefined) return true;
  return delayMs < remainingBudgetMs;
}
