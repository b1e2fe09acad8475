/**
 * The run options, declared once: the limits of a run, its observers, how its model is called and
 * how its tool runtime is built. `createToolrun` takes them grouped (`limits`, `hooks`); the free
 * functions (`handleMessage`, `replayToolFailure`, `createWorker`) and a config module take the same
 * fields flat. Same names, same meaning, same defaults everywhere.
 */
import type { AgentRunHooks } from '../agent/run-agent.ts';
import type { ModelPolicyOptions } from '../agent/model-policy.ts';
import type { ToolRuntimeOptions } from '../core/create-tool-runtime.ts';
import type { ToolCallRecord } from '../core/tool-call-record.ts';
import type { SharedBreaker, SharedBreakerOptions } from '../policies/shared-breaker.ts';
import type { WorkerEvent } from './worker-events.ts';

/** The limits of every run, in one place. Durations in milliseconds. */
export interface RunLimits {
  /** Model turns per run, an integer ≥ 1. @defaultValue 20 */
  maxSteps?: number;
  /** Time budget of one run, in ms. @defaultValue none */
  deadlineMs?: number;
  /** In-band retries per tool per run (a replay gets a fresh budget), an integer ≥ 0. @defaultValue 2 */
  toolRetryBudget?: number;
  /**
   * Deliveries of one message before it is dead-lettered as a poison message (like SQS
   * `maxReceiveCount`): with its last error, resumable from the run's checkpoint when the run had
   * started (tool DLQ, `kind: 'run'`), else as a message failure `DELIVERY_LIMIT_EXCEEDED`. An
   * integer ≥ 1. @defaultValue 5
   */
  maxDeliveries?: number;
  /** Larger message bodies, in UTF-8 bytes, go to the message DLQ (their first 64 KiB are kept in the entry). @defaultValue 1 MiB */
  maxBodyBytes?: number;
}

/**
 * Every observer of a toolrun, in one place. Called synchronously; whatever they throw is ignored.
 * `onToolCall` gets the developer record and the step of the run it belongs to.
 */
export interface RunHooks extends AgentRunHooks {
  /** After every tool call: the full developer record (stack, causes, attempts) and its 0-based step index. */
  onToolCall?: (record: ToolCallRecord, stepIndex: number) => void;
  /** Alerts and operational events: dead letters, breakers, deliveries, leases. */
  onEvent?: (event: WorkerEvent) => void;
}

/** How the model of a run is called. */
export interface RunModelOptions {
  /** Retries, backoff, Retry-After handling and per-call timeout of model calls. @defaultValue 3 attempts, base 500 ms ×2 with up to 100 ms jitter, 120 s per call */
  modelPolicy?: ModelPolicyOptions;
  /** The model's name in dead-letter entries, logs and the shared model breaker's key (`model:<name>`). @defaultValue `model.modelName`, the function's name, or `'model'` */
  modelName?: string;
  /** The shared breaker a rejected model key opens for every run (one alert). @defaultValue one on `stores.breakers` */
  modelBreaker?: SharedBreaker;
}

/** How the tool runtime of a run is built from `tools` (ignored when a ready `runtime` is given). */
export interface RunRuntimeOptions {
  /** Options of the tool runtime built from `tools` (timeouts, retry policy, redaction…). */
  runtimeOptions?: Omit<ToolRuntimeOptions, 'tools' | 'sharedBreaker'>;
  /** Cross-run breaker options (state in `stores.breakers`), or `false`. @defaultValue threshold 2, half-open after 30 s */
  sharedBreaker?: Partial<SharedBreakerOptions> | false;
}
