import { setMaxListeners } from 'node:events';
import { systemClock, type Clock } from '../core/ports/clock.ts';
import type { QueueDelivery, Stores } from '../core/ports/stores.ts';
import { handleMessage, type HandleMessageOptions, type HandleMessageResult } from './handle-message.ts';
import { keepLease, type LeaseKeeper } from './keep-lease.ts';
import type { WorkerEvent } from './worker-events.ts';

/** Options of {@link createWorker}. Durations in milliseconds. */
export interface WorkerOptions extends Omit<HandleMessageOptions, 'queues' | 'stores' | 'signal'> {
  stores: Stores;
  /** Messages handled at once. @defaultValue 1 */
  concurrency?: number;
  /**
   * How long a reserved message stays invisible to other consumers. While a message is handled its
   * lease is renewed every `leaseMs / 3` (`RunQueue.extendLease`), so a run may take longer than
   * this; a consumer that dies stops renewing and the message is redelivered at most `leaseMs`
   * later. @defaultValue 300_000
   */
  leaseMs?: number;
  /** Wait between polls of an empty queue. @defaultValue 100 */
  pollIntervalMs?: number;
  /**
   * Bound of each DLQ. At the bound the worker stops taking new messages and raises
   * `dead-letter-full`; it never drops an entry. @defaultValue 10_000
   */
  maxDeadLetterEntries?: number;
  /** Called after each handled message. */
  onResult?: (result: HandleMessageResult) => void;
  /**
   * A store failure while handling a message (the message is released for redelivery); a lease
   * renewal that threw (tried again at the next renewal); or a lost lease, a `ToolrunError` with
   * code `LEASE_LOST` (the run goes on; another consumer may have taken the message, and the
   * idempotency ledger keeps recorded tool calls from running twice).
   */
  onError?: (error: unknown) => void;
  clock?: Clock;
}

/** A running consumer of the run queue. */
export interface Worker {
  /** Starts consuming; resolves when `stop` was called and in-flight messages finished. */
  run(): Promise<void>;
  /** Consumes until the queue is empty and nothing is in flight, then resolves. */
  runUntilEmpty(): Promise<void>;
  /** Graceful shutdown: takes no new message, lets in-flight runs finish. */
  stop(): void;
  readonly stats: { handled: number; byStatus: Record<string, number>; paused: boolean };
}

/**
 * Creates a worker that takes run-request messages from `stores.queue`, handles each with
 * {@link handleMessage} (the DLQs are `stores.messageDlq` and `stores.toolDlq`) and acknowledges it
 * once it reached a terminal place. The lease of a message being handled is renewed every
 * `leaseMs / 3` on the clock, so a long run is not handed to a second consumer. A worker that dies
 * mid-run leaves the message leased; it is delivered again when the lease expires and the run resumes from its checkpoint; a message that
 * had been dead-lettered is acknowledged without a second entry. `onResult` is called once per
 * acknowledged delivery.
 */
export function createWorker(options: WorkerOptions): Worker {
  const { stores } = options;
  const clock = options.clock ?? systemClock;
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 1));
  const leaseMs = options.leaseMs ?? 300_000;
  const pollIntervalMs = options.pollIntervalMs ?? 100;
  const maxEntries = options.maxDeadLetterEntries ?? 10_000;
  const stats = { handled: 0, byStatus: {} as Record<string, number>, paused: false };
  const controller = new AbortController();
  // every consumer's poll sleep listens on this one signal: no listener-count warning above 10 consumers
  setMaxListeners(0, controller.signal);
  let stopping = false;

  const emit = (event: WorkerEvent) => options.onEvent?.(event);

  async function deadLettersFull(): Promise<boolean> {
    const [messageSize, toolSize] = await Promise.all([stores.messageDlq.size(), stores.toolDlq.size()]);
    const full = messageSize >= maxEntries ? ('message' as const) : toolSize >= maxEntries ? ('tool' as const) : undefined;
    if (full && !stats.paused) {
      stats.paused = true;
      emit({ type: 'dead-letter-full', queue: full, size: full === 'message' ? messageSize : toolSize, maxEntries, at: clock.now() });
    } else if (!full && stats.paused) {
      stats.paused = false;
      emit({ type: 'dead-letter-below-bound', queue: messageSize >= toolSize ? 'message' : 'tool', size: Math.max(messageSize, toolSize), at: clock.now() });
    }
    return full !== undefined;
  }

  /** Renews the lease of `delivery` while it is handled. */
  function renewLease(delivery: QueueDelivery): LeaseKeeper {
    const { queue } = stores;
    const extendLease = queue.extendLease.bind(queue);
    return keepLease({ queue: { extendLease }, delivery, leaseMs, clock, onError: options.onError });
  }

  async function consume(untilEmpty: boolean): Promise<void> {
    while (!stopping) {
      if (await deadLettersFull()) {
        if (untilEmpty) return;
        await clock.sleep(pollIntervalMs * 10, controller.signal).catch(() => undefined);
        continue;
      }
      const delivery = await stores.queue.reserve(leaseMs);
      if (!delivery) {
        if (untilEmpty) return;
        await clock.sleep(pollIntervalMs, controller.signal).catch(() => undefined);
        continue;
      }
      const lease = renewLease(delivery);
      try {
        // A redelivery after a crash between a dead-letter push and the ack adds no second entry:
        // handleMessage pushes by key (`DeadLetterQueue.pushOnce`) and reports `alreadyFinished`.
        let result: HandleMessageResult;
        try {
          result = await handleMessage(
            { body: delivery.body, id: delivery.id },
            { ...options, stores, queues: { messageDlq: stores.messageDlq, toolDlq: stores.toolDlq } },
          );
        } finally {
          await lease.stop();
        }
        await stores.queue.ack(delivery.id);
        stats.handled += 1;
        stats.byStatus[result.status] = (stats.byStatus[result.status] ?? 0) + 1;
        options.onResult?.(result);
      } catch (error) {
        options.onError?.(error);
        await stores.queue.release(delivery.id).catch(() => undefined);
        await clock.sleep(pollIntervalMs, controller.signal).catch(() => undefined);
      }
    }
  }

  return {
    run: async () => {
      await Promise.all(Array.from({ length: concurrency }, () => consume(false)));
    },
    runUntilEmpty: async () => {
      await Promise.all(Array.from({ length: concurrency }, () => consume(true)));
    },
    stop: () => {
      stopping = true;
      controller.abort();
    },
    stats,
  };
}
