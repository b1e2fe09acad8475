import { systemClock, type Clock } from '../ground/ports/clock.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { checkpointRetryOf } from '../agent/run-agent.ts';
import type { WorkerOptions } from './worker-options.ts';

/** A worker's options checked, with their defaults. */
export interface WorkerSettings {
  clock: Clock;
  concurrency: number;
  leaseMs: number;
  pollIntervalMs: number;
  maxEntries: number;
  maxBytes: number;
  maxDeliveries: number;
  /** The wait before a failed delivery is delivered again, after `deliveries` deliveries, in ms. */
  redeliveryDelayMs: (deliveries: number) => number;
}

/**
 * The settings of a worker from its options (see {@link WorkerOptions} for the defaults).
 *
 * @throws ToolrunError `INVALID_OPTIONS` for a `concurrency`, `leaseMs`, `pollIntervalMs`, DLQ bound,
 * `maxDeliveries`, `redeliveryBackoff` or `checkpointRetry` out of range.
 */
export function workerSettings(options: WorkerOptions): WorkerSettings {
  const clock = options.clock ?? systemClock;
  const concurrency = options.concurrency ?? 1;
  const leaseMs = options.leaseMs ?? 300_000;
  const pollIntervalMs = options.pollIntervalMs ?? 100;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 10_000)
    throw new ToolrunError(
      'INVALID_OPTIONS',
      `concurrency must be an integer from 1 to 10000, received ${typeof concurrency === 'string' ? `the string ${JSON.stringify(concurrency)}` : String(concurrency)}`,
    );
  // both are timer delays (a lease is renewed every third of it): Node fires longer ones at once
  for (const [name, value] of [
    ['leaseMs', leaseMs],
    ['pollIntervalMs', pollIntervalMs],
  ] as const) {
    if (!(typeof value === 'number' && Number.isFinite(value) && value > 0 && value * 10 <= 2_147_483_647)) {
      throw new ToolrunError('INVALID_OPTIONS', `${name} must be a positive number of ms up to 214748364, received ${String(value)}`);
    }
  }
  const maxEntries = options.maxDeadLetterEntries ?? 10_000;
  const maxBytes = options.maxDeadLetterBytes ?? 268_435_456;
  const maxDeliveries = options.maxDeliveries ?? 5;
  // checked here, once: a bad value would otherwise fail every delivery
  checkpointRetryOf(options.checkpointRetry);
  const backoff = options.redeliveryBackoff ?? { baseMs: 1_000, maxMs: 60_000 };
  for (const [name, value] of [
    ['maxDeadLetterEntries', maxEntries],
    ['maxDeadLetterBytes', maxBytes],
    ['redeliveryBackoff.maxMs', backoff.maxMs],
  ] as const) {
    if (!(typeof value === 'number' && value > 0 && value <= Number.MAX_SAFE_INTEGER))
      throw new ToolrunError('INVALID_OPTIONS', `${name} must be a positive number, received ${String(value)}`);
  }
  if (!Number.isInteger(maxDeliveries) || maxDeliveries < 1)
    throw new ToolrunError('INVALID_OPTIONS', `maxDeliveries must be an integer ≥ 1, received ${String(maxDeliveries)}`);
  if (!(backoff.baseMs >= 0 && backoff.baseMs <= backoff.maxMs && backoff.maxMs <= 2_147_483_647)) {
    throw new ToolrunError('INVALID_OPTIONS', `redeliveryBackoff must have 0 ≤ baseMs ≤ maxMs ≤ 2147483647, received ${JSON.stringify(backoff)}`);
  }
  const redeliveryDelayMs = (deliveries: number): number => Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(30, Math.max(0, deliveries - 1)));
  return { clock, concurrency, leaseMs, pollIntervalMs, maxEntries, maxBytes, maxDeliveries, redeliveryDelayMs };
}
