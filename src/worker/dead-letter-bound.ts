import type { Clock } from '../ground/ports/clock.ts';
import type { DeadLetterQueue, Stores } from '../ground/ports/stores.ts';
import type { WorkerEvent } from './worker-events.ts';

/** The longest a worker goes without reading the DLQ totals while it takes messages, in ms. */
const DEAD_LETTER_RECHECK_MS = 1_000;

/** A worker's watch on the bound of its two DLQs. */
export interface DeadLetterBound {
  /** Whether a DLQ is at its bound (entries or bytes); raises `dead-letter-full` and `dead-letter-below-bound` as that changes. */
  full(): Promise<boolean>;
  /** The totals may have moved (a message did not complete, a store failed): the next `full` reads them. */
  moved(): void;
}

/**
 * The bound of `stores`' DLQs at `maxEntries` entries or `maxBytes` bytes each, kept in
 * `stats.paused`. The totals are read again only when they may have moved towards the bound: after
 * {@link DeadLetterBound.moved}, while paused, and at least every second for what other processes
 * add. A run that completes adds nothing, so a busy worker does not read four totals before every message.
 */
export function createDeadLetterBound(input: {
  stores: Pick<Stores, 'messageDlq' | 'toolDlq'>;
  clock: Clock;
  maxEntries: number;
  maxBytes: number;
  stats: { paused: boolean };
  emit: (event: WorkerEvent) => void;
}): DeadLetterBound {
  const { stores, clock, maxEntries, maxBytes, stats, emit } = input;
  const bytesOf = async (queue: Pick<DeadLetterQueue<unknown>, 'bytes'>) => (typeof queue.bytes === 'function' ? await queue.bytes() : 0);
  let deadLettersReadAt = Number.NEGATIVE_INFINITY;
  let deadLettersMoved = true;
  return {
    moved: () => {
      deadLettersMoved = true;
    },
    full: async () => {
      if (!deadLettersMoved && !stats.paused && clock.now() - deadLettersReadAt < DEAD_LETTER_RECHECK_MS) return false;
      deadLettersMoved = false;
      deadLettersReadAt = clock.now();
      const [messageSize, toolSize, messageBytes, toolBytes] = await Promise.all([
        stores.messageDlq.size(),
        stores.toolDlq.size(),
        bytesOf(stores.messageDlq),
        bytesOf(stores.toolDlq),
      ]);
      const full =
        messageSize >= maxEntries || messageBytes >= maxBytes
          ? ('message' as const)
          : toolSize >= maxEntries || toolBytes >= maxBytes
            ? ('tool' as const)
            : undefined;
      if (full && !stats.paused) {
        stats.paused = true;
        emit({
          type: 'dead-letter-full',
          queue: full,
          size: full === 'message' ? messageSize : toolSize,
          maxEntries,
          bytes: full === 'message' ? messageBytes : toolBytes,
          maxBytes,
          at: clock.now(),
        });
      } else if (!full && stats.paused) {
        stats.paused = false;
        emit({ type: 'dead-letter-below-bound', queue: messageSize >= toolSize ? 'message' : 'tool', size: Math.max(messageSize, toolSize), at: clock.now() });
      }
      return full !== undefined;
    },
  };
}
