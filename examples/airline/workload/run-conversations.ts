/**
 * Runs toolrun's worker over the airline conversations: enqueues the first run of every
 * conversation (plus any extra messages), and each further run once the run before it answered
 * (see `conversation-scheduler.ts`), until every conversation is finished or parked in the tool DLQ.
 */
import type { AgentRunHooks } from '../../../src/agent/run-agent.ts';
import type { Stores } from '../../../src/ground/ports/stores.ts';
import type { ToolCallRecord } from '../../../src/core/tool-call-record.ts';
import type { Redactor } from '../../../src/core/redact.ts';
import type { WorkerEvent } from '../../../src/worker/worker-events.ts';
import { createWorker } from '../../../src/worker/create-worker.ts';
import type { HandleMessageOptions, HandleMessageResult } from '../../../src/worker/handle-message-options.ts';
import type { AirlineWorkerConfig } from './airline-worker-config.ts';
import type { ConversationScheduler } from './conversation-scheduler.ts';
import { runQueueMessage, type WorkloadQueueMessage } from './queue-messages.ts';
import type { WorkloadObserver } from './workload-observer.ts';

/** Options of {@link runConversations}. */
export interface RunConversationsOptions {
  /**
   * The stores the worker consumes from (their `queue`), wrapped by {@link observeReservations}.
   * Pass the same object to every phase: the worker's runtime (and its per-session breakers) is
   * cached per stores object, as it would live on in one worker process.
   */
  stores: Stores;
  config: AirlineWorkerConfig;
  scheduler: ConversationScheduler;
  /** Messages to enqueue before the worker starts (first runs, malformed messages, resumed conversations). */
  initialMessages: readonly WorkloadQueueMessage[];
  observer: WorkloadObserver;
  /** Messages handled at once (different conversations). */
  concurrency: number;
  /** Called after every handled message. */
  onHandled?: (result: HandleMessageResult) => void;
  /** Epoch ms. @defaultValue `Date.now` */
  now?: () => number;
  /**
   * toolrun/otel's hooks (`createObservability()`), plugged into the worker like `toolrun worker`
   * does, with the redactor they share with the runtime. Pass the same object to every phase: the
   * runtime, and so its `onCallEnd`, is built once per stores object.
   */
  observability?: WorkerObservability;
}

/** What {@link runConversations} plugs into the worker from `createObservability()` (toolrun/otel). */
export interface WorkerObservability {
  onCallEnd(record: ToolCallRecord): void;
  runHooks: AgentRunHooks;
  onEvent(event: WorkerEvent): void;
  /** The redactor of the observers; the runtime uses it too, so logs and envelopes redact alike. */
  redactor: Redactor;
}

/** What a phase left behind besides the observer's counts. */
export interface RunConversationsOutcome {
  /** Store failures while handling a message (each message was released and handled again). */
  storeErrors: string[];
}

/**
 * The same stores, with a hook called when the queue hands out a message (epoch ms), to time runs
 * from their reservation to their terminal place.
 */
export function observeReservations(stores: Stores, onReserved: (messageId: string, atMs: number) => void, now: () => number = Date.now): Stores {
  const queue = stores.queue;
  return {
    ...stores,
    queue: {
      enqueue: (message) => queue.enqueue(message),
      ack: (id) => queue.ack(id),
      release: (id) => queue.release(id),
      extendLease: (id, deliveries, leaseMs) => queue.extendLease(id, deliveries, leaseMs),
      size: () => queue.size(),
      reserve: async (leaseMs) => {
        const delivery = await queue.reserve(leaseMs);
        if (delivery !== undefined) onReserved(delivery.id, now());
        return delivery;
      },
    },
  };
}

/**
 * The `handleMessage` options every worker of the workload runs with, whatever delivers the
 * messages (`createWorker` here, or BullMQ's worker): the config's model (each call counted by
 * `observer`), tools and policies, the observer's tool-call and event hooks, and toolrun/otel's
 * hooks and redactor when `observability` is given. Without `stores`, `queues`, `signal`,
 * concurrency or result hooks: those belong to the consumer.
 */
export function workloadHandleOptions(
  options: Pick<RunConversationsOptions, 'config' | 'observer' | 'observability'>,
): Omit<HandleMessageOptions, 'queues' | 'stores' | 'signal'> {
  const { config, observer, observability } = options;
  return {
    model: async (request) => {
      observer.modelCalled(request.runId);
      return config.model(request);
    },
    tools: config.tools,
    runtimeOptions: observability ? { ...config.runtimeOptions, redact: observability.redactor, onCallEnd: observability.onCallEnd } : config.runtimeOptions,
    ...(observability ? { runHooks: observability.runHooks } : {}),
    sharedBreaker: config.sharedBreaker,
    toolRetryBudget: config.toolRetryBudget,
    maxSteps: config.maxSteps,
    onToolCall: (record) => observer.toolCalled(record),
    onEvent: (event) => {
      observability?.onEvent(event);
      observer.workerEvent(event);
    },
  };
}

/**
 * Tells `scheduler` that a handled message's run ended, and returns the message of its
 * conversation's next run to enqueue, if any (none for a rejected message, a parked or finished
 * conversation).
 */
export function nextRunMessage(scheduler: ConversationScheduler, result: HandleMessageResult): WorkloadQueueMessage | undefined {
  // a rejected or poison message, or one whose run another consumer holds, starts no next run here
  if (result.status === 'rejected' || result.status === 'delivery_limit_exceeded' || result.status === 'busy') return undefined;
  const step = scheduler.runEnded(result.runId, result.status);
  return step.state === 'next' ? runQueueMessage(step.run) : undefined;
}

/**
 * Runs the worker until every enqueued message was handled and no conversation has a run left to
 * release. Resolves when the worker has stopped (no run in flight).
 *
 * @throws the store's error when enqueuing a released run fails (the worker is stopped first).
 */
export async function runConversations(options: RunConversationsOptions): Promise<RunConversationsOutcome> {
  const { stores, scheduler, observer } = options;
  const now = options.now ?? Date.now;
  const storeErrors: string[] = [];
  let pending = 0;
  let enqueueFailure: unknown;
  const enqueues = new Set<Promise<unknown>>();

  const enqueue = (message: WorkloadQueueMessage) => {
    pending += 1;
    const promise = stores.queue.enqueue(message).catch((error: unknown) => {
      enqueueFailure ??= error;
      worker.stop();
    });
    enqueues.add(promise);
    void promise.finally(() => enqueues.delete(promise));
  };

  const worker = createWorker({
    stores,
    ...workloadHandleOptions(options),
    concurrency: options.concurrency,
    pollIntervalMs: 5,
    onError: (error) => storeErrors.push(error instanceof Error ? error.message : String(error)),
    onResult: (result) => {
      observer.messageHandled(result, now());
      const next = nextRunMessage(scheduler, result);
      if (next !== undefined) enqueue(next);
      pending -= 1;
      options.onHandled?.(result);
      if (pending === 0) worker.stop();
    },
  });

  for (const message of options.initialMessages) enqueue(message);
  if (pending === 0) return { storeErrors };
  await Promise.all([...enqueues]);
  await worker.run();
  await Promise.all([...enqueues]);
  if (enqueueFailure !== undefined) throw enqueueFailure;
  return { storeErrors };
}
