import type { Clock } from '../../ground/ports/clock.ts';
import type { QueueDelivery, RunQueue } from '../../ground/ports/stores.ts';
import { assertLeaseMs, checkReleaseOptions } from '../assert-lease-ms.ts';

interface QueuedMessage {
  id: string;
  body: string;
  enqueuedAtMs: number;
  deliveries: number;
  /** Epoch ms until which a consumer holds it (or, when `delayed`, until which it waits); `undefined` when it is waiting. */
  leaseUntilMs: number | undefined;
  /** Released with a delay: `leaseUntilMs` is the end of the delay, not of a lease. */
  delayed: boolean;
}

/** Options of {@link createMemoryRunQueue}. */
export interface MemoryRunQueueOptions {
  clock: Clock;
  /**
   * How many acknowledged ids are remembered so that enqueuing one again stays a no-op (oldest
   * forgotten first). @defaultValue 100_000
   */
  maxRememberedAckedIds?: number;
}

/**
 * An in-memory {@link RunQueue} with leases on the injected clock.
 *
 * - `reserve(leaseMs)` hands out the oldest (first enqueued) message that is waiting or whose lease
 *   has ended (`now >= leaseUntil`), leases it until `now + leaseMs` and counts the delivery
 *   (1 on the first, +1 on each redelivery after a lease expired or a `release`).
 * - `enqueue` of an id that is waiting, leased, or acknowledged (within the remembered window) is a
 *   no-op returning that id; a new id is `crypto.randomUUID()`.
 * - `extendLease(id, deliveries, leaseMs)` moves the lease to `now + leaseMs` only while the
 *   message is leased (`now < leaseUntil`, not released) and its delivery count is still `deliveries`.
 * - `release(id, { delayMs, countDelivery, deliveries })` makes the message reservable at
 *   `now + delayMs` (at once by default); `countDelivery: false` takes back the count of the
 *   delivery it releases (only while leased).
 * - `ack` and `release` of an unknown id do nothing.
 * Every method is atomic (no await between read and write), so concurrent `reserve` calls never
 * hand out one message twice.
 *
 * @throws ToolrunError `INVALID_OPTIONS` from `reserve` and `extendLease` for a non-positive or
 * non-finite `leaseMs`, and from `release` for an invalid `delayMs` (see `ReleaseOptions`).
 */
export function createMemoryRunQueue(options: MemoryRunQueueOptions): RunQueue {
  const { clock } = options;
  const maxRememberedAckedIds = options.maxRememberedAckedIds ?? 100_000;
  /** In enqueue order (Map preserves insertion order), which is the delivery order. */
  const messages = new Map<string, QueuedMessage>();
  const ackedIds = new Set<string>();

  const toDelivery = (message: QueuedMessage): QueueDelivery => ({
    id: message.id,
    body: message.body,
    deliveries: message.deliveries,
    enqueuedAt: new Date(message.enqueuedAtMs).toISOString(),
  });

  return {
    async enqueue(message) {
      const id = message.id ?? globalThis.crypto.randomUUID();
      if (messages.has(id) || ackedIds.has(id)) return id;
      messages.set(id, { id, body: message.body, enqueuedAtMs: clock.now(), deliveries: 0, leaseUntilMs: undefined, delayed: false });
      return id;
    },
    async reserve(leaseMs) {
      assertLeaseMs(leaseMs);
      const nowMs = clock.now();
      for (const message of messages.values()) {
        if (message.leaseUntilMs !== undefined && message.leaseUntilMs > nowMs) continue;
        message.leaseUntilMs = nowMs + leaseMs;
        message.delayed = false;
        message.deliveries += 1;
        return toDelivery(message);
      }
      return undefined;
    },
    async ack(id) {
      if (!messages.delete(id)) return;
      ackedIds.add(id);
      if (ackedIds.size > maxRememberedAckedIds) {
        const oldest = ackedIds.values().next();
        if (!oldest.done) ackedIds.delete(oldest.value);
      }
    },
    async release(id, releaseOptions) {
      const { delayMs, countDelivery, deliveries } = checkReleaseOptions(releaseOptions);
      const message = messages.get(id);
      if (message === undefined || (deliveries !== undefined && message.deliveries !== deliveries)) return;
      const leased = message.leaseUntilMs !== undefined && !message.delayed;
      if (!countDelivery && leased && message.deliveries > 0) message.deliveries -= 1;
      message.leaseUntilMs = delayMs > 0 ? clock.now() + delayMs : undefined;
      message.delayed = delayMs > 0;
    },
    async extendLease(id, deliveries, leaseMs) {
      assertLeaseMs(leaseMs, 'extendLease');
      const message = messages.get(id);
      const nowMs = clock.now();
      if (message === undefined || message.deliveries !== deliveries) return false;
      if (message.delayed || message.leaseUntilMs === undefined || message.leaseUntilMs <= nowMs) return false;
      message.leaseUntilMs = nowMs + leaseMs;
      return true;
    },
    async size() {
      return messages.size;
    },
  };
}
