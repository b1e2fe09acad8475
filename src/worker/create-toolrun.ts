import type { ModelPolicyOptions } from '../agent/model-policy.ts';
import type { Model } from '../agent/messages.ts';
import type { ToolRuntime, ToolRuntimeOptions } from '../core/create-tool-runtime.ts';
import type { DeadLetterRecord, Stores } from '../ground/ports/stores.ts';

import type { ToolsInput } from '../core/tool-registry.ts';
import type { SharedBreakerOptions } from '../policies/shared-breaker.ts';
import { createMemoryStores } from '../stores/memory/index.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { createWorker, type Worker } from './create-worker.ts';
import type { WorkerOptions } from './worker-options.ts';
import type { DeadLetterSink, MessageFailureEntry, ResumableEntry } from '../ground/dead-letter-entries.ts';
import { drainToolDlq, type DrainOptions, type DrainReport } from './drain-tool-dlq.ts';
import { handleMessage } from './handle-message.ts';
import type { HandleMessageOptions, HandleMessageResult, RunMessage } from './handle-message-options.ts';
import { replayDeadLetter, type ReplayDeadLetterResult } from './replay-dead-letter.ts';
import { replayToolFailure, type ReplayResult } from './replay-tool-failure.ts';
import { resolveRuntime } from './resolve-runtime.ts';
import type { AgentRunHooks } from '../agent/run-agent.ts';
import type { RunHooks, RunLimits } from './run-options.ts';
import { checkedOptions, copyOptions, describeValue, readOptions, throwIfProblems } from './check-options.ts';
import type { HostRegistry } from './host-continuation.ts';

/** A DLQ record (`{ id, entry }`) rather than a bare entry (which has `runId`, never `entry`). */
function isDeadLetterRecord(value: ResumableEntry | DeadLetterRecord<ResumableEntry>): value is DeadLetterRecord<ResumableEntry> {
  return typeof value === 'object' && value !== null && 'entry' in value && typeof (value as { id?: unknown }).id === 'string';
}

/** The options of {@link createToolrun} that have no rule of their own in `check-options`. */
const UNCHECKED_FIELDS = ['model', 'tools', 'runtime', 'runtimeOptions', 'sharedBreaker', 'modelPolicy', 'modelName'] as const;
/** Every option is read into the snapshot: an option added to `ToolrunOptions` and to neither list fails to compile here. */
const _everyOptionRead: [Exclude<keyof ToolrunOptions, (typeof UNCHECKED_FIELDS)[number] | 'stores' | 'hosts' | 'limits' | 'hooks'>] extends [never]
  ? true
  : never = true;

/**
 * `options` read once (each field, and each field of `limits`): the snapshot that was checked and
 * is the only one used, so a getter that answers differently on a second read cannot get past the
 * check.
 *
 * @throws ToolrunError `INVALID_OPTIONS` naming every problem of `options` (a missing model, a negative limit, a field that cannot be read…).
 */
function readToolrunOptions(options: ToolrunOptions): ToolrunOptions {
  if (typeof options !== 'object' || options === null)
    throw new ToolrunError('INVALID_OPTIONS', `createToolrun needs an options object { model, tools, … }, received ${describeValue(options)}`);
  const read = readOptions(options, UNCHECKED_FIELDS);
  const checked = checkedOptions(options, ['stores', 'hosts', 'limits', 'hooks']);
  const given = { ...read.values, ...checked.values } as ToolrunOptions;
  const problems: string[] = [...read.problems];
  if (typeof given.model !== 'function' && !read.problems.some((problem) => problem.startsWith('`model`')))
    problems.push(`\`model\` must be a function (request) => Promise<response>, received ${describeValue(given.model)}`);
  if (given.tools === undefined && given.runtime === undefined) problems.push('`tools` or `runtime` is needed');
  problems.push(...checked.problems);
  throwIfProblems(problems, 'INVALID_OPTIONS', 'createToolrun');
  return given;
}

