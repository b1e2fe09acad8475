import { DelayedError, Worker, type ConnectionOptions, type Job, type WorkerOptions } from 'bullmq';
import { systemClock } from '../../ground/ports/clock.ts';
import type { RunQueue, Stores } from '../../ground/ports/stores.ts';
import { redactBounded } from '../../core/build-failure.ts';
import { describeOne } from '../../core/describe-thrown.ts';
import { handleMessage } from '../../worker/handle-message.ts';
import type { HandleMessageOptions, HandleMessageResult } from '../../worker/handle-message-options.ts';
import { deadLetterPoisonMessage } from '../../worker/poison-message.ts';
import { recordDeliveryError } from '../../worker/delivery-errors.ts';
import { resolveRuntime } from '../../worker/resolve-runtime.ts';
import { isTransientStoreError } from '../../core/store-errors.ts';
import { createDeadLetterBound } from '../../worker/dead-letter-bound.ts';
import { workerSettings } from '../../worker/worker-settings.ts';
import { optionProblems, throwIfProblems } from '../../worker/check-options.ts';
import { fromJobId } from './job-id.ts';
import type { RunJobData } from './run-job.ts';

/** The two dead-letter queues the worker writes to. */
export type WorkerDeadLetterQueues = Pick<Stores, 'messageDlq' | 'toolDlq'>;

/** What the worker acknowledges a request in (`RunQueue.ack`: idempotent), when requests are also recorded in an outbox. */
export type RunRequestAcknowledger = Pick<RunQueue, 'ack'>;

/** Options of {@link createBullMqWorker}. Durations in milliseconds. */
export interface BullMqWorkerOptions extends Omit<HandleMessageOptions, 'queues' | 'stores' | 'signal'> {
  /** The Redis connection (ioredis options or client), as BullMQ takes it. */
  connection: ConnectionOptions;
  /** The BullMQ queue holding run requests (see `enqueueRun`). */
  queueName: string;
  /** Conversations, checkpoints, ledger, breaker state: shared by every worker (e.g. `toolrun/postgres`). */
  stores: Stores;
  /** Where dead letters go. @defaultValue `stores.messageDlq` and `stores.toolDlq` */
  deadLetterQueues?: WorkerDeadLetterQueues;
  /** The outbox the requests were recorded in by `enqueueRun` (e.g. `stores.queue` of `toolrun/postgres`): acknowledged after each message. */
  outbox?: RunRequestAcknowledger;
  /** Messages handled at once by this process. @defaultValue 1 */
  concurrency?: number;
  /**
   * How long a job stays locked to this worker without a renewal (renewed every half of it while
   * the worker lives). A killed worker's jobs are redelivered after at most this plus
   * `stalledIntervalMs`. @defaultValue 30_000
   */
  lockDurationMs?: number;
  /** How often the worker looks for stalled jobs (those whose worker died). @defaultValue 30_000 */
  stalledIntervalMs?: number;
  /** Stalls after which BullMQ fails a job instead of redelivering it. @defaultValue 1_000_000 (never, in practice) */
  maxStalledCount?: number;
  /** Retry delays after a store failure: `baseMs · 2^(attempt − 1)`, at most `maxMs`. @defaultValue `{ baseMs: 1000, maxMs: 60_000 }` */
  retryBackoff?: { baseMs: number; maxMs: number };
  /** Bound of each DLQ: at the bound the worker stops taking messages and raises `dead-letter-full`. @defaultValue 10_000 */
  maxDeadLetterEntries?: number;
  /** Bound of each DLQ in bytes of stored JSON (`DeadLetterQueue.bytes`), enforced like `maxDeadLetterEntries`. @defaultValue 268_435_456 (256 MiB) */
  maxDeadLetterBytes?: number;
  /** How often the DLQ sizes are read against the bound. @defaultValue 1_000 */
  deadLetterCheckIntervalMs?: number;
  /**
   * Deliveries of one job before it is dead-lettered as a poison message, counting failed attempts
   * and stalls (a worker that died holding it): at the bound the job is dead-lettered with its last
   * error — resumable from the run's checkpoint when the run had started — and completed, so the
   * worker goes on. Store outages are retried with the backoff without counting. @defaultValue 5
   */
  maxDeliveries?: number;
  /** Other BullMQ worker options (`prefix`, `drainDelay`, `limiter`, …). */
  workerOptions?: Omit<WorkerOptions, 'connection' | 'concurrency' | 'autorun' | 'settings' | 'lockDuration' | 'stalledInterval' | 'maxStalledCount'>;
  /** Start consuming at once. @defaultValue true */
  autorun?: boolean;
  /** Called after each handled message. */
  onResult?: (result: HandleMessageResult) => void;
  /** A store failure while handling a message (the job is retried), or an error of the BullMQ worker. */
  onError?: (error: unknown) => void;
}

