import { systemClock, type Clock } from '../ground/ports/clock.ts';
import { checkpointRetryOf } from '../policies/retry-durable-write.ts';
import type { Stores } from '../ground/ports/stores.ts';
import type { WorkerOptions } from './worker-options.ts';
import { checkedOptions, throwIfProblems } from './check-options.ts';

/** A worker's options checked, with their defaults. */
export interface WorkerSettings {
  /** The stores as checked: the worker uses these, never a second read of `options.stores`. */
  stores: Stores;
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
 * `leaseMs` and `pollIntervalMs` rounded up to whole milliseconds. Each option is read once, and
 * the settings are made of the values checked.
 *
 * @param source - the function named in the error message. @defaultValue `'createWorker'`
 * @throws ToolrunError `INVALID_OPTIONS` for `options` that is not an object, a `stores` that is missing, a Promise or lacks a port, or a
 * `concurrency`, `leaseMs`, `pollIntervalMs`, DLQ bound, `maxDeliveries`, `redeliveryBackoff` or
 * `checkpointRetry` out of range (every problem but `checkpointRetry`'s in one message).
 */
export function workerSettings(options: WorkerOptions, source = 'createWorker'): WorkerSettings {
  // each option read once: a getter that answers differently on a second read cannot get past the check
  const { values, problems } = checkedOptions(options, WORKER_FIELDS, '', ['stores']);
  throwIfProblems(problems, 'INVALID_OPTIONS', source);
  const given = values as Pick<WorkerOptions, (typeof WORKER_FIELDS)[number]>;
  // checked here, once: a bad value would otherwise fail every delivery
  checkpointRetryOf(options.checkpointRetry);
  const { baseMs, maxMs } = given.redeliveryBackoff ?? { baseMs: 1_000, maxMs: 60_000 };
  return {
    stores: given.stores,
    clock: options.clock ?? systemClock,
    concurrency: given.concurrency ?? 1,
    // whole ms: a fraction (down to 5e-324) would renew and poll below the 1 ms timer floor, and
    // make no progress on a clock whose time is the sum of its sleeps
    leaseMs: Math.ceil(given.leaseMs ?? 300_000),
    pollIntervalMs: Math.ceil(given.pollIntervalMs ?? 100),
    maxEntries: given.maxDeadLetterEntries ?? 10_000,
    maxBytes: given.maxDeadLetterBytes ?? 268_435_456,
    maxDeliveries: given.maxDeliveries ?? 5,
    redeliveryDelayMs: (deliveries) => Math.min(maxMs, baseMs * 2 ** Math.min(30, Math.max(0, deliveries - 1))),
  };
}
