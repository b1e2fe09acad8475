/**
 * The activity side of toolrun's Temporal integration: a tool call run as a Temporal activity, its
 * outcome mapped to Temporal's retry semantics by `toRetryDirective`, and the activity that writes
 * a dead-lettered run into toolrun's tool DLQ.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { redactBounded } from '../../core/build-failure.ts';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import { DEFAULT_TOOL_RETRY_BUDGET, toRetryDirective, type RetryBudgetState, type ToolDeadLetterReason } from '../../core/retry-directive.ts';
import type { ToolCallRecord } from '../../core/tool-call-record.ts';
import type { ToolFailureEntry } from '../../ground/dead-letter-entries.ts';
import { ledgerKey, type RunJournal, type JsonValue } from '../../ground/ports/run-journal.ts';
import type { DeadLetterQueue } from '../../ground/ports/stores.ts';
import type { ResumableEntry } from '../../ground/dead-letter-entries.ts';
import type { ToolFailure, ToolResult } from '../../ground/tool-result.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import { boundedToolArgs, MAX_ENTRY_TOOL_NAME_BYTES, MAX_LAST_ERROR_BYTES } from '../../worker/build-tool-failure-entry.ts';
import { hostEntryMessageId } from '../../worker/host-entry.ts';
import { toolDeadLetterKey } from '../../worker/push-dead-letter.ts';
import {
  TOOLRUN_DEAD_LETTER_FAILURE_TYPE,
  TOOLRUN_RETRY_FAILURE_TYPE,
  type TemporalDeadLetterInput,
  type TemporalToolCall,
  type TemporalToolFailureDetails,
  type ToolrunActivities,
} from './failure-types.ts';

/**
 * The host name of a tool-DLQ entry dead-lettered from a Temporal workflow: its `originalMessageId`
 * is `temporal:<workflowId>` (a workflow run has no queue message), so `replayDeadLetter` routes it
 * to `hosts.temporal` and toolrun's own loop never runs it.
 */
export const TEMPORAL_HOST = 'temporal';

/** Options of {@link createToolrunActivities}. */
export interface ToolrunActivitiesOptions {
  /** The tool runtime (built once per worker process: its breakers and shared-breaker store are shared by every activity). */
  runtime: ToolRuntime;
  /**
   * toolrun's stores (`createToolrun(...).stores` has both): the dead-letter activity writes the
   * entry to `toolDlq` and the conversation through `journal.putConversation`; with
   * `recordOutcomes`, the call activity records each call's final outcome through `journal.record`.
   */
  stores: {
    toolDlq: Pick<DeadLetterQueue<ResumableEntry>, 'pushOnce'>;
    journal: Pick<RunJournal, 'putConversation' | 'record' | 'recorded'>;
  };
  /**
   * Records each call's final outcome (an envelope returned to the model) in `stores.journal`, by
   * (workflow id, step, call) — the ledger key `<workflowId>:<stepIndex>:<callIndex>` — so an
   * activity attempt that finds it (the worker died after the tool ran, before Temporal heard of
   * it) returns it without running the tool again. Off, the activity reads and writes no outcome
   * and every attempt runs the tool (it gets the same `context.idempotencyKey` either way).
   * @defaultValue false
   */
  recordOutcomes?: boolean;
  /** Retries (Temporal attempts beyond the first) a call may spend before the run is dead-lettered. @defaultValue 2 */
  retryBudget?: number;
  /** The backoff and random source of `toRetryDirective` (for waits when the server asked for none). @defaultValue toolrun's retry policy */
  backoff?: Pick<RetryBudgetState, 'policy' | 'random'>;
}

/** The run a call belongs to: the workflow's id (the activity's own id when no workflow scheduled it). */
function runIdOf(context: Context): string {
  return context.info.workflowExecution?.workflowId ?? context.info.activityId;
}

/** Heartbeats while `work` runs, at half the activity's heartbeat timeout (none when it has none), so Temporal can deliver a cancellation. */
async function withHeartbeats<T>(context: Context, work: Promise<T>): Promise<T> {
  const timeoutMs = context.info.heartbeatTimeoutMs;
  if (timeoutMs === undefined || !(timeoutMs > 0)) return work;
  const timer = setInterval(() => context.heartbeat(), Math.max(1, Math.floor(timeoutMs / 2)));
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}

