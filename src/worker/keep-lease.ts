import type { Clock } from '../ground/ports/clock.ts';
import type { QueueDelivery, RunQueue } from '../ground/ports/stores.ts';
import { repeatEvery } from './repeat-every.ts';

/** Options of {@link keepLease}. */
export interface KeepLeaseOptions {
  /** The queue that handed out `delivery`; only its `extendLease` is used. */
  queue: Required<Pick<RunQueue, 'extendLease'>>;
  /** The delivery being handled; its `deliveries` count identifies this lease. */
  delivery: QueueDelivery;
  /** The length of each renewed lease, in milliseconds; it is renewed every `leaseMs / 3`. */
  leaseMs: number;
  clock: Clock;
  /** A renewal that threw (it is tried again at the next interval). */
  onError?: ((error: unknown) => void) | undefined;
  /** The lease was lost: renewals stop and another consumer may run the message (an event, not an error). */
  onLost?: (() => void) | undefined;
}

/** A running lease renewal, see {@link keepLease}. */
export interface LeaseKeeper {
  /** Stops renewing; resolves once no renewal is in flight, so an `ack` after it races with none. */
  stop(): Promise<void>;
}

/**
 * Keeps the lease of a delivery alive while it is handled: every `leaseMs / 3` on `clock`, calls
 * `queue.extendLease(delivery.id, delivery.deliveries, leaseMs)`, so a run longer than one lease is
 * not delivered to a second consumer.
 *
 * - A renewal that throws is reported through `onError` and tried again at the next interval (the
 *   lease may still hold: two more tries fit in it).
 * - A renewal that returns `false` means the lease was lost (it ended before a renewal went
 *   through and the message may be reserved again): reported once through `onLost`, and renewals
 *   stop. The run is not interrupted: the idempotency
 *   ledger keeps recorded tool calls from running twice.
 * - Nothing is reported after `stop` was called.
 */
export function keepLease(options: KeepLeaseOptions): LeaseKeeper {
  const { queue, delivery, leaseMs, clock, onError, onLost } = options;
  let stopped = false;
  const renew = async (): Promise<boolean> => {
    let extended: boolean;
    try {
      extended = await queue.extendLease(delivery.id, delivery.deliveries, leaseMs);
    } catch (error) {
      if (!stopped) onError?.(error);
      return true;
    }
    if (extended) return true;
    if (!stopped) onLost?.();
    return false;
  };
  const repeating = repeatEvery(clock, leaseMs / 3, renew);
  return {
    stop: async () => {
      stopped = true;
      await repeating.stop();
    },
  };
}
