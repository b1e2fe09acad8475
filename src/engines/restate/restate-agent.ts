import * as restate from '@restatedev/restate-sdk';
import type { Model } from '../../agent/messages.ts';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import type { ToolsInput } from '../../core/tool-registry.ts';
import type { Stores } from '../../ground/ports/stores.ts';
import type { RunCheckpoint } from '../../ground/ports/run-journal.ts';
import type { SharedBreaker } from '../../policies/shared-breaker.ts';
import type { ResumableEntry } from '../../ground/dead-letter-entries.ts';
import { handleMessage, rejectMessage } from '../../worker/handle-message.ts';
import { withQueues, type HandleMessageOptions, type HandleMessageResult } from '../../worker/handle-message-options.ts';
import { rejectedMessageEntry } from '../../worker/parse-run-request.ts';
import { deadLetterPoisonMessage } from '../../worker/poison-message.ts';
import { replayToolFailure, type ReplayResult } from '../../worker/replay-tool-failure.ts';
import { DEFAULT_CHECKPOINT_RETRY } from '../../policies/retry-durable-write.ts';
import { resolveRuntime } from '../../worker/resolve-runtime.ts';
import type { RunHooks, RunLimits, RunModelOptions, RunRuntimeOptions } from '../../worker/run-options.ts';
import { breakerInRestate, modelInRestate } from './journaled-model.ts';
import { journalInRestate } from './journaled-run-journal.ts';
import { runtimeInRestate } from './journaled-runtime.ts';
import { ensurePromiseWithResolvers } from './promise-with-resolvers.ts';
import { restateDirectiveOf } from './restate-directive.ts';
import { restateMessageId } from './restate-pointer.ts';
import type { RestateStepContext, StepRetryOptions } from './restate-steps.ts';

ensurePromiseWithResolvers();

/** What the `run` handler takes: the run request as a queue message body (JSON text, `RUN_REQUEST_SCHEMA`). */
export interface RestateRunInput {
  /** The request: `{"input": "…"}` or `{"messages": […]}` (its `runId`, when given, must be the object's key). */
  body: string;
}

/** What the `replay` handler takes: the tool-DLQ entry to resume. */
export interface RestateReplayInput {
  /** The entry as the tool DLQ holds it (its `runId` is the object's key). */
  entry: ResumableEntry;
}

/** Options of {@link createRestateAgent}. Durations in milliseconds. */
export interface RestateAgentOptions
  extends Pick<RunLimits, 'maxSteps' | 'toolRetryBudget' | 'maxBodyBytes'>, Pick<RunHooks, 'onEvent' | 'onToolCall'>, RunModelOptions, RunRuntimeOptions {
  /** The virtual object's name (the ingress path's first segment; give the same to `restateReplayer`). @defaultValue `'toolrun'` */
  name?: string;
  /** The model, called through toolrun's model policy; each call a journaled step. */
  model: Model;
  /** Tools to build the runtime from (with a shared breaker on `stores.breakers`). */
  tools?: ToolsInput;
  /** A ready runtime (then its shared breaker is the one it was built with). */
  runtime?: ToolRuntime;
  /**
   * toolrun's stores, shared by every service process of the agent: the two DLQs, the shared
   * breakers' state, and each run's checkpoint and conversation (what a replay resumes from).
   * PostgreSQL (`toolrun/postgres`) or Redis (`toolrun/redis`) when the agent runs on more than one process.
   */
  stores: Stores;
  /**
   * Restate's retries of each toolrun step that reads or writes the stores (a store outage is
   * ridden out by Restate, durably, then the step fails and the run is dead-lettered as a poison run).
   * @defaultValue 100 ms doubling to 5 s, for at most 120 s
   */
  storeStepRetry?: StepRetryOptions;
  /** How long the run's claim in `stores.claims` lasts without renewal (a toolrun replay outside Restate finds the run busy meanwhile). @defaultValue 300_000 */
  claimLeaseMs?: number;
  /**
   * Restate's retry policy of an invocation that fails outside a step (the service process killed,
   * a bug): Restate retries it from its journal. @defaultValue 100 ms doubling to 2 s, then paused after 1,000 attempts
   */
  retryPolicy?: restate.RetryPolicy;
}

