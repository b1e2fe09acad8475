import type { ToolCallRecord } from '../core/tool-call-record.ts';
import type { CommittedRun, RunCheckpoint, RunJournal, RunStep } from '../ground/ports/run-journal.ts';
import { createToolRuntime, type ToolRuntime } from '../core/create-tool-runtime.ts';
import type { ToolsInput } from '../core/tool-registry.ts';
import type { ChatMessage, Model, TokenUsage } from './messages.ts';
import { decodeRunState, type RunState, type ToolBudgetState, type ToolFailureInfo } from './run-state.ts';
import { callModel, resolveModelPolicy, type ModelFailureInfo, type ModelPolicyOptions } from './model-policy.ts';
import { redactBounded } from '../core/build-failure.ts';
import { unwrapParallelToolCalls } from '../core/unwrap-parallel.ts';
import { newConversationRef } from './conversation-ref.ts';
import { systemRandom, type RandomSource } from '../ground/ports/clock.ts';
import type { SharedBreaker } from '../policies/shared-breaker.ts';
import type { CheckpointRetryOptions } from '../policies/retry-durable-write.ts';
import { createRunWriter, type RunWriter } from './run-writer.ts';
import { runStepCalls } from './run-step-calls.ts';

/** How a run ended. */
export type AgentRunStatus = 'completed' | 'tool_failed' | 'max_steps' | 'deadline_exceeded' | 'model_failed' | 'cancelled';

/** Where the loop checkpoints each step, so a crashed run resumes instead of starting over. */
export interface AgentPersistence {
  /** The run's durable state: a `Stores` bundle's `journal`, or one made with `createStoreJournal`. */
  journal: RunJournal;
  /** The queue message that started the run. @defaultValue `''` */
  messageId?: string;
  /**
   * What the caller's `journal.open` of the run returned while it holds the run's claim: the loop
   * then does not read it again. Leave it out when the run may have changed since.
   * @defaultValue read with `journal.open(runId)`
   */
  opened?: CommittedRun;
  /**
   * The `start` step the caller's `journal.open` of the run committed (it answered `started: true`):
   * the loop goes on from it (its conversation, under its reference) instead of committing its own
   * first step. It must be that first step: the conversation given as `messages`, a `running`
   * checkpoint at step 0 with nothing spent. @defaultValue none
   */
  started?: RunStep;
  /** The holder of the caller's claim on the run: the run's last commit ends it (`RunJournal.finish`). @defaultValue none */
  claimHolder?: string;
  /**
   * The id of the run queue message the run came from, when its caller acknowledges it once the run
   * ends: a run that ends needing no dead-letter entry (`completed`, `max_steps`,
   * `deadline_exceeded`, `cancelled`) passes it to its last commit (`RunJournal.finish`), which
   * acknowledges it there where the journal keeps the queue (SQLite). @defaultValue none
   */
  acknowledge?: string;
  /**
   * How a checkpoint write (a step commit, a tool call's recorded outcome) that fails because the
   * store is out — connection lost, server restarting, database busy or locked, disk full, an I/O
   * error, out of memory — is sent again before the run gives up and throws. Once a tool has run,
   * its outcome is only safe once written: a run that gave up would run that tool again when its
   * message is delivered again, so the default rides out an outage of about 2 minutes. Other errors
   * are thrown at once. The writes are idempotent (a write that reached the store before the error
   * is written again to the same effect). The waits follow `computeBackoffMs` on the runtime's
   * clock, and are not cut short by the run's signal or deadline.
   * @defaultValue `DEFAULT_CHECKPOINT_RETRY`: 30 attempts, waits of 100 ms doubling to 5 s
   * (+ up to 50 ms jitter), about 2 minutes in all
   */
  checkpointRetry?: CheckpointRetryOptions;
}

/**
 * Observers of a run (telemetry, e.g. the `invoke_agent` span of `toolrun/otel`). Called
 * synchronously; whatever they throw is ignored. `at` is epoch ms on the runtime's clock.
 */
export interface AgentRunHooks {
  /**
   * The run starts, or resumes from a checkpoint (`stepIndex > 0`). Returning `{ traceId }` makes
   * every tool call of this invocation carry it (the envelope's `trace_id`), so tool calls join the run's trace.
   */
  onRunStart?: (info: { runId: string; sessionId: string; stepIndex: number; resumed: boolean; at: number }) => { traceId?: string } | void;
  /** A step (one model turn and its tool calls) starts. */
  onStepStart?: (info: { runId: string; stepIndex: number; at: number }) => void;
  /** The invocation ended, with any status. */
  onRunEnd?: (result: AgentRunResult, info: { at: number }) => void;
}

