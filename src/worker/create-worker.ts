import type { QueueDelivery, Stores } from '../ground/ports/stores.ts';
import { redactBounded } from '../core/build-failure.ts';
import { describeOne } from '../core/describe-thrown.ts';
import { handleMessage } from './handle-message.ts';
import type { HandleMessageResult } from './handle-message-options.ts';
import { deadLetterPoisonMessage } from './poison-message.ts';
import { recordDeliveryError } from './delivery-errors.ts';
import { keepLease, type LeaseKeeper } from './keep-lease.ts';
import { resolveRuntime } from './resolve-runtime.ts';
import { isTransientStoreError } from '../core/store-errors.ts';
import { workerSettings, type WorkerSettings } from './worker-settings.ts';
import type { WorkerOptions } from './worker-options.ts';
import { releaseDelivery } from './release-delivery.ts';
import { createDeadLetterBound, type DeadLetterBound } from './dead-letter-bound.ts';
import type { WorkerEvent } from './worker-events.ts';

/** The longest a worker goes without reading the DLQ totals while it takes messages, in ms. */
const DEAD_LETTER_RECHECK_MS = 1_000;

/**
 * The watch on the worker's DLQ bound: the totals are read after a message that did not complete,
 * while paused, and at least once a second; a failed read is the consumer's to count.
 */
function workerDeadLetterBound(stores: Stores, settings: WorkerSettings, onEvent: WorkerOptions['onEvent']): DeadLetterBound {
  return createDeadLetterBound({
    queues: stores,
    maxEntries: settings.maxEntries,
    maxBytes: settings.maxBytes,
    checkIntervalMs: DEAD_LETTER_RECHECK_MS,
    clock: settings.clock,
    onEvent,
    readErrors: 'reject',
    recheckWhilePaused: true,
  });
}

/**
 * How long a consumer waits after finding the queue empty: `pollIntervalMs`, or in `runUntilEmpty`
 * until the next message this worker released with a backoff is due (`delayed`, by id → due time;
 * entries a lease past due are forgotten), at most `leaseMs`.
 */
function emptyQueueWaitMs(delayed: Map<string, number>, settings: WorkerSettings, untilEmpty: boolean): number {
  const { clock, leaseMs, pollIntervalMs } = settings;
  const now = clock.now();
  for (const [id, dueAt] of delayed) if (dueAt <= now - leaseMs) delayed.delete(id);
  const nextDue = Math.min(...delayed.values());
  return untilEmpty && Number.isFinite(nextDue) ? Math.max(pollIntervalMs, Math.min(nextDue - now, leaseMs)) : pollIntervalMs;
}

/** Failed reads of the queue in a row after which `runUntilEmpty` rejects (about half a minute of backoff at the default poll interval). */
const STORE_FAILURES_UNTIL_EMPTY = 10;
/** The longest wait between two tries of a queue that failed, in ms. */
const STORE_RETRY_MAX_MS = 5_000;

/** A running consumer of the run queue. */
export interface Worker {
  /**
   * Starts consuming; resolves when `stop` was called and in-flight messages finished. A failed
   * read of the queue (an outage, a lock held past the busy timeout) goes to `onError` and is
   * tried again after a backoff (from `pollIntervalMs`, doubling, at most 5 s): the worker outlives
   * an outage.
   */
  run(): Promise<void>;
  /**
   * Consumes until the queue is empty and nothing is in flight, then resolves. When reading the
   * queue (or the DLQ totals) fails 10 times in a row, with backoff between tries (about half a
   * minute at the default `pollIntervalMs`), it stops the worker, lets the runs in hand finish and
   * rejects with the last error; nothing taken is lost (a message in hand is acknowledged or
   * released as always, one reserved but not handed over is delivered again when its lease ends).
   */
  runUntilEmpty(): Promise<void>;
  /** Graceful shutdown: takes no new message, lets in-flight runs finish. */
  stop(): void;
  readonly stats: { handled: number; byStatus: Record<string, number>; paused: boolean; failedDeliveries: number };
}