/** The default {@link RestateAgentOptions.storeStepRetry}. */
export const DEFAULT_STORE_STEP_RETRY: StepRetryOptions = Object.freeze({
  initialRetryInterval: 100,
  retryIntervalFactor: 2,
  maxRetryInterval: 5_000,
  maxRetryDuration: 120_000,
});

/** What both handlers share: the runtime, breaker and options resolved once per process. */
interface AgentParts {
  name: string;
  options: RestateAgentOptions;
  runtime: ToolRuntime;
  breaker: SharedBreaker | undefined;
  storeRetry: StepRetryOptions;
}

/** The stores, model and runtime of one handler attempt, each read and write a journaled step. */
function journaledParts(context: restate.ObjectContext, parts: AgentParts, holder: string, onBusy: 'retry' | 'answer') {
  const steps = context as unknown as RestateStepContext;
  const { options, storeRetry } = parts;
  const journal = journalInRestate(steps, {
    journal: options.stores.journal,
    holder,
    retry: storeRetry,
    // a claim left by an invocation that ended outside toolrun (killed by an operator) lapses with its lease: wait for it
    openRetry: { ...storeRetry, maxRetryDuration: Math.max(storeRetry.maxRetryDuration ?? 0, (options.claimLeaseMs ?? 300_000) + 60_000) },
    busy: onBusy === 'retry' ? (by) => new restate.RetryableError(`the run is claimed by ${by ?? 'another holder'}`, { retryAfter: 1_000 }) : undefined,
  });
  return {
    stores: { ...options.stores, journal },
    model: modelInRestate(steps, options.model),
    runtime: runtimeInRestate(steps, parts.runtime),
    ...(parts.breaker ? { modelBreaker: breakerInRestate(steps, parts.breaker, storeRetry) } : {}),
  };
}

/** The options of `handleMessage` and `replayToolFailure` that come straight from the agent's. */
function runOptions(options: RestateAgentOptions): Partial<HandleMessageOptions> {
  const { maxSteps, toolRetryBudget, maxBodyBytes, onEvent, onToolCall, modelPolicy, modelName, claimLeaseMs } = options;
  return Object.fromEntries(
    Object.entries({ maxSteps, toolRetryBudget, maxBodyBytes, onEvent, onToolCall, modelPolicy, modelName, claimLeaseMs }).filter(
      ([, value]) => value !== undefined,
    ),
  );
}

/** The run request body with the object's key as its run id when it names none; `conflict` when it names another. */
function withRunId(body: string, runId: string): { body: string; conflict?: string } {
  try {
    const parsed = JSON.parse(body) as unknown;
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      const named = (parsed as { runId?: unknown }).runId;
      if (named === undefined) return { body: JSON.stringify({ ...parsed, runId }) };
      if (named !== runId) return { body, conflict: `the body's runId is not the object's key "${runId}": invoke the object keyed by the run's id` };
    }
  } catch {
    // not JSON: handleMessage dead-letters it as it is
  }
  return { body };
}

/** Ends the invocation as the run's outcome says: a result, or a `TerminalError` naming the DLQ the run is in. */
function settle(result: HandleMessageResult): HandleMessageResult {
  const directive = restateDirectiveOf(result);
  if (directive.kind === 'return') return result;
  throw new restate.TerminalError(directive.message, { errorCode: directive.errorCode, metadata: directive.metadata });
}

/** The run's committed checkpoint, `null` when it has none or it cannot be read. */
async function readCheckpoint(stores: Stores, runId: string): Promise<RunCheckpoint | null> {
  try {
    const opened = await stores.journal.open(runId);
    return (opened.claimed ? opened.checkpoint : undefined) ?? null;
  } catch {
    return null;
  }
}