function callHook<T>(hook: (() => T) | undefined): T | undefined {
  try {
    return hook?.();
  } catch {
    return undefined; // an observer must never break a run
  }
}

/** Options of {@link runAgent}. Durations in milliseconds. */
export interface RunAgentOptions {
  model: Model;
  /** A runtime, or tools to build one from. */
  runtime?: ToolRuntime;
  tools?: ToolsInput;
  /** The conversation so far (ignored when resuming a checkpointed run). */
  messages: readonly ChatMessage[];
  /** @defaultValue a new `run_…` id */
  runId?: string;
  /** Scope of the per-session breaker. @defaultValue the run id */
  sessionId?: string;
  /** @defaultValue 20 */
  maxSteps?: number;
  /** Time budget of the whole run. @defaultValue none */
  deadlineMs?: number;
  /** Retries per tool per run spent by the runtime's in-band retries. @defaultValue 2 (at most 3 attempts) */
  toolRetryBudget?: number;
  signal?: AbortSignal;
  /** Checkpoint every step through this journal; resume when the run id has a `running` checkpoint. */
  persistence?: AgentPersistence;
  /** Called after every tool call with the developer record. */
  onToolCall?: (record: ToolCallRecord, stepIndex: number) => void;
  /** Replay: forget the budgets spent before (a fresh in-band budget for the resumed run). */
  resetBudgets?: boolean;
  /** Run-level observers (start, step, end). */
  hooks?: AgentRunHooks;
  /** Retries, backoff and timeout of model calls. @defaultValue 3 attempts, base 500 ms ×2 + up to 100 ms jitter, 120 s per call */
  modelPolicy?: ModelPolicyOptions;
  /** The model's name in dead-letter entries, logs and the shared model breaker's key (`model:<name>`). @defaultValue `model.modelName`, the function's name, or `'model'` */
  modelName?: string;
  /** The shared breaker a rejected model key opens for every run (one alert). @defaultValue none */
  modelBreaker?: SharedBreaker;
  /** Random source of the model backoff's jitter. @defaultValue `Math.random` */
  random?: RandomSource;
}

/** The outcome of a run. */
export interface AgentRunResult {
  status: AgentRunStatus;
  runId: string;
  /** The final answer, when the model gave one. */
  text: string | null;
  messages: ChatMessage[];
  /** Model calls made by this invocation (not counting earlier ones of a resumed run). */
  modelCalls: number;
  /** Steps completed in the run, from its start. */
  steps: number;
  tokensSpent: TokenUsage;
  conversationRef: string;
  /** Set when `status` is `tool_failed`. */
  failure?: ToolFailureInfo;
  /** Set when `status` is `model_failed`: the failure's redacted, bounded message. */
  modelError?: string;
  /** Set when `status` is `model_failed`: why, at which step, after how many attempts (the run's resumable dead-letter entry is built from it). */
  modelFailure?: ModelFailureInfo;
}

const TERMINAL: ReadonlySet<RunCheckpoint['status']> = new Set(['completed', 'tool_failed', 'max_steps', 'deadline_exceeded', 'model_failed', 'cancelled']);

/** Whether a checkpoint status is final. */
export function isTerminalRunStatus(status: RunCheckpoint['status']): boolean {
  return TERMINAL.has(status);
}

/** The name a model goes by when none is given: `model.modelName`, the function's own name, or `'model'`. */
export function modelNameOf(model: Model, explicit?: string): string {
  if (explicit !== undefined && explicit.length > 0) return explicit.slice(0, 128);
  const named = (model as { modelName?: unknown }).modelName;
  if (typeof named === 'string' && named.length > 0) return named.slice(0, 128);
  return model.name && model.name !== 'anonymous' ? model.name.slice(0, 128) : 'model';
}

/** The state of the run at its start: resumed from what was committed, or new. */
interface StartState {
  resumed: boolean;
  /** Whether the journal holds the start already (the caller's open committed it): no first commit. */
  committed: boolean;
  messages: ChatMessage[];
  storedCount: number;
  stepIndex: number;
  tokens: TokenUsage;
  budgets: Record<string, ToolBudgetState>;
  pendingStep: boolean;
  conversationRef: string;
  messageId: string;
}