/** The failure details the workflow gets in the `ApplicationFailure`: redacted and bounded (they are written to its history). */
function failureDetails(
  runtime: ToolRuntime,
  record: ToolCallRecord,
  failure: ToolFailure,
  outcome: { reason: ToolDeadLetterReason; attempts: number },
): TemporalToolFailureDetails {
  const { reason, attempts } = outcome;
  return {
    reason,
    toolName: redactBounded(runtime.redactor, record.toolName, MAX_ENTRY_TOOL_NAME_BYTES),
    toolArgs: boundedToolArgs(record.arguments, runtime.redactor, record.sensitiveKeys),
    attempts,
    lastError: {
      kind: record.error?.kind ?? 'unknown',
      status: record.error?.status ?? null,
      message: redactBounded(runtime.redactor, record.error?.message ?? failure.error.message, MAX_LAST_ERROR_BYTES),
    },
    envelope: failure,
  };
}

/** Runs one call in the current activity context and maps its directive to Temporal: see {@link ToolrunActivities.toolrunCallTool}. */
async function callTool(options: ToolrunActivitiesOptions, call: TemporalToolCall): Promise<ToolResult> {
  const { runtime, stores } = options;
  const context = Context.current();
  const runId = runIdOf(context);
  const callIndex = call.callIndex ?? 0;
  const key = ledgerKey(runId, call.stepIndex, callIndex);
  const recording = options.recordOutcomes === true;
  const recorded = recording ? await stores.journal.recorded(runId, call.stepIndex, callIndex) : undefined;
  if (recorded !== undefined) return recorded as unknown as ToolResult;
  const record = await withHeartbeats(
    context,
    runtime.execute({
      name: call.name,
      args: call.args,
      runId,
      sessionId: runId,
      idempotencyKey: key,
      // Temporal retries, after a durable timer: the runtime does not sleep between attempts
      maxAttempts: 1,
      signal: context.cancellationSignal,
      ...(call.callId !== undefined ? { callId: call.callId } : {}),
      ...(call.deadlineAt !== undefined ? { deadlineAt: call.deadlineAt } : {}),
    }),
  );
  // Temporal cancelled the activity (the workflow cancelled it, or the worker is shutting down): not a tool outcome
  if (context.cancellationSignal.aborted) {
    const reason: unknown = context.cancellationSignal.reason;
    throw reason instanceof Error ? reason : new CancelledFailure('the activity was cancelled');
  }
  const retriesSpent = context.info.attempt - 1;
  const directive = toRetryDirective(record, {
    retriesSpent,
    retryBudget: options.retryBudget ?? DEFAULT_TOOL_RETRY_BUDGET,
    idempotent: runtime.getTool(record.toolName)?.idempotent === true,
    ...(call.deadlineAt !== undefined ? { remainingMs: call.deadlineAt - runtime.clock.now() } : {}),
    ...options.backoff,
  });
  const result = record.result;
  if (directive.action === 'return-to-model') {
    if (!recording) return result;
    // the first outcome recorded stays: an attempt that ran meanwhile (a timed-out one) may have recorded one
    return (await stores.journal.record(runId, { stepIndex: call.stepIndex, callIndex, outcome: result as unknown as JsonValue })) as unknown as ToolResult;
  }
  // only failures are retried or dead-lettered
  const failure = result as ToolFailure;
  const attempts = retriesSpent + result.attempts;
  if (directive.action === 'retry') {
    throw ApplicationFailure.create({
      type: TOOLRUN_RETRY_FAILURE_TYPE,
      message: `${failure.error.code}: ${failure.error.message} (toolrun retries after ${directive.afterMs} ms, ${directive.basis})`,
      nonRetryable: false,
      nextRetryDelay: directive.afterMs,
      details: [failureDetails(runtime, record, failure, { reason: 'retry-budget-exhausted', attempts })],
    });
  }
  throw ApplicationFailure.create({
    type: TOOLRUN_DEAD_LETTER_FAILURE_TYPE,
    message: `${failure.error.code}: ${failure.error.message} (toolrun dead-letters the run: ${directive.reason})`,
    nonRetryable: true,
    details: [failureDetails(runtime, record, failure, { reason: directive.reason, attempts })],
  });
}