/** The `run` handler: one run, keyed by its run id. */
function runHandler(parts: AgentParts) {
  return async (context: restate.ObjectContext, input: RestateRunInput): Promise<HandleMessageResult> => {
    const { options } = parts;
    const runId = context.key;
    const given = withRunId(typeof input?.body === 'string' ? input.body : JSON.stringify(input ?? null), runId);
    const message = { body: given.body, id: restateMessageId(runId) };
    if (given.conflict !== undefined) {
      const conflict = given.conflict;
      return settle(
        await context.run('toolrun.reject', async () => {
          const receivedAt = new Date(parts.runtime.clock.now()).toISOString();
          const entry = rejectedMessageEntry(message, { code: 'RUN_ID_CONFLICT', detail: conflict }, { receivedAt, redactor: parts.runtime.redactor });
          return rejectMessage(entry, message.id, withQueues(options, options.stores), parts.runtime.clock);
        }),
      );
    }
    const journaled = journaledParts(context, parts, `restate:${context.request().id}`, 'retry');
    let result: HandleMessageResult;
    try {
      result = await handleMessage(message, { ...runOptions(options), ...journaled, checkpointRetry: { ...DEFAULT_CHECKPOINT_RETRY, maxAttempts: 1 } });
    } catch (error) {
      // a step Restate gave up on (its retries spent): a poison run, dead-lettered where it belongs
      if (!(error instanceof restate.TerminalError) || error instanceof restate.CancelledError) throw error;
      result = await context.run('toolrun.dead-letter', async () =>
        deadLetterPoisonMessage(message, {
          ...runOptions(options),
          model: options.model,
          runtime: parts.runtime,
          stores: options.stores,
          lastError: error,
          deliveries: 1,
          runId,
          // a run whose checkpoint cannot be read is taken as not started: its raw message is kept
          checkpoint: await readCheckpoint(options.stores, runId),
        }),
      );
    }
    return settle(result);
  };
}

/** The `replay` handler: resumes a dead-lettered run from its failed step, as a new invocation on the run's key. */
function replayHandler(parts: AgentParts) {
  return async (context: restate.ObjectContext, input: RestateReplayInput): Promise<ReplayResult> => {
    const entry = input?.entry;
    if (entry === undefined || entry.runId !== context.key) return { status: 'invalid_entry', runId: entry?.runId ?? null, modelCalls: 0, text: null };
    const journaled = journaledParts(context, parts, `restate:${context.request().id}`, 'answer');
    // a fresh session: the breakers of the failed run's session do not cut the replay off
    parts.runtime.sessionBreakers?.reset(entry.runId);
    return replayToolFailure(entry, { ...runOptions(parts.options), ...journaled });
  };
}

/**
 * An agent as a Restate virtual object keyed by run id: `run` runs one agent run (toolrun's loop,
 * with every model call, tool call and store read or write a journaled `ctx.run` step), and
 * `replay` resumes a dead-lettered run from its failed step as a new invocation on the same key.
 * Bind it to an endpoint (`restate.serve({ services: [agent] })`) in every service process.
 *
 * How a run ends, by toolrun's routing:
 * - completed (or `max_steps`, `cancelled`): the handler's result;
 * - a malformed request: one message-DLQ entry, a `TerminalError` (400) — the model is never called;
 * - in-band recovery exhausted, a tool broken for everyone, the model failing past its policy: one
 *   resumable tool-DLQ entry (`originalMessageId` = `restate:<runId>`), a `TerminalError` (409);
 * - a step Restate gave up on (a store unreachable past `storeStepRetry`, a conversation the store
 *   rejects): a poison run, in the tool DLQ when it had started, else in the message DLQ, a `TerminalError` (500);
 * - the service process killed: Restate retries the invocation; the journal answers every step
 *   already made, so no model call or tool call is made twice (except one in flight at the kill).
 *
 * @throws ToolrunError `INVALID_OPTIONS` without `tools` or `runtime`; the runtime's own errors for a bad tool.
 */
export function createRestateAgent(options: RestateAgentOptions) {
  const name = options.name ?? 'toolrun';
  const { runtime, breaker } = resolveRuntime(options, options.stores);
  const parts: AgentParts = { name, options, runtime, breaker, storeRetry: options.storeStepRetry ?? DEFAULT_STORE_STEP_RETRY };
  return restate.object({
    name,
    handlers: { run: runHandler(parts), replay: replayHandler(parts) },
    options: {
      retryPolicy: options.retryPolicy ?? { initialInterval: 100, exponentiationFactor: 2, maxInterval: 2_000, maxAttempts: 1_000, onMaxAttempts: 'pause' },
    },
  });
}

/** The Restate service definition {@link createRestateAgent} returns. */
export type RestateAgent = ReturnType<typeof createRestateAgent>;
