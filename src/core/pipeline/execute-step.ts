/**
 * Step 5 of a call: run the tool with its timeout, retries, backoff with jitter, `Retry-After` and
 * the call's time budget; one extra attempt after a credential refresh. Ends with the envelope of a
 * success (or `OUTPUT_TOO_LARGE`: the tool worked, the model must ask for less), or the failure of
 * the last attempt, classified, with the session and shared breakers fed.
 */
import type { ToolFailure, ToolResult } from '../../ground/tool-result.ts';
import { decideRetry, type RetryDecision } from '../../policies/retry-policy.ts';
import { boundFailureEnvelope } from '../bound-envelope.ts';
import { buildFailure, type FailureParts } from '../build-failure.ts';
import { truncateUtf8, utf8ByteLength } from '../../ground/utf8.ts';
import { classifyError, type ClassifiedError } from '../classify-error.ts';
import { copyPlainJson, NOT_COPIED } from '../copy-json.ts';
import { describeThrown, messageOf } from '../describe-thrown.ts';
import {
  attemptOutcome,
  startAttempt,
  startTimeout,
  type AttemptListener,
  type AttemptOutcome,
  type AttemptScope,
  type StartedAttempt,
} from '../run-attempt.ts';
import { executeWithRetry, type RetryLoop, type RetryWait } from '../../policies/retry-loop.ts';
import type { Clock } from '../../ground/ports/clock.ts';
import type { AttemptRecord } from '../tool-call-record.ts';
import type { RegisteredTool } from '../tool-registry.ts';
import { stepFailed, type CallState, type PipelineParts, type StepOutcome } from './call-state.ts';

/** The identity fields of an envelope. */
export interface EnvelopeBase {
  tool_name: string;
  call_id: string;
  duration_ms: number;
  attempts: number;
  trace_id: string;
}

const ENVIRONMENT_MESSAGES: Partial<Record<string, (tool: string, classified: ClassifiedError) => string>> = {
  TIMEOUT: (tool) => `${tool} did not answer in time`,
  UNAVAILABLE: (tool, c) => `${tool} is unavailable${c.status !== null ? ` (HTTP ${c.status})` : ''}`,
  RATE_LIMITED: (tool) => `${tool} is rate limited`,
  NETWORK_ERROR: (tool) => `${tool} could not be reached`,
  AUTH_EXPIRED: (tool) => `${tool} rejected its credentials`,
  PERMISSION_DENIED: (tool) => `Permission denied for ${tool}`,
  TOOL_EXCEPTION: (tool) => `${tool} failed with an unexpected error`,
  CANCELLED: (tool) => `The call to ${tool} was cancelled`,
};

/** The envelope's identity fields now (or at `nowMs`, a clock reading just taken). */
export function envelopeBase(parts: PipelineParts, call: CallState, nowMs: number = parts.clock.now()): EnvelopeBase {
  return {
    tool_name: call.toolName,
    call_id: call.callId,
    duration_ms: Math.max(0, nowMs - call.startedAt),
    attempts: call.attempts.length,
    trace_id: call.traceId,
  };
}

/** A failed attempt, classified, and what the tool threw. */
interface AttemptFailed {
  readonly classified: ClassifiedError;
  readonly thrown: unknown;
}

/** What an execution ends with: the step's outcome, or a promise of it (the retry loop, the shared breaker). */
type ExecutionEnd = StepOutcome<ToolResult> | Promise<StepOutcome<ToolResult>>;

/**
 * The execution of one call: the scope every attempt shares, its deadline, and the listener of its
 * first attempt (one object per call); the attempts after the first are a {@link RetryAttempts} loop.
 */
