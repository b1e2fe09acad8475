import type { Clock } from '../ground/ports/clock.ts';
import type { DeadLetterQueue } from '../ground/ports/stores.ts';
import type { WorkerEvent } from './worker-events.ts';

/** What the bound reads of a DLQ: its entries and, when it keeps them, its bytes. */
type BoundedQueue = Pick<DeadLetterQueue<unknown>, 'size'> & Partial<Pick<DeadLetterQueue<unknown>, 'bytes'>>;

/** A worker's watch on the bound of its two DLQs (at the bound it stops taking messages and alerts; it never drops an entry). */
export interface DeadLetterBound {
  /** True while either queue holds `maxEntries` or more entries, or `maxBytes` or more bytes; raises `dead-letter-full` / `dead-letter-below-bound` on transitions. */
  isFull(): Promise<boolean>;
  /** The totals may have moved (a dead letter was added, a store failed): the next `isFull` reads them. */
  invalidate(): void;
  readonly paused: boolean;
}

/** Options of {@link createDeadLetterBound}. */
export interface DeadLetterBoundOptions {
  queues: { messageDlq: BoundedQueue; toolDlq: BoundedQueue };
  maxEntries: number;
  /** Bound in bytes of stored JSON. */
  maxBytes: number;
  /** The totals are read again at least this often (the count is not free), in ms. */
  checkIntervalMs: number;
  clock: Clock;
  onEvent?: ((event: WorkerEvent) => void) | undefined;
  /**
   * A failed read: `'keep'` answers as before (the next check tries again; concurrent checks share
   * one read), `'reject'` rejects `isFull` (each caller reads for itself and counts its failure).
   * @defaultValue `'keep'`
   */
  readErrors?: 'keep' | 'reject';
  /** Read again at every check while paused, so taking messages resumes as soon as the DLQ is below its bound. @defaultValue false */
  recheckWhilePaused?: boolean;
}

/**
 * Watches the totals of the two DLQs against `maxEntries` and `maxBytes`. They are read again only
 * when they may have moved towards the bound: after {@link DeadLetterBound.invalidate}, at least
 * every `checkIntervalMs` for what other processes add, and with `recheckWhilePaused` at every
 * check while paused. A run that completes adds nothing, so a busy worker does not read four
 * totals before every message.
 */
export function createDeadLetterBound(options: DeadLetterBoundOptions): DeadLetterBound {
  const { queues, maxEntries, maxBytes, checkIntervalMs, clock } = options;
  let paused = false;
  let checkedAt = Number.NEGATIVE_INFINITY;
  let pending: Promise<boolean> | undefined;
  const bytesOf = async (queue: BoundedQueue) => (typeof queue.bytes === 'function' ? await queue.bytes() : 0);

  const check = async (): Promise<boolean> => {
    let sizes: [number, number, number, number];
    try {
      sizes = await Promise.all([queues.messageDlq.size(), queues.toolDlq.size(), bytesOf(queues.messageDlq), bytesOf(queues.toolDlq)]);
    } catch (error) {
      if (options.readErrors === 'reject') {
        checkedAt = Number.NEGATIVE_INFINITY;
        throw error;
      }
      return paused;
    }
    const [messageSize, toolSize, messageBytes, toolBytes] = sizes;
    const full =
      messageSize >= maxEntries || messageBytes >= maxBytes
        ? ('message' as const)
        : toolSize >= maxEntries || toolBytes >= maxBytes
          ? ('tool' as const)
          : undefined;
    if (full && !paused) {
      paused = true;
      options.onEvent?.({
        type: 'dead-letter-full',
        queue: full,
        size: full === 'message' ? messageSize : toolSize,
        maxEntries,
        bytes: full === 'message' ? messageBytes : toolBytes,
        maxBytes,
        at: clock.now(),
      });
    } else if (!full && paused) {
      paused = false;
      options.onEvent?.({
        type: 'dead-letter-below-bound',
        queue: messageSize >= toolSize ? 'message' : 'tool',
        size: Math.max(messageSize, toolSize),
        at: clock.now(),
      });
    }
    return full !== undefined;
  };

  return {
    isFull() {
      if (pending !== undefined && options.readErrors !== 'reject') return pending;
      if (!(paused && options.recheckWhilePaused) && clock.now() - checkedAt < checkIntervalMs) return Promise.resolve(paused);
      checkedAt = clock.now();
      pending = check().finally(() => {
        pending = undefined;
      });
      return pending;
    },
    invalidate() {
      checkedAt = Number.NEGATIVE_INFINITY;
    },
    get paused() {
      return paused;
    },
  };
}