/** A running toolrun worker on BullMQ. */
export interface BullMqRunWorker {
  /** The BullMQ worker (events: `completed`, `failed`, `stalled`, …). */
  readonly worker: Worker<RunJobData>;
  readonly stats: { handled: number; byStatus: Record<string, number>; paused: boolean; failedDeliveries: number };
  /** Starts consuming when created with `autorun: false`. */
  run(): Promise<void>;
  /** Graceful shutdown: takes no new job, waits for the active ones, closes the connections. */
  close(): Promise<void>;
}

/** The job's message: `{ body, messageId }` as `enqueueRun` writes it; any other data is taken as the body itself. */
function messageOf(job: Job<RunJobData>): { body: string; id: string } {
  const data = job.data as unknown;
  const id = typeof (data as RunJobData)?.messageId === 'string' ? (data as RunJobData).messageId : fromJobId(job.id ?? '');
  if (typeof data === 'string') return { body: data, id };
  if (typeof (data as RunJobData)?.body === 'string') return { body: (data as RunJobData).body, id };
  return { body: JSON.stringify(data) ?? String(data), id };
}

/**
 * Creates a toolrun worker on BullMQ's `Worker`: each job of `queueName` is one run-request
 * message, handled by `handleMessage` with the shared `stores` — the same routing
 * as every toolrun worker — and completed once it reached a terminal place (completed run, message DLQ or tool
 * DLQ). The job's return value is `{ status, runId }`.
 *
 * Crashes: a worker that dies mid-run stops renewing its job locks; another worker's stalled-job
 * check moves the job back to wait and it is delivered again, and the run resumes from its last
 * checkpoint (the idempotency ledger keeps recorded tool calls from running again). Dead letters
 * are pushed by `handleMessage` with `pushOnce` (key `message:<id>` or `tool:<runId>:<stepIndex>`),
 * so a redelivery after a crash between the push and the completion adds no second entry.
 *
 * Failures: when `handleMessage` throws because a store is out (unreachable, restarting, busy),
 * the job is delayed by the capped exponential backoff and tried again without counting, until the
 * store is back. Any other throw (a bug, a store that rejects the run's data) fails the attempt,
 * which BullMQ retries with the same backoff; the attempts and stalls of a job count as its
 * deliveries, and at `maxDeliveries` the job is dead-lettered as a poison message (with its last
 * error, resumable when its run had started) and completed.
 *
 * Bound: when a DLQ holds `maxDeadLetterEntries`, the job in hand is put back (delayed) and the
 * worker pauses, raising `dead-letter-full`; it resumes when the DLQ is below the bound again.
 *
 * @throws ToolrunError `INVALID_OPTIONS` for `options` that is not an object, a `stores` that is a Promise or lacks a port, or a
 * `concurrency`, DLQ bound, `maxDeliveries`, `retryBackoff` (named `redeliveryBackoff` in the
 * message) or `checkpointRetry` out of range.
 */