export class CallExecution implements AttemptScope, AttemptListener {
  readonly execute: (args: unknown, context: unknown) => unknown;
  readonly args: unknown;
  readonly callId: string;
  readonly sessionId: string;
  readonly runId: string | undefined;
  readonly idempotencyKey: string;
  readonly clock: Clock;
  readonly callerSignal: AbortSignal | undefined;
  readonly deadlineAt: number;
  /** When the attempt running now started (clock ms). */
  attemptStartedAt = 0;
  /** The first attempt, while it may still need its timeout started. */
  first: StartedAttempt | undefined = undefined;
  /** How the execution ended, once it has (a rejected promise for an internal error). */
  end: ExecutionEnd | undefined = undefined;
  /** Hands the end on to {@link outcome}'s promise, when it was asked for before the end. */
  waiting: ((end: ExecutionEnd) => void) | undefined = undefined;

  constructor(
    readonly parts: PipelineParts,
    readonly call: CallState,
    readonly tool: RegisteredTool,
  ) {
    const input = call.input;
    this.execute = tool.definition.execute as (args: unknown, context: unknown) => unknown;
    this.args = call.args;
    this.callId = call.callId;
    this.sessionId = call.sessionId;
    this.runId = input.runId;
    this.idempotencyKey = input.idempotencyKey ?? `${call.sessionId}:${call.callId}`;
    this.clock = parts.clock;
    this.callerSignal = input.signal;
    const callerDeadline = typeof input.deadlineAt === 'number' && !Number.isNaN(input.deadlineAt) ? input.deadlineAt : Number.POSITIVE_INFINITY;
    this.deadlineAt = Math.min(call.startedAt + parts.callBudgetMs, callerDeadline);
  }

  /** The attempt's timeout when it starts at `nowMs`: the tool's (or the default), cut to the time left; `undefined` when none is left. */
  timeoutNow(nowMs: number = this.clock.now()): number | undefined {
    this.attemptStartedAt = nowMs;
    const remainingMs = this.deadlineAt - this.attemptStartedAt;
    if (remainingMs <= 0) return undefined;
    return Math.min(this.tool.definition.timeoutMs ?? this.parts.defaultTimeoutMs, remainingMs);
  }

  /** The first attempt ended (it runs without a promise: a tool that succeeds at once ends the execution in that microtask). */
  settled(outcome: AttemptOutcome): void {
    let end: ExecutionEnd;
    try {
      const nowMs = this.recordAttempt(1);
      end = outcome.ok ? this.succeeded(outcome.value, nowMs) : this.retry(this.failed(outcome), undefined);
    } catch (internal) {
      end = Promise.reject(internal as Error);
    }
    this.ended(end);
  }

  /** The execution ended with `end`: handed to {@link outcome}'s promise when it waits, else kept for {@link outcome}. */
  ended(end: ExecutionEnd): void {
    if (this.waiting !== undefined) this.waiting(end);
    else this.end = end;
  }

