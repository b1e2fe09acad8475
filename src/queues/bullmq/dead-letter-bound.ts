import type { Clock } from '../../ground/ports/clock.ts';
import type { DeadLetterQueue } from '../../ground/ports/stores.ts';
import type { WorkerEvent } from '../../worker/worker-events.ts';

/** Whether either DLQ reached its bound, read at most once per `checkIntervalMs` (the count is not free). */
export interface DeadLetterBound {
  /** True while either queue holds `maxEntries` or more entries, or `maxBytes` or more bytes; raises `dead-letter-full` / `dead-letter-below-bound` on transitions. */
  isFull(): Promise<boolean>;
  /** Forgets the cached sizes: the next `isFull` reads them (call it after adding a dead letter). */
  invalidate(): void;
  readonly paused: boolean;
}

/**
 * Watches the sizes of the two DLQs against `maxEntries` (the bound the worker enforces: at the
 * bound it stops taking messages and alerts; it never drops an entry). A failed size query counts
 * as "not full" (the worker keeps going; the next check tries again).
 */
export function createDeadLetterBound(options: {
  queues: {
    messageDlq: Pick<DeadLetterQueue<unknown>, 'size'> & Partial<Pick<DeadLetterQueue<unknown>, 'bytes'>>;
    toolDlq: Pick<DeadLetterQueue<unknown>, 'size'> & Partial<Pick<DeadLetterQueue<unknown>, 'bytes'>>;
  };
  maxEntries: number;
  /** Bound in bytes of stored JSON. @defaultValue unbounded */
  maxBytes?: number;
  checkIntervalMs: number;
  clock: Clock;
  onEvent?: ((event: WorkerEvent) => void) | undefined;
}): DeadLetterBound {
  const { queues, maxEntries, checkIntervalMs, clock } = options;
  let paused = false;
  let checkedAt = Number.NEGATIVE_INFINITY;
  let pending: Promise<boolean> | undefined;

  const check = async (): Promise<boolean> => {
    let sizes: [number, number, number, number];
    const bytesOf = async (queue: Partial<Pick<DeadLetterQueue<unknown>, 'bytes'>>) =>
      options.maxBytes !== undefined && typeof queue.bytes === 'function' ? await queue.bytes() : 0;
    try {
      sizes = await Promise.all([queues.messageDlq.size(), queues.toolDlq.size(), bytesOf(queues.messageDlq), bytesOf(queues.toolDlq)]);
    } catch {
      return paused;
    }
    const [messageSize, toolSize, messageBytes, toolBytes] = sizes;
    const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
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
        ...(options.maxBytes !== undefined ? { bytes: full === 'message' ? messageBytes : toolBytes, maxBytes: options.maxBytes } : {}),
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
    async isFull() {
      if (clock.now() - checkedAt < checkIntervalMs) return paused;
      pending ??= check().finally(() => {
        checkedAt = clock.now();
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
