import { fingerprintArguments } from '../policies/fingerprint-arguments.ts';
import { createSessionBreakers, type SessionBreakerOptions, type SessionBreakers } from '../policies/session-breaker.ts';
import { decideRetry, DEFAULT_RETRY_POLICY, resolveRetryPolicy, type RetryDecision } from '../policies/retry-policy.ts';
import type { SharedBreaker } from '../policies/shared-breaker.ts';
import { parseArguments } from '../schema/parse-arguments.ts';
import { createAjvSchemaValidator } from '../schema/ajv-schema-validator.ts';
import {
  boundFailureEnvelope,
  boundIdentifier,
  boundToolName,
  DEFAULT_MAX_ENVELOPE_BYTES,
  DEFAULT_MAX_FIELD_ERRORS,
  MIN_MAX_ENVELOPE_BYTES,
  type EnvelopeBounds,
} from './bound-envelope.ts';
import { buildFailure, redactBounded, sanitiseErrorText, truncateText, utf8ByteLength, type FailureParts } from './build-failure.ts';
import { classifyError, type ClassifiedError } from './classify-error.ts';
import type { FailurePatternLibrary } from './failure-patterns.ts';
import { MAX_TIMER_MS, type RetryOverrides } from './define-tool.ts';
import { describeThrown, messageOf, safeString } from './describe-thrown.ts';
import { systemClock, systemRandom, type Clock, type RandomSource } from '../ground/ports/clock.ts';
import type { SchemaValidator } from '../ground/ports/schema-validator.ts';
import { createRedactor, type Redactor, type RedactorOptions } from './redact.ts';
import { runAttempt } from './run-attempt.ts';
import type { AttemptRecord, ToolCallRecord } from './tool-call-record.ts';
import { assertRetryDelaysFitTimers, createToolRegistry, type RegisteredTool, type ToolSpec, type ToolsInput } from './tool-registry.ts';
import type { ToolFailure, ToolFailureError, ToolResult } from '../ground/tool-result.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { beforeExecution } from './turn-guard.ts';

export { DEFAULT_MAX_ENVELOPE_BYTES, DEFAULT_MAX_FIELD_ERRORS, MIN_MAX_ENVELOPE_BYTES } from './bound-envelope.ts';
export { MAX_EXECUTIONS_PER_TURN } from './turn-guard.ts';

/** Web Crypto's UUID (Node ≥ 20, Bun, Deno, Workers): no `node:` import in the core. */
const randomUUID: () => string = globalThis.crypto.randomUUID.bind(globalThis.crypto);