/** Writes the run's tool-DLQ entry: see {@link ToolrunActivities.toolrunDeadLetter}. */
async function deadLetter(options: ToolrunActivitiesOptions, input: TemporalDeadLetterInput) {
  const { stores } = options;
  // a retry cannot fix the input: not retried (a ToolrunError would be retried by Temporal forever)
  if (typeof input?.conversationRef !== 'string' || !input.conversationRef.startsWith('conv_'))
    throw ApplicationFailure.nonRetryable('toolrunDeadLetter: conversationRef must be a string starting with conv_', 'ToolrunInvalidInput');
  // the conversation first: an entry never points at a conversation that is not there
  await stores.journal.putConversation(input.conversationRef, input.messages);
  const { details } = input;
  const entry: ToolFailureEntry = {
    kind: 'tool',
    runId: input.workflowId,
    stepIndex: input.stepIndex,
    toolName: details.toolName,
    toolArgs: details.toolArgs,
    attempts: details.attempts,
    lastError: details.lastError,
    conversationRef: input.conversationRef,
    tokensSpent: { input: input.tokensSpent.input, output: input.tokensSpent.output },
    firstSeenAt: input.firstSeenAt,
    originalMessageId: hostEntryMessageId(TEMPORAL_HOST, input.workflowId),
    reason: details.reason,
  };
  return stores.toolDlq.pushOnce(toolDeadLetterKey(input.workflowId, input.stepIndex), entry);
}

/**
 * The activities of toolrun's Temporal integration, for `Worker.create({ activities })`:
 *
 * - `toolrunCallTool(call)`: runs one tool call with the runtime's own retries off (Temporal does
 *   the waits, as durable timers) and maps `toRetryDirective` of its outcome, with Temporal's
 *   attempt as the retries spent:
 *   - `return-to-model` → returns the envelope (the activity completes: no retry); with
 *     `recordOutcomes` the envelope is recorded in `stores.journal` by (workflow id, step, call)
 *     first (the first recorded stays and is the one returned), and a later attempt of the same
 *     call returns it without running the tool;
 *   - `retry` → throws a retryable `ApplicationFailure` of type `ToolrunRetry` with
 *     `nextRetryDelay: afterMs` (the server's `Retry-After` or rate-limit reset, or toolrun's
 *     backoff);
 *   - `dead-letter` → throws a non-retryable `ApplicationFailure` of type `ToolrunDeadLetter`.
 *   Both failures carry one detail, `TemporalToolFailureDetails` (redacted, bounded). The tool's
 *   `context.idempotencyKey` is `<workflowId>:<stepIndex>:<callIndex>`, stable across Temporal's
 *   retries. A cancellation by Temporal (delivered through heartbeats, sent at half the activity's
 *   `heartbeatTimeout` when it has one) aborts the tool's signal and rethrows Temporal's
 *   cancellation, so it is never recorded as the tool's outcome.
 * - `toolrunDeadLetter(input)`: stores the conversation under `input.conversationRef`
 *   (`stores.journal.putConversation`) and pushes
 *   one `ToolFailureEntry` (`runId` = workflow id, `originalMessageId` = `temporal:<workflowId>`, so
 *   `replayDeadLetter` routes it to `hosts.temporal` and an unregistered host leaves it untouched)
 *   keyed by (workflow id, step): a retried activity adds no second entry.
 *
 * Call it once per worker process and register the result; the workflow side uses `callTool` or
 * `deadLetterRun` from `toolrun/temporal/workflow`.
 *
 * @throws ToolrunError `INVALID_OPTIONS` when `runtime`, `stores.toolDlq` or `stores.journal` is missing,
 * `retryBudget` is not an integer ≥ 0, or `recordOutcomes` is given and not a boolean.
 * @see https://docs.temporal.io/encyclopedia/retry-policies (nextRetryDelay, non-retryable errors)
 */
export function createToolrunActivities(options: ToolrunActivitiesOptions): ToolrunActivities {
  if (options?.runtime === undefined || options.stores?.toolDlq === undefined || options.stores.journal === undefined)
    throw new ToolrunError('INVALID_OPTIONS', 'createToolrunActivities needs `runtime` and `stores` with `toolDlq` and `journal`');
  const retryBudget = options.retryBudget;
  if (retryBudget !== undefined && !(Number.isInteger(retryBudget) && retryBudget >= 0))
    throw new ToolrunError('INVALID_OPTIONS', `createToolrunActivities: retryBudget must be an integer ≥ 0, received ${String(retryBudget)}`);
  if (options.recordOutcomes !== undefined && typeof options.recordOutcomes !== 'boolean')
    throw new ToolrunError('INVALID_OPTIONS', `createToolrunActivities: recordOutcomes must be a boolean, received ${typeof options.recordOutcomes}`);
  return {
    toolrunCallTool: (call) => callTool(options, call),
    toolrunDeadLetter: (input) => deadLetter(options, input),
  };
}