  /**
   * How the execution ended, or a promise of it. Called a microtask after {@link startExecution}: a
   * tool that answered at once has settled by then (no timer, no promise); a tool still running gets
   * its timeout now.
   */
  outcome(): ExecutionEnd {
    if (this.end !== undefined) return this.end;
    if (this.first !== undefined) startTimeout(this.first);
    // The timeout may have ended the attempt already (a timer of no time left on a synchronous clock).
    if (this.end !== undefined) return this.end;
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  /** Records attempt `attempt` as ended now (a success until {@link failed} says otherwise); returns the clock's reading. */
  recordAttempt(attempt: number): number {
    const nowMs = this.clock.now();
    const record: AttemptRecord = { attempt, durationMs: nowMs - this.attemptStartedAt, outcome: 'success' };
    const { call } = this;
    // The first record in an array of its own size (a push onto an empty array reserves 17 slots).
    if (call.attempts.length === 0) call.attempts = [record];
    else call.attempts.push(record);
    return nowMs;
  }

  /** The last recorded attempt failed: its classification, recorded. */
  failed(outcome: AttemptOutcome & { ok: false }): AttemptFailed {
    const classified = classify(this.parts, outcome.thrown, outcome.abortReason);
    this.call.attempts[this.call.attempts.length - 1]!.outcome = classified.code;
    return { classified, thrown: outcome.thrown };
  }

  /**
   * The attempts after the first (from its failure, or from the start when the turn guard held the
   * first back): the retry loop, then the call's success or its last failure, classified.
   */
  async retry(firstFailure: AttemptFailed | undefined, firstTurn: Promise<void> | undefined): Promise<StepOutcome<ToolResult>> {
    const loop = new RetryAttempts(this, firstTurn);
    const end = await executeWithRetry(loop, { clock: this.clock, signal: this.callerSignal, firstFailure });
    if (end.ok) return this.succeeded(end.value, loop.succeededAt);
    const { parts, call } = this;
    if (end.failure === undefined && !end.cancelled) return noBudget(call.toolName);
    const failure = end.cancelled ? classify(parts, undefined, 'cancelled') : end.failure!.classified;
    const thrown = end.cancelled ? undefined : end.failure!.thrown;
    call.misconfiguration = failure.misconfiguration;
    call.errorRecord = { kind: failure.kind, status: failure.status, message: failure.message, ...describeThrown(thrown) };
    if (parts.sessionBreakers && failure.kind !== 'cancelled') parts.sessionBreakers.recordFailure(call.sessionId, call.toolName, { kind: 'counted' });
    if (parts.sharedBreaker && failure.misconfiguration) {
      const probe = call.heldProbe;
      call.heldProbe = undefined;
      await parts.sharedBreaker.recordFailure(call.toolName, { message: parts.modelText(failure.message) }, probe?.id).catch(() => undefined);
    }
    return stepFailed(describeFailure(failure, loop.decision, call, parts.modelText), failure.suggestion !== undefined);
  }

  /** The tool returned `value` (at `nowMs`): its envelope, or the failure when the value cannot be one. */
  succeeded(value: unknown, nowMs: number): StepOutcome<ToolResult> | Promise<StepOutcome<ToolResult>> {
    const { parts, call } = this;
    const { sessionBreakers, sharedBreaker } = parts;
    const { sessionId, toolName } = call;
    const attemptRecord = call.attempts[call.attempts.length - 1]!;
    if (parts.isLimitEnvelope(value)) {
      // The tool returned the envelope of a nested call that hit the call limit: it recursed.
      attemptRecord.outcome = 'CALL_LIMIT_EXCEEDED';
      call.errorRecord = {
        kind: 'call_limit',
        status: null,
        message: 'the tool returned a CALL_LIMIT_EXCEEDED envelope of a nested call (it calls the runtime recursively)',
        causes: [],
      };
      return stepFailed({
        code: 'CALL_LIMIT_EXCEEDED',
        message: `${toolName} called tools recursively until the runtime's limit of ${parts.maxInFlightCalls} calls in flight`,
        detail: 'A nested call of this tool was refused because too many calls were running; the tool returned that refusal.',
      });
    }
    // A success envelope holding a copy of the result's JSON, or a failure when it is not JSON.
    const built = buildSuccess(parts, value, call, nowMs);
    if (built.status === 'failed' && built.error.code === 'TOOL_EXCEPTION') {
      attemptRecord.outcome = 'TOOL_EXCEPTION';
      call.errorRecord = { kind: 'exception', status: null, message: `the tool returned a value that is not JSON: ${built.error.detail}`, causes: [] };
      sessionBreakers?.recordFailure(sessionId, toolName, { kind: 'counted' });
      return stepFailed({ code: 'TOOL_EXCEPTION', message: built.error.message, detail: built.error.detail });
    }
    // A success, or OUTPUT_TOO_LARGE: the tool worked; the model must ask for less.
    if (sessionBreakers) sessionBreakers.recordSuccess(sessionId, toolName);
    let outcome: StepOutcome<ToolResult> = { ok: true, value: built };
    if (built.status === 'failed') {
      attemptRecord.outcome = built.error.code;
      outcome = { ok: true, value: boundFailureEnvelope(built, parts.envelopeRedactor, parts.bounds) };
    }
    if (!sharedBreaker) return outcome;
    const probe = call.heldProbe;
    call.heldProbe = undefined;
    return sharedBreaker.recordSuccess(toolName, probe?.id).then(
      () => outcome,
      () => outcome,
    );
  }
}

/**
 * The attempts of a call after its first (or from the first, when the turn guard held it back): the
 * {@link RetryLoop} {@link executeWithRetry} runs, with the credential refresh and the retry
 * decisions. Created only when a call does not succeed at once.
 */
class RetryAttempts implements RetryLoop<unknown, AttemptFailed> {
  readonly maxAttempts: number;
  readonly policy: RegisteredTool['retry'];
  /** Attempts allowed: `maxAttempts`, plus one after a credential refresh. */
  attemptsAllowed: number;
  authRefreshed = false;
  /** The retry decision after the last failed attempt, for the envelope. */
  decision: RetryDecision | undefined = undefined;
  /** When the successful attempt ended. */
  succeededAt = 0;

