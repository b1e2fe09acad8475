import type { Clock, RandomSource } from '../ground/ports/clock.ts';
import { systemClock, systemRandom } from '../ground/ports/clock.ts';
import type { SchemaValidator } from '../ground/ports/schema-validator.ts';
import type { ToolFailure, ToolFailureError, ToolResult } from '../ground/tool-result.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { DEFAULT_RETRY_POLICY, resolveRetryPolicy, type RetryPolicyOverride } from '../policies/retry-policy.ts';
import { createSessionBreakers, type SessionBreakerOptions, type SessionBreakers } from '../policies/session-breaker.ts';
import type { SharedBreaker } from '../policies/shared-breaker.ts';
import { createAjvSchemaValidator } from '../schema/ajv-schema-validator.ts';
import {
  boundFailureEnvelope,
  boundIdentifier,
  boundToolName,
  DEFAULT_MAX_ENVELOPE_BYTES,
  DEFAULT_MAX_FIELD_ERRORS,
  MIN_MAX_ENVELOPE_BYTES,
  rememberingRedactor,
  type EnvelopeBounds,
} from './bound-envelope.ts';
import { buildFailure, redactBounded, sanitiseErrorText } from './build-failure.ts';
import { truncateUtf8 } from '../ground/utf8.ts';
import { MAX_TIMER_MS } from './define-tool.ts';
import { describeThrown, messageOf, safeString } from './describe-thrown.ts';
import type { FailurePatternLibrary } from './failure-patterns.ts';
import { acquireStep } from './pipeline/acquire-step.ts';
import { stepFailed, type CallState, type PipelineParts, type StepFailure } from './pipeline/call-state.ts';
import { startExecution } from './pipeline/execute-step.ts';
import { resolveStep } from './pipeline/resolve-step.ts';
import { sessionBreakerStep } from './pipeline/session-breaker-step.ts';
import { validateStep } from './pipeline/validate-step.ts';
import { createRedactor, type Redactor, type RedactorOptions } from './redact.ts';
import type { ToolCallRecord } from './tool-call-record.ts';
import { assertRetryDelaysFitTimers, createToolRegistry, type RegisteredTool, type ToolSpec, type ToolsInput } from './tool-registry.ts';
import type { ToolRunInput } from './tool-run-input.ts';
import { createTurnGuard } from './turn-guard.ts';

/** The character code of the first and of the second lowercase hex digit of each byte value. */
const HEX_HIGH: readonly number[] = Array.from({ length: 256 }, (_, byte) => '0123456789abcdef'.charCodeAt(byte >> 4));
const HEX_LOW: readonly number[] = Array.from({ length: 256 }, (_, byte) => '0123456789abcdef'.charCodeAt(byte & 15));

/**
 * Random bytes for call and trace ids, shared by every runtime of the process and allocated on first
 * use: 64 KiB (the most one `getRandomValues` call may fill), so one draw from the platform's
 * cryptographic random source (Web Crypto: no `node:` import in the core) serves 4,096 ids.
 */
let idPool: Uint8Array | undefined;
let idPoolOffset = 0;

/**
 * A call id: `call_` and 32 lowercase hex digits, 128 bits from the platform's cryptographic random
 * source, never reused. Built as one flat string (one allocation, no concatenation); the trace id of
 * the call is its last 32 characters.
 */
function randomCallId(): string {
  let pool = idPool;
  if (pool === undefined || idPoolOffset === pool.length) {
    pool ??= idPool = new Uint8Array(65_536);
    globalThis.crypto.getRandomValues(pool);
    idPoolOffset = 0;
  }
  const at = idPoolOffset;
  idPoolOffset = at + 16;
  const high = HEX_HIGH;
  const low = HEX_LOW;
  return String.fromCharCode(
    99,
    97,
    108,
    108,
    95, // call_
    high[pool[at + 0]!]!,
    low[pool[at + 0]!]!,
    high[pool[at + 1]!]!,
    low[pool[at + 1]!]!,
    high[pool[at + 2]!]!,
    low[pool[at + 2]!]!,
    high[pool[at + 3]!]!,
    low[pool[at + 3]!]!,
    high[pool[at + 4]!]!,
    low[pool[at + 4]!]!,
    high[pool[at + 5]!]!,
    low[pool[at + 5]!]!,
    high[pool[at + 6]!]!,
    low[pool[at + 6]!]!,
    high[pool[at + 7]!]!,
    low[pool[at + 7]!]!,
    high[pool[at + 8]!]!,
    low[pool[at + 8]!]!,
    high[pool[at + 9]!]!,
    low[pool[at + 9]!]!,
    high[pool[at + 10]!]!,
    low[pool[at + 10]!]!,
    high[pool[at + 11]!]!,
    low[pool[at + 11]!]!,
    high[pool[at + 12]!]!,
    low[pool[at + 12]!]!,
    high[pool[at + 13]!]!,
    low[pool[at + 13]!]!,
    high[pool[at + 14]!]!,
    low[pool[at + 14]!]!,
    high[pool[at + 15]!]!,
    low[pool[at + 15]!]!,
  );
}

