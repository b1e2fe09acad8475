import { classifyModelError, type ClassifiedError, type ClassifiedKind } from '../core/classify-error.ts';
import type { FailureKind } from '../ground/failure-cause.ts';
import type { Clock, RandomSource } from '../ground/ports/clock.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { executeWithRetry } from '../policies/retry-loop.ts';
import { decideRetry, resolveRetryPolicy, type RetryPolicy, type RetryPolicyOverride } from '../policies/retry-policy.ts';
import type { SharedBreaker } from '../policies/shared-breaker.ts';
import type { Model, ModelRequest, ModelResponse, ModelToolCall } from './messages.ts';

/** The largest delay `setTimeout` honours (2^31 − 1 ms); longer ones fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * How model calls are retried inside a run: the same exponential backoff with jitter, `Retry-After`
 * (and rate-limit reset headers) and budget rules as tool calls, plus a per-call timeout. A model
 * call is a read: re-asking is always safe, so timeouts are retried too.
 */
export interface ModelPolicyOptions extends RetryPolicyOverride {
  /** One model call's time limit, in ms; its signal is aborted and the call counts as a timeout. @defaultValue 120_000 */
  timeoutMs?: number;
}

/** A resolved {@link ModelPolicyOptions}. */
export interface ModelPolicy extends RetryPolicy {
  timeoutMs: number;
}

/** The default model policy: 3 attempts, base 500 ms ×2 with up to 100 ms jitter, 120 s per call. */
export const DEFAULT_MODEL_POLICY: ModelPolicy = Object.freeze({ ...resolveRetryPolicy(), timeoutMs: 120_000 });

/**
 * Merges {@link DEFAULT_MODEL_POLICY} with `options`.
 *
 * @throws ToolrunError `INVALID_OPTIONS` for an invalid retry field (see `resolveRetryPolicy`) or a
 * `timeoutMs` that is not a positive number of ms up to 2^31 − 1.
 */
export function resolveModelPolicy(options: ModelPolicyOptions | undefined): ModelPolicy {
  if (options === undefined) return DEFAULT_MODEL_POLICY;
  const retry = resolveRetryPolicy(options);
  const timeoutMs = options.timeoutMs ?? DEFAULT_MODEL_POLICY.timeoutMs;
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMER_MS) {
    throw new ToolrunError('INVALID_OPTIONS', `model policy: timeoutMs must be a number of ms in (0, ${MAX_TIMER_MS}], received ${String(timeoutMs)}`);
  }
  return { ...retry, timeoutMs };
}

/**
 * Why a run could not get an answer from its model:
 * - `model-retries-exhausted`: transient failures (5xx, 429, network, timeout) outlasted the attempts;
 * - `model-budget-exhausted`: the next wait (backoff or the server's `Retry-After`) did not fit the run's deadline;
 * - `model-not-retryable`: a failure another attempt cannot fix (key rejected, bad request, a bug);
 * - `model-invalid-response`: the model kept answering with something that is not a model response;
 * - `model-breaker-open`: the shared model breaker is open (its key was rejected for every run): not called at all.
 */
export type ModelFailureReason = 'model-retries-exhausted' | 'model-budget-exhausted' | 'model-not-retryable' | 'model-invalid-response' | 'model-breaker-open';

/** What a run that ended `model_failed` knows: everything its resumable dead-letter entry needs. */
export interface ModelFailureInfo {
  /** The step whose model call failed (the run resumes there). */
  stepIndex: number;
  modelName: string;
  /** Model calls attempted for this step (0 when the breaker was open). */
  attempts: number;
  /**
   * The last failure; `message` is redacted and bounded. `code`: the failure code of the
   * classification (`RATE_LIMITED`, `UNAVAILABLE`, `TIMEOUT`, `AUTH_EXPIRED`, `CIRCUIT_OPEN`…),
   * `INVALID_MODEL_RESPONSE` for an answer that is no valid turn, `MODEL_EXCEPTION` for anything else the model threw.
   */
  lastError: { kind: FailureKind; code: string; status: number | null; message: string };
  reason: ModelFailureReason;
  /** The wait the provider asked for, in ms, when it asked for one. */
  retryAfterMs?: number;
  /** The shared model breaker's failure opened it (raise the alert once). */
  breakerOpened?: boolean;
}

/** The outcome of {@link callModel}. */
export type ModelCallOutcome =
  | { ok: true; response: ModelResponse; attempts: number }
  | { ok: false; cancelled: true; attempts: number }
  | { ok: false; cancelled: false; failure: ModelFailureInfo; attempts: number };

