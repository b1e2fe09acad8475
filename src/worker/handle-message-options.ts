import type { AgentRunHooks, AgentRunStatus } from '../agent/run-agent.ts';
import type { CheckpointRetryOptions } from '../policies/retry-durable-write.ts';
import type { Model } from '../agent/messages.ts';
import type { ToolRuntime } from '../core/create-tool-runtime.ts';
import type { ToolsInput } from '../core/tool-registry.ts';
import type { Clock } from '../ground/ports/clock.ts';
import type { Stores } from '../ground/ports/stores.ts';
import type { DeadLetterSink, MessageFailureEntry, ModelFailureEntry, ToolFailureEntry } from '../ground/dead-letter-entries.ts';
import type { RunHooks, RunLimits, RunModelOptions, RunRuntimeOptions } from './run-options.ts';

/** A queue message that asks for one agent run. */
export interface RunMessage {
  /** JSON text, validated against `RUN_REQUEST_SCHEMA`. */
  body: string;
  /**
   * The queue's message id: a redelivered message with the same id resumes the same run. At most
   * 1,024 UTF-8 bytes (`MAX_ID_BYTES`, what every queue takes): a longer one is rejected to the message DLQ.
   */
  id?: string;
  /**
   * How many times the queue has delivered this message, this delivery included (1 the first
   * time). Past `maxDeliveries` the message is dead-lettered without running (a poison message:
   * every earlier delivery failed or crashed its consumer). @defaultValue 1
   */
  deliveries?: number;
}

/** Options of {@link handleMessage}. Durations in milliseconds. */
export interface HandleMessageOptions extends RunLimits, Pick<RunHooks, 'onEvent' | 'onToolCall'>, RunModelOptions, RunRuntimeOptions {
  model: Model;
  /** Tools to build the runtime from, for this call (a worker or `createToolrun` builds it once). */
  tools?: ToolsInput;
  /** A ready runtime (then the shared breaker is whatever it was built with). */
  runtime?: ToolRuntime;
  /**
   * The two dead-letter sinks: anything with `push`. Sinks with `pushOnce` (every
   * `DeadLetterQueue`) are pushed to by key — `message:<messageId>` (when the message has an id)
   * and `tool:<runId>:<stepIndex>` — so handling a message again adds no second entry.
   * @defaultValue `stores.messageDlq` and `stores.toolDlq`
   */
  queues?: { messageDlq: DeadLetterSink<MessageFailureEntry>; toolDlq: DeadLetterSink<ToolFailureEntry> };
  /**
   * Conversations, checkpoints, ledger, claims, breaker state. @defaultValue fresh in-memory stores
   * for this call only (nothing is shared between calls unless the caller passes the same `stores`)
   */
  stores?: Stores;
  /** Run-level observers passed to `runAgent` (e.g. `createObservability().runHooks` of `toolrun/otel`). */
  runHooks?: AgentRunHooks;
  /**
   * How long the claim on the run (`run:<runId>` in `stores.claims`) lasts without renewal; it is
   * renewed every third of it while the run goes on. A replay or drain of the same run meanwhile
   * finds it busy. @defaultValue 300_000
   */
  claimLeaseMs?: number;
  /**
   * The claim on the run is renewed only while this returns true (a queue consumer passes "my
   * lease still holds", so a consumer shut down mid-run lets the claim lapse with its lease).
   * @defaultValue always
   */
  holdClaimWhile?: () => boolean;
  /**
   * The message came from `stores.queue` and the caller acknowledges it once this call returns: a
   * run that ends needing nothing more (`completed`, `max_steps`, `deadline_exceeded`, `cancelled`)
   * then asks the journal to acknowledge it with the run's last commit (`RunJournal.finish`), one
   * commit less where the journal keeps the queue (SQLite). A run that ends in a dead-letter entry
   * is acknowledged only by the caller, after the entry was pushed. @defaultValue false
   */
  acknowledgeOnFinish?: boolean;
  /**
   * How a checkpoint write (a step commit, a tool call's ledger row) that fails because the store is
   * out (unreachable, busy, disk full, an I/O error) is sent again before the delivery fails (see `AgentPersistence.checkpointRetry`).
   * @defaultValue `DEFAULT_CHECKPOINT_RETRY`: 30 attempts, 100 ms doubling to 5 s (about 2 minutes)
   */
  checkpointRetry?: CheckpointRetryOptions;
  signal?: AbortSignal;
  clock?: Clock;
}

/** The options with the DLQs settled (`queues`, or the stores' own). */
export type WithQueues<T extends HandleMessageOptions> = T & Required<Pick<HandleMessageOptions, 'queues'>>;

/** `options` with `queues` defaulting to the DLQs of `stores`. */
export function withQueues<T extends HandleMessageOptions>(options: T, stores: Stores): WithQueues<T> {
  return options.queues !== undefined ? (options as WithQueues<T>) : { ...options, queues: { messageDlq: stores.messageDlq, toolDlq: stores.toolDlq } };
}

/** The outcome of handling one message. */
export type HandleMessageResult =
  | {
      status: 'rejected';
      runId: null;
      messageId: string | undefined;
      reason: MessageFailureEntry['reason'];
      /** An earlier delivery already dead-lettered the message (the keyed push added nothing). */
      alreadyFinished: boolean;
    }
  | {
      /** Past `maxDeliveries`: dead-lettered as a poison message, not run. */
      status: 'delivery_limit_exceeded';
      runId: string | null;
      messageId: string | undefined;
      /** Where the entry went: the tool DLQ (resumable from the checkpoint) or the message DLQ (the run had not started). */
      queue: 'message' | 'tool';
      deliveries: number;
      alreadyFinished: boolean;
    }
  | {
      /** Another consumer (a replay, a drain, a consumer whose lease was lost) holds the run's claim: nothing was done; deliver it again later. */
      status: 'busy';
      runId: string;
      messageId: string | undefined;
      holder: string | undefined;
      alreadyFinished: false;
    }
  | {
      status: AgentRunStatus;
      runId: string;
      messageId: string | undefined;
      text: string | null;
      steps: number;
      modelCalls: number;
      tokensSpent: { input: number; output: number };
      /** The run had already ended (a redelivery): nothing was done again. */
      alreadyFinished: boolean;
      /** The tool-DLQ entry this call added (`status` is `tool_failed`); absent when an earlier delivery had added it. */
      toolFailure?: ToolFailureEntry;
      /** The tool-DLQ entry this call added for a model failure (`status` is `model_failed`). */
      modelFailure?: ModelFailureEntry;
    };