export function createBullMqWorker(options: BullMqWorkerOptions): BullMqRunWorker {
  // `null` is INVALID_OPTIONS like any other bad option, not a TypeError from reading its fields
  throwIfProblems(optionProblems(options, []), 'INVALID_OPTIONS', 'createBullMqWorker');
  const { connection, queueName } = options;
  const { stores, clock, concurrency, maxEntries, maxBytes, maxDeliveries, redeliveryDelayMs } = workerSettings(
    {
      ...options,
      clock: options.clock ?? options.runtimeOptions?.clock ?? systemClock,
      ...(options.retryBackoff ? { redeliveryBackoff: options.retryBackoff } : {}),
    },
    'createBullMqWorker',
  );
  const queues = options.deadLetterQueues ?? { messageDlq: stores.messageDlq, toolDlq: stores.toolDlq };
  const checkIntervalMs = options.deadLetterCheckIntervalMs ?? 1_000;
  const stats = { handled: 0, byStatus: {} as Record<string, number>, paused: false, failedDeliveries: 0 };
  const bound = createDeadLetterBound({
    queues,
    maxEntries,
    maxBytes,
    checkIntervalMs,
    clock,
    onEvent: options.onEvent,
  });
  const { outbox, lockDurationMs, stalledIntervalMs, maxStalledCount, workerOptions, autorun, onResult, onError } = options;
  // the runtime (schemas compiled once) and the shared breaker, built once for every job of this worker
  const resolved = resolveRuntime({ ...options, clock }, stores);
  const messageOptions = { ...options, stores, runtime: resolved.runtime, ...(resolved.breaker ? { modelBreaker: resolved.breaker } : {}) };

  const finish = async (message: { body: string; id: string }, result: HandleMessageResult) => {
    // a dead letter may have reached the bound: the next job reads the sizes instead of the cache
    if (result.status === 'rejected' || result.status === 'tool_failed' || result.status === 'model_failed' || result.status === 'delivery_limit_exceeded')
      bound.invalidate();
    if (outbox) await outbox.ack(message.id);
    stats.handled += 1;
    stats.byStatus[result.status] = (stats.byStatus[result.status] ?? 0) + 1;
    onResult?.(result);
    return { status: result.status, runId: result.runId };
  };
  let resumeTimer: ReturnType<typeof setInterval> | undefined;

  const pauseUntilBelowBound = (worker: Worker<RunJobData>) => {
    if (resumeTimer !== undefined) return;
    stats.paused = true;
    void worker.pause(true).catch((error: unknown) => onError?.(error));
    resumeTimer = setInterval(() => {
      void bound.isFull().then((full) => {
        if (full || resumeTimer === undefined) return;
        clearInterval(resumeTimer);
        resumeTimer = undefined;
        stats.paused = false;
        worker.resume();
      });
    }, checkIntervalMs);
  };

  const worker: Worker<RunJobData> = new Worker<RunJobData>(
    queueName,
    async (job, token) => {
      if (await bound.isFull()) {
        pauseUntilBelowBound(worker);
        await job.moveToDelayed(Date.now() + checkIntervalMs, token);
        throw new DelayedError();
      }
      const message = messageOf(job);
      // deliveries: this one, plus the earlier ones that failed for the message's own sake (store
      // outages are not counted: they are kept apart in the job's data) and the stalls (a dead worker)
      const counted =
        typeof (job.data as { failedDeliveries?: unknown })?.failedDeliveries === 'number' ? (job.data as { failedDeliveries: number }).failedDeliveries : 0;
      const deliveries = counted + (typeof job.stalledCounter === 'number' ? job.stalledCounter : 0) + 1;
      let result: HandleMessageResult;
      try {
        result = await handleMessage(
          { ...message, deliveries },
          // the run's claim lapses with the job's lock when this worker closes (or is closed by force mid-run)
          {
            ...messageOptions,
            stores,
            queues,
            maxDeliveries,
            claimLeaseMs: options.claimLeaseMs ?? lockDurationMs ?? 30_000,
            holdClaimWhile: () => !worker.closing,
          },
        );
      } catch (error) {
        stats.failedDeliveries += 1;
        const transient = isTransientStoreError(error);
        const redactor = resolved.runtime.redactor;
        const shown = redactBounded(redactor, describeOne(error), 1024);
        if (!transient && deliveries >= maxDeliveries) {
          onError?.(error);
          const poisoned = await deadLetterPoisonMessage(message, { ...messageOptions, stores, queues, lastError: error, deliveries });
          return finish(message, poisoned);
        }
        const retryInMs = redeliveryDelayMs(job.attemptsMade + 1);
        options.onEvent?.({
          type: 'delivery-failed',
          messageId: message.id,
          deliveries,
          maxDeliveries,
          counted: !transient,
          retryInMs,
          error: shown,
          at: clock.now(),
        });
        if (!transient) {
          await recordDeliveryError(stores.journal, message.id, error, redactor);
          await job.updateData({ ...(job.data as RunJobData), failedDeliveries: counted + 1 } as RunJobData).catch(() => undefined);
        }
        throw error; // BullMQ retries it with the backoff
      }
      if (result.status === 'busy') {
        // a replay or drain holds the run: later, not counted
        await job.moveToDelayed(Date.now() + redeliveryDelayMs(1), token);
        throw new DelayedError();
      }
      return finish(message, result);
    },
    {
      ...workerOptions,
      connection,
      concurrency,
      autorun: autorun ?? true,
      lockDuration: lockDurationMs ?? 30_000,
      stalledInterval: stalledIntervalMs ?? 30_000,
      // stalls count as deliveries (handleMessage dead-letters past maxDeliveries): BullMQ must not fail the job first
      maxStalledCount: maxStalledCount ?? 1_000_000,
      settings: {
        backoffStrategy: redeliveryDelayMs,
      },
    },
  );
  worker.on('error', (error) => onError?.(error));
  worker.on('failed', (_job, error) => onError?.(error));

  return {
    worker,
    stats,
    run: () => worker.run(),
    async close() {
      if (resumeTimer !== undefined) clearInterval(resumeTimer);
      resumeTimer = undefined;
      await worker.close();
    },
  };
}