  constructor(
    readonly execution: CallExecution,
    /** The turn guard's wait the first attempt must take first, when it asked for one. */
    private heldTurn: Promise<void> | undefined,
  ) {
    const { input } = execution.call;
    const { retry } = execution.tool;
    const callerMaxAttempts =
      typeof input.maxAttempts === 'number' && !Number.isNaN(input.maxAttempts) ? Math.floor(input.maxAttempts) : Number.POSITIVE_INFINITY;
    const maxAttempts = Math.max(1, Math.min(retry.maxAttempts, callerMaxAttempts));
    this.maxAttempts = maxAttempts;
    this.attemptsAllowed = maxAttempts;
    this.policy = maxAttempts === retry.maxAttempts ? retry : { ...retry, maxAttempts };
  }

  async attempt(attempt: number): Promise<{ ok: true; value: unknown } | { ok: false; failure: AttemptFailed } | undefined> {
    // Yield to the event loop when tools have run back to back without it turning.
    const { execution } = this;
    const turn = this.heldTurn ?? execution.parts.turnGuard.beforeExecution();
    this.heldTurn = undefined;
    if (turn !== undefined) await turn;
    const timeoutMs = execution.timeoutNow();
    if (timeoutMs === undefined) return undefined;
    const outcome = await attemptOutcome(execution, attempt, timeoutMs);
    const nowMs = execution.recordAttempt(attempt);
    if (!outcome.ok) return { ok: false, failure: execution.failed(outcome) };
    this.succeededAt = nowMs;
    return outcome;
  }

