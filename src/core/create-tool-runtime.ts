import { randomUUID } from 'node:crypto';
import { fingerprintArguments } from '../policies/fingerprint-arguments.ts';
import { createSessionBreakers, type SessionBreakerOptions, type SessionBreakers } from '../policies/session-breaker.ts';
import { decideRetry, DEFAULT_RETRY_POLICY, resolveRetryPolicy, type RetryDecision } from '../policies/retry-policy.ts';
import type { SharedBreaker } from '../policies/shared-breaker.ts';
import { parseArguments } from '../schema/parse-arguments.ts';
import { createAjvSchemaValidator } from '../schema/ajv-schema-validator.ts';
import { buildFailure, sanitiseErrorText, truncateText, type FailureParts } from './build-failure.ts';
import { classifyError, type ClassifiedError } from './classify-error.ts';
import type { FailurePatternLibrary } from './failure-patterns.ts';
import type { RetryOverrides } from './define-tool.ts';
import { systemClock, systemRandom, type Clock, type RandomSource } from './ports/clock.ts';
import type { SchemaValidator } from './ports/schema-validator.ts';
import { createRedactor, type Redactor, type RedactorOptions } from './redact.ts';
import { runAttempt } from './run-attempt.ts';
import type { AttemptRecord, ToolCallRecord } from './tool-call-record.ts';
import { createToolRegistry, type RegisteredTool, type ToolSpec, type ToolsInput } from './tool-registry.ts';
import type { FieldError, ToolFailureError, ToolResult } from './tool-result.ts';
import { ToolrunError } from './toolrun-error.ts';

/** Options of {@link createToolRuntime}. Every duration is in milliseconds. */
export interface ToolRuntimeOptions {
  /** An array of definitions, or a record of definitions and plain async functions (the key is the name). */
  tools: ToolsInput;
  /** @defaultValue the system clock */
  clock?: Clock;
  /** Random source for jitter. @defaultValue `Math.random` */
  random?: RandomSource;
  /** The JSON Schema engine. @defaultValue Ajv (2020-12 and draft-07), created lazily */
  validator?: SchemaValidator;
  /** Default retry policy for every tool (per-tool `retry` overrides it). @defaultValue 3 attempts, base 500 ms, factor 2, jitter 100 ms */
  retry?: RetryOverrides;
  /** Per-attempt timeout of tools that set none. @defaultValue 30_000 */
  defaultTimeoutMs?: number;
  /** Total time budget of one call, attempts and waits included. @defaultValue 120_000 */
  callBudgetMs?: number;
  /** Scalar coercion for tools that set none. @defaultValue `'none'` */
  coerce?: 'none' | 'scalars';
  /** Per-session circuit breaker options, or `false` to disable it. @defaultValue 3 consecutive failures */
  sessionBreaker?: Partial<SessionBreakerOptions> | false;
  /** Cross-run breaker (state in a shared store) fed by misconfiguration failures. @defaultValue none */
  sharedBreaker?: SharedBreaker;
  /** Bound of a tool's error text shown to the model, in UTF-8 bytes. @defaultValue 2048 */
  maxErrorTextBytes?: number;
  /** Bound of a success payload, in bytes of its JSON. @defaultValue 262_144 */
  maxOutputBytes?: number;
  /** Over `maxOutputBytes`: `'fail'` returns `OUTPUT_TOO_LARGE`; `'truncate'` returns a cut JSON text preview with `truncated: true`. @defaultValue `'fail'` */
  outputOverflow?: 'fail' | 'truncate';
  /** Resolve equivalent spellings of tool names (`math_factorial` for `math.factorial`). @defaultValue true */
  resolveToolNames?: boolean;
  /**
   * Called once per call when a tool fails with a rejected credential. Return `true` after
   * refreshing credentials to allow exactly one more attempt.
   */
  onAuthError?: (context: { toolName: string; sessionId: string; runId: string | undefined; message: string }) => boolean | Promise<boolean>;
  /** The developer channel: the full record of every call (stack, causes, attempts). Exceptions it throws are ignored. */
  onCallEnd?: (record: ToolCallRecord) => void;
  /** Redaction for the model-facing `detail` (and for whoever reuses `runtime.redactor`). */
  redact?: RedactorOptions | Redactor;
  /**
   * Known failure patterns that phrase the envelope's `suggestion` (see `createFailurePatternLibrary`).
   * Without a matching pattern, and when the tool supplied its own suggestion, the built-in
   * suggestion stays. The phrased text is redacted and bounded to 600 characters. @defaultValue none
   */
  failurePatterns?: FailurePatternLibrary;
}

