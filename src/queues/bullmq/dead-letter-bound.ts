import type { Clock } from '../../core/ports/clock.ts';
import type { DeadLetterQueue } from '../../core/ports/stores.ts';
import type { WorkerEvent } from '../../worker/worker-events.ts';

/** Whether either DLQ reached its bound, read at most once per `checkIntervalMs` (the count is not free). */
export interface DeadLetterBound {
  /** True while either queue holds `maxEntries` or more; raises `dead-letter-full` / `dead-letter-below-bound` on transitions. */
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
  queues: { messageDlq: Pick<DeadLetterQueue<unknown>, 'size'>; toolDlq: Pick<DeadLetterQueue<unknown>, 'size'> };
  maxEntries: number;
  checkIntervalMs: number;
  clock: Clock;
  onEvent?: ((event: WorkerEvent) => void) | undefined;
}): DeadLetterBound {
  const { queues, maxEntries, checkIntervalMs, clock } = options;
  let paused = false;
  let checkedAt = Number.NEGATIVE_INFINITY;
  let pending: Promise<boolean> | undefined;

  const check = async (): Promise<boolean> => {
    let sizes: [number, number];
    try {
      sizes = await Promise.all([queues.messageDlq.size(), queues.toolDlq.size()]);
    } catch {
      return paused;
    }
    const [messageSize, toolSize] = sizes;
    const full = messageSize >= maxEntries ? ('message' as const) : toolSize >= maxEntries ? ('tool' as const) : undefined;
    if (full && !paused) {
      paused = true;
      options.onEvent?.({ type: 'dead-letter-full', queue: full, size: full === 'message' ? messageSize : toolSize, maxEntries, at: clock.now() });
    } else if (!full && paused) {
      paused = false;
      options.onEvent?.({ type: 'dead-letter-below-bound', queue: messageSize >= toolSize ? 'message' : 'tool', size: Math.max(messageSize, toolSize), at: clock.now() });
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