/** Options of {@link createToolrun}. */
export interface ToolrunOptions {
  model: Model;
  /** Tools to build the runtime from (once), or a ready `runtime`. */
  tools?: ToolsInput;
  runtime?: ToolRuntime;
  /** Options of the runtime built from `tools` (its clock is the toolrun's one clock). */
  runtimeOptions?: Omit<ToolRuntimeOptions, 'tools' | 'sharedBreaker'>;
  /** Conversations, checkpoints, ledger, claims, breakers, both DLQs, the run queue. @defaultValue new in-memory stores, owned by this toolrun */
  stores?: Stores;
  limits?: RunLimits;
  hooks?: RunHooks;
  /** Cross-run breaker options (tools, and the model as `model:<name>`), or `false`. @defaultValue threshold 2, half-open after 30 s */
  sharedBreaker?: Partial<SharedBreakerOptions> | false;
  /** Retries, backoff and timeout of model calls. */
  modelPolicy?: ModelPolicyOptions;
  /** The model's name in entries and the model breaker's key. */
  modelName?: string;
  /**
   * How `replay` and `drain` continue the runs of SDK hosts and durable engines, by host name (see
   * `HostRegistry`): an entry of a host not registered stays in the DLQ. @defaultValue none
   */
  hosts?: HostRegistry;
}

/** A composed toolrun: one runtime, one shared breaker and one set of stores, used by every method. */
export interface Toolrun {
  readonly runtime: ToolRuntime;
  readonly stores: Stores;
  /**
   * Handles one run-request message (see `handleMessage`). The DLQs are `stores.messageDlq` and
   * `stores.toolDlq` unless `queues` says otherwise (anything with `push`).
   */
  handleMessage(
    message: RunMessage,
    options?: { queues?: { messageDlq: DeadLetterSink<MessageFailureEntry>; toolDlq: DeadLetterSink<ResumableEntry> }; signal?: AbortSignal },
  ): Promise<HandleMessageResult>;
  /**
   * Replays one tool-DLQ entry. Given the DLQ record (`{ id, entry }` from `stores.toolDlq.list()`
   * or `get()`), it also settles the DLQ as the CLI does (see `replayDeadLetter`): the entry leaves
   * it when the run completes, and is replaced when the run fails at another step. Given a bare
   * entry, it only resumes the run (see `replayToolFailure`). Never throws for the entry.
   */
  replay(record: DeadLetterRecord<ResumableEntry>, options?: { signal?: AbortSignal; removeExpired?: boolean }): Promise<ReplayDeadLetterResult>;
  replay(entry: ResumableEntry, options?: { signal?: AbortSignal }): Promise<ReplayResult>;
  /** Drains the tool DLQ (see `drainToolDlq`). Rejects with `INVALID_OPTIONS` for `options` that are not an object or cannot be read. */
  drain(options?: Pick<DrainOptions, 'concurrency' | 'limit' | 'removeExpired' | 'onProgress' | 'dlq' | 'signal'>): Promise<DrainReport>;
  /** A worker on `stores.queue` (see `createWorker`). @throws ToolrunError `INVALID_OPTIONS` for `options` that are not an object, cannot be read or are out of range. */
  createWorker(
    options?: Pick<
      WorkerOptions,
      | 'concurrency'
      | 'leaseMs'
      | 'pollIntervalMs'
      | 'maxDeadLetterEntries'
      | 'maxDeadLetterBytes'
      | 'redeliveryBackoff'
      | 'claimLeaseMs'
      | 'onResult'
      | 'onError'
    >,
  ): Worker;
}

