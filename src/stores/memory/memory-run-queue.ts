import type { Clock } from '../../ground/ports/clock.ts';
import type { QueueDelivery, RunQueue } from '../../ground/ports/stores.ts';
import { assertLeaseMs, checkReleaseOptions, enqueuedMessageId } from '../assert-lease-ms.ts';

interface QueuedMessage {
  id: string;
  body: string;
  enqueuedAtMs: number;
  deliveries: number;
  /** Epoch ms until which a consumer holds it (or, when `delayed`, until which it waits); `undefined` when it is waiting. */
  leaseUntilMs: number | undefined;
  /** Released with a delay: `leaseUntilMs` is the end of the delay, not of a lease. */
  delayed: boolean;
  /** Acknowledged: no longer in `messages`, skipped in `order` until passed or compacted away. */
  acked: boolean;
}

/** Acknowledged messages left in the delivery order before it is compacted (and at least as many as the messages still in it). */
const MIN_COMPACTION = 64;

/** Options of {@link createMemoryRunQueue}. */
export interface MemoryRunQueueOptions {
  clock: Clock;
  /**
   * How many acknowledged ids are remembered so that enqueuing one again stays a no-op (oldest
   * forgotten first, in O(1) per `ack`); a fraction counts its whole part, a non-finite number
   * remembers every id. @defaultValue 100_000
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
 * hand out one message twice. `reserve` walks the messages from the oldest one not acknowledged,
 * so its cost is the number of older messages still leased or delayed, whatever the queue's depth;
 * `enqueue` and `ack` cost O(1) amortised.
 *
 * @throws ToolrunError `INVALID_OPTIONS` from `reserve` and `extendLease` for a non-positive or
 * non-finite `leaseMs`, and from `release` for an invalid `delayMs` (see `ReleaseOptions`).
 */
export function createMemoryRunQueue(options: MemoryRunQueueOptions): RunQueue {
  const { clock } = options;
  const window = options.maxRememberedAckedIds ?? 100_000;
  // a fraction remembers its whole part; NaN and Infinity remember every id (as a bound never reached)
  const maxRememberedAckedIds = Number.isFinite(window) ? Math.max(0, Math.floor(window)) : Number.POSITIVE_INFINITY;
  /** The messages waiting, leased or delayed, by id. */
  const messages = new Map<string, QueuedMessage>();
  /**
   * The same messages in enqueue order, which is the delivery order, from `head` on; acknowledged
   * ones stay in place (flagged) until `head` passes them or the array is compacted. (Not the
   * Map's own order: walking a Map from its start skips every entry deleted there since it was
   * last rehashed, which makes a deep queue quadratic.)
   */
  let order: QueuedMessage[] = [];
  let head = 0;
  /** Acknowledged messages in `order` at or after `head`. */
  let ackedInOrder = 0;
  /** Acknowledged ids remembered, and the same ids in acknowledgement order in a ring (oldest at `ackedNext` once full). */
  const ackedIds = new Set<string>();
  const ackedRing: string[] = [];
  let ackedNext = 0;

  const toDelivery = (message: QueuedMessage): QueueDelivery => ({
    id: message.id,
    body: message.body,
    deliveries: message.deliveries,
    enqueuedAt: new Date(message.enqueuedAtMs).toISOString(),
  });

  return {
    async enqueue(message) {
      const id = enqueuedMessageId(message);
      if (messages.has(id) || ackedIds.has(id)) return id;
      const queued: QueuedMessage = { id, body: message.body, enqueuedAtMs: clock.now(), deliveries: 0, leaseUntilMs: undefined, delayed: false, acked: false };
      messages.set(id, queued);
      order.push(queued);
      return id;
    },
    async reserve(leaseMs) {
      assertLeaseMs(leaseMs);
      const nowMs = clock.now();
      for (let index = head; index < order.length; index++) {
        const message = order[index]!;
        if ((message.leaseUntilMs !== undefined && message.leaseUntilMs > nowMs) || message.acked) continue;
        message.leaseUntilMs = nowMs + leaseMs;
        message.delayed = false;
        message.deliveries += 1;
        return toDelivery(message);
      }
      return undefined;
    },
    async ack(id) {
      const message = messages.get(id);
      if (message === undefined) return;
      messages.delete(id);
      message.acked = true;
      ackedInOrder += 1;
      while (head < order.length && order[head]!.acked) {
        head += 1;
        ackedInOrder -= 1;
      }
      if (ackedInOrder >= MIN_COMPACTION && ackedInOrder >= messages.size) {
        order = order.slice(head).filter((kept) => !kept.acked);
        head = 0;
        ackedInOrder = 0;
      } else if (head >= MIN_COMPACTION && head * 2 >= order.length) {
        order = order.slice(head);
        head = 0;
      }
      // an id is remembered once: enqueue refuses it while it is, so it cannot be acknowledged again
      if (maxRememberedAckedIds < 1) return;
      ackedIds.add(id);
      if (ackedRing.length < maxRememberedAckedIds) {
        ackedRing.push(id);
        return;
      }
      ackedIds.delete(ackedRing[ackedNext]!);
      ackedRing[ackedNext] = id;
      ackedNext = (ackedNext + 1) % maxRememberedAckedIds;
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