  async retryAfter({ classified }: AttemptFailed, attempt: number): Promise<RetryWait> {
    const { execution } = this;
    const { parts, call } = execution;
    const record = call.attempts[call.attempts.length - 1]!;
    if (classified.code === 'AUTH_EXPIRED' && parts.onAuthError && !this.authRefreshed) {
      this.authRefreshed = true;
      let refreshed = false;
      try {
        refreshed = await parts.onAuthError({ toolName: call.toolName, sessionId: call.sessionId, runId: execution.runId, message: classified.message });
      } catch {
        refreshed = false;
      }
      if (refreshed) {
        record.retryReason = 'auth-refreshed';
        this.attemptsAllowed += 1;
        return 'at-once';
      }
    }
    if (classified.kind === 'cancelled') return undefined;
    const decision = decideRetry({
      attempt: attempt - (this.attemptsAllowed - this.maxAttempts),
      failure: {
        transient: classified.transient,
        ambiguous: classified.ambiguous,
        ...(classified.retryAfterMs !== undefined ? { retryAfterMs: classified.retryAfterMs } : {}),
      },
      policy: this.policy,
      idempotent: execution.tool.idempotent,
      remainingBudgetMs: execution.deadlineAt - execution.clock.now(),
      random: parts.random,
    });
    this.decision = decision;
    record.retryReason = decision.reason;
    if (!decision.retry) return undefined;
    record.delayAfterMs = decision.delayMs;
    return decision.delayMs;
  }
}

/**
 * Starts the call's execution: the tool runs until it succeeds, fails for good, or the budget is
 * spent. Called from a later microtask than the call's (the tool never starts in its caller's
 * synchronous run); {@link CallExecution.outcome} one microtask later gives the outcome or a promise of
 * it (rejected only by an internal error). The first attempt runs without a promise of its own: a
 * tool that succeeds at once (most calls) has ended the execution by then. A failed first attempt
 * continues in the retry loop ({@link executeWithRetry}), as does a first attempt the turn guard
 * holds back.
 *
 * `startedAt` is the clock reading the first attempt starts at when the caller has one (a call that
 * reached its tool without waiting starts it one microtask after `call.startedAt`: the same reading,
 * not a second one); without it the clock is read.
 */
export function startExecution(parts: PipelineParts, call: CallState, tool: RegisteredTool, startedAt?: number): CallExecution {
  const execution = new CallExecution(parts, call, tool);
  // Yield to the event loop when tools have run back to back without it turning.
  const turn = parts.turnGuard.beforeExecution();
  if (turn !== undefined) {
    execution.end = execution.retry(undefined, turn);
    return execution;
  }
  const timeoutMs = execution.timeoutNow(startedAt);
  if (timeoutMs === undefined) execution.end = noBudget(call.toolName);
  else execution.first = startAttempt(execution, 1, timeoutMs, execution);
  return execution;
}

function noBudget(toolName: string): StepOutcome<ToolResult> {
  return stepFailed({ code: 'BUDGET_EXHAUSTED', message: `No time budget was left to call ${toolName}`, retryable: false });
}

/** classifyError, guarded: an unreadable thrown value is a `TOOL_EXCEPTION`, never a rejection. */
function classify(parts: PipelineParts, thrown: unknown, abortReason: 'timeout' | 'cancelled' | undefined): ClassifiedError {
  try {
    return classifyError(thrown, { nowMs: parts.clock.now(), ...(abortReason ? { abortReason } : {}) });
  } catch {
    return {
      code: 'TOOL_EXCEPTION',
      kind: 'exception',
      status: null,
      transient: false,
      ambiguous: false,
      misconfiguration: false,
      message: 'The tool threw a value that could not be read',
    };
  }
}

/** The success envelope of a returned value: a copy of its JSON, bounded by `maxOutputBytes`. */
function buildSuccess(parts: PipelineParts, value: unknown, call: CallState, nowMs: number): ToolResult {
  if (value === undefined || value === null) return success(call, nowMs, null);
  switch (typeof value) {
    case 'boolean':
      return success(call, nowMs, value);
    case 'number':
      return success(call, nowMs, Number.isFinite(value) ? value : null);
    case 'string':
    case 'object':
      break;
    default:
      return notJson(envelopeBase(parts, call, nowMs), `a ${typeof value}`);
  }
  const maxOutputBytes = parts.maxOutputBytes;
  // A JSON text of at most maxOutputBytes / 3 UTF-16 units is within the byte bound: small results
  // (most) are copied in one walk, without a JSON text.
  if (typeof value === 'string') {
    if (6 * value.length + 2 <= maxOutputBytes / 3) return success(call, nowMs, value);
  } else {
    let copy: unknown;
    try {
      copy = copyPlainJson(value, Math.floor(maxOutputBytes / 3));
    } catch (error) {
      return notJson(envelopeBase(parts, call, nowMs), notJsonReason(error)); // a getter threw, as it would have in JSON.stringify
    }
    if (copy !== NOT_COPIED) return success(call, nowMs, copy);
  }
  const base = envelopeBase(parts, call, nowMs);
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    return notJson(base, notJsonReason(error));
  }
  if (json === undefined) return notJson(base, 'a value whose JSON is empty');
  if (json.length * 3 > maxOutputBytes) {
    const bytes = utf8ByteLength(json);
    if (bytes > maxOutputBytes) {
      if (parts.outputOverflow === 'truncate')
        return {
          status: 'success',
          ...base,
          data: truncateUtf8(json, maxOutputBytes),
          truncated: true,
          ...(call.warnings === undefined ? {} : { warnings: call.warnings }),
        };
      return {
        status: 'failed',
        ...base,
        error: buildFailure({ code: 'OUTPUT_TOO_LARGE', message: `${base.tool_name} returned ${bytes} bytes, over the ${maxOutputBytes}-byte bound` }),
      };
    }
  }
  // The envelope keeps what was serialised: a copy, not the tool's live object.
  return success(call, nowMs, typeof value === 'string' ? value : (JSON.parse(json) as unknown));
}