/**
 * Creates a worker that takes run-request messages from `stores.queue`, handles each with
 * {@link handleMessage} (the DLQs are `stores.messageDlq` and `stores.toolDlq`) and acknowledges it
 * once it reached a terminal place. The lease of a message being handled is renewed every
 * `leaseMs / 3` on the clock, so a long run is not handed to a second consumer. A worker that dies
 * mid-run leaves the message leased; it is delivered again when the lease expires and the run resumes from its checkpoint; a message that
 * had been dead-lettered is acknowledged without a second entry. `onResult` is called once per
 * acknowledged delivery.
 *
 * Poison messages: a delivery that throws (a bug, a store that rejects the run's data) is released
 * with a backoff (`redeliveryBackoff`) and counted; at `maxDeliveries` (default 5) the message is
 * dead-lettered with the last error — resumable from its checkpoint when its run had started — and
 * the worker goes on. A message whose earlier consumers crashed is dead-lettered the same way once
 * the queue has delivered it more than `maxDeliveries` times. Store outages are not counted. A run
 * claimed by a replay or drain (`busy`) is released for later, not counted.
 *
 * @throws ToolrunError `INVALID_OPTIONS` for `options` that is not an object, a `stores` that is a Promise (await
 * `createPostgresStores` first) or lacks a port, or a `concurrency`, `leaseMs`, `pollIntervalMs`,
 * DLQ bound, `maxDeliveries`, `redeliveryBackoff` or `checkpointRetry` out of range.
 */