/**
 * The composition root: builds the runtime (compiling the tools' schemas once), the shared breaker
 * on `stores.breakers` and the stores once, and returns the operations that share them. Nothing is
 * process-wide: two toolruns share nothing unless they are given the same `stores`. One clock — the
 * runtime's — times runs, retries, breakers and the worker.
 *
 * @example
 * ```ts
 * const toolrun = createToolrun({ model, tools, stores: createSqliteStores({ path: '.toolrun/toolrun.db' }), limits: { toolRetryBudget: 2 } });
 * await toolrun.handleMessage({ id: 'msg-1', body: '{"input":"Cancel reservation ZFA04Y"}' });
 * await toolrun.drain();
 * ```
 *
 * @throws ToolrunError `INVALID_OPTIONS` for a missing `model`, no `tools` or `runtime`, a `stores`
 * that is a Promise (await `createPostgresStores` first) or lacks a port, a `limits` that is not an
 * object, or a limit out of range
 * (every problem in one message); `INVALID_DEFINITION` /
 * `INVALID_SCHEMA` for a bad tool — at creation, never per message.
 */
export function createToolrun(options: ToolrunOptions): Toolrun {
  options = readToolrunOptions(options);
  const clock = options.runtime?.clock ?? options.runtimeOptions?.clock;
  const stores = options.stores ?? createMemoryStores(clock ? { clock } : {});
  const hooks = options.hooks ?? {};
  // each hook read once and bound to its object: hooks may be methods of a class instance
  const bound = <F extends (...args: never[]) => unknown>(hook: F | undefined): F | undefined =>
    typeof hook === 'function' ? (hook.bind(hooks) as F) : undefined;
  const onToolCall = bound(hooks.onToolCall);
  const onEvent = bound(hooks.onEvent);
  const runHooks = Object.fromEntries(
    (['onRunStart', 'onStepStart', 'onRunEnd'] as const).flatMap((name) => {
      const hook = bound(hooks[name] as ((...args: never[]) => unknown) | undefined);
      return hook ? [[name, hook]] : [];
    }),
  ) as AgentRunHooks;
  const resolved = resolveRuntime(
    {
      ...(options.runtime ? { runtime: options.runtime } : {}),
      ...(options.tools ? { tools: options.tools } : {}),
      ...(options.runtimeOptions ? { runtimeOptions: options.runtimeOptions } : {}),
      ...(options.sharedBreaker !== undefined ? { sharedBreaker: options.sharedBreaker } : {}),
      ...(onEvent ? { onEvent } : {}),
    },
    stores,
  );
  const { runtime } = resolved;
  const shared: Omit<HandleMessageOptions, 'queues'> & { hosts?: HostRegistry } = {
    // the limits are run options of the same names (`RunLimits`), checked above
    ...options.limits,
    model: options.model,
    runtime,
    stores,
    clock: runtime.clock,
    ...(resolved.breaker ? { modelBreaker: resolved.breaker } : {}),
    ...(Object.keys(runHooks).length > 0 ? { runHooks } : {}),
    ...(onToolCall ? { onToolCall } : {}),
    ...(onEvent ? { onEvent } : {}),
    ...(options.modelPolicy ? { modelPolicy: options.modelPolicy } : {}),
    ...(options.modelName !== undefined ? { modelName: options.modelName } : {}),
    ...(options.sharedBreaker !== undefined ? { sharedBreaker: options.sharedBreaker } : {}),
    ...(options.hosts !== undefined ? { hosts: options.hosts } : {}),
  };
  return {
    runtime,
    stores,
    handleMessage: (message, call = {}) =>
      handleMessage(message, {
        ...shared,
        queues: call.queues ?? { messageDlq: stores.messageDlq, toolDlq: stores.toolDlq },
        ...(call.signal ? { signal: call.signal } : {}),
      }),
    replay: ((target: ResumableEntry | DeadLetterRecord<ResumableEntry>, call: { signal?: AbortSignal; removeExpired?: boolean } = {}) => {
      const signal = call.signal ? { signal: call.signal } : {};
      if (isDeadLetterRecord(target)) return replayDeadLetter(target, { ...shared, ...signal, removeExpired: call.removeExpired === true });
      return replayToolFailure(target, { ...shared, ...signal });
    }) as Toolrun['replay'],
    drain: async (call = {}) => drainToolDlq({ ...shared, ...copyOptions(call, 'drain') }),
    createWorker: (call = {}) => createWorker({ ...shared, ...copyOptions(call, 'createWorker'), stores }),
  };
}
