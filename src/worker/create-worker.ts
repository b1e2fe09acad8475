import { systemClock, type Clock } from '../ground/ports/clock.ts';
import type { DeadLetterQueue, QueueDelivery, Stores } from '../ground/ports/stores.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { redactBounded } from '../core/build-failure.ts';
import { handleMessage, type HandleMessageOptions, type HandleMessageResult } from './handle-message.ts';
import { deadLetterPoisonMessage } from './poison-message.ts';
import { recordDeliveryError } from './delivery-errors.ts';
import { keepLease, type LeaseKeeper } from './keep-lease.ts';
import { resolveRuntime } from './resolve-runtime.ts';
import { isTransientStoreError } from '../core/store-errors.ts';
import { checkpointRetryOf } from '../agent/run-agent.ts';
import type { WorkerEvent } from './worker-events.ts';
import { storesProblem } from './check-stores.ts';

/** Failed reads of the queue in a row after which `runUntilEmpty` rejects (about half a minute of backoff at the default poll interval). */
const STORE_FAILURES_UNTIL_EMPTY = 10;
/** The longest wait between two tries of a queue that failed, in ms. */
const STORE_RETRY_MAX_MS = 5_000;

/** The longest a worker goes without reading the DLQ totals while it takes messages, in ms. */
const DEAD_LETTER_RECHECK_MS = 1_000;

/** Options of {@link createWorker}. Durations in milliseconds. */
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
   * later. @defaultValue 300_000
   */
  leaseMs?: number;
  /** Wait between polls of an empty queue. @defaultValue 100 */
  pollIntervalMs?: number;
  /**
   * Bound of each DLQ. At the bound the worker stops taking new messages and raises
   * `dead-letter-full`; it never drops an entry. The totals are read before a message is taken
   * whenever this worker's last message did not complete, and at least once a second otherwise, so
   * entries other processes add may pass the bound by what they add in that second.
   * @defaultValue 10_000
   */
  maxDeadLetterEntries?: number;
  /** Bound of each DLQ in bytes of stored JSON (`DeadLetterQueue.bytes`), enforced like `maxDeadLetterEntries`. @defaultValue 268_435_456 (256 MiB) */
  maxDeadLetterBytes?: number;
  /**
   * Waits before a failed delivery is delivered again: `baseMs · 2^(deliveries − 1)`, at most
   * `maxMs`. A failure of the message itself counts toward `maxDeliveries`; a store outage
   * (unreachable, restarting, busy) is redelivered after the same wait without counting.
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
 * @throws ToolrunError `INVALID_OPTIONS` for a `stores` that is a Promise (await
 * `createPostgresStores` first) or lacks a port, or a `concurrency`, `leaseMs`, `pollIntervalMs` or
 * `checkpointRetry` out of range.
 */
