import type { Clock } from '../ground/ports/clock.ts';
import type { QueueDelivery, RunQueue } from '../ground/ports/stores.ts';

/** The longest wait between two tries of a release that failed, in ms. */
const RELEASE_RETRY_MAX_MS = 5_000;

/**
 * Gives `delivery` back to `queue` (after `delayMs`; counted as a delivery or not). A release that
 * fails (the store is out) is reported to `onError` and tried again with backoff (from
 * `pollIntervalMs`, doubling, at most 5 s) until it goes through or the lease it gives back would
 * have ended anyway: a release given up on leaves the message to wait out its lease, and the
 * reservation after that counts a delivery that `countDelivery: false` meant to give back. Stopping
 * the worker does not cut it short. Resolves whether the release went through.
 */
export async function releaseDelivery(
  queue: Pick<RunQueue, 'release'>,
  delivery: QueueDelivery,
  { delayMs, countDelivery }: { delayMs: number; countDelivery: boolean },
  context: { clock: Clock; leaseMs: number; pollIntervalMs: number; onError: ((error: unknown) => void) | undefined },
): Promise<boolean> {
  const { clock, pollIntervalMs } = context;
  const leaseEndsAt = clock.now() + context.leaseMs;
  for (let failures = 0; ; failures++) {
    try {
      // keyed by the delivery: a consumer whose lease ended cannot release another consumer's delivery
      await queue.release(delivery.id, { delayMs: Math.ceil(delayMs), countDelivery, deliveries: delivery.deliveries });
      return true;
    } catch (error) {
      context.onError?.(error);
      const waitMs = Math.min(pollIntervalMs * 2 ** Math.min(failures, 20), RELEASE_RETRY_MAX_MS);
      if (clock.now() + waitMs >= leaseEndsAt) return false;
      await clock.sleep(waitMs);
    }
  }
}
