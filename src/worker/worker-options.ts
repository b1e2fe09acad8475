import type { Clock } from '../ground/ports/clock.ts';
import type { Stores } from '../ground/ports/stores.ts';
import type { HandleMessageOptions, HandleMessageResult } from './handle-message-options.ts';

/** Options of `createWorker`. Durations in milliseconds. */
export interface WorkerOptions extends Omit<HandleMessageOptions, 'queues' | 'stores' | 'signal'> {
  stores: Stores;
  /**
   * Messages handled at once. A run mostly waits on its model, so a worker usually handles many;
   * on the SQLite stores the writes of the runs in flight also share commits (group commit), so a
   * higher value raises throughput there even when the model answers at once. @defaultValue 1
   */
  concurrency?: number;
  /**
   * How long a reserved message stays invisible to other consumers. While a message is handled its
   * lease is renewed every `leaseMs / 3` (`RunQueue.extendLease`), so a run may take longer than
   * this; a consumer that dies stops renewing and the message is redelivered at most `leaseMs`
   * later. A positive number of ms up to 214748364, a fraction rounded up. @defaultValue 300_000
   */
  leaseMs?: number;
  /** Wait between polls of an empty queue: a positive number of ms up to 214748364, a fraction rounded up. @defaultValue 100 */
  pollIntervalMs?: number;
  /**
   * Bound of each DLQ. At the bound the worker stops taking new messages and raises
   * `dead-letter-full`; it never drops an entry. The totals are read before a message is taken
   * whenever this worker's last message did not complete, and at least once a second otherwise, so
   * entries other processes add may pass the bound by what they add in that second. A positive
   * integer. @defaultValue 10_000
   */
  maxDeadLetterEntries?: number;
  /** Bound of each DLQ in bytes of stored JSON (`DeadLetterQueue.bytes`), enforced like `maxDeadLetterEntries`. A positive integer. @defaultValue 268_435_456 (256 MiB) */
  maxDeadLetterBytes?: number;
  /**
   * Waits before a failed delivery is delivered again: `baseMs · 2^(deliveries − 1)`, at most
   * `maxMs`, with `0 ≤ baseMs ≤ maxMs ≤ 2^31 − 1` and `maxMs > 0`. A failure of the message itself
   * counts toward `maxDeliveries`; a store outage (unreachable, restarting, busy) is redelivered
   * after the same wait without counting.
   * @defaultValue `{ baseMs: 1_000, maxMs: 60_000 }`
   */
  redeliveryBackoff?: { baseMs: number; maxMs: number };
  /** Called after each handled message. */
  onResult?: (result: HandleMessageResult) => void;
  /**
   * A failure while handling a message (the message is released for redelivery, or dead-lettered
   * at `maxDeliveries`; the `delivery-failed` event says which); or a lease renewal that threw
   * (tried again at the next renewal); or a failed read of the queue or the DLQ totals (tried
   * again after a backoff). A lost lease is not an error: it is the `lease-lost` event
   * (the run goes on under its claim; another consumer that takes the message finds the run busy).
   */
  onError?: (error: unknown) => void;
  clock?: Clock;
}