/** Default of {@link ToolRuntimeOptions.maxInFlightCalls}. */
export const DEFAULT_MAX_IN_FLIGHT_CALLS = 1000;

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
  /** Per-attempt timeout of tools that set none, at most 2_147_483_647 (the longest timer). @defaultValue 30_000 */
  defaultTimeoutMs?: number;
  /** Total time budget of one call, attempts and waits included, at most 2_147_483_647. @defaultValue 120_000 */
  callBudgetMs?: number;
  /** Scalar coercion for tools that set none. @defaultValue `'none'` */
  coerce?: 'none' | 'scalars';
  /** Per-session circuit breaker options, or `false` to disable it. @defaultValue 3 consecutive failures */
  sessionBreaker?: Partial<SessionBreakerOptions> | false;
  /** Cross-run breaker (state in a shared store) fed by misconfiguration failures. @defaultValue none */
  sharedBreaker?: SharedBreaker;
  /** Bound of a tool's error text shown to the model (the envelope's `detail`), in UTF-8 bytes. @defaultValue 2048 */
  maxErrorTextBytes?: number;
  /**
   * Bound of a whole failure envelope, in UTF-8 bytes of its JSON (at least 2048). Every text a
   * model or a tool controls in it is bounded on its own (tool name and identifiers 256, message
   * 512, suggestion 1024, each field's texts 256, `available_tools` 50 names); when the envelope is
   * still larger, fields are dropped (counted in `omitted_fields`), then lists and texts shortened.
   * @defaultValue 16_384
   */
  maxEnvelopeBytes?: number;
  /** Field errors a failure envelope lists; the others are counted in `omitted_fields` ("and N more" in `detail`). @defaultValue 20 */
  maxFieldErrors?: number;
  /**
   * Calls of this runtime in flight at once. A call beyond it fails at once with
   * `CALL_LIMIT_EXCEEDED` (`logic`, not retryable) without running the tool; a tool that returns
   * such an envelope from a nested call fails with it too, so a tool that calls the runtime
   * recursively ends with a failure envelope instead of exhausting memory. Independently of it, after
   * 256 tool executions without the event loop turning, the next execution waits for a macrotask,
   * so timeouts fire and other work runs even when tools never wait for I/O. @defaultValue 1000
   */
  maxInFlightCalls?: number;
  /**
   * Bound of a success payload, in UTF-8 bytes of its JSON. The payload is serialised once when the
   * tool returns and the envelope keeps a copy (`data` is parsed back from that JSON), so mutating
   * the returned object afterwards changes nothing. A result that is not JSON (a BigInt, a cycle, a
   * function, a symbol, a getter that throws) is a `TOOL_EXCEPTION` failure. @defaultValue 262_144
   */
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
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new ToolrunError('INVALID_OPTIONS', `${name} must be a positive number, received ${safeString(value)}`);
  return value;
}

/** A duration a timer will wait: positive and at most {@link MAX_TIMER_MS} (longer timers fire at once). */
function duration(name: string, value: number | undefined, fallback: number): number {
  const ms = positive(name, value, fallback);
  if (ms > MAX_TIMER_MS)
    throw new ToolrunError(
      'INVALID_OPTIONS',
      `${name} must be at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest timer JavaScript runtimes hold; longer ones fire at once), received ${ms}`,
    );
  return ms;
}

function integerAtLeast(name: string, value: number | undefined, fallback: number, minimum: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < minimum)
    throw new ToolrunError('INVALID_OPTIONS', `${name} must be an integer ≥ ${minimum}, received ${safeString(value)}`);
  return value;
}