/** One call, as a model asked for it. */
export interface ToolRunInput {
  /** The tool name the model produced (resolved against the registry). */
  name: string;
  /** An object, or the raw argument string the model produced. */
  args?: unknown;
  callId?: string;
  /** Scope of the per-session breaker. @defaultValue `'default'` */
  sessionId?: string;
  runId?: string;
  /** Cancels the call: the tool's signal is aborted and the envelope says `CANCELLED`. */
  signal?: AbortSignal;
  /** Stable key of this call across retries and replays. @defaultValue `${sessionId}:${callId}` */
  idempotencyKey?: string;
  /** Caps the attempts of this call (the agent loop passes what is left of the run's retry budget). */
  maxAttempts?: number;
  /** Absolute deadline (epoch ms, on the runtime's clock), e.g. the run's; the call budget also applies. */
  deadlineAt?: number;
  /** Trace id to join logs; @defaultValue a new W3C trace id */
  traceId?: string;
}

/** A tool runtime: the registry plus the pipeline resolve → normalise → validate → policies → execute → envelope. */
export interface ToolRuntime {
  /**
   * Runs one tool call and returns its envelope. Never rejects because of a tool, its arguments or
   * its environment.
   */
  run(input: ToolRunInput): Promise<ToolResult>;
  /** Like `run`, also returning the developer record. */
  execute(input: ToolRunInput): Promise<ToolCallRecord>;
  /** The tools as advertised to a model. */
  readonly specs: readonly ToolSpec[];
  readonly names: readonly string[];
  /** The registered tool of that exact name. */
  getTool(name: string): RegisteredTool | undefined;
  readonly redactor: Redactor;
  readonly sessionBreakers: SessionBreakers | undefined;
  readonly clock: Clock;
}

function isRedactor(value: RedactorOptions | Redactor | undefined): value is Redactor {
  return typeof value === 'object' && value !== null && typeof (value as Redactor).text === 'function';
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new ToolrunError('INVALID_OPTIONS', `${name} must be a positive number, received ${String(value)}`);
  return value;
}

