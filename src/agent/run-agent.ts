import type { ToolCallRecord } from '../core/tool-call-record.ts';
import type { ClaimStore, ConversationStore, IdempotencyLedger, JsonValue, RunCheckpoint, RunStore } from '../ground/ports/stores.ts';
import { createToolRuntime, type ToolRuntime } from '../core/create-tool-runtime.ts';
import type { ToolsInput } from '../core/tool-registry.ts';
import type { ToolResult } from '../ground/tool-result.ts';
import type { ChatMessage, Model, ModelToolCall, TokenUsage } from './messages.ts';
import { decodeRunState, encodeRunState, type RunState, type ToolBudgetState, type ToolFailureInfo } from './run-state.ts';
import { callModel, resolveModelPolicy, type ModelFailureInfo, type ModelPolicyOptions } from './model-policy.ts';
import { redactBounded } from '../core/build-failure.ts';
import { unwrapParallelToolCalls } from '../core/unwrap-parallel.ts';
import { newConversationRef } from './conversation-ref.ts';
import { systemRandom, type RandomSource } from '../ground/ports/clock.ts';
import type { SharedBreaker } from '../policies/shared-breaker.ts';
import { computeBackoffMs, type BackoffOptions } from '../policies/backoff.ts';
import { isTransientStoreError } from '../core/store-errors.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';

/** How a run ended. */
export type AgentRunStatus = 'completed' | 'tool_failed' | 'max_steps' | 'deadline_exceeded' | 'model_failed' | 'cancelled';

/** Where the loop checkpoints each step, so a crashed run resumes instead of starting over. */
export interface AgentPersistence {
  conversations: ConversationStore;
  runs: RunStore;
  ledger: IdempotencyLedger;
  /** The queue message that started the run. @defaultValue `''` */
  messageId?: string;
  /**
   * The run's checkpoint as the caller has just read it from `runs` while holding the run (its
   * claim), `null` when it has none: the loop then does not read it again. Leave it out when the
   * checkpoint may have changed since it was read. @defaultValue read from `runs`
   */
  checkpoint?: RunCheckpoint | null;
  /**
   * The claim the caller holds on the run (`key` in `claims`, held by `holder`): the run's last
   * commit releases it where the stores can (`StepCommit.releaseClaim`), and then calls
   * `onReleased`; otherwise the caller releases it as usual. @defaultValue none
   */
  claim?: { claims: ClaimStore; key: string; holder: string; onReleased: () => void };
  /**
   * How a checkpoint write (a step commit, a tool call's ledger row) that fails because the store is
   * out — connection lost, server restarting, database busy or locked, disk full, an I/O error, out
   * of memory — is sent again before the run gives up and throws. Once a tool has run, its outcome
   * is only safe once written: a run that gave up would run that tool again when its message is
   * delivered again, so the default rides out an outage of about 2 minutes. Other errors are thrown
   * at once. The writes are idempotent (a write that reached the store before the error is written
   * again to the same effect). The waits follow `computeBackoffMs` on the runtime's clock, and are
   * not cut short by the run's signal or deadline.
   * @defaultValue {@link DEFAULT_CHECKPOINT_RETRY}: 30 attempts, waits of 100 ms doubling to 5 s
   * (+ up to 50 ms jitter), about 2 minutes in all
   */
  checkpointRetry?: CheckpointRetryOptions;
}

/** How {@link AgentPersistence.checkpointRetry} retries a checkpoint write during a store outage. */
export interface CheckpointRetryOptions extends BackoffOptions {
  /** Attempts in all, the first included (1: no retry). An integer ≥ 1. */
  maxAttempts: number;
}

/**
 * The default {@link AgentPersistence.checkpointRetry}: 30 attempts, 100 ms doubling to 5 s, + up to
 * 50 ms jitter: the last attempt about 121 s after the first. Within a worker's default lease
 * (300 s), so no other consumer takes the message while its run waits for the store.
 */
export const DEFAULT_CHECKPOINT_RETRY: CheckpointRetryOptions = Object.freeze({
  maxAttempts: 30,
  baseDelayMs: 100,
  factor: 2,
  maxDelayMs: 5_000,
  jitterMs: 50,
});