/** A promise already fulfilled: awaiting it takes one microtask (`await undefined` would allocate a promise for it). */
const FULFILLED: Promise<void> = Promise.resolve();

/** Default of {@link ToolRuntimeOptions.maxInFlightCalls}. */
export const DEFAULT_MAX_IN_FLIGHT_CALLS = 1000;

/** The sensitive keys of a call without a tool (shared, never written). */
const NO_KEYS: readonly string[] = Object.freeze([]);

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
  retry?: RetryPolicyOverride;
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

/**
 * The runtime's parts from its options, each checked (defaults applied); `isLimitEnvelope` tells the
 * runtime's own `CALL_LIMIT_EXCEEDED` envelopes.
 *
 * @throws ToolrunError as {@link createToolRuntime} does.
 */
function pipelinePartsOf(options: ToolRuntimeOptions, isLimitEnvelope: (value: unknown) => boolean): PipelineParts {
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

  const envelopeRedactor = rememberingRedactor(redactor);
  return {
    clock,
    random,
    registry,
    redactor,
    envelopeRedactor,
    bounds,
    sessionBreakers,
    sharedBreaker,
    turnGuard: createTurnGuard(),
    resolveToolNames: options.resolveToolNames ?? true,
    defaultTimeoutMs,
    callBudgetMs,
    maxInFlightCalls,
    maxOutputBytes,
    outputOverflow,
    onAuthError: options.onAuthError,
    // Excerpts of malformed argument text are cut from redacted text (a cut must not split a secret).
    parseOptions: { redactText: (text: string) => redactor.text(text) },
    modelText: (text: string) => redactBounded(redactor, sanitiseErrorText(scanPrefix(text, maxErrorTextBytes)), maxErrorTextBytes),
    isLimitEnvelope,
  };
}

/**
 * Creates a tool runtime.
 *
 * @throws ToolrunError `INVALID_DEFINITION`, `INVALID_SCHEMA` or `INVALID_OPTIONS` for programmer errors, at creation
 *   (among them a timeout, budget or retry wait above 2_147_483_647 ms, which timers cannot hold).
 */
