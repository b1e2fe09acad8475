import { systemClock, type Clock } from '../ground/ports/clock.ts';
import { checkpointRetryOf } from '../policies/retry-durable-write.ts';
import type { WorkerOptions } from './worker-options.ts';
import { optionProblems, throwIfProblems } from './check-options.ts';

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

/** The options a worker checks at creation, so that a bad value fails once rather than every delivery. */
const WORKER_FIELDS = [
  'stores',
  'concurrency',
  'leaseMs',
  'pollIntervalMs',
  'maxDeadLetterEntries',
  'maxDeadLetterBytes',
  'maxDeliveries',
  'redeliveryBackoff',
] as const;

/**
 * The settings of a worker from its options (see {@link WorkerOptions} for the defaults), with
 * `leaseMs` and `pollIntervalMs` rounded up to whole milliseconds.
 *
 * @param source - the function named in the error message. @defaultValue `'createWorker'`
 * @throws ToolrunError `INVALID_OPTIONS` for `options` that is not an object, a `stores` that is missing, a Promise or lacks a port, or a
 * `concurrency`, `leaseMs`, `pollIntervalMs`, DLQ bound, `maxDeliveries`, `redeliveryBackoff` or
 * `checkpointRetry` out of range (every problem but `checkpointRetry`'s in one message).
 */
export function workerSettings(options: WorkerOptions, source = 'createWorker'): WorkerSettings {
  throwIfProblems(optionProblems(options, WORKER_FIELDS, '', ['stores']), 'INVALID_OPTIONS', source);
  // checked here, once: a bad value would otherwise fail every delivery
  checkpointRetryOf(options.checkpointRetry);
  const backoff = options.redeliveryBackoff ?? { baseMs: 1_000, maxMs: 60_000 };
  return {
    clock: options.clock ?? systemClock,
    concurrency: options.concurrency ?? 1,
    // whole ms: a fraction (down to 5e-324) would renew and poll below the 1 ms timer floor, and
    // make no progress on a clock whose time is the sum of its sleeps
    leaseMs: Math.ceil(options.leaseMs ?? 300_000),
    pollIntervalMs: Math.ceil(options.pollIntervalMs ?? 100),
    maxEntries: options.maxDeadLetterEntries ?? 10_000,
    maxBytes: options.maxDeadLetterBytes ?? 268_435_456,
    maxDeliveries: options.maxDeliveries ?? 5,
    redeliveryDelayMs: (deliveries) => Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(30, Math.max(0, deliveries - 1))),
  };
}
