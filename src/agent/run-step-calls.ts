import type { ToolRuntime } from '../core/create-tool-runtime.ts';
import type { ToolCallRecord } from '../core/tool-call-record.ts';
import { redactBounded } from '../core/build-failure.ts';
import { ledgerKey, type JsonValue } from '../ground/ports/run-journal.ts';
import type { ToolResult } from '../ground/tool-result.ts';
import type { ChatMessage, ModelToolCall } from './messages.ts';
import type { RunWriter } from './run-writer.ts';
import type { ToolBudgetState, ToolFailureInfo } from './run-state.ts';

/** What the calls of one step need from the run. */
export interface StepCallsContext {
  runtime: ToolRuntime;
  runId: string;
  sessionId: string;
  stepIndex: number;
  /** The conversation: the step's assistant turn is the last one; its tool messages are appended. */
  messages: ChatMessage[];
  /** Per tool, the in-band budget spent in the run (updated here). */
  budgets: Record<string, ToolBudgetState>;
  retryBudget: number;
  /** The journal writer; `undefined` without persistence. */
  writer: RunWriter | undefined;
  /** Whether the ledger may hold outcomes of this step (an earlier attempt began it). */
  mayHaveRecorded: boolean;
  deadlineAt: number | undefined;
  signal: AbortSignal | undefined;
  traceId: string | undefined;
  onToolCall: ((record: ToolCallRecord, stepIndex: number) => void) | undefined;
  /** The budget key of a tool name: the name of a known tool, else the name bounded and redacted. */
  budgetKey: (name: string) => string;
}

type CallOutcome =
  | { kind: 'answered' }
  | { kind: 'exhausted'; failure: ToolFailureInfo }
  | { kind: 'result'; call: ModelToolCall; result: ToolResult; record: ToolCallRecord | undefined };

/** A fresh budget of a tool not called yet in the run. */
const freshBudget = (): ToolBudgetState => ({ attempts: 0, retries: 0, lastFailedTransient: false, lastError: null });

/**
 * Runs the calls of the pending step (the last assistant turn) that have no answer yet, in
 * parallel: an outcome recorded by an earlier attempt is read, not run again; a call whose tool's
 * budget is spent, or whose session breaker is open, is not made. Each outcome is recorded at
 * once, the last to settle left to the step commit. The tool messages are appended in call order.
 * Returns the step's first failure that ends the run (`tool_failed`), if any. Rejects (after every
 * call settled, and the outcomes recorded) when a call or `onToolCall` threw.
 */
export async function runStepCalls(context: StepCallsContext): Promise<ToolFailureInfo | undefined> {
  const { messages } = context;
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
  // calls not settled yet: the last one to settle may leave its outcome to the step commit
  let unsettled = calls.length;
  const settle = () => --unsettled === 0;
  // every call settles before the step goes on or gives up: a call still running is never left behind
  // (its claim released under it, a redelivery running it again alongside)
  const settled = await Promise.allSettled(
    calls.map(async (call, callIndex): Promise<CallOutcome> => {
      if (answered.has(call.id)) {
        settle();
        return { kind: 'answered' };
      }
      return runCall(context, call, callIndex, settle);
    }),
  );
  const rejected = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (rejected !== undefined) {
    // the outcomes the step commit would have written are recorded before giving up
    await context.writer?.recordDeferred();
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
    // every call's attempts are spent, the run's failure or not
    const broken = outcome.record ? spend(context, outcome.record, outcome.call, callIndex) : undefined;
    failure ??= broken;
    messages.push(toolMessage(outcome.call, outcome.result));
  }
  return failure;
}

/** One call of the step: its recorded outcome, a refusal (budget spent, breaker open), or its execution. */
async function runCall(context: StepCallsContext, call: ModelToolCall, callIndex: number, settle: () => boolean): Promise<CallOutcome> {
  const { runtime, runId, stepIndex, writer } = context;
  const recorded = writer && context.mayHaveRecorded ? await writer.recorded(stepIndex, callIndex) : undefined;
  if (recorded !== undefined) {
    settle();
    return { kind: 'result', call, result: recorded as unknown as ToolResult, record: undefined };
  }
  const resolvedName = context.budgetKey(call.name);
  const budget = context.budgets[resolvedName] ?? freshBudget();
  const breakerOpen = runtime.sessionBreakers?.check(context.sessionId, resolvedName).state === 'open';
  // an open breaker ends the run once the tool ran, or at once for a name no tool has (it never runs)
  if (
    (budget.retries >= context.retryBudget && budget.lastFailedTransient) ||
    (breakerOpen && (budget.attempts > 0 || budget.lastError?.kind === 'unknown_tool'))
  ) {
    settle();
    return {
      kind: 'exhausted',
      failure: {
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
      },
    };
  }
  const record = await runtime.execute({
    name: call.name,
    args: call.args,
    callId: call.id,
    sessionId: context.sessionId,
    runId,
    idempotencyKey: ledgerKey(runId, stepIndex, callIndex),
    maxAttempts: 1 + Math.max(0, context.retryBudget - budget.retries),
    ...(context.deadlineAt !== undefined ? { deadlineAt: context.deadlineAt } : {}),
    ...(context.signal ? { signal: context.signal } : {}),
    ...(context.traceId !== undefined ? { traceId: context.traceId } : {}),
  });
  // Record the outcome at once, not after the step's other calls: a crash between a side effect and
  // this write is the one window in which a resumed run repeats a call. The last call to settle
  // leaves it to the step commit that follows at once, which records it atomically with the step.
  const deferred = settle();
  await writer?.record({ stepIndex, callIndex, outcome: record.result as unknown as JsonValue }, deferred);
  try {
    context.onToolCall?.(record, stepIndex);
  } catch (error) {
    // the step will not be committed: record the outcome before giving up
    if (deferred) await writer?.recordDeferred();
    throw error;
  }
  return { kind: 'result', call, result: record.result, record };
}

/** Adds a call's attempts to its tool's budget; returns the failure that ends the run when the tool is broken for everyone and has no fallback. */
function spend(context: StepCallsContext, record: ToolCallRecord, call: ModelToolCall, callIndex: number): ToolFailureInfo | undefined {
  const { runtime } = context;
  const result = record.result;
  const name = context.budgetKey(record.toolName);
  const budget = (context.budgets[name] ??= freshBudget());
  budget.attempts += result.attempts;
  budget.retries += Math.max(0, result.attempts - 1);
  budget.lastFailedTransient = result.status === 'failed' && result.error.type === 'environment';
  if (record.error)
    budget.lastError = { kind: record.error.kind, status: record.error.status, message: redactBounded(runtime.redactor, record.error.message, 2048) };
  const fallbacks = runtime.getTool(name)?.definition.fallbacks ?? [];
  const brokenForEveryone = result.status === 'failed' && (record.misconfiguration || result.error.code === 'CIRCUIT_OPEN');
  if (!brokenForEveryone || fallbacks.length > 0) return undefined;
  return {
    stepIndex: context.stepIndex,
    callIndex,
    toolName: name,
    toolArgs: call.args,
    attempts: budget.attempts,
    lastError: budget.lastError ?? { kind: 'misconfigured', status: null, message: result.status === 'failed' ? result.error.message : '' },
    reason: result.status === 'failed' && result.error.code === 'CIRCUIT_OPEN' ? 'circuit-open' : 'misconfiguration',
  };
}

/** The envelope as the tool message the model reads (a failure envelope when it is not JSON). */
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