/** Inputs of {@link callModel}. */
export interface CallModelInput {
  model: Model;
  request: Omit<ModelRequest, 'signal'>;
  modelName: string;
  policy: ModelPolicy;
  clock: Clock;
  random: RandomSource;
  /** The run's deadline (epoch ms on `clock`): no wait sleeps past it. */
  deadlineAt?: number | undefined;
  signal?: AbortSignal | undefined;
  /** The shared model breaker (keyed `model:<modelName>`). */
  breaker?: SharedBreaker | undefined;
  /** Redacts and bounds a provider's error text before it is kept anywhere. */
  describe: (text: string) => string;
}

/** Checks what a model function resolved to; returns the normalised response or the problem. */
export function checkModelResponse(value: unknown, stepIndex: number): { ok: true; response: ModelResponse } | { ok: false; problem: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, problem: `the model returned ${describeValue(value)} instead of a response object { text?, toolCalls?, usage }` };
  }
  let text: unknown;
  let toolCalls: unknown;
  let usage: unknown;
  try {
    ({ text, toolCalls, usage } = value as Record<string, unknown>);
  } catch (error) {
    return { ok: false, problem: `the model's response could not be read: ${error instanceof Error ? error.message : 'unknown error'}` };
  }
  if (text !== undefined && text !== null && typeof text !== 'string')
    return { ok: false, problem: `the response's text is ${describeValue(text)}, not a string` };
  const calls: ModelToolCall[] = [];
  if (toolCalls !== undefined && toolCalls !== null) {
    if (!Array.isArray(toolCalls)) return { ok: false, problem: `the response's toolCalls is ${describeValue(toolCalls)}, not an array` };
    for (const [index, call] of toolCalls.entries()) {
      if (typeof call !== 'object' || call === null) return { ok: false, problem: `toolCalls[${index}] is ${describeValue(call)}, not { id, name, args }` };
      const { id, name, args } = call as Record<string, unknown>;
      if (typeof name !== 'string' || name.length === 0) return { ok: false, problem: `toolCalls[${index}].name is ${describeValue(name)}, not a tool name` };
      // The arguments are stored with the step (JSON): a value JSON cannot hold (a BigInt, a cycle)
      // is an invalid answer, not a store failure that would repeat at every delivery.
      if (typeof args !== 'string' && args !== undefined) {
        try {
          JSON.stringify(args);
        } catch (error) {
          return {
            ok: false,
            problem: `toolCalls[${index}].args cannot be written as JSON (${error instanceof Error ? error.message : 'unknown error'}): send JSON text or plain values`,
          };
        }
      }
      // A provider that gives no call id: a stable one, so the tool message still answers this call.
      const callId = typeof id === 'string' && id.length > 0 ? id : `call_${stepIndex}_${index}`;
      calls.push({ id: callId, name, args });
    }
  }
  const tokens = typeof usage === 'object' && usage !== null ? (usage as Record<string, unknown>) : {};
  const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0);
  return {
    ok: true,
    response: {
      text: typeof text === 'string' ? text : null,
      ...(calls.length > 0 ? { toolCalls: calls } : {}),
      usage: { input: count(tokens.input), output: count(tokens.output) },
    },
  };
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value === 'string' ? 'a string' : String(typeof value);
}

/** A model call that did not end in `timeoutMs`: the promise races a timer, so a model that ignores its signal cannot hang the run. */
async function attemptOnce(
  input: CallModelInput,
  timeoutMs: number,
): Promise<{ ok: true; value: unknown } | { ok: false; thrown: unknown; abortReason?: 'timeout' | 'cancelled' }> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(input.signal?.reason);
  input.signal?.addEventListener('abort', onAbort, { once: true });
  let timedOut = false;
  let cancelTimer: (() => void) | undefined;
  const timer = new Promise<'timeout'>((resolve) => {
    const fire = () => {
      timedOut = true;
      controller.abort(new DOMException('The model did not answer within its timeout', 'TimeoutError'));
      resolve('timeout');
    };
    if (input.clock.setTimer) cancelTimer = input.clock.setTimer(timeoutMs, fire);
    else {
      const sleeper = new AbortController();
      cancelTimer = () => sleeper.abort();
      input.clock.sleep(timeoutMs, sleeper.signal).then(fire, () => undefined);
    }
  });
  // only the caller's signal cancels; the timeout's own abort is told apart by `timedOut`
  let onCancel: (() => void) | undefined;
  const cancelled = new Promise<'cancelled'>((resolve) => {
    if (input.signal?.aborted) resolve('cancelled');
    onCancel = () => resolve('cancelled');
    input.signal?.addEventListener('abort', onCancel, { once: true });
  });
  try {
    const call = (async () => input.model({ ...input.request, signal: controller.signal }))();
    call.catch(() => undefined); // a late rejection after a timeout must not be unhandled
    const winner: { value: unknown } | { thrown: unknown } | 'timeout' | 'cancelled' = await Promise.race([
      call.then(
        (value) => ({ value }),
        (thrown: unknown) => ({ thrown }),
      ),
      timer,
      cancelled,
    ]);
    if (timedOut || winner === 'timeout') return { ok: false, thrown: undefined, abortReason: 'timeout' };
    if (winner === 'cancelled' || input.signal?.aborted) return { ok: false, thrown: input.signal?.reason, abortReason: 'cancelled' };
    if ('thrown' in winner) return { ok: false, thrown: winner.thrown };
    return { ok: true, value: winner.value };
  } finally {
    cancelTimer?.();
    input.signal?.removeEventListener('abort', onAbort);
    // a run's signal outlives its model calls: each call takes its listeners back
    if (onCancel) input.signal?.removeEventListener('abort', onCancel);
  }
}