/** A success envelope at `nowMs` (its keys in the envelope's order, as {@link envelopeBase} has them; `warnings` last, when any). */
function success(call: CallState, nowMs: number, data: unknown): ToolResult {
  const envelope: ToolResult = {
    status: 'success',
    tool_name: call.toolName,
    call_id: call.callId,
    duration_ms: Math.max(0, nowMs - call.startedAt),
    attempts: call.attempts.length,
    trace_id: call.traceId,
    data,
  };
  if (call.warnings !== undefined) envelope.warnings = call.warnings;
  return envelope;
}

function notJson(base: EnvelopeBase, what: string): ToolFailure {
  return {
    status: 'failed',
    ...base,
    error: buildFailure({
      code: 'TOOL_EXCEPTION',
      message: `${base.tool_name} returned a value that is not JSON`,
      detail: `The result could not be serialised as JSON (${what}).`,
    }),
  };
}

/** Why `JSON.stringify` threw, in words for the model (a BigInt, a cycle, a getter that throws). */
function notJsonReason(error: unknown): string {
  const message = messageOf(error);
  if (/bigint/i.test(message)) return 'it holds a BigInt';
  if (/circular|cyclic/i.test(message)) return 'it holds a cycle';
  return 'reading it threw';
}

/** The failure envelope's parts of a call's last failure. */
function describeFailure(failure: ClassifiedError, decision: RetryDecision | undefined, call: CallState, modelText: (text: string) => string): FailureParts {
  const { toolName } = call;
  const attempts = call.attempts.length;
  const detail = modelText(failure.message);
  const standard = ENVIRONMENT_MESSAGES[failure.code];
  const message = standard ? standard(toolName, failure) + (attempts > 1 ? ` after ${attempts} attempts` : '') : detail;
  const parts: FailureParts = { code: failure.code, message, detail };
  if (failure.suggestion !== undefined) parts.suggestion = modelText(failure.suggestion);
  if (failure.transient || failure.code === 'CANCELLED') parts.retryable = false;
  if (attempts <= 1) parts.notRetried = true;
  // The server's own word on when to come back stays with the failure, retried or not.
  if (failure.transient && failure.retryAfterMs !== undefined) parts.retryAfterMs = failure.retryAfterMs;
  if (decision && !decision.retry) {
    if (decision.reason === 'ambiguous-not-idempotent') {
      parts.suggestion = `The call may have taken effect before it failed, so it was not repeated automatically. Check whether it happened (look it up) before calling ${toolName} again.`;
    } else if (decision.reason === 'retry-after-exceeds-budget' && decision.retryAfterMs !== undefined) {
      parts.retryAfterMs = decision.retryAfterMs;
      parts.detail = `${detail} The server asked to wait ${Math.ceil(decision.retryAfterMs / 1000)} s, longer than the time left.`;
    }
  }
  return parts;
}