function causeChain(thrown: unknown): string[] {
  const causes: string[] = [];
  let current = typeof thrown === 'object' && thrown !== null ? (thrown as { cause?: unknown }).cause : undefined;
  while (current !== undefined && causes.length < 5) {
    causes.push(current instanceof Error ? `${current.name}: ${current.message}` : String(current));
    current = typeof current === 'object' && current !== null ? (current as { cause?: unknown }).cause : undefined;
  }
  return causes;
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

/**
 * Creates a tool runtime.
 *
 * @throws ToolrunError `INVALID_DEFINITION`, `INVALID_SCHEMA` or `INVALID_OPTIONS` for programmer errors, at creation.
 * @see SPEC.md §1
 */
export function createToolRuntime(options: ToolRuntimeOptions): ToolRuntime {
  const clock = options.clock ?? systemClock;
  const random = options.random ?? systemRandom;
  const defaultTimeoutMs = positive('defaultTimeoutMs', options.defaultTimeoutMs, 30_000);
  const callBudgetMs = positive('callBudgetMs', options.callBudgetMs, 120_000);
  const maxErrorTextBytes = positive('maxErrorTextBytes', options.maxErrorTextBytes, 2048);
  const maxOutputBytes = positive('maxOutputBytes', options.maxOutputBytes, 262_144);
  const outputOverflow = options.outputOverflow ?? 'fail';
  const redactor = isRedactor(options.redact) ? options.redact : createRedactor(options.redact);
  const registry = createToolRegistry(options.tools, {
    validator: options.validator ?? createAjvSchemaValidator(),
    retry: resolveRetryPolicy(DEFAULT_RETRY_POLICY, options.retry),
    coerce: options.coerce ?? 'none',
  });
  const sessionBreakers = options.sessionBreaker === false ? undefined : createSessionBreakers(options.sessionBreaker ?? {});
  const sharedBreaker = options.sharedBreaker;
  const resolveNames = options.resolveToolNames ?? true;

  const modelText = (text: string) => truncateText(redactor.text(sanitiseErrorText(text)), maxErrorTextBytes);
  const redactField = (field: FieldError): FieldError => ({
    ...field,
    ...(field.received !== undefined ? { received: redactor.text(field.received) } : {}),
    ...(field.message !== undefined ? { message: redactor.text(field.message) } : {}),
  });

  async function execute(input: ToolRunInput): Promise<ToolCallRecord> {
    const startedAt = clock.now();
    // One random draw serves both ids: a W3C-style 32-hex trace id, and a call id derived from it.
    const randomHex = input.traceId === undefined || input.callId === undefined ? randomUUID().replaceAll('-', '') : '';
    const traceId = input.traceId ?? randomHex;
    const callId = input.callId ?? `call_${randomHex}`;
    const sessionId = input.sessionId ?? 'default';
    const requestedName = typeof input.name === 'string' ? input.name : String(input.name);
    const normalisations: string[] = [];
    const attempts: AttemptRecord[] = [];
    let toolName = requestedName;
    let tool: RegisteredTool | undefined;
    let parsedArguments: unknown = input.args;
    let errorRecord: ToolCallRecord['error'];
    let misconfiguration = false;

    const finish = (result: ToolResult): ToolCallRecord => {
      const record: ToolCallRecord = {
        result,
        traceId,
        callId,
        sessionId,
        runId: input.runId,
        requestedName,
        toolName,
        arguments: parsedArguments,
        sensitiveKeys: tool?.definition.sensitive ?? [],
        normalisations,
        attempts,
        misconfiguration,
        startedAt,
        durationMs: result.duration_ms,
      };
      if (errorRecord) record.error = errorRecord;
      if (options.onCallEnd) {
        try {
          options.onCallEnd(record);
        } catch {
          // the developer channel must never break a call
        }
      }
      return record;
    };
    const envelopeBase = () => ({ tool_name: toolName, call_id: callId, duration_ms: Math.max(0, clock.now() - startedAt), attempts: attempts.length, trace_id: traceId });
    const fail = (parts: FailureParts, toolSuggested = false): ToolCallRecord => {
      const error: ToolFailureError = buildFailure({ ...parts, ...(tool?.definition.fallbacks ? { fallbacks: tool.definition.fallbacks } : {}) });
      if (options.failurePatterns && !toolSuggested) {
        const phrased = options.failurePatterns.suggest({ toolName, code: error.code, message: error.message, detail: error.detail, suggestion: error.suggestion, ...(error.fields ? { fields: error.fields } : {}) });
        if (phrased !== undefined) error.suggestion = truncateText(redactor.text(phrased), 600);
      }
      return finish({ status: 'failed', ...envelopeBase(), error });
    };

    try {
      // 1. resolve the tool
      tool = registry.get(requestedName);
      if (!tool) {
        const resolution = registry.resolve(requestedName);
        if (resolveNames && resolution.match !== undefined) {
          tool = registry.get(resolution.match);
          normalisations.push(`tool-name-resolved:${requestedName}->${resolution.match}`);
          toolName = resolution.match;
        }
        if (!tool) {
          errorRecord = { kind: 'not_found', status: null, message: `Unknown tool ${requestedName}`, causes: [] };
          return fail({
            code: 'TOOL_NOT_FOUND',
            message: `There is no tool named "${redactor.text(truncateText(requestedName, 128))}"`,
            detail: `Available tools: ${registry.names.join(', ')}.${resolution.closest ? ` Did you mean "${resolution.closest}"?` : ''}`,
            suggestion: resolution.closest
              ? `Call "${resolution.closest}" instead if it does what you need, or another of the available tools.`
              : 'Call one of the available tools instead, or answer without a tool.',
            availableTools: [...registry.names],
            ...(resolution.closest !== undefined ? { closestTool: resolution.closest } : {}),
          });
        }
      }
      const definition = tool.definition;

      // 2. per-session breaker
      if (sessionBreakers && sessionBreakers.check(sessionId, toolName).state === 'open') {
        return fail({ code: 'TOO_MANY_FAILURES', message: `${toolName} failed too many times in a row in this session and is cut off` });
      }

      // 3. normalise and validate the arguments
      const parsed = parseArguments(input.args);
      if (!parsed.ok) {
        sessionBreakers?.recordFailure(sessionId, toolName, { kind: 'invalid-arguments', fingerprint: fingerprintArguments(input.args) });
        return fail({
          ...parsed.failure,
          detail: truncateText(redactor.text(parsed.failure.detail), maxErrorTextBytes),
          fields: parsed.failure.fields.map(redactField),
        });
      }
      normalisations.push(...parsed.normalisations);
      parsedArguments = parsed.value;
      if (tool.validator) {
        const validation = await tool.validator.validate(parsed.value);
        if (!validation.ok) {
          sessionBreakers?.recordFailure(sessionId, toolName, { kind: 'invalid-arguments', fingerprint: fingerprintArguments(parsed.value) });
          return fail({
            code: validation.code,
            message: redactor.text(validation.message),
            detail: truncateText(redactor.text(validation.detail), maxErrorTextBytes),
            suggestion: redactor.text(validation.suggestion),
            fields: validation.fields.map(redactField),
          });
        }
        normalisations.push(...validation.normalisations);
        parsedArguments = validation.value;
      }

      // 4. shared breaker
      let probe = false;
      if (sharedBreaker) {
        try {
          const acquired = await sharedBreaker.acquire(toolName);
          if (acquired.decision === 'reject') {
            // The developer record (and a tool-DLQ entry built from it) says why the breaker is open.
            const opened = await sharedBreaker.state(toolName).catch(() => undefined);
            misconfiguration = true;
            errorRecord = { kind: 'circuit_open', status: null, message: `shared breaker open${opened?.lastError ? `: ${opened.lastError}` : ''}`, causes: [] };
            return fail({
              code: 'CIRCUIT_OPEN',
              message: `${toolName} is switched off for every run: it is failing for everyone`,
              ...(acquired.retryInMs !== undefined ? { detail: `The breaker is ${acquired.state}; it will be probed again in about ${Math.ceil(acquired.retryInMs / 1000)} s.` } : {}),
            });
          }
          probe = acquired.decision === 'probe';
        } catch {
          // a breaker store that cannot be reached must not stop tool calls: fail open
        }
      }

      // 5. execute with timeout, retries, Retry-After and the call budget
      const deadlineAt = Math.min(startedAt + callBudgetMs, input.deadlineAt ?? Number.POSITIVE_INFINITY);
      const maxAttempts = Math.max(1, Math.min(tool.retry.maxAttempts, input.maxAttempts ?? Number.POSITIVE_INFINITY));
      const policy = maxAttempts === tool.retry.maxAttempts ? tool.retry : { ...tool.retry, maxAttempts };
      const idempotencyKey = input.idempotencyKey ?? `${sessionId}:${callId}`;
      let authRefreshed = false;
      let classified: ClassifiedError | undefined;
      let thrown: unknown;
      let decision: RetryDecision | undefined;
      let attemptsAllowed = maxAttempts;
      for (let attempt = 1; ; attempt++) {
        const remainingMs = deadlineAt - clock.now();
        if (remainingMs <= 0) {
          if (attempt === 1) {
            return fail({ code: 'BUDGET_EXHAUSTED', message: `No time budget was left to call ${toolName}`, retryable: false });
          }
          break;
        }
        const attemptStartedAt = clock.now();
        const outcome = await runAttempt(definition.execute as (args: unknown, context: unknown) => unknown, parsedArguments, { callId, sessionId, runId: input.runId, idempotencyKey, attempt }, {
          timeoutMs: Math.min(definition.timeoutMs ?? defaultTimeoutMs, remainingMs),
          clock,
          callerSignal: input.signal,
        });
        const attemptRecord: AttemptRecord = { attempt, durationMs: clock.now() - attemptStartedAt, outcome: 'success' };
        attempts.push(attemptRecord);
        if (outcome.ok) {
          classified = undefined;
          if (sessionBreakers) sessionBreakers.recordSuccess(sessionId, toolName);
          if (sharedBreaker) await sharedBreaker.recordSuccess(toolName).catch(() => undefined);
          return finish(buildSuccess(outcome.value, envelopeBase()));
        }
        thrown = outcome.thrown;
        classified = classifyError(outcome.thrown, { nowMs: clock.now(), ...(outcome.abortReason ? { abortReason: outcome.abortReason } : {}) });
        attemptRecord.outcome = classified.code;
        if (classified.code === 'AUTH_EXPIRED' && options.onAuthError && !authRefreshed) {
          authRefreshed = true;
          let refreshed = false;
          try {
            refreshed = await options.onAuthError({ toolName, sessionId, runId: input.runId, message: classified.message });
          } catch {
            refreshed = false;
          }
          if (refreshed) {
            attemptRecord.retryReason = 'auth-refreshed';
            attemptsAllowed += 1;
            continue;
          }
        }
        if (classified.kind === 'cancelled') break;
        decision = decideRetry({
          attempt: attempt - (attemptsAllowed - maxAttempts),
          failure: { transient: classified.transient, ambiguous: classified.ambiguous, ...(classified.retryAfterMs !== undefined ? { retryAfterMs: classified.retryAfterMs } : {}) },
          policy,
          idempotent: tool.idempotent,
          remainingBudgetMs: deadlineAt - clock.now(),
          random,
        });
        attemptRecord.retryReason = decision.reason;
        if (!decision.retry) break;
        attemptRecord.delayAfterMs = decision.delayMs;
        try {
          await clock.sleep(decision.delayMs, input.signal);
        } catch {
          classified = classifyError(undefined, { nowMs: clock.now(), abortReason: 'cancelled' });
          break;
        }
      }

      // 6. the failure envelope
      const failure = classified ?? classifyError(undefined, { nowMs: clock.now(), abortReason: 'timeout' });
      misconfiguration = failure.misconfiguration;
      errorRecord = {
        kind: failure.kind,
        status: failure.status,
        message: failure.message,
        causes: causeChain(thrown),
        ...(thrown instanceof Error ? { name: thrown.name, ...(thrown.stack !== undefined ? { stack: thrown.stack } : {}) } : {}),
      };
      if (sessionBreakers && failure.kind !== 'cancelled') sessionBreakers.recordFailure(sessionId, toolName, { kind: 'counted' });
      if (sharedBreaker) {
        if (failure.misconfiguration) await sharedBreaker.recordFailure(toolName, { message: modelText(failure.message) }).catch(() => undefined);
        else if (probe) await sharedBreaker.releaseProbe(toolName).catch(() => undefined);
      }
      return fail(describeFailure(toolName, failure, decision, attempts.length, modelText), failure.suggestion !== undefined);
    } catch (internal) {
      // A bug inside the pipeline or a port: still an envelope, never a rejection.
      errorRecord = { kind: 'exception', status: null, message: internal instanceof Error ? internal.message : String(internal), causes: causeChain(internal), ...(internal instanceof Error && internal.stack ? { stack: internal.stack } : {}) };
      return fail({ code: 'TOOL_EXCEPTION', message: `${toolName} could not be run`, detail: 'toolrun failed internally while running this call; the developer log has the details.' });
    }
  }

  function buildSuccess(value: unknown, base: ReturnType<() => { tool_name: string; call_id: string; duration_ms: number; attempts: number; trace_id: string }>): ToolResult {
    const data = value === undefined ? null : value;
    if (data !== null && typeof data === 'object' || typeof data === 'string') {
      let json: string | undefined;
      try {
        json = JSON.stringify(data);
      } catch {
        json = undefined;
      }
      if (json === undefined) {
        return { status: 'failed', ...base, error: buildFailure({ code: 'TOOL_EXCEPTION', message: `${base.tool_name} returned a value that is not JSON`, detail: 'The result could not be serialised (a cycle or a BigInt).' }) };
      }
      if (json.length > maxOutputBytes && Buffer.byteLength(json) > maxOutputBytes) {
        if (outputOverflow === 'truncate') {
          return { status: 'success', ...base, data: truncateText(json, maxOutputBytes), truncated: true };
        }
        return {
          status: 'failed',
          ...base,
          error: buildFailure({ code: 'OUTPUT_TOO_LARGE', message: `${base.tool_name} returned ${Buffer.byteLength(json)} bytes, over the ${maxOutputBytes}-byte bound` }),
        };
      }
    }
    return { status: 'success', ...base, data };
  }

  return {
    run: async (input) => (await execute(input)).result,
    execute,
    specs: registry.specs,
    names: registry.names,
    getTool: (name) => registry.get(name),
    redactor,
    sessionBreakers,
    clock,
  };
}

function describeFailure(
  toolName: string,
  failure: ClassifiedError,
  decision: RetryDecision | undefined,
  attempts: number,
  modelText: (text: string) => string,
): FailureParts {
  const detail = modelText(failure.message);
  const standard = ENVIRONMENT_MESSAGES[failure.code];
  const message = standard ? standard(toolName, failure) + (attempts > 1 ? ` after ${attempts} attempts` : '') : detail;
  const parts: FailureParts = { code: failure.code, message, detail };
  if (failure.suggestion !== undefined) parts.suggestion = modelText(failure.suggestion);
  if (failure.transient || failure.code === 'CANCELLED') parts.retryable = false;
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