/**
 * The code a model failure is recorded with: the classifier's, except that what it calls a tool's
 * bug or a tool's unreadable answer is the model's here (`MODEL_EXCEPTION`, `INVALID_MODEL_RESPONSE`).
 */
function modelCodeOf(classified: ClassifiedError): string {
  if (classified.code !== 'TOOL_EXCEPTION') return classified.code;
  return classified.kind === 'invalid_response' ? 'INVALID_MODEL_RESPONSE' : 'MODEL_EXCEPTION';
}

/** `classifyModelError` never throws: an unreadable value is its `TOOL_EXCEPTION` (read here as `MODEL_EXCEPTION`, see {@link modelCodeOf}). */
function classify(thrown: unknown, nowMs: number, abortReason: 'timeout' | 'cancelled' | undefined): ClassifiedError {
  // a model has one fixed endpoint: a rejected key, a 403, a wrong model name or an unknown host is broken for every run
  const classified = classifyModelError(thrown, { nowMs, ...(abortReason ? { abortReason } : {}) });
  if (abortReason === 'timeout') return { ...classified, message: 'The model did not answer within its timeout' };
  return classified;
}

/**
 * Calls the model for one step under `policy`: validates its answer, retries transient failures
 * (5xx, 429, network errors, timeouts, invalid answers) with backoff or the provider's
 * `Retry-After`, never sleeping past the run's deadline, and consults the shared model breaker: a
 * rejected key (401/403 and other misconfigurations) is reported to it, so once it opens the next
 * runs fail fast, with one alert, instead of each rediscovering the bad key. Never throws.
 */
