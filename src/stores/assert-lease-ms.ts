import { ToolrunError } from '../core/toolrun-error.ts';

/**
 * Checks the `leaseMs` given to `RunQueue.reserve`: a positive, finite number of milliseconds.
 *
 * @throws ToolrunError `INVALID_OPTIONS` otherwise (a programmer error: a zero or negative lease
 * would hand one message to every consumer).
 */
export function assertLeaseMs(leaseMs: number): void {
  if (!Number.isFinite(leaseMs) || leaseMs <= 0) {
    throw new ToolrunError('INVALID_OPTIONS', `reserve(leaseMs) needs a positive, finite number of milliseconds, received ${leaseMs}`);
  }
}