/** Where the run starts: its committed checkpoint and conversation when both are there, else the options' messages. */
async function startState(options: RunAgentOptions, runId: string, nowMs: number): Promise<StartState> {
  const persistence = options.persistence;
  const started = persistence?.started;
  const fresh: StartState = {
    resumed: false,
    committed: false,
    messages: [...options.messages],
    storedCount: 0,
    stepIndex: 0,
    tokens: { input: 0, output: 0 },
    budgets: {},
    pendingStep: false,
    conversationRef: newConversationRef(nowMs),
    messageId: persistence?.messageId ?? '',
  };
  if (!persistence) return fresh;
  const opened = persistence.opened ?? (await persistence.journal.open(runId));
  const existing = 'checkpoint' in opened ? opened.checkpoint : undefined;
  if (!existing && started !== undefined) {
    // the caller's open committed the start step: the run goes on from it
    return {
      ...fresh,
      committed: true,
      messages: [...(started.messages as ChatMessage[])],
      storedCount: started.messages.length,
      conversationRef: started.conversationRef,
    };
  }
  if (!existing) return fresh;
  // a checkpoint whose conversation is gone starts over, keeping the run's message id
  const stored = 'messages' in opened ? opened.messages : undefined;
  const base = { ...fresh, resumed: true, messageId: persistence.messageId ?? existing.messageId };
  if (!stored) return base;
  const state = decodeRunState(existing.data);
  return {
    ...base,
    // the loop appends to its own array, never to the caller's
    messages: [...(stored as ChatMessage[])],
    storedCount: stored.length,
    stepIndex: existing.stepIndex,
    tokens: { ...existing.tokensSpent },
    budgets: options.resetBudgets ? {} : state.budgets,
    pendingStep: state.pendingStep,
    conversationRef: existing.conversationRef,
  };
}

/**
 * Runs the agent loop: call the model, run its tool calls (in parallel) through the runtime, put
 * every envelope back as a tool message, until the model answers, `maxSteps`, the deadline, or
 * in-band recovery is exhausted (`tool_failed`: a tool whose retry budget is spent, or whose
 * session breaker is open, is called again; or a tool without fallbacks fails for everyone).
 * Never throws for a tool's or the model's failure: the status says what happened.
 *
 * With `persistence`, each step is committed to the run's journal (conversation, run state, and
 * each tool call's envelope, recorded by run id + step + call index), so a run resumed after a
 * crash never repeats a recorded tool call. Throws when the journal cannot be written (after the
 * retries of `checkpointRetry`).
 */