/** The longest wait a timer takes, in ms (2^31 − 1; a longer one fires at once). */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Checks {@link CheckpointRetryOptions} (a worker calls it at start-up, so a bad value fails there,
 * not at every delivery); `undefined` gives {@link DEFAULT_CHECKPOINT_RETRY}.
 *
 * @throws ToolrunError `INVALID_OPTIONS` naming the field: `maxAttempts` not an integer ≥ 1,
 * `factor` not a finite number ≥ 1, a delay not a number of ms in [0, 2^31 − 1].
 */
export function checkpointRetryOf(options: CheckpointRetryOptions | undefined): CheckpointRetryOptions {
  if (options === undefined) return DEFAULT_CHECKPOINT_RETRY;
  const fail = (field: string, rule: string, value: unknown): never => {
    throw new ToolrunError('INVALID_OPTIONS', `persistence.checkpointRetry.${field} must be ${rule}, received ${String(value)}`);
  };
  const { maxAttempts, baseDelayMs, factor, maxDelayMs, jitterMs } = options;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) fail('maxAttempts', 'an integer ≥ 1', maxAttempts);
  for (const [field, value] of [
    ['baseDelayMs', baseDelayMs],
    ['maxDelayMs', maxDelayMs],
    ['jitterMs', jitterMs],
  ] as const) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_TIMER_MS) fail(field, 'a number of ms from 0 to 2^31 − 1', value);
  }
  if (typeof factor !== 'number' || !Number.isFinite(factor) || factor < 1) fail('factor', 'a finite number ≥ 1', factor);
  return options;
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
  /** Checkpoint every step to these stores; resume when the run id has a `running` checkpoint. */
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

/** The ledger key of one tool call: run id + step index + call index. */
export function ledgerKey(runId: string, stepIndex: number, callIndex: number): string {
  return `${runId}:${stepIndex}:${callIndex}`;
}

function toolMessage(call: ModelToolCall, result: ToolResult): ChatMessage {
  let content: string;
  try {
    content = JSON.stringify(result);
  } catch {
    // An envelope that is not JSON (a runtime that let a BigInt through): the model gets a failure, the run goes on.
    content = JSON.stringify({
      status: 'failed',
      tool_name: result.tool_name,
      call_id: result.call_id,
      duration_ms: result.duration_ms,
      attempts: result.attempts,
      trace_id: result.trace_id,
      error: {
        type: 'logic',
        code: 'TOOL_EXCEPTION',
        message: `${String(result.tool_name)} returned a value that is not JSON`,
        detail: 'The result could not be serialised.',
        retryable: false,
        suggestion: 'Do not call it again with the same arguments: use another tool or answer the user.',
      },
    });
  }
  return { role: 'tool', toolCallId: call.id, name: call.name, content };
}

/** The name a model goes by when none is given: `model.modelName`, the function's own name, or `'model'`. */
export function modelNameOf(model: Model, explicit?: string): string {
  if (explicit !== undefined && explicit.length > 0) return explicit.slice(0, 128);
  const named = (model as { modelName?: unknown }).modelName;
  if (typeof named === 'string' && named.length > 0) return named.slice(0, 128);
  return model.name && model.name !== 'anonymous' ? model.name.slice(0, 128) : 'model';
}

/**
 * Runs the agent loop: call the model, run its tool calls (in parallel) through the runtime, put
 * every envelope back as a tool message, until the model answers, `maxSteps`, the deadline, or
 * in-band recovery is exhausted (`tool_failed`: a tool whose retry budget is spent, or whose
 * session breaker is open, is called again; or a tool without fallbacks fails for everyone).
 * Never throws for a tool's or the model's failure: the status says what happened.
 *
 * With `persistence`, each step is checkpointed (conversation, run state, and each tool call's
 * envelope in the idempotency ledger keyed by run id + step + call index), so a run resumed after a
 * crash never repeats a recorded tool call.
 */
