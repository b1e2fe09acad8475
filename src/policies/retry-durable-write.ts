import type { Clock, RandomSource } from '../ground/ports/clock.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { computeBackoffMs, type BackoffOptions } from './backoff.ts';
import { executeWithRetry } from './retry-loop.ts';

/** How a durable write (a step commit, a call's recorded outcome) that fails because the store is briefly unavailable is sent again. */
export interface CheckpointRetryOptions extends BackoffOptions {
  /** Attempts in all, the first included (1: no retry). An integer ≥ 1. */
  maxAttempts: number;
}

/**
 * The default {@link CheckpointRetryOptions}: 30 attempts, 100 ms doubling to 5 s, + up to 50 ms
 * jitter: the last attempt about 121 s after the first. Within a worker's default lease (300 s), so
 * no other consumer takes the message while its run waits for the store.
 */
export const DEFAULT_CHECKPOINT_RETRY: CheckpointRetryOptions = Object.freeze({
  maxAttempts: 30,
  baseDelayMs: 100,
  factor: 2,
  maxDelayMs: 5_000,
  jitterMs: 50,
});

/** The longest wait a timer takes, in ms (2^31 − 1; a longer one fires at once). */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Checks {@link CheckpointRetryOptions} (a worker calls it at start-up, so a bad value fails there,
 * not at every delivery); `undefined` gives {@link DEFAULT_CHECKPOINT_RETRY}.
 *
 * @throws ToolrunError `INVALID_OPTIONS` naming the field: `maxAttempts` not an integer ≥ 1,
 * `factor` not a finite number ≥ 1, a delay not a number of ms in [0, 2^31 − 1].
 */
export function checkpointRetryOf(options: CheckpointRetryOptions | undefined): CheckpointRetryOptions {
  if (options === undefined) return DEFAULT_CHECKPOINT_RETRY;
  const fail = (field: string, rule: string, value: unknown): never => {
    throw new ToolrunError('INVALID_OPTIONS', `persistence.checkpointRetry.${field} must be ${rule}, received ${String(value)}`);
  };
  const { maxAttempts, baseDelayMs, factor, maxDelayMs, jitterMs } = options;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) fail('maxAttempts', 'an integer ≥ 1', maxAttempts);
  for (const [field, value] of [
    ['baseDelayMs', baseDelayMs],
    ['maxDelayMs', maxDelayMs],
    ['jitterMs', jitterMs],
  ] as const) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_TIMER_MS) fail(field, 'a number of ms from 0 to 2^31 − 1', value);
  }
  if (typeof factor !== 'number' || !Number.isFinite(factor) || factor < 1) fail('factor', 'a finite number ≥ 1', factor);
  return options;
}

/** Options of {@link createDurableWriteRetry}. */
export interface DurableWriteRetryOptions {
  /** Attempts and backoff (checked with {@link checkpointRetryOf}). @defaultValue {@link DEFAULT_CHECKPOINT_RETRY} */
  retry?: CheckpointRetryOptions | undefined;
  /** Whether a failure is worth sending the write again for (a store outage); any other is thrown at once. */
  retryable: (error: unknown) => boolean;
  /** The waits are slept on this clock. */
  clock: Clock;
  /** Random source of the jitter. */
  random: RandomSource;
}

/**
 * A retry policy for idempotent writes: `execute(write)` runs `write` in {@link executeWithRetry},
 * again after a backoff (`computeBackoffMs` on the clock, not cut short by any signal) while it rejects with an error
 * `retryable` accepts, up to `maxAttempts` in all; then it rejects with the last error.
 *
 * @throws ToolrunError `INVALID_OPTIONS` from {@link checkpointRetryOf} for bad `retry` options.
 */
export function createDurableWriteRetry(options: DurableWriteRetryOptions): { execute<T>(write: () => Promise<T>): Promise<T> } {
  const retry = checkpointRetryOf(options.retry);
  const { retryable, clock, random } = options;
  return {
    async execute<T>(write: () => Promise<T>) {
      const end = await executeWithRetry<T, { error: unknown }>(
        {
          attempt: async () => {
            try {
              return { ok: true, value: await write() };
            } catch (error) {
              return { ok: false, failure: { error } };
            }
          },
          retryAfter: ({ error }, attempt) => (attempt >= retry.maxAttempts || !retryable(error) ? undefined : computeBackoffMs(attempt - 1, retry, random)),
        },
        { clock },
      );
      if (end.ok) return end.value;
      throw end.failure!.error;
    },
  };
}