export function createToolRuntime(options: ToolRuntimeOptions): ToolRuntime {
  if (typeof options !== 'object' || options === null)
    throw new ToolrunError('INVALID_OPTIONS', `createToolRuntime needs an options object { tools, … }, received ${options === null ? 'null' : typeof options}`);
  /** `CALL_LIMIT_EXCEEDED` envelopes this runtime returned: a tool returning one fails with it too. */
  const limitEnvelopes = new WeakSet<object>();
  /** How many there were (the success path checks the set only when there were some). */
  let limitTrips = 0;
  const parts = pipelinePartsOf(options, (value) => limitTrips > 0 && typeof value === 'object' && value !== null && limitEnvelopes.has(value));
  const { clock, redactor, envelopeRedactor, bounds, registry, sessionBreakers, sharedBreaker, maxInFlightCalls } = parts;
  const onCallEnd = options.onCallEnd;
  /** Calls started and not finished. */
  let inFlight = 0;

  /** Ends the call with `result`: `onCallEnd` sees its developer record (built only when someone reads it). */
  function finish(call: CallState, result: ToolResult): ToolResult {
    if (result.status === 'failed' && result.error.code === 'CALL_LIMIT_EXCEEDED') {
      limitEnvelopes.add(result);
      limitTrips += 1;
    }
    if (onCallEnd) {
      const record = recordOf(call, result);
      call.record = record;
      try {
        onCallEnd(record);
      } catch {
        // the developer channel must never break a call
      }
    }
    return result;
  }

  /** The failure envelope of a step that ended the call: phrased by the failure patterns, redacted, bounded. */
  function fail(call: CallState, failure: StepFailure): ToolResult {
    const definition = call.tool?.definition;
    const error: ToolFailureError = buildFailure(definition?.fallbacks ? { ...failure.parts, fallbacks: definition.fallbacks } : failure.parts);
    if (options.failurePatterns && !failure.toolSuggested) phraseSuggestion(options.failurePatterns, call.toolName, error);
    const envelope: ToolFailure = {
      status: 'failed',
      tool_name: call.toolName,
      call_id: call.callId,
      duration_ms: Math.max(0, clock.now() - call.startedAt),
      attempts: call.attempts.length,
      trace_id: call.traceId,
      error,
    };
    return finish(call, boundFailureEnvelope(envelope, envelopeRedactor, bounds, definition?.sensitive));
  }

  /** The envelope of an internal error (a bug inside the pipeline or a port): still an envelope, never a rejection. */
  function internalFailure(call: CallState, internal: unknown): ToolResult {
    try {
      call.errorRecord = { kind: 'exception', status: null, message: messageOf(internal), ...describeThrown(internal) };
      return fail(call, {
        parts: {
          code: 'TOOL_EXCEPTION',
          message: `${boundToolName(redactor, call.toolName)} could not be run`,
          detail: 'toolrun failed internally while running this call; the developer log has the details.',
        },
      });
    } catch {
      // Not even the clock is trusted here.
      return finish(
        call,
        lastResort({ tool_name: call.toolName, call_id: call.callId, duration_ms: 0, attempts: call.attempts.length, trace_id: call.traceId }),
      );
    }
  }

  /**
   * The pipeline of one call, in order: the call limit, the tool's lookup (exact name, else
   * resolved), the session breaker, validation, the shared breaker, the execution (first attempt,
   * then the retry loop), the envelope. Every outcome is an envelope, never a rejection.
   *
   * Each step is synchronous unless it has something to wait for (an asynchronous validator, the
   * shared breaker's store, the tool): a call that a step before the tool ends (call limit, unknown
   * tool, open breaker, invalid arguments) resolves at once. The tool starts on a later microtask,
   * never in its caller's synchronous run (a tool that calls the runtime on itself recurses through
   * the microtask queue, not the stack).
   */
  async function runCall(call: CallState): Promise<ToolResult> {
    inFlight += 1;
    try {
      if (inFlight > maxInFlightCalls) return fail(call, refusedOverLimit(call, inFlight - 1, parts));
      // An exact name (most calls) is looked up here; resolveStep handles the rest.
      let tool = typeof call.input.name === 'string' ? registry.get(call.requestedName) : undefined;
      if (tool !== undefined) call.tool = tool;
      else {
        const resolved = resolveStep(parts, call);
        if (!resolved.ok) return fail(call, resolved.failure);
        tool = resolved.value;
      }
      const breaker = sessionBreakerStep(parts, call);
      if (!breaker.ok) return fail(call, breaker.failure);
      const pending = validateStep(parts, call, tool);
      const validated = pending instanceof Promise ? await pending : pending;
      if (!validated.ok) return fail(call, validated.failure);
      if (sharedBreaker) {
        const acquired = await acquireStep(parts, call);
        if (!acquired.ok) return fail(call, acquired.failure);
      }
      // The tool starts on a later microtask; when nothing was awaited before (most calls), at the call's clock reading.
      const waited = sharedBreaker !== undefined || pending instanceof Promise;
      await FULFILLED;
      const execution = startExecution(parts, call, tool, waited ? undefined : call.startedAt);
      // One microtask later a tool that answered at once has settled (it never gets a timer).
      await FULFILLED;
      const ending = execution.outcome();
      const executed = ending instanceof Promise ? await ending : ending;
      if (!executed.ok) return fail(call, executed.failure);
      return finish(call, executed.value);
    } catch (internal) {
      return internalFailure(call, internal);
    } finally {
      inFlight -= 1;
      if (call.heldProbe !== undefined && sharedBreaker) {
        // The probe never got an outcome (no time left, cancelled, the result was not JSON, an
        // internal error): free it so the next call may probe, instead of CIRCUIT_OPEN for everyone.
        const probe = call.heldProbe;
        call.heldProbe = undefined;
        await sharedBreaker.releaseProbe(call.toolName, probe.id).catch(() => undefined);
      }
    }
  }

  return {
    run: (input) => {
      let call: CallState;
      try {
        call = newCall(input, clock);
      } catch (error) {
        return Promise.reject(error as Error);
      }
      return runCall(call);
    },
    execute: async (input) => {
      const call = newCall(input, clock);
      const result = await runCall(call);
      return call.record ?? recordOf(call, result);
    },
    specs: registry.specs,
    names: registry.names,
    getTool: (name) => registry.get(name),
    redactor,
    sessionBreakers,
    clock,
  };
}