/** How much of a tool's error text is scanned (stack lines are removed, then it is cut to `maxErrorTextBytes`). */
function scanPrefix(text: string, maxBytes: number): string {
  const limit = 4 * maxBytes + 4096;
  return text.length > limit ? text.slice(0, limit) : text;
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
 * @throws ToolrunError `INVALID_DEFINITION`, `INVALID_SCHEMA` or `INVALID_OPTIONS` for programmer errors, at creation
 *   (among them a timeout, budget or retry wait above 2_147_483_647 ms, which timers cannot hold).
 */
export function createToolRuntime(options: ToolRuntimeOptions): ToolRuntime {
  const clock = options.clock ?? systemClock;
  const random = options.random ?? systemRandom;
  const defaultTimeoutMs = duration('defaultTimeoutMs', options.defaultTimeoutMs, 30_000);
  const callBudgetMs = duration('callBudgetMs', options.callBudgetMs, 120_000);
  const maxErrorTextBytes = positive('maxErrorTextBytes', options.maxErrorTextBytes, 2048);
  const maxOutputBytes = positive('maxOutputBytes', options.maxOutputBytes, 262_144);
  const bounds: EnvelopeBounds = {
    maxEnvelopeBytes: integerAtLeast('maxEnvelopeBytes', options.maxEnvelopeBytes, DEFAULT_MAX_ENVELOPE_BYTES, MIN_MAX_ENVELOPE_BYTES),
    maxFieldErrors: integerAtLeast('maxFieldErrors', options.maxFieldErrors, DEFAULT_MAX_FIELD_ERRORS, 1),
    maxErrorTextBytes,
  };
  const maxInFlightCalls = integerAtLeast('maxInFlightCalls', options.maxInFlightCalls, DEFAULT_MAX_IN_FLIGHT_CALLS, 1);
  const outputOverflow = options.outputOverflow ?? 'fail';
  const redactor = isRedactor(options.redact) ? options.redact : createRedactor(options.redact);
  const retry = resolveRetryPolicy(DEFAULT_RETRY_POLICY, options.retry);
  assertRetryDelaysFitTimers(retry, 'INVALID_OPTIONS', 'createToolRuntime');
  const registry = createToolRegistry(options.tools, {
    validator: options.validator ?? createAjvSchemaValidator(),
    retry,
    coerce: options.coerce ?? 'none',
  });
  const sessionBreakers = options.sessionBreaker === false ? undefined : createSessionBreakers(options.sessionBreaker ?? {});
  const sharedBreaker = options.sharedBreaker;
  const resolveNames = options.resolveToolNames ?? true;

  /** Calls started and not finished. */
  let inFlight = 0;
  /** `CALL_LIMIT_EXCEEDED` envelopes this runtime returned: a tool returning one fails with it too. */
  const limitEnvelopes = new WeakSet<object>();
  /** How many there were (the success path checks the set only when there were some). */
  let limitTrips = 0;

  /** Excerpts of malformed argument text are cut from redacted text (a cut must not split a secret). */
  const parseOptions = { redactText: (text: string) => redactor.text(text) };

  /** A tool's own error text for the model: scanned prefix, stack lines and host paths removed, redacted, bounded. */
  const modelText = (text: string) => redactBounded(redactor, sanitiseErrorText(scanPrefix(text, maxErrorTextBytes)), maxErrorTextBytes);

  async function execute(input: ToolRunInput): Promise<ToolCallRecord> {
    const startedAt = clock.now();
    const source: Partial<ToolRunInput> = typeof input === 'object' && input !== null ? input : {};
    // One random draw serves both ids: a W3C-style 32-hex trace id, and a call id derived from it.
    const randomHex = source.traceId === undefined || source.callId === undefined ? randomUUID().replaceAll('-', '') : '';
    const traceId = source.traceId === undefined ? randomHex : boundIdentifier(source.traceId);
    const callId = source.callId === undefined ? `call_${randomHex}` : boundIdentifier(source.callId);
    const sessionId = typeof source.sessionId === 'string' ? source.sessionId : source.sessionId === undefined ? 'default' : safeString(source.sessionId);
    const requestedName = typeof source.name === 'string' ? source.name : safeString(source.name);
    const normalisations: string[] = [];
    const attempts: AttemptRecord[] = [];
    let toolName = requestedName;
    let tool: RegisteredTool | undefined;
    let parsedArguments: unknown = source.args;
    let errorRecord: ToolCallRecord['error'];
    let misconfiguration = false;
    /** A shared-breaker probe this call holds and has not reported: released when the call ends. */
    let heldProbe: { id: string | undefined } | undefined;

    const finish = (result: ToolResult): ToolCallRecord => {
      if (result.status === 'failed' && result.error.code === 'CALL_LIMIT_EXCEEDED') {
        limitEnvelopes.add(result);
        limitTrips += 1;
      }
      const record: ToolCallRecord = {
        result,
        traceId,
        callId,
        sessionId,
        runId: source.runId,
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
    const envelopeBase = () => ({
      tool_name: toolName,
      call_id: callId,
      duration_ms: Math.max(0, clock.now() - startedAt),
      attempts: attempts.length,
      trace_id: traceId,
    });
    const fail = (parts: FailureParts, toolSuggested = false): ToolCallRecord => {
      const error: ToolFailureError = buildFailure({ ...parts, ...(tool?.definition.fallbacks ? { fallbacks: tool.definition.fallbacks } : {}) });
      if (options.failurePatterns && !toolSuggested) {
        try {
          const phrased = options.failurePatterns.suggest({
            toolName,
            code: error.code,
            message: error.message,
            detail: error.detail,
            suggestion: error.suggestion,
            ...(error.fields ? { fields: error.fields } : {}),
          });
          if (phrased !== undefined) error.suggestion = truncateText(phrased, 600);
        } catch {
          // a pattern library that throws keeps the built-in suggestion
        }
      }
      return finish(boundFailureEnvelope({ status: 'failed', ...envelopeBase(), error }, redactor, bounds, tool?.definition.sensitive));
    };

    inFlight += 1;
    try {
      if (inFlight > maxInFlightCalls) {
        errorRecord = {
          kind: 'call_limit',
          status: null,
          message: `${inFlight - 1} calls of this runtime were already in flight (maxInFlightCalls ${maxInFlightCalls})`,
          causes: [],
        };
        return fail({
          code: 'CALL_LIMIT_EXCEEDED',
          message: `${boundToolName(redactor, requestedName)} was not run: ${maxInFlightCalls} tool call${maxInFlightCalls === 1 ? ' is' : 's are'} already running`,
          detail: `The runtime runs at most ${maxInFlightCalls} call${maxInFlightCalls === 1 ? '' : 's'} at once; a tool that calls tools recursively reaches this limit.`,
        });
      }

      // 1. resolve the tool
      tool = registry.get(requestedName);
      if (!tool) {
        const resolution = registry.resolve(requestedName);
        if (resolveNames && resolution.match !== undefined) {
          tool = registry.get(resolution.match);
          normalisations.push(`tool-name-resolved:${truncateText(requestedName, 256)}->${resolution.match}`);
          toolName = resolution.match;
        }
        if (!tool) {
          // `TOOL_NOT_FOUND`, counted by the session breaker under the name the model sent. The
          // envelope's tool_name is model text like any: redacted (a key sent as a name is masked) and bounded.
          toolName = redactBounded(redactor, requestedName, 128);
          const closest = resolution.closest;
          const shownName = boundToolName(redactor, requestedName);
          const names = registry.names;
          const listed = names.slice(0, 50);
          const available = `${listed.join(', ')}${names.length > listed.length ? `, … (${names.length - listed.length} more)` : ''}`;
          const closestFields = closest !== undefined ? { closestTool: closest } : {};
          if (sessionBreakers && sessionBreakers.check(sessionId, requestedName).state === 'open') {
            errorRecord = {
              kind: 'unknown_tool',
              status: null,
              message: `Unknown tool ${truncateText(requestedName, 256)}, called too many times in this session`,
              causes: [],
            };
            return fail({
              code: 'TOO_MANY_FAILURES',
              message: `There is no tool named "${shownName}", and it was called too many times in this session`,
              detail: `Available tools: ${available}.`,
              suggestion: `Stop calling "${shownName}": it does not exist. ${closest ? `Call "${closest}" if it does what you need, or another of the available tools` : 'Call one of the available tools'}, or answer the user with what you have.`,
              availableTools: [...listed],
              ...closestFields,
            });
          }
          sessionBreakers?.recordFailure(sessionId, requestedName, { kind: 'counted' });
          errorRecord = { kind: 'unknown_tool', status: null, message: `Unknown tool ${truncateText(requestedName, 256)}`, causes: [] };
          return fail({
            code: 'TOOL_NOT_FOUND',
            message: `There is no tool named "${shownName}"`,
            detail: `Available tools: ${available}.${closest ? ` Did you mean "${closest}"?` : ''}`,
            suggestion: closest
              ? `Call "${closest}" instead if it does what you need, or another of the available tools.`
              : 'Call one of the available tools instead, or answer without a tool.',
            availableTools: [...listed],
            ...closestFields,
          });
        }
      }
      const definition = tool.definition;

      // 2. per-session breaker
      if (sessionBreakers && sessionBreakers.check(sessionId, toolName).state === 'open') {
        return fail({ code: 'TOO_MANY_FAILURES', message: `${toolName} failed too many times in a row in this session and is cut off` });
      }

      // 3. normalise and validate the arguments
      const parsed = parseArguments(source.args, parseOptions);
      if (!parsed.ok) {
        sessionBreakers?.recordFailure(sessionId, toolName, { kind: 'invalid-arguments', fingerprint: fingerprintArguments(source.args) });
        return fail(parsed.failure);
      }
      normalisations.push(...parsed.normalisations);
      parsedArguments = parsed.value;
      if (tool.validator) {
        const validation = await tool.validator.validate(parsed.value);
        if (!validation.ok) {
          sessionBreakers?.recordFailure(sessionId, toolName, { kind: 'invalid-arguments', fingerprint: fingerprintArguments(parsed.value) });
          // A validator may report problems it did not describe (the Ajv one describes at most 1,000).
          const omittedFields = 'omittedFields' in validation && typeof validation.omittedFields === 'number' ? validation.omittedFields : 0;
          return fail({
            code: validation.code,
            message: validation.message,
            detail: validation.detail,
            suggestion: validation.suggestion,
            fields: validation.fields,
            omittedFields,
          });
        }
        normalisations.push(...validation.normalisations);
        parsedArguments = validation.value;
      } else {
        // A tool never starts in the same synchronous run as its caller: a tool that calls the
        // runtime on itself recurses through the microtask queue, not the stack.
        await undefined;
      }

      // 4. shared breaker
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
              ...(acquired.retryInMs !== undefined
                ? { detail: `The breaker is ${acquired.state}; it will be probed again in about ${Math.ceil(acquired.retryInMs / 1000)} s.` }
                : {}),
            });
          }
          if (acquired.decision === 'probe') heldProbe = { id: acquired.probeId };
        } catch {
          // a breaker store that cannot be reached must not stop tool calls: fail open
        }
      }

      // 5. execute with timeout, retries, Retry-After and the call budget
      const callerDeadline = typeof source.deadlineAt === 'number' && !Number.isNaN(source.deadlineAt) ? source.deadlineAt : Number.POSITIVE_INFINITY;
      const deadlineAt = Math.min(startedAt + callBudgetMs, callerDeadline);
      const callerMaxAttempts =
        typeof source.maxAttempts === 'number' && !Number.isNaN(source.maxAttempts) ? Math.floor(source.maxAttempts) : Number.POSITIVE_INFINITY;
      const maxAttempts = Math.max(1, Math.min(tool.retry.maxAttempts, callerMaxAttempts));
      const policy = maxAttempts === tool.retry.maxAttempts ? tool.retry : { ...tool.retry, maxAttempts };
      const idempotencyKey = source.idempotencyKey ?? `${sessionId}:${callId}`;
      let authRefreshed = false;
      let classified: ClassifiedError | undefined;
      let thrown: unknown;
      let decision: RetryDecision | undefined;
      let attemptsAllowed = maxAttempts;
      for (let attempt = 1; ; attempt++) {
        // Yield to the event loop when tools have run back to back without it turning.
        const turn = beforeExecution();
        if (turn !== undefined) await turn;
        const remainingMs = deadlineAt - clock.now();
        if (remainingMs <= 0) {
          if (attempt === 1) {
            return fail({ code: 'BUDGET_EXHAUSTED', message: `No time budget was left to call ${toolName}`, retryable: false });
          }
          break;
        }
        const attemptStartedAt = clock.now();
        const outcome = await runAttempt(
          definition.execute as (args: unknown, context: unknown) => unknown,
          parsedArguments,
          { callId, sessionId, runId: source.runId, idempotencyKey, attempt },
          {
            timeoutMs: Math.min(definition.timeoutMs ?? defaultTimeoutMs, remainingMs),
            clock,
            callerSignal: source.signal,
          },
        );
        const attemptRecord: AttemptRecord = { attempt, durationMs: clock.now() - attemptStartedAt, outcome: 'success' };
        attempts.push(attemptRecord);
        if (outcome.ok) {
          const value = outcome.value;
          if (limitTrips > 0 && typeof value === 'object' && value !== null && limitEnvelopes.has(value)) {
            // The tool returned the envelope of a nested call that hit the call limit: it recursed.
            attemptRecord.outcome = 'CALL_LIMIT_EXCEEDED';
            errorRecord = {
              kind: 'call_limit',
              status: null,
              message: 'the tool returned a CALL_LIMIT_EXCEEDED envelope of a nested call (it calls the runtime recursively)',
              causes: [],
            };
            return fail({
              code: 'CALL_LIMIT_EXCEEDED',
              message: `${toolName} called tools recursively until the runtime's limit of ${maxInFlightCalls} calls in flight`,
              detail: 'A nested call of this tool was refused because too many calls were running; the tool returned that refusal.',
            });
          }
          // A success envelope holding a copy of the result's JSON, or a failure when it is not JSON.
          const built = buildSuccess(value, envelopeBase());
          if (built.status === 'failed' && built.error.code === 'TOOL_EXCEPTION') {
            attemptRecord.outcome = 'TOOL_EXCEPTION';
            errorRecord = { kind: 'exception', status: null, message: `the tool returned a value that is not JSON: ${built.error.detail}`, causes: [] };
            sessionBreakers?.recordFailure(sessionId, toolName, { kind: 'counted' });
            return fail({ code: 'TOOL_EXCEPTION', message: built.error.message, detail: built.error.detail });
          }
          // A success, or OUTPUT_TOO_LARGE: the tool worked; the model must ask for less.
          if (sessionBreakers) sessionBreakers.recordSuccess(sessionId, toolName);
          if (sharedBreaker) {
            const probe = heldProbe;
            heldProbe = undefined;
            await sharedBreaker.recordSuccess(toolName, probe?.id).catch(() => undefined);
          }
          if (built.status === 'failed') {
            attemptRecord.outcome = built.error.code;
            return finish(boundFailureEnvelope(built, redactor, bounds));
          }
          return finish(built);
        }
        thrown = outcome.thrown;
        classified = classify(outcome.thrown, outcome.abortReason);
        attemptRecord.outcome = classified.code;
        if (classified.code === 'AUTH_EXPIRED' && options.onAuthError && !authRefreshed) {
          authRefreshed = true;
          let refreshed = false;
          try {
            refreshed = await options.onAuthError({ toolName, sessionId, runId: source.runId, message: classified.message });
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
          failure: {
            transient: classified.transient,
            ambiguous: classified.ambiguous,
            ...(classified.retryAfterMs !== undefined ? { retryAfterMs: classified.retryAfterMs } : {}),
          },
          policy,
          idempotent: tool.idempotent,
          remainingBudgetMs: deadlineAt - clock.now(),
          random,
        });
        attemptRecord.retryReason = decision.reason;
        if (!decision.retry) break;
        attemptRecord.delayAfterMs = decision.delayMs;
        try {
          await clock.sleep(decision.delayMs, source.signal);
        } catch {
          classified = classify(undefined, 'cancelled');
          break;
        }
      }

      // 6. the failure envelope
      const failure = classified ?? classify(undefined, 'timeout');
      misconfiguration = failure.misconfiguration;
      errorRecord = { kind: failure.kind, status: failure.status, message: failure.message, ...describeThrown(thrown) };
      if (sessionBreakers && failure.kind !== 'cancelled') sessionBreakers.recordFailure(sessionId, toolName, { kind: 'counted' });
      if (sharedBreaker && failure.misconfiguration) {
        const probe = heldProbe;
        heldProbe = undefined;
        await sharedBreaker.recordFailure(toolName, { message: modelText(failure.message) }, probe?.id).catch(() => undefined);
      }
      return fail(describeFailure(toolName, failure, decision, attempts.length, modelText), failure.suggestion !== undefined);
    } catch (internal) {
      // A bug inside the pipeline or a port: still an envelope, never a rejection.
      try {
        errorRecord = { kind: 'exception', status: null, message: messageOf(internal), ...describeThrown(internal) };
        return fail({
          code: 'TOOL_EXCEPTION',
          message: `${boundToolName(redactor, toolName)} could not be run`,
          detail: 'toolrun failed internally while running this call; the developer log has the details.',
        });
      } catch {
        // Not even the clock is trusted here.
        return finish(lastResort({ tool_name: toolName, call_id: callId, duration_ms: 0, attempts: attempts.length, trace_id: traceId }));
      }
    } finally {
      inFlight -= 1;
      if (heldProbe !== undefined && sharedBreaker) {
        // The probe never got an outcome (no time left, cancelled, the result was not JSON, an
        // internal error): free it so the next call may probe, instead of CIRCUIT_OPEN for everyone.
        const probe = heldProbe;
        heldProbe = undefined;
        await sharedBreaker.releaseProbe(toolName, probe.id).catch(() => undefined);
      }
    }
  }

  /** classifyError, guarded: an unreadable thrown value is a `TOOL_EXCEPTION`, never a rejection. */
  function classify(thrown: unknown, abortReason: 'timeout' | 'cancelled' | undefined): ClassifiedError {
    try {
      return classifyError(thrown, { nowMs: clock.now(), ...(abortReason ? { abortReason } : {}) });
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

  function buildSuccess(value: unknown, base: { tool_name: string; call_id: string; duration_ms: number; attempts: number; trace_id: string }): ToolResult {
    if (value === undefined || value === null) return { status: 'success', ...base, data: null };
    switch (typeof value) {
      case 'boolean':
        return { status: 'success', ...base, data: value };
      case 'number':
        return { status: 'success', ...base, data: Number.isFinite(value) ? value : null };
      case 'string':
      case 'object':
        break;
      default:
        return notJson(base, `a ${typeof value}`);
    }
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
        if (outputOverflow === 'truncate') return { status: 'success', ...base, data: truncateText(json, maxOutputBytes), truncated: true };
        return {
          status: 'failed',
          ...base,
          error: buildFailure({ code: 'OUTPUT_TOO_LARGE', message: `${base.tool_name} returned ${bytes} bytes, over the ${maxOutputBytes}-byte bound` }),
        };
      }
    }
    // The envelope keeps what was serialised: a copy, not the tool's live object.
    return { status: 'success', ...base, data: typeof value === 'string' ? value : (JSON.parse(json) as unknown) };
  }

  function notJson(base: { tool_name: string; call_id: string; duration_ms: number; attempts: number; trace_id: string }, what: string): ToolFailure {
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

/** Why `JSON.stringify` threw, in words for the model (a BigInt, a cycle, a getter that throws). */
function notJsonReason(error: unknown): string {
  const message = messageOf(error);
  if (/bigint/i.test(message)) return 'it holds a BigInt';
  if (/circular|cyclic/i.test(message)) return 'it holds a cycle';
  return 'reading it threw';
}

/** The envelope when even building the failure failed: fixed texts only. */
function lastResort(base: { tool_name: string; call_id: string; duration_ms: number; attempts: number; trace_id: string }): ToolFailure {
  return {
    status: 'failed',
    tool_name: truncateText(safeString(base.tool_name), 64),
    call_id: truncateText(safeString(base.call_id), 64),
    duration_ms: base.duration_ms,
    attempts: base.attempts,
    trace_id: truncateText(safeString(base.trace_id), 64),
    error: buildFailure({
      code: 'TOOL_EXCEPTION',
      message: 'The call could not be run',
      detail: 'toolrun failed internally while running this call; the developer log has the details.',
    }),
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