export function createWorker(options: WorkerOptions): Worker {
  const settings = workerSettings(options);
  const { stores, clock, concurrency, leaseMs, pollIntervalMs, maxDeliveries, redeliveryDelayMs } = settings;
  // the runtime (schemas compiled once) and the shared breaker, built once for every message of this worker
  const resolved = resolveRuntime({ ...options, clock }, stores);
  const messageOptions = { ...options, stores, runtime: resolved.runtime, ...(resolved.breaker ? { modelBreaker: resolved.breaker } : {}) };
  const bound = workerDeadLetterBound(stores, settings, options.onEvent);
  const stats = {
    handled: 0,
    byStatus: {} as Record<string, number>,
    get paused() {
      return bound.paused;
    },
    failedDeliveries: 0,
  };
  /** Messages this worker released with a delay, by id → when they are due (epoch ms): `runUntilEmpty` waits for them. */
  const delayed = new Map<string, number>();
  // one controller per consumer, all aborted by stop(): no signal collects more than one sleeper's
  // listener, so there is no listener-count warning above 10 consumers (and no node:events import)
  const consumers = new Set<AbortController>();
  let stopping = false;

  const emit = (event: WorkerEvent) => options.onEvent?.(event);

  /** Renews the lease of `delivery` while it is handled. */
  function renewLease(delivery: QueueDelivery): LeaseKeeper {
    return keepLease({
      queue: stores.queue,
      delivery,
      leaseMs,
      clock,
      onError: (error) => options.onError?.(error),
      onLost: () => emit({ type: 'lease-lost', messageId: delivery.id, deliveries: delivery.deliveries, at: clock.now() }),
    });
  }

  function finished(result: HandleMessageResult): void {
    if (result.status !== 'completed') bound.invalidate();
    stats.handled += 1;
    stats.byStatus[result.status] = (stats.byStatus[result.status] ?? 0) + 1;
    options.onResult?.(result);
  }

  /** Gives `delivery` back (see {@link releaseDelivery}); a delayed one is waited for by `runUntilEmpty`. */
  async function release(delivery: QueueDelivery, delayMs: number, countDelivery: boolean): Promise<void> {
    const released = await releaseDelivery(stores.queue, delivery, { delayMs, countDelivery }, { clock, leaseMs, pollIntervalMs, onError: options.onError });
    if (released && delayMs > 0) delayed.set(delivery.id, clock.now() + delayMs);
  }

  /** A delivery threw: count it (unless the store was out), dead-letter it at the bound, else release it with a backoff. */
  async function failedDelivery(delivery: QueueDelivery, error: unknown): Promise<void> {
    bound.invalidate();
    options.onError?.(error);
    stats.failedDeliveries += 1;
    const transient = isTransientStoreError(error);
    const delayMs = redeliveryDelayMs(delivery.deliveries);
    const redactor = resolved.runtime.redactor;
    const shown = redactBounded(redactor, describeOne(error), 1024);
    if (!transient && delivery.deliveries >= maxDeliveries) {
      try {
        const result = await deadLetterPoisonMessage(
          { body: delivery.body, id: delivery.id },
          { ...messageOptions, stores, queues: { messageDlq: stores.messageDlq, toolDlq: stores.toolDlq }, lastError: error, deliveries: delivery.deliveries },
        );
        await stores.queue.ack(delivery.id);
        delayed.delete(delivery.id);
        finished(result);
        return;
      } catch (deadLetterError) {
        // the DLQ cannot take it now either: keep the message (released, counted), try again later
        options.onError?.(deadLetterError);
      }
    }
    emit({
      type: 'delivery-failed',
      messageId: delivery.id,
      deliveries: delivery.deliveries,
      maxDeliveries,
      counted: !transient,
      retryInMs: delayMs,
      error: shown,
      at: clock.now(),
    });
    if (!transient) await recordDeliveryError(stores.journal, delivery.id, error, redactor);
    await release(delivery, delayMs, !transient);
  }

  async function consume(untilEmpty: boolean): Promise<void> {
    const controller = new AbortController();
    consumers.add(controller);
    try {
      await consumeWith(untilEmpty, controller);
    } finally {
      consumers.delete(controller);
    }
  }

  async function consumeWith(untilEmpty: boolean, controller: AbortController): Promise<void> {
    // reads of the queue and the DLQ totals that failed in a row (an outage, a lock held past the busy timeout)
    let storeFailures = 0;
    while (!stopping) {
      let delivery: QueueDelivery | undefined;
      try {
        if (await bound.isFull()) {
          if (untilEmpty) return;
          await clock.sleep(pollIntervalMs * 10, controller.signal).catch(() => undefined);
          continue;
        }
        delivery = await stores.queue.reserve(leaseMs);
        storeFailures = 0;
      } catch (error) {
        // nothing was taken (a reservation that did go through is delivered again when its lease
        // ends): report it and try again after a backoff; runUntilEmpty gives up after a while
        bound.invalidate();
        storeFailures += 1;
        options.onError?.(error);
        if (untilEmpty && storeFailures >= STORE_FAILURES_UNTIL_EMPTY) throw error;
        await clock.sleep(Math.min(pollIntervalMs * 2 ** Math.min(storeFailures - 1, 20), STORE_RETRY_MAX_MS), controller.signal).catch(() => undefined);
        continue;
      }
      if (!delivery) {
        if (untilEmpty && delayed.size === 0) return;
        await clock.sleep(emptyQueueWaitMs(delayed, settings, untilEmpty), controller.signal).catch(() => undefined);
        continue;
      }
      delayed.delete(delivery.id);
      const lease = renewLease(delivery);
      let result: HandleMessageResult;
      try {
        // A redelivery after a crash between a dead-letter push and the ack adds no second entry:
        // handleMessage pushes by key (`DeadLetterQueue.pushOnce`) and reports `alreadyFinished`.
        try {
          result = await handleMessage(
            { body: delivery.body, id: delivery.id, deliveries: delivery.deliveries },
            {
              ...messageOptions,
              stores,
              queues: { messageDlq: stores.messageDlq, toolDlq: stores.toolDlq },
              maxDeliveries,
              claimLeaseMs: options.claimLeaseMs ?? leaseMs,
              acknowledgeOnFinish: true,
            },
          );
        } finally {
          await lease.stop();
        }
      } catch (error) {
        await failedDelivery(delivery, error);
        await clock.sleep(pollIntervalMs, controller.signal).catch(() => undefined);
        continue;
      }
      if (result.status === 'busy') {
        // a replay or drain holds the run: give the message back for later, without counting it
        await release(delivery, Math.max(pollIntervalMs, redeliveryDelayMs(1)), false);
        continue;
      }
      try {
        await stores.queue.ack(delivery.id);
      } catch (error) {
        // handled, but the ack did not go through: redelivered, the run's checkpoint makes that a no-op
        await failedDelivery(delivery, error);
        continue;
      }
      finished(result);
    }
  }

  function stop(): void {
    stopping = true;
    for (const controller of consumers) controller.abort();
  }

  return {
    run: async () => {
      await Promise.all(Array.from({ length: concurrency }, () => consume(false)));
    },
    runUntilEmpty: async () => {
      // a consumer that gives up stops the others, which finish the runs in hand first
      const ended = await Promise.allSettled(
        Array.from({ length: concurrency }, () =>
          consume(true).catch((error: unknown) => {
            stop();
            throw error;
          }),
        ),
      );
      const failed = ended.find((outcome) => outcome.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
    },
    stop,
    stats,
  };
}
