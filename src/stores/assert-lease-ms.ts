import { ToolrunError } from '../core/toolrun-error.ts';

/**
 * Checks the `leaseMs` given to `RunQueue.reserve` or `RunQueue.extendLease` (named by `method`): a
 * positive, finite number of milliseconds.
 *
 * @throws ToolrunError `INVALID_OPTIONS` otherwise (a programmer error: a zero or negative lease
 * would hand one message to every consumer).
 */
export function assertLeaseMs(leaseMs: number, method: 'reserve' | 'extendLease' = 'reserve'): void {
  if (!Number.isFinite(leaseMs) || leaseMs <= 0) {
    throw new ToolrunError('INVALID_OPTIONS', `${method}(leaseMs) needs a positive, finite number of milliseconds, received ${leaseMs}`);
  }
}