export async function callModel(input: CallModelInput): Promise<ModelCallOutcome> {
  const { policy, clock, breaker, modelName } = input;
  const stepIndex = input.request.stepIndex;
  const breakerKey = `model:${modelName}`;
  let probe = false;
  let probeId: string | undefined;
  if (breaker) {
    try {
      const acquired = await breaker.acquire(breakerKey);
      if (acquired.decision === 'reject') {
        const state = await breaker.state(breakerKey).catch(() => undefined);
        return {
          ok: false,
          cancelled: false,
          attempts: 0,
          failure: {
            stepIndex,
            modelName,
            attempts: 0,
            reason: 'model-breaker-open',
            lastError: {
              kind: 'circuit_open',
              code: 'CIRCUIT_OPEN',
              status: null,
              message: input.describe(`the shared breaker of model ${modelName} is ${acquired.state}${state?.lastError ? `: ${state.lastError}` : ''}`),
            },
            ...(acquired.retryInMs !== undefined ? { retryAfterMs: acquired.retryInMs } : {}),
          },
        };
      }
      probe = acquired.decision === 'probe';
      probeId = (acquired as { probeId?: string }).probeId;
    } catch {
      // a breaker store that cannot be reached must not stop the run: fail open
    }
  }
  const release = async () => {
    if (breaker && probe) await breaker.releaseProbe(breakerKey, probeId).catch(() => undefined);
  };

  let lastError: ModelFailureInfo['lastError'] | undefined;
  // set by the attempts and the retry decisions below (a declared type: TypeScript does not follow writes in callbacks)
  let reason = 'model-retries-exhausted' as ModelFailureReason;
  let retryAfterMs: number | undefined;
  let attemptsMade = 0;
  let remainingMs: number | undefined;
  const end = await executeWithRetry<ModelResponse, AttemptFailure>(
    {
      attempt: async (attempt) => {
        remainingMs = input.deadlineAt === undefined ? undefined : input.deadlineAt - clock.now();
        if (remainingMs !== undefined && remainingMs <= 0) {
          reason = 'model-budget-exhausted';
          retryAfterMs = undefined;
          return undefined;
        }
        const outcome = await attemptOnce(input, Math.min(policy.timeoutMs, remainingMs ?? Number.POSITIVE_INFINITY));
        attemptsMade = attempt;
        if (outcome.ok) {
          const checked = checkModelResponse(outcome.value, stepIndex);
          if (checked.ok) return { ok: true, value: checked.response };
          lastError = { kind: 'invalid_response', code: 'INVALID_MODEL_RESPONSE', status: null, message: input.describe(checked.problem) };
          reason = 'model-invalid-response';
          // A sampled answer may be well-formed next time: an invalid response is retried like a transient failure.
          return { ok: false, failure: { transient: true, invalidAnswer: true } };
        }
        if (outcome.abortReason === 'cancelled') return { ok: false, failure: { transient: false, end: 'cancelled' } };
        const classified = classify(outcome.thrown, clock.now(), outcome.abortReason);
        lastError = { kind: classified.kind, code: modelCodeOf(classified), status: classified.status, message: input.describe(classified.message) };
        retryAfterMs = classified.retryAfterMs;
        if (classified.kind === 'invalid_response') reason = 'model-invalid-response';
        if (classified.misconfiguration) return { ok: false, failure: { transient: false, end: 'misconfigured' } };
        return { ok: false, failure: { transient: classified.transient, retryAfterMs: classified.retryAfterMs, kind: classified.kind } };
      },
      retryAfter: (failure, attempt) => {
        if (failure.end !== undefined) return undefined;
        const decision = decideRetry({
          attempt,
          failure: { transient: failure.transient, ambiguous: false, ...(failure.retryAfterMs !== undefined ? { retryAfterMs: failure.retryAfterMs } : {}) },
          policy,
          idempotent: true,
          remainingBudgetMs: remainingMs,
          random: input.random,
        });
        if (decision.retry) return decision.delayMs;
        if (failure.invalidAnswer) return undefined;
        reason =
          failure.kind === 'invalid_response' && decision.reason === 'attempts-exhausted'
            ? 'model-invalid-response'
            : decision.reason === 'not-transient'
              ? 'model-not-retryable'
              : decision.reason === 'budget-exhausted' || decision.reason === 'retry-after-exceeds-budget'
                ? 'model-budget-exhausted'
                : 'model-retries-exhausted';
        if (decision.reason === 'retry-after-exceeds-budget' && decision.retryAfterMs !== undefined) retryAfterMs = decision.retryAfterMs;
        return undefined;
      },
    },
    { clock, signal: input.signal },
  );
  if (end.ok) {
    if (breaker) await breaker.recordSuccess(breakerKey, probeId).catch(() => undefined);
    return { ok: true, response: end.value, attempts: attemptsMade };
  }
  if (end.failure?.end === 'misconfigured') {
    let opened = false;
    if (breaker) opened = (await breaker.recordFailure(breakerKey, { message: lastError!.message }, probeId).catch(() => ({ opened: false }))).opened;
    const failure: ModelFailureInfo = {
      stepIndex,
      modelName,
      attempts: attemptsMade,
      reason: 'model-not-retryable',
      lastError: lastError!,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      ...(opened ? { breakerOpened: true } : {}),
    };
    return { ok: false, cancelled: false, attempts: attemptsMade, failure };
  }
  await release();
  if (end.cancelled || end.failure?.end === 'cancelled') return { ok: false, cancelled: true, attempts: attemptsMade };
  if (reason === 'model-budget-exhausted' && lastError === undefined) {
    lastError = { kind: 'timeout', code: 'BUDGET_EXHAUSTED', status: null, message: 'no time was left in the run to call the model' };
  }
  const failure: ModelFailureInfo = {
    stepIndex,
    modelName,
    attempts: attemptsMade,
    reason,
    lastError: lastError ?? { kind: 'exception', code: 'MODEL_EXCEPTION', status: null, message: 'the model failed' },
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  };
  return { ok: false, cancelled: false, attempts: failure.attempts, failure };
}

/** Why an attempt failed, as the retry decision reads it; `end`: no retry whatever the policy says. */
interface AttemptFailure {
  transient: boolean;
  retryAfterMs?: number | undefined;
  kind?: ClassifiedKind;
  /** The model answered with something that is not a model response. */
  invalidAnswer?: boolean;
  end?: 'cancelled' | 'misconfigured';
}