/** The developer record of a call that ended with `result`. */
function recordOf(call: CallState, result: ToolResult): ToolCallRecord {
  const record: ToolCallRecord = {
    result,
    traceId: call.traceId,
    callId: call.callId,
    sessionId: call.sessionId,
    runId: call.input.runId,
    requestedName: call.requestedName,
    toolName: call.toolName,
    arguments: call.args,
    sensitiveKeys: call.tool?.definition.sensitive ?? NO_KEYS,
    normalisations: call.normalisations,
    attempts: call.attempts,
    misconfiguration: call.misconfiguration,
    startedAt: call.startedAt,
    durationMs: result.duration_ms,
  };
  if (call.errorRecord) record.error = call.errorRecord;
  return record;
}

/** The call's state before its first step, started at `clock`'s now. */
function newCall(input: ToolRunInput, clock: Clock): CallState {
  const startedAt = clock.now();
  const source: Partial<ToolRunInput> = typeof input === 'object' && input !== null ? input : {};
  // One random draw serves both ids: a call id `call_<32 hex>`, and its 32 hex digits as a W3C-style trace id.
  const randomId = source.traceId === undefined || source.callId === undefined ? randomCallId() : '';
  const requestedName = typeof source.name === 'string' ? source.name : safeString(source.name);
  return {
    input: source,
    startedAt,
    traceId: source.traceId === undefined ? randomId.slice(5) : boundIdentifier(source.traceId),
    callId: source.callId === undefined ? randomId : boundIdentifier(source.callId),
    sessionId: sessionOf(source),
    requestedName,
    toolName: requestedName,
    tool: undefined,
    args: source.args,
    normalisations: [],
    attempts: [],
    errorRecord: undefined,
    misconfiguration: false,
    heldProbe: undefined,
    record: undefined,
  };
}

/** Phrases `error.suggestion` from the failure patterns, when one matches (bounded to 600 characters). */
function phraseSuggestion(patterns: FailurePatternLibrary, toolName: string, error: ToolFailureError): void {
  try {
    const phrased = patterns.suggest({
      toolName,
      code: error.code,
      message: error.message,
      detail: error.detail,
      suggestion: error.suggestion,
      ...(error.fields ? { fields: error.fields } : {}),
    });
    if (phrased !== undefined) error.suggestion = truncateUtf8(phrased, 600);
  } catch {
    // a pattern library that throws keeps the built-in suggestion
  }
}

/** The refusal of a call that found `running` calls of the runtime in flight, its `maxInFlightCalls`: the failure that ends it. */
function refusedOverLimit(call: CallState, running: number, parts: PipelineParts): StepFailure {
  const { maxInFlightCalls } = parts;
  call.errorRecord = {
    kind: 'call_limit',
    status: null,
    message: `${running} calls of this runtime were already in flight (maxInFlightCalls ${maxInFlightCalls})`,
    causes: [],
  };
  return stepFailed({
    code: 'CALL_LIMIT_EXCEEDED',
    message: `${boundToolName(parts.redactor, call.requestedName)} was not run: ${maxInFlightCalls} tool call${maxInFlightCalls === 1 ? ' is' : 's are'} already running`,
    detail: `The runtime runs at most ${maxInFlightCalls} call${maxInFlightCalls === 1 ? '' : 's'} at once; a tool that calls tools recursively reaches this limit.`,
  }).failure;
}

/** The envelope when even building the failure failed: fixed texts only. */
function lastResort(base: { tool_name: string; call_id: string; duration_ms: number; attempts: number; trace_id: string }): ToolFailure {
  return {
    status: 'failed',
    tool_name: truncateUtf8(safeString(base.tool_name), 64),
    call_id: truncateUtf8(safeString(base.call_id), 64),
    duration_ms: base.duration_ms,
    attempts: base.attempts,
    trace_id: truncateUtf8(safeString(base.trace_id), 64),
    error: buildFailure({
      code: 'TOOL_EXCEPTION',
      message: 'The call could not be run',
      detail: 'toolrun failed internally while running this call; the developer log has the details.',
    }),
  };
}

/** The per-session breaker's scope of a call: its `sessionId`, else its `runId` (a run is one conversation), else `'default'`. */
function sessionOf(source: Partial<ToolRunInput>): string {
  if (typeof source.sessionId === 'string') return source.sessionId;
  if (source.sessionId !== undefined) return safeString(source.sessionId);
  return typeof source.runId === 'string' && source.runId !== '' ? source.runId : 'default';
}
