import { isOverIdBound, MAX_ID_BYTES } from '../ground/identifier-bound.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';

/** The longest lease or delay the stores accept, in ms: 2^31 − 1 (about 24.8 days), the largest timer Node can run. */
export const MAX_LEASE_MS = 2_147_483_647;

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

/**
 * Checks the `leaseMs` of a `ClaimStore` method: a positive, finite number of milliseconds, at most
 * {@link MAX_LEASE_MS}. Returns it rounded up to a whole millisecond.
 *
 * @throws ToolrunError `INVALID_OPTIONS` otherwise.
 */
export function claimLeaseMs(leaseMs: number, method: 'acquire' | 'renew'): number {
  if (typeof leaseMs !== 'number' || !Number.isFinite(leaseMs) || leaseMs <= 0 || leaseMs > MAX_LEASE_MS) {
    throw new ToolrunError(
      'INVALID_OPTIONS',
      `${method}(leaseMs) needs a positive, finite number of milliseconds up to ${MAX_LEASE_MS}, received ${String(leaseMs)}`,
    );
  }
  return Math.ceil(leaseMs);
}

/** What `RunQueue.release` does, its options checked (see `ReleaseOptions`). */
export interface CheckedRelease {
  /** Whole milliseconds, 0 when none was given. */
  delayMs: number;
  /** Whether the released delivery keeps counting. */
  countDelivery: boolean;
  /** Only release this delivery, when given. */
  deliveries: number | undefined;
}

/**
 * Checks the options of `RunQueue.release`.
 *
 * @throws ToolrunError `INVALID_OPTIONS` for a `delayMs` that is negative, not finite or above
 * {@link MAX_LEASE_MS}, or a `deliveries` that is not a whole number.
 */
export function checkReleaseOptions(options: { delayMs?: number; countDelivery?: boolean; deliveries?: number } | undefined): CheckedRelease {
  const delayMs = options?.delayMs ?? 0;
  if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0 || delayMs > MAX_LEASE_MS) {
    throw new ToolrunError(
      'INVALID_OPTIONS',
      `release(id, { delayMs }) needs a finite number of milliseconds from 0 to ${MAX_LEASE_MS}, received ${String(delayMs)}`,
    );
  }
  const deliveries = options?.deliveries;
  if (deliveries !== undefined && !Number.isSafeInteger(deliveries)) {
    throw new ToolrunError('INVALID_OPTIONS', `release(id, { deliveries }) needs a whole number, received ${String(deliveries)}`);
  }
  return { delayMs: Math.ceil(delayMs), countDelivery: options?.countDelivery !== false, deliveries };
}

/**
 * Checks the message given to `RunQueue.enqueue`: an object with a string `body` and, when given, a
 * string `id` of at most {@link MAX_ID_BYTES} UTF-8 bytes. Returns the id to use (`id`, or a new UUID).
 *
 * @throws ToolrunError `INVALID_INPUT` otherwise (a body the queue cannot store, serialise the
 * run request with `JSON.stringify` first; an id longer than every backend can key by).
 */
export function enqueuedMessageId(message: unknown): string {
  const describe = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`);
  if (typeof message !== 'object' || message === null) {
    throw new ToolrunError('INVALID_INPUT', `enqueue({ body, id? }) needs an object, received ${describe(message)}`);
  }
  const { body, id } = message as { body?: unknown; id?: unknown };
  if (typeof body !== 'string') {
    throw new ToolrunError('INVALID_INPUT', `enqueue({ body }) needs body as a string (the run request as JSON text), received ${describe(body)}`);
  }
  if (id !== undefined && typeof id !== 'string') throw new ToolrunError('INVALID_INPUT', `enqueue({ id }) needs id as a string, received ${describe(id)}`);
  if (id !== undefined && isOverIdBound(id)) {
    throw new ToolrunError('INVALID_INPUT', `enqueue({ id }) needs an id of at most ${MAX_ID_BYTES} UTF-8 bytes, received a longer one; nothing was enqueued`);
  }
  return id ?? globalThis.crypto.randomUUID();
}