export async function runAgent(options: RunAgentOptions): Promise<AgentRunResult> {
  const runtime = options.runtime ?? createToolRuntime({ tools: options.tools ?? [] });
  const clock = runtime.clock;
  const random = options.random ?? systemRandom;
  const runId = options.runId ?? `run_${globalThis.crypto.randomUUID()}`;
  const sessionId = options.sessionId ?? runId;
  const maxSteps = options.maxSteps ?? 20;
  const persistence = options.persistence;
  const hooks = options.hooks;
  const modelPolicy = resolveModelPolicy(options.modelPolicy);
  const modelName = modelNameOf(options.model, options.modelName);
  const describeModelError = (text: string) => redactBounded(runtime.redactor, text, 1024);
  // budgets are kept per tool in the checkpoint: an invented name is model text, bounded and redacted like any
  const budgetKey = (name: string) => (runtime.getTool(name) ? name : redactBounded(runtime.redactor, String(name), 128));
  const deadlineAt = options.deadlineMs !== undefined ? clock.now() + options.deadlineMs : undefined;

  const start = await startState(options, runId, clock.now());
  const { messages, conversationRef, budgets } = start;
  let { stepIndex, tokens, pendingStep } = start;
  // whether this attempt began the pending step itself (then no earlier attempt recorded its calls)
  let stepBegunHere = false;
  let modelCalls = 0;
  const writer: RunWriter | undefined = persistence
    ? createRunWriter({
        journal: persistence.journal,
        runId,
        messageId: start.messageId,
        storedCount: start.storedCount,
        claimHolder: persistence.claimHolder,
        acknowledge: persistence.acknowledge,
        retry: persistence.checkpointRetry,
        clock,
        random,
      })
    : undefined;

  const save = async (status: RunCheckpoint['status'], state: Pick<RunState, 'text' | 'failure' | 'modelFailure' | 'modelError'> = {}) =>
    writer?.save({ status, stepIndex, conversationRef, messages, tokens, budgets, state: { pendingStep, ...state } });
  const end = async (status: AgentRunStatus, extra: Partial<AgentRunResult> = {}): Promise<AgentRunResult> => {
    const text = extra.text ?? null;
    await save(status, {
      ...(text !== null ? { text } : {}),
      // the checkpoint keeps the failed call's arguments redacted and bounded (a replay reads the real ones from the conversation)
      ...(extra.failure ? { failure: { ...extra.failure, toolArgs: checkpointArgs(runtime, extra.failure) } } : {}),
      ...(extra.modelError ? { modelError: extra.modelError } : {}),
      ...(extra.modelFailure ? { modelFailure: extra.modelFailure } : {}),
    });
    const result: AgentRunResult = { status, runId, text, messages, modelCalls, steps: stepIndex, tokensSpent: tokens, conversationRef, ...extra };
    callHook(hooks?.onRunEnd && (() => hooks.onRunEnd?.(result, { at: clock.now() })));
    return result;
  };

  if (!start.resumed && !start.committed) await save('running');
  const started = callHook(hooks?.onRunStart && (() => hooks.onRunStart?.({ runId, sessionId, stepIndex, resumed: start.resumed, at: clock.now() })));
  const traceId = started ? started.traceId : undefined;

  while (true) {
    if (options.signal?.aborted) return end('cancelled');
    if (deadlineAt !== undefined && clock.now() >= deadlineAt) return end('deadline_exceeded');

    if (!pendingStep && stepIndex >= maxSteps) return end('max_steps');
    callHook(hooks?.onStepStart && (() => hooks.onStepStart?.({ runId, stepIndex, at: clock.now() })));

    if (!pendingStep) {
      const outcome = await callModel({
        model: options.model,
        request: { messages, tools: runtime.specs, stepIndex, runId },
        modelName,
        policy: modelPolicy,
        clock,
        random,
        deadlineAt,
        signal: options.signal,
        breaker: options.modelBreaker,
        describe: describeModelError,
      });
      modelCalls += outcome.attempts;
      if (!outcome.ok) {
        if (outcome.cancelled) return end('cancelled');
        return end('model_failed', { modelError: outcome.failure.lastError.message, modelFailure: outcome.failure });
      }
      const response = outcome.response;
      tokens = { input: tokens.input + (response.usage?.input ?? 0), output: tokens.output + (response.usage?.output ?? 0) };
      // OpenAI's `multi_tool_use.parallel` wrapper: the calls inside it, each with its own id and result
      const toolCalls = unwrapParallelToolCalls(response.toolCalls ?? [], { isTool: (name) => runtime.getTool(name) !== undefined });
      messages.push({ role: 'assistant', content: response.text ?? null, ...(toolCalls.length > 0 ? { toolCalls } : {}) });
      if (toolCalls.length === 0) {
        stepIndex += 1;
        return end('completed', { text: response.text ?? '' });
      }
      pendingStep = true;
      await save('running');
      stepBegunHere = true;
    }

    const failure = await runStepCalls({
      runtime,
      runId,
      sessionId,
      stepIndex,
      messages,
      budgets,
      retryBudget: options.toolRetryBudget ?? 2,
      writer,
      mayHaveRecorded: !stepBegunHere,
      deadlineAt,
      signal: options.signal,
      traceId,
      onToolCall: options.onToolCall,
      budgetKey,
    });
    // the step stays pending: a replay resumes here and re-executes the failed call
    if (failure) return end('tool_failed', { failure });
    pendingStep = false;
    stepBegunHere = false;
    stepIndex += 1;
    await save('running');
  }
}

/** The failed call's arguments as the checkpoint keeps them: parsed when JSON text, redacted and bounded. */
function checkpointArgs(runtime: ToolRuntime, failure: ToolFailureInfo): unknown {
  let args = failure.toolArgs;
  if (typeof args === 'string') {
    try {
      args = args.length <= 1_048_576 ? (JSON.parse(args) as unknown) : redactBounded(runtime.redactor, args, 8192);
    } catch {
      args = redactBounded(runtime.redactor, args as string, 8192);
    }
  }
  return runtime.redactor.value(args, runtime.getTool(failure.toolName)?.definition.sensitive ?? [], { maxTextBytes: 8192 });
}