export function createWorker(options: WorkerOptions): Worker {
  const { stores } = options;
  const storesIssue = storesProblem(stores);
  if (storesIssue !== undefined) throw new ToolrunError('INVALID_OPTIONS', `createWorker: ${storesIssue}`);
  const clock = options.clock ?? systemClock;
  const concurrency = options.concurrency ?? 1;
  const leaseMs = options.leaseMs ?? 300_000;
  const pollIntervalMs = options.pollIntervalMs ?? 100;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 10_000)
    throw new ToolrunError(
      'INVALID_OPTIONS',
      `concurrency must be an integer from 1 to 10000, received ${typeof concurrency === 'string' ? `the string ${JSON.stringify(concurrency)}` : String(concurrency)}`,
    );
  // both are timer delays (a lease is renewed every third of it): Node fires longer ones at once
  for (const [name, value] of [
    ['leaseMs', leaseMs],
    ['pollIntervalMs', pollIntervalMs],
  ] as const) {
    if (!(typeof value === 'number' && Number.isFinite(value) && value > 0 && value * 10 <= 2_147_483_647)) {
      throw new ToolrunError('INVALID_OPTIONS', `${name} must be a positive number of ms up to 214748364, received ${String(value)}`);
    }
  }
  const maxEntries = options.maxDeadLetterEntries ?? 10_000;
  const maxBytes = options.maxDeadLetterBytes ?? 268_435_456;
  const maxDeliveries = options.maxDeliveries ?? 5;
  // checked here, once: a bad value would otherwise fail every delivery
  checkpointRetryOf(options.checkpointRetry);
  const backoff = options.redeliveryBackoff ?? { baseMs: 1_000, maxMs: 60_000 };
  for (const [name, value] of [
    ['maxDeadLetterEntries', maxEntries],
    ['maxDeadLetterBytes', maxBytes],
    ['redeliveryBackoff.maxMs', backoff.maxMs],
  ] as const) {
    if (!(typeof value === 'number' && value > 0 && value <= Number.MAX_SAFE_INTEGER))
      throw new ToolrunError('INVALID_OPTIONS', `${name} must be a positive number, received ${String(value)}`);
  }
  if (!Number.isInteger(maxDeliveries) || maxDeliveries < 1)
    throw new ToolrunError('INVALID_OPTIONS', `maxDeliveries must be an integer ≥ 1, received ${String(maxDeliveries)}`);
  if (!(backoff.baseMs >= 0 && backoff.baseMs <= backoff.maxMs && backoff.maxMs <= 2_147_483_647)) {
    throw new ToolrunError('INVALID_OPTIONS', `redeliveryBackoff must have 0 ≤ baseMs ≤ maxMs ≤ 2147483647, received ${JSON.stringify(backoff)}`);
  }
  const redeliveryDelayMs = (deliveries: number) => Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(30, Math.max(0, deliveries - 1)));
  // the runtime (schemas compiled once) and the shared breaker, built once for every message of this worker
  const resolved = resolveRuntime({ ...options, clock }, stores);
  const messageOptions = { ...options, runtime: resolved.runtime, ...(resolved.breaker ? { modelBreaker: resolved.breaker } : {}) };
  const stats = { handled: 0, byStatus: {} as Record<string, number>, paused: false, failedDeliveries: 0 };
  /** Messages this worker released with a delay, by id → when they are due (epoch ms): `runUntilEmpty` waits for them. */
  const delayed = new Map<string, number>();
  // one controller per consumer, all aborted by stop(): no signal collects more than one sleeper's
  // listener, so there is no listener-count warning above 10 consumers (and no node:events import)
  const consumers = new Set<AbortController>();
  let stopping = false;

  const emit = (event: WorkerEvent) => options.onEvent?.(event);

  const bytesOf = async (queue: Pick<DeadLetterQueue<unknown>, 'bytes'>) => (typeof queue.bytes === 'function' ? await queue.bytes() : 0);
  // The DLQ totals are read again only when they may have moved towards the bound: after this
  // worker handled a message that did not complete (it may have dead-lettered), while paused, and
  // at least every DEAD_LETTER_RECHECK_MS for what other processes add. A run that completes adds
  // nothing, so a busy worker does not read four totals before every message.
  let deadLettersReadAt = Number.NEGATIVE_INFINITY;
  let deadLettersMoved = true;
  async function deadLettersFull(): Promise<boolean> {
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
  }

  /** Renews the lease of `delivery` while it is handled. */
  function renewLease(delivery: QueueDelivery): LeaseKeeper {
    const { queue } = stores;
    const extendLease = queue.extendLease.bind(queue);
    return keepLease({
      queue: { extendLease },
      delivery,
      leaseMs,
      clock,
      onError: (error) => options.onError?.(error),
      onLost: () => emit({ type: 'lease-lost', messageId: delivery.id, deliveries: delivery.deliveries, at: clock.now() }),
    });
  }

  function finished(result: HandleMessageResult): void {
    if (result.status !== 'completed') deadLettersMoved = true;
    stats.handled += 1;
    stats.byStatus[result.status] = (stats.byStatus[result.status] ?? 0) + 1;
    options.onResult?.(result);
  }

  /**
   * Gives `delivery` back. A release that fails (the store is out) is reported and tried again with
   * backoff (from `pollIntervalMs`, doubling, at most 5 s) until it goes through or the lease it
   * gives back would have ended anyway: a release given up on leaves the message to wait out its
   * lease, and the reservation after that counts a delivery that `countDelivery: false` meant to
   * give back. Stopping the worker does not cut it short.
   */
  async function release(delivery: QueueDelivery, delayMs: number, countDelivery: boolean): Promise<void> {
    const leaseEndsAt = clock.now() + leaseMs;
    for (let failures = 0; ; failures++) {
      try {
        // keyed by the delivery: a consumer whose lease ended cannot release another consumer's delivery
        await stores.queue.release(delivery.id, { delayMs: Math.ceil(delayMs), countDelivery, deliveries: delivery.deliveries });
        break;
      } catch (error) {
        options.onError?.(error);
        const waitMs = Math.min(pollIntervalMs * 2 ** Math.min(failures, 20), STORE_RETRY_MAX_MS);
        if (clock.now() + waitMs >= leaseEndsAt) return;
        await clock.sleep(waitMs);
      }
    }
    if (delayMs > 0) delayed.set(delivery.id, clock.now() + delayMs);
  }

  /** A delivery threw: count it (unless the store was out), dead-letter it at the bound, else release it with a backoff. */
  async function failedDelivery(delivery: QueueDelivery, error: unknown): Promise<void> {
    deadLettersMoved = true;
    options.onError?.(error);
    stats.failedDeliveries += 1;
    const transient = isTransientStoreError(error);
    const delayMs = redeliveryDelayMs(delivery.deliveries);
    let errorText: string;
    try {
      errorText = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    } catch {
      errorText = 'an unreadable error';
    }
    const redactor = resolved.runtime.redactor;
    const shown = redactBounded(redactor, errorText, 1024);
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
    if (!transient) await recordDeliveryError(stores, delivery.id, error, redactor);
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
        if (await deadLettersFull()) {
          if (untilEmpty) return;
          await clock.sleep(pollIntervalMs * 10, controller.signal).catch(() => undefined);
          continue;
        }
        delivery = await stores.queue.reserve(leaseMs);
        storeFailures = 0;
      } catch (error) {
        // nothing was taken (a reservation that did go through is delivered again when its lease
        // ends): report it and try again after a backoff; runUntilEmpty gives up after a while
        deadLettersMoved = true;
        storeFailures += 1;
        options.onError?.(error);
        if (untilEmpty && storeFailures >= STORE_FAILURES_UNTIL_EMPTY) throw error;
        await clock.sleep(Math.min(pollIntervalMs * 2 ** Math.min(storeFailures - 1, 20), STORE_RETRY_MAX_MS), controller.signal).catch(() => undefined);
        continue;
      }
      if (!delivery) {
        if (untilEmpty && delayed.size === 0) return;
        // in runUntilEmpty, wait for the messages this worker released with a backoff
        const now = clock.now();
        for (const [id, dueAt] of delayed) if (dueAt <= now - leaseMs) delayed.delete(id);
        const nextDue = Math.min(...delayed.values());
        const waitMs = untilEmpty && Number.isFinite(nextDue) ? Math.max(pollIntervalMs, Math.min(nextDue - now, leaseMs)) : pollIntervalMs;
        await clock.sleep(waitMs, controller.signal).catch(() => undefined);
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