export async function runAgent(options: RunAgentOptions): Promise<AgentRunResult> {
  const runtime = options.runtime ?? createToolRuntime({ tools: options.tools ?? [] });
  const clock = runtime.clock;
  const runId = options.runId ?? `run_${globalThis.crypto.randomUUID()}`;
  const sessionId = options.sessionId ?? runId;
  const maxSteps = options.maxSteps ?? 20;
  const retryBudget = options.toolRetryBudget ?? 2;
  const persistence = options.persistence;
  const checkpointRetry = checkpointRetryOf(persistence?.checkpointRetry);
  /** Runs a checkpoint write, again after a wait while it fails on a store outage (see `checkpointRetry`). */
  const durably = async <T>(write: () => Promise<T>): Promise<T> => {
    for (let retry = 0; ; retry++) {
      try {
        return await write();
      } catch (error) {
        if (retry + 1 >= checkpointRetry.maxAttempts || !isTransientStoreError(error)) throw error;
        await clock.sleep(computeBackoffMs(retry, checkpointRetry, options.random ?? systemRandom));
      }
    }
  };
  const hooks = options.hooks;
  const modelPolicy = resolveModelPolicy(options.modelPolicy);
  const modelName = modelNameOf(options.model, options.modelName);
  const describeModelError = (text: string) => redactBounded(runtime.redactor, text, 1024);
  // budgets are kept per tool in the checkpoint: an invented name is model text, bounded and redacted like any
  const checkpointArgs = (failure: ToolFailureInfo): unknown => {
    let args = failure.toolArgs;
    if (typeof args === 'string') {
      try {
        args = args.length <= 1_048_576 ? (JSON.parse(args) as unknown) : redactBounded(runtime.redactor, args, 8192);
      } catch {
        args = redactBounded(runtime.redactor, args as string, 8192);
      }
    }
    return runtime.redactor.value(args, runtime.getTool(failure.toolName)?.definition.sensitive ?? [], { maxTextBytes: 8192 });
  };
  const budgetKey = (name: string) => (runtime.getTool(name) ? name : redactBounded(runtime.redactor, String(name), 128));
  const startedAt = clock.now();
  const deadlineAt = options.deadlineMs !== undefined ? startedAt + options.deadlineMs : undefined;

  let messages: ChatMessage[] = [...options.messages];
  let stepIndex = 0;
  let tokens: TokenUsage = { input: 0, output: 0 };
  let budgets: Record<string, ToolBudgetState> = {};
  let pendingStep = false;
  // whether this attempt checkpointed the pending step itself (see the ledger reads below)
  let stepBegunHere = false;
  let conversationRef = newConversationRef(clock.now());
  let modelCalls = 0;
  // how many of `messages` the conversation store holds (a step commit appends the rest)
  let storedCount = 0;
  // ledger rows that ride with the next step commit (see the tool calls below)
  let deferredLedger: { key: string; value: JsonValue }[] = [];
  const commitsSteps = persistence?.conversations.commitStep !== undefined;

  const existing = persistence ? (persistence.checkpoint !== undefined ? (persistence.checkpoint ?? undefined) : await persistence.runs.get(runId)) : undefined;
  if (persistence && existing) {
    const stored = await persistence.conversations.get(existing.conversationRef);
    if (stored) {
      messages = stored as ChatMessage[];
      storedCount = messages.length;
      stepIndex = existing.stepIndex;
      tokens = { ...existing.tokensSpent };
      const state = decodeRunState(existing.data);
      budgets = options.resetBudgets ? {} : state.budgets;
      pendingStep = state.pendingStep;
      conversationRef = existing.conversationRef;
    }
  }

  const save = async (status: RunCheckpoint['status'], extra: Pick<RunState, 'text' | 'failure' | 'modelFailure' | 'modelError'> = {}) => {
    if (!persistence) return;
    const checkpoint: RunCheckpoint = {
      runId,
      messageId: persistence.messageId ?? existing?.messageId ?? '',
      status,
      stepIndex,
      conversationRef,
      tokensSpent: tokens,
      toolAttempts: Object.fromEntries(Object.entries(budgets).map(([name, state]) => [name, state.attempts])),
      data: encodeRunState({ budgets, pendingStep, ...extra }),
      updatedAt: new Date(clock.now()).toISOString(),
    };
    // One commit per step where the stores can (the messages added since the last one, the
    // checkpoint and the deferred ledger rows, atomically); else one port at a time, ledger first.
    const ledgerRows = deferredLedger;
    const step = { conversationRef, messages, storedCount, checkpoint, ledger: ledgerRows };
    // the run's last commit ends its claim too, where the stores can (else the caller releases it)
    const claim = status !== 'running' ? persistence.claim : undefined;
    try {
      // the whole commit again after a store outage: each of its writes is idempotent
      await durably(async () => {
        let committed = false;
        if (commitsSteps && claim !== undefined) {
          const { claims, key, holder } = claim;
          committed = await persistence.conversations.commitStep!({ ...step, releaseClaim: { key, holder } }, { ...persistence, claims });
          if (committed) claim.onReleased();
        }
        if (commitsSteps && !committed) committed = await persistence.conversations.commitStep!(step, persistence);
        if (!committed) {
          for (const row of ledgerRows) await persistence.ledger.putIfAbsent(row.key, row.value);
          await persistence.conversations.put(conversationRef, messages);
          await persistence.runs.put(checkpoint);
        }
      });
    } catch (error) {
      // the step is not written: the outcomes of the calls it held are, on their own, so that a
      // redelivery does not run those calls again (best effort: the store may refuse these too)
      for (const row of ledgerRows) await durably(() => persistence.ledger.putIfAbsent(row.key, row.value)).catch(() => undefined);
      throw error;
    }
    deferredLedger = [];
    storedCount = messages.length;
  };
  const end = async (status: AgentRunStatus, extra: Partial<AgentRunResult> = {}): Promise<AgentRunResult> => {
    const text = extra.text ?? null;
    await save(status, {
      ...(text !== null ? { text } : {}),
      // the checkpoint keeps the failed call's arguments redacted and bounded (a replay reads the real ones from the conversation)
      ...(extra.failure ? { failure: { ...extra.failure, toolArgs: checkpointArgs(extra.failure) } } : {}),
      ...(extra.modelError ? { modelError: extra.modelError } : {}),
      ...(extra.modelFailure ? { modelFailure: extra.modelFailure } : {}),
    });
    const result: AgentRunResult = { status, runId, text, messages, modelCalls, steps: stepIndex, tokensSpent: tokens, conversationRef, ...extra };
    callHook(hooks?.onRunEnd && (() => hooks.onRunEnd?.(result, { at: clock.now() })));
    return result;
  };

  if (!existing) await save('running');
  const started = callHook(hooks?.onRunStart && (() => hooks.onRunStart?.({ runId, sessionId, stepIndex, resumed: existing !== undefined, at: clock.now() })));
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
        random: options.random ?? systemRandom,
        deadlineAt,
        signal: options.signal,
        breaker: options.modelBreaker,
        describe: describeModelError,
      });
      if (!outcome.ok) {
        modelCalls += outcome.attempts;
        if (outcome.cancelled) return end('cancelled');
        return end('model_failed', { modelError: outcome.failure.lastError.message, modelFailure: outcome.failure });
      }
      const response = outcome.response;
      modelCalls += outcome.attempts;
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
      // this attempt began the step: no earlier attempt ran its calls, so the ledger holds none of them
      stepBegunHere = true;
    }

    // Run the tool calls of the pending step (the last assistant message).
    // Models reuse tool-call ids across turns: only tool messages after this assistant turn answer it.
    // (scanned from the end: a step's cost does not grow with the conversation's length)
    let assistantIndex = messages.length - 1;
    while (assistantIndex >= 0 && messages[assistantIndex]!.role !== 'assistant') assistantIndex -= 1;
    const calls = messages[assistantIndex]?.toolCalls ?? [];
    const answered = new Set<string | undefined>();
    for (let index = assistantIndex + 1; index < messages.length; index++) {
      const message = messages[index]!;
      if (message.role === 'tool') answered.add(message.toolCallId);
    }
    // calls of this step not settled yet: the last one to settle may leave its ledger row to the step commit
    let unsettled = calls.length;
    const settle = () => --unsettled === 0;
    // every call settles before the step goes on or gives up: a call still running is never left behind
    // (its claim released under it, a redelivery running it again alongside)
    const settled = await Promise.allSettled(
      calls.map(async (call, callIndex) => {
        if (answered.has(call.id)) {
          settle();
          return { kind: 'answered' as const };
        }
        const key = ledgerKey(runId, stepIndex, callIndex);
        const recorded = persistence && !stepBegunHere ? await persistence.ledger.get(key) : undefined;
        if (recorded !== undefined) {
          settle();
          return { kind: 'result' as const, call, result: recorded as unknown as ToolResult, record: undefined };
        }
        const resolvedName = budgetKey(call.name);
        const budget = budgets[resolvedName] ?? { attempts: 0, retries: 0, lastFailedTransient: false, lastError: null };
        const breakerOpen = runtime.sessionBreakers?.check(sessionId, resolvedName).state === 'open';
        // an open breaker ends the run once the tool ran, or at once for a name no tool has (it never runs)
        if (
          (budget.retries >= retryBudget && budget.lastFailedTransient) ||
          (breakerOpen && (budget.attempts > 0 || budget.lastError?.kind === 'unknown_tool'))
        ) {
          const failure: ToolFailureInfo = {
            stepIndex,
            callIndex,
            toolName: resolvedName,
            toolArgs: call.args,
            attempts: budget.attempts,
            // this call was not made: the error is an earlier call's (maybe with other arguments), and says so
            lastError: budget.lastError
              ? { ...budget.lastError, message: `${budget.lastError.message} (the last failure of an earlier call; this one was not made)` }
              : { kind: 'unknown', status: null, message: 'in-band recovery exhausted (this call was not made)' },
            reason: breakerOpen ? 'session-breaker-open' : 'retry-budget-exhausted',
          };
          settle();
          return { kind: 'exhausted' as const, failure };
        }
        const record = await runtime.execute({
          name: call.name,
          args: call.args,
          callId: call.id,
          sessionId,
          runId,
          idempotencyKey: key,
          maxAttempts: 1 + Math.max(0, retryBudget - budget.retries),
          ...(deadlineAt !== undefined ? { deadlineAt } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
          ...(traceId !== undefined ? { traceId } : {}),
        });
        // Record the outcome at once, not after the step's other calls: a crash between a side
        // effect and this write is the one window in which a resumed run repeats a call. The last
        // call to settle leaves its row to the step commit that follows at once (no wait, no other
        // write between), which records it atomically with the step's messages and checkpoint.
        const value = record.result as unknown as JsonValue;
        const deferred = settle() && commitsSteps;
        if (deferred) deferredLedger.push({ key, value });
        else if (persistence) await durably(() => persistence.ledger.putIfAbsent(key, value));
        try {
          options.onToolCall?.(record, stepIndex);
        } catch (error) {
          // the step will not be committed: record the outcome before giving up
          if (deferred && persistence) {
            deferredLedger = deferredLedger.filter((row) => row.key !== key);
            await durably(() => persistence.ledger.putIfAbsent(key, value));
          }
          throw error;
        }
        return { kind: 'result' as const, call, result: record.result, record };
      }),
    );
    const rejected = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (rejected !== undefined) {
      // the outcomes the step commit would have written are recorded before giving up
      if (persistence) {
        for (const row of deferredLedger) await durably(() => persistence.ledger.putIfAbsent(row.key, row.value)).catch(() => undefined);
      }
      deferredLedger = [];
      throw rejected.reason;
    }
    // every one fulfilled: the same order, the same indexes
    const outcomes = settled.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));

    let failure: ToolFailureInfo | undefined;
    for (const [callIndex, outcome] of outcomes.entries()) {
      if (outcome.kind === 'answered') continue;
      if (outcome.kind === 'exhausted') {
        failure ??= outcome.failure;
        continue;
      }
      const { call, result, record } = outcome;
      if (record) {
        const name = budgetKey(record.toolName);
        const budget = (budgets[name] ??= { attempts: 0, retries: 0, lastFailedTransient: false, lastError: null });
        budget.attempts += result.attempts;
        budget.retries += Math.max(0, result.attempts - 1);
        budget.lastFailedTransient = result.status === 'failed' && result.error.type === 'environment';
        if (record.error)
          budget.lastError = { kind: record.error.kind, status: record.error.status, message: redactBounded(runtime.redactor, record.error.message, 2048) };
        const fallbacks = runtime.getTool(name)?.definition.fallbacks ?? [];
        const brokenForEveryone = result.status === 'failed' && (record.misconfiguration || result.error.code === 'CIRCUIT_OPEN');
        if (brokenForEveryone && fallbacks.length === 0) {
          failure ??= {
            stepIndex,
            callIndex,
            toolName: name,
            toolArgs: call.args,
            attempts: budget.attempts,
            lastError: budget.lastError ?? { kind: 'misconfigured', status: null, message: result.status === 'failed' ? result.error.message : '' },
            reason: result.status === 'failed' && result.error.code === 'CIRCUIT_OPEN' ? 'circuit-open' : 'misconfiguration',
          };
        }
      }
      messages.push(toolMessage(call, result));
    }
    if (failure) {
      // The step stays pending: a replay resumes here and re-executes the failed call.
      return end('tool_failed', { failure });
    }
    pendingStep = false;
    stepBegunHere = false;
    stepIndex += 1;
    await save('running');
  }
}
