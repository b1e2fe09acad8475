import { isRateLimitExhausted, parseRateLimitReset } from '../policies/rate-limit-headers.ts';
import { readHeaderValue } from '../policies/header-source.ts';
import { MAX_RETRY_AFTER_MS, parseRetryAfter } from '../policies/retry-after.ts';
import type { FailureKind, ToolErrorKind } from '../ground/failure-cause.ts';
import type { FailureCode } from '../ground/failure-codes.ts';
import { ModelResponseError, ToolError } from './tool-error.ts';

/** The kinds {@link classifyError} gives: a {@link ToolErrorKind}, `exception` (a bug, not retried), `cancelled` or `invalid_response` (see `ModelResponseError`). */
export type ClassifiedKind = Extract<FailureKind, ToolErrorKind | 'exception' | 'cancelled' | 'invalid_response'>;

/**
 * What the runtime learned from one thrown value: the failure code, whether a retry can help and
 * whether the work may already have happened.
 */
export interface ClassifiedError {
  code: FailureCode;
  /** See {@link ClassifiedKind}. */
  kind: ClassifiedKind;
  /** Upstream HTTP status, or null. */
  status: number | null;
  /** An environment failure: another attempt after a delay may succeed. */
  transient: boolean;
  /** The work may have taken effect (timeout, connection reset mid-call). */
  ambiguous: boolean;
  /**
   * Broken for every caller, not only for this call: it feeds the shared circuit breaker, which
   * blocks every run. A failure that this call's own arguments may have caused is never one, so a
   * bad id or URL from the model cannot switch a tool off for everyone. The rule, by the
   * `target` of {@link ClassifyErrorContext}:
   *
   * | failure | `resource-from-arguments` (default) | `fixed` (model calls) | `url-from-arguments` |
   * |---|---|---|---|
   * | `ToolError` `misconfigured`, or `misconfiguration: true` | yes | yes | yes |
   * | `ToolError` with `misconfiguration: false` | no | no | no |
   * | 401, 402, 407 (credential or account rejected), `insufficient_quota` 429 | yes | yes | no |
   * | 403, 404, 410 (may be the model's id or resource) | no | yes | no |
   * | `ENOTFOUND`, TLS certificate errors (the host) | no | yes | no |
   * | a missing API key or dependency (`AI_LoadAPIKeyError`, `MISSING_DEPENDENCY`) | yes | yes | yes |
   * | anything else (5xx, 429, timeouts, resets, 400/422, bugs) | no | no | no |
   */
  misconfiguration: boolean;
  /** The wait the server asked for before another attempt, in ms (0 to 24 h), when it asked for one. */
  retryAfterMs?: number;
  /** The tool's own text (unbounded, unsanitised: the runtime bounds and redacts it). */
  message: string;
  /** A suggestion the tool supplied. */
  suggestion?: string;
}

/**
 * Where the target of the failed call came from, which decides whether a failure tied to the
 * target (unknown host, 404, 403) is broken for every caller or only for this call:
 * - `resource-from-arguments` (the default): the tool's host and credential are its own
 *   configuration, the resource (an id, a path) may come from the model's arguments;
 * - `fixed`: host, endpoint, resource and credential are all configuration (a model API, a tool
 *   that always calls the same URL): a 403, 404, 410 or an unknown host is broken for everyone;
 * - `url-from-arguments`: the arguments choose the host too (a URL fetcher): no status or network
 *   error is broken for everyone; only a `ToolError` that says so is.
 */
export type ErrorTarget = 'resource-from-arguments' | 'fixed' | 'url-from-arguments';

/** The second argument of {@link classifyError}. */
export interface ClassifyErrorContext {
  /** The current time in ms since the epoch (from the injected `Clock`), for HTTP-dates and epoch reset headers. */
  nowMs: number;
  /** Why the attempt's signal was aborted by the runtime, if it was: it decides the outcome whatever was thrown. */
  abortReason?: 'timeout' | 'cancelled';
  /** See {@link ErrorTarget}. @defaultValue `'resource-from-arguments'` */
  target?: ErrorTarget;
}

type Outcome = Omit<ClassifiedError, 'message' | 'status' | 'retryAfterMs' | 'suggestion'>;

interface NetworkCodeInfo {
  code: FailureCode;
  kind: 'network' | 'timeout';
  ambiguous: boolean;
  transient: boolean;
  /** The failure is about the target host (unknown, bad certificate): broken for everyone only when the host is fixed. */
  hostFailure?: true;
}

const network = (ambiguous: boolean): NetworkCodeInfo => ({ code: 'NETWORK_ERROR', kind: 'network', ambiguous, transient: true });
const timeout = (ambiguous: boolean): NetworkCodeInfo => ({ code: 'TIMEOUT', kind: 'timeout', ambiguous, transient: true });
const badHost: NetworkCodeInfo = { code: 'UNAVAILABLE', kind: 'network', ambiguous: false, transient: false, hostFailure: true };

const NETWORK_CODES: Readonly<Record<string, NetworkCodeInfo>> = {
  ECONNRESET: network(true),
  EPIPE: network(true),
  ECONNABORTED: network(true),
  UND_ERR_SOCKET: network(true),
  UND_ERR_CLOSED: network(true),
  ECONNREFUSED: network(false),
  EHOSTUNREACH: network(false),
  EHOSTDOWN: network(false),
  ENETUNREACH: network(false),
  ENETDOWN: network(false),
  EAI_AGAIN: network(false),
  UND_ERR_CONNECT_TIMEOUT: timeout(false),
  ETIMEDOUT: timeout(true),
  ESOCKETTIMEDOUT: timeout(true),
  UND_ERR_HEADERS_TIMEOUT: timeout(true),
  UND_ERR_BODY_TIMEOUT: timeout(true),
  ENOTFOUND: badHost,
  EAI_NONAME: badHost,
  CERT_HAS_EXPIRED: badHost,
  CERT_NOT_YET_VALID: badHost,
  DEPTH_ZERO_SELF_SIGNED_CERT: badHost,
  SELF_SIGNED_CERT_IN_CHAIN: badHost,
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: badHost,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: badHost,
  ERR_TLS_CERT_ALTNAME_INVALID: badHost,
};

/** Error names (Vercel AI SDK, this package) meaning the provider answered with something that is not a model response. */
const INVALID_RESPONSE_NAMES = new Set([
  'ModelResponseError',
  'AI_InvalidResponseDataError',
  'AI_JSONParseError',
  'AI_EmptyResponseBodyError',
  'AI_NoContentGeneratedError',
  'AI_TypeValidationError',
  'AI_NoSuchToolError',
  'AI_InvalidToolArgumentsError',
  'AI_InvalidToolInputError',
]);

/** Error-body `type`s of the Anthropic API (and `server_error` of OpenAI), for errors that carry a body but no status (a streamed error). */
const BODY_TYPES: Readonly<Record<string, ToolErrorKind>> = {
  overloaded_error: 'server',
  api_error: 'server',
  server_error: 'server',
  rate_limit_error: 'rate_limit',
  authentication_error: 'auth',
  permission_error: 'forbidden',
  not_found_error: 'not_found',
  invalid_request_error: 'invalid_input',
  request_too_large: 'invalid_input',
};

/** How many linked errors (`cause`, `errors`, `lastError`, …) are looked at, and how deep. */
const MAX_NODES = 32;
const MAX_DEPTH = 8;
/** The longest text taken from an inner error to complete the outer message. */
const MAX_INNER_MESSAGE_LENGTH = 1024;

/** Maps an HTTP status to a `ToolError` kind (RFC 9110 §15); `undefined` for a status with no failure meaning here (1xx–3xx, unusual 4xx). */
export function kindFromHttpStatus(status: number): ToolErrorKind | undefined {
  if (status === 401 || status === 407) return 'auth';
  if (status === 402 || status === 403) return 'forbidden';
  if (status === 404 || status === 410) return 'not_found';
  if (status === 408 || status === 504) return 'timeout';
  if (status === 409 || status === 412 || status === 428) return 'precondition';
  if (status === 429) return 'rate_limit';
  if (status === 400 || status === 413 || status === 422) return 'invalid_input';
  if (status >= 500 && status <= 599) return 'server';
  return undefined;
}

function fromKind(kind: ToolErrorKind, status: number | null): Outcome {
  switch (kind) {
    case 'server':
      return { code: 'UNAVAILABLE', kind, transient: true, ambiguous: false, misconfiguration: false };
    case 'timeout':
      return { code: 'TIMEOUT', kind, transient: true, ambiguous: true, misconfiguration: false };
    case 'network':
      return { code: 'NETWORK_ERROR', kind, transient: true, ambiguous: true, misconfiguration: false };
    case 'rate_limit':
      return { code: 'RATE_LIMITED', kind, transient: true, ambiguous: false, misconfiguration: false };
    case 'auth':
      return { code: 'AUTH_EXPIRED', kind, transient: false, ambiguous: false, misconfiguration: true };
    case 'forbidden':
      return { code: 'PERMISSION_DENIED', kind, transient: false, ambiguous: false, misconfiguration: false };
    case 'not_found':
      return { code: 'NOT_FOUND', kind, transient: false, ambiguous: false, misconfiguration: false };
    case 'precondition':
      return { code: 'PRECONDITION_FAILED', kind, transient: false, ambiguous: false, misconfiguration: false };
    case 'invalid_input':
      return { code: 'INVALID_INPUT', kind, transient: false, ambiguous: false, misconfiguration: false };
    case 'misconfigured':
      return { code: status === 401 ? 'AUTH_EXPIRED' : 'UNAVAILABLE', kind, transient: false, ambiguous: false, misconfiguration: true };
    default: {
      const unreachable: never = kind;
      return unreachable;
    }
  }
}

/** Reads a property; `undefined` when the getter (or a proxy trap) throws. */
function read(value: unknown, key: PropertyKey): unknown {
  if ((typeof value !== 'object' || value === null) && typeof value !== 'function') return undefined;
  try {
    return (value as Record<PropertyKey, unknown>)[key];
  } catch {
    return undefined;
  }
}

function readString(value: unknown, key: PropertyKey): string | undefined {
  const field = read(value, key);
  return typeof field === 'string' ? field : undefined;
}

/** The error's class name (`APIConnectionTimeoutError`…) when `name` is the generic `Error`. */
function namesOf(value: unknown): string[] {
  const names: string[] = [];
  const name = readString(value, 'name');
  if (name !== undefined) names.push(name);
  const constructorName = readString(read(value, 'constructor'), 'name');
  if (constructorName !== undefined && constructorName !== name) names.push(constructorName);
  return names;
}

/** Text of any value, never throwing (null-prototype objects, revoked proxies, symbols). */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  const message = readString(value, 'message');
  if (message !== undefined) return message;
  if (typeof value === 'object' && value !== null) {
    const status = statusOf(value);
    if (status !== undefined) {
      const statusText = readString(value, 'statusText');
      return `HTTP ${status}${statusText ? ` ${statusText}` : ''}`;
    }
  }
  try {
    return String(value);
  } catch {
    return typeof value === 'object' && value !== null ? '[an object that cannot be printed]' : `[a thrown ${typeof value}]`;
  }
}

function isHttpStatus(candidate: unknown): candidate is number {
  return typeof candidate === 'number' && Number.isInteger(candidate) && candidate >= 100 && candidate <= 599;
}

function statusOf(value: unknown): number | undefined {
  for (const candidate of [read(value, 'status'), read(value, 'statusCode'), read(read(value, 'response'), 'status')]) {
    if (isHttpStatus(candidate)) return candidate;
  }
  return undefined;
}

function headersOf(value: unknown): unknown {
  return read(value, 'headers') ?? read(value, 'responseHeaders') ?? read(read(value, 'response'), 'headers');
}

/** The linked errors of one node, most informative first. */
function childrenOf(value: unknown): unknown[] {
  const children: unknown[] = [];
  const lastError = read(value, 'lastError');
  if (lastError !== undefined) children.push(lastError);
  const cause = read(value, 'cause');
  if (cause !== undefined) children.push(cause);
  const errors = read(value, 'errors');
  if (Array.isArray(errors)) {
    try {
      for (const error of errors.slice(0, MAX_NODES)) children.push(error);
    } catch {
      // an exotic array: its elements are not looked at
    }
  }
  return children;
}

/** The `code` of an OpenAI-style error, or of its body: `insufficient_quota`, `invalid_api_key`… */
function apiErrorCodes(value: unknown): string[] {
  const codes: string[] = [];
  for (const holder of [value, read(value, 'error'), read(read(value, 'error'), 'error')]) {
    for (const key of ['code', 'type']) {
      const code = readString(holder, key);
      if (code !== undefined) codes.push(code);
    }
  }
  return codes;
}

/** A finding about one node: what it says, and how sure it is (a weak finding yields to a strong one deeper down). */
interface Finding {
  node: unknown;
  strong: boolean;
  classify: (context: ResolvedContext) => Omit<ClassifiedError, 'message'> & { message?: string };
}

interface ResolvedContext {
  nowMs: number;
  target: ErrorTarget;
}

function explicitRetryAfter(value: number | undefined): number | undefined {
  if (value === undefined || typeof value !== 'number' || Number.isNaN(value) || value < 0) return undefined;
  return Math.min(Math.ceil(value), MAX_RETRY_AFTER_MS);
}

/** The server's wait: `retry-after-ms`, then `Retry-After`, then (only when rate limited) the rate-limit reset headers. */
function retryAfterFrom(headers: unknown, nowMs: number, rateLimited: boolean): number | undefined {
  if (headers === undefined || headers === null || typeof headers !== 'object') return undefined;
  const explicit = parseRetryAfter(headers as Parameters<typeof parseRetryAfter>[0], nowMs);
  if (explicit !== undefined) return explicit;
  return rateLimited ? parseRateLimitReset(headers, nowMs) : undefined;
}

/** Applies the misconfiguration rule of {@link ClassifiedError.misconfiguration} to a status. */
function misconfigurationOfStatus(status: number, quotaExhausted: boolean, target: ErrorTarget): boolean {
  if (target === 'url-from-arguments') return false;
  if (status === 401 || status === 402 || status === 407 || quotaExhausted) return true;
  if (target === 'fixed') return status === 403 || status === 404 || status === 410;
  return false;
}

function httpFinding(node: unknown, status: number): Finding | undefined {
  const statusKind = kindFromHttpStatus(status);
  if (statusKind === undefined) return undefined;
  return {
    node,
    strong: true,
    classify: ({ nowMs, target }) => {
      const headers = headersOf(node);
      const kind: ToolErrorKind = status === 403 && isRateLimitExhausted(headers) ? 'rate_limit' : statusKind;
      const quotaExhausted = status === 429 && apiErrorCodes(node).includes('insufficient_quota');
      const base = fromKind(kind, status);
      let transient = quotaExhausted ? false : base.transient;
      let misconfiguration = kind === 'rate_limit' && !quotaExhausted ? false : misconfigurationOfStatus(status, quotaExhausted, target);
      // The server's own word on retrying (OpenAI, Anthropic) beats the status.
      const shouldRetry = readHeaderValue(headers, 'x-should-retry');
      if (shouldRetry === 'true') {
        transient = true;
        misconfiguration = false;
      } else if (shouldRetry === 'false') transient = false;
      const retryAfterMs = retryAfterFrom(headers, nowMs, kind === 'rate_limit');
      return { ...base, transient, misconfiguration, status, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
    },
  };
}

function toolErrorFinding(node: ToolError): Finding {
  return {
    node,
    strong: true,
    classify: ({ nowMs, target }) => {
      const kind = read(node, 'kind') as ToolErrorKind;
      const rawStatus = read(node, 'status');
      const status = isHttpStatus(rawStatus) ? rawStatus : null;
      const base = fromKind(isToolErrorKind(kind) ? kind : 'server', status);
      const override = read(node, 'misconfiguration');
      const misconfiguration = typeof override === 'boolean' ? override : misconfigurationOfKind(base.kind as ToolErrorKind, target);
      const transient = read(node, 'transient');
      const retryAfterMs =
        explicitRetryAfter(read(node, 'retryAfterMs') as number | undefined) ?? retryAfterFrom(headersOf(node), nowMs, kind === 'rate_limit');
      const suggestion = readString(node, 'suggestion');
      return {
        ...base,
        misconfiguration,
        ...(typeof transient === 'boolean' ? { transient } : {}),
        status,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
        ...(suggestion !== undefined ? { suggestion } : {}),
      };
    },
  };
}

const TOOL_ERROR_KINDS = new Set<string>([
  'server',
  'timeout',
  'network',
  'rate_limit',
  'auth',
  'forbidden',
  'not_found',
  'precondition',
  'invalid_input',
  'misconfigured',
]);

function isToolErrorKind(kind: unknown): kind is ToolErrorKind {
  return typeof kind === 'string' && TOOL_ERROR_KINDS.has(kind);
}

const constant =
  (outcome: Outcome, message?: string): Finding['classify'] =>
  () => ({ ...outcome, status: null, ...(message !== undefined ? { message } : {}) });

/** The brand of `ToolrunError`, read without `ToolrunError.is` (which a throwing proxy trap could escape). */
const TOOLRUN_ERROR_BRAND = Symbol.for('toolrun.ToolrunError');

/** The misconfiguration rule of {@link ClassifiedError.misconfiguration} for a kind without a status. */
function misconfigurationOfKind(kind: ToolErrorKind, target: ErrorTarget): boolean {
  if (kind === 'misconfigured') return true;
  if (kind === 'auth') return target !== 'url-from-arguments';
  if (kind === 'forbidden' || kind === 'not_found') return target === 'fixed';
  return false;
}

/** What one node of the error graph says on its own, or `undefined`. */
function findingOf(node: unknown): Finding | undefined {
  if (typeof node !== 'object' || node === null) return undefined;
  if (ToolError.is(node)) return toolErrorFinding(node);
  if (ModelResponseError.is(node)) return { node, strong: true, classify: constant(INVALID_RESPONSE) };
  const names = namesOf(node);
  const has = (name: string) => names.includes(name);
  if (names.some((name) => INVALID_RESPONSE_NAMES.has(name))) return { node, strong: true, classify: constant(INVALID_RESPONSE) };
  if (has('TimeoutError') || has('APIConnectionTimeoutError')) {
    return { node, strong: true, classify: constant({ code: 'TIMEOUT', kind: 'timeout', transient: true, ambiguous: true, misconfiguration: false }) };
  }
  if (has('APIUserAbortError')) return { node, strong: true, classify: constant(CANCELLED, 'The call was aborted') };
  if (has('AI_LoadAPIKeyError'))
    return { node, strong: true, classify: constant({ code: 'AUTH_EXPIRED', kind: 'auth', transient: false, ambiguous: false, misconfiguration: true }) };
  if (has('AI_NoSuchModelError') || (read(node, TOOLRUN_ERROR_BRAND) === true && read(node, 'code') === 'MISSING_DEPENDENCY')) {
    return {
      node,
      strong: true,
      classify: constant({ code: 'UNAVAILABLE', kind: 'misconfigured', transient: false, ambiguous: false, misconfiguration: true }),
    };
  }
  const status = statusOf(node);
  if (status !== undefined) {
    const finding = httpFinding(node, status);
    if (finding) return finding;
  }
  const code = read(node, 'code');
  if (typeof code === 'string' && Object.hasOwn(NETWORK_CODES, code)) {
    const known = NETWORK_CODES[code]!;
    return {
      node,
      strong: true,
      classify: ({ target }) => {
        const misconfiguration = known.hostFailure === true && target === 'fixed';
        return {
          code: known.code,
          kind: misconfiguration ? 'misconfigured' : known.kind,
          transient: known.transient,
          ambiguous: known.ambiguous,
          misconfiguration,
          status: null,
          message: textOf(node).includes(code) ? textOf(node) : `${code}: ${textOf(node)}`,
        };
      },
    };
  }
  const bodyType = apiErrorCodes(node).find((type) => Object.hasOwn(BODY_TYPES, type));
  if (bodyType !== undefined) {
    const kind = BODY_TYPES[bodyType]!;
    return {
      node,
      strong: true,
      classify: ({ target }) => ({ ...fromKind(kind, null), misconfiguration: misconfigurationOfKind(kind, target), status: null }),
    };
  }
  // Weak findings: a more specific cause deeper down wins over them.
  if (has('AI_APICallError')) {
    const retryable = read(node, 'isRetryable') === true;
    return {
      node,
      strong: false,
      classify: constant({ code: 'NETWORK_ERROR', kind: 'network', transient: retryable, ambiguous: true, misconfiguration: false }),
    };
  }
  if (has('APIConnectionError'))
    return { node, strong: false, classify: constant({ code: 'NETWORK_ERROR', kind: 'network', transient: true, ambiguous: true, misconfiguration: false }) };
  if (has('AbortError')) return { node, strong: false, classify: constant(CANCELLED, 'The work was aborted') };
  return undefined;
}

const CANCELLED: Outcome = { code: 'CANCELLED', kind: 'cancelled', transient: false, ambiguous: true, misconfiguration: false };
const INVALID_RESPONSE: Outcome = { code: 'TOOL_EXCEPTION', kind: 'invalid_response', transient: true, ambiguous: false, misconfiguration: false };
const EXCEPTION: Outcome = { code: 'TOOL_EXCEPTION', kind: 'exception', transient: false, ambiguous: false, misconfiguration: false };

/** Walks the error graph breadth-first (bounded, cycle-safe): the first strong finding, else the first weak one. */
function find(thrown: unknown): Finding | undefined {
  const seen = new Set<unknown>();
  let level: unknown[] = [thrown];
  let weak: Finding | undefined;
  let visited = 0;
  for (let depth = 0; depth < MAX_DEPTH && level.length > 0; depth++) {
    const next: unknown[] = [];
    for (const node of level) {
      if (typeof node !== 'object' || node === null || seen.has(node)) continue;
      if (visited++ >= MAX_NODES) return weak;
      seen.add(node);
      const finding = findingOf(node);
      if (finding?.strong) return finding;
      weak ??= finding;
      next.push(...childrenOf(node));
    }
    level = next;
  }
  return weak;
}

/** The outer message, completed with the deciding inner error's when the outer one does not already say it (`fetch failed: getaddrinfo ENOTFOUND…`). */
function composeMessage(thrown: unknown, finding: Finding | undefined, own: string | undefined): string {
  const outer = textOf(thrown);
  const inner = own ?? (finding === undefined ? undefined : textOf(finding.node));
  if (finding === undefined || finding.node === thrown || inner === undefined || inner === '' || outer.includes(inner)) return own ?? outer;
  const bounded = inner.length > MAX_INNER_MESSAGE_LENGTH ? `${inner.slice(0, MAX_INNER_MESSAGE_LENGTH)}…` : inner;
  const lead = outer.replace(/[.:]+\s*$/, '');
  return lead === '' ? bounded : `${lead}: ${bounded}`;
}

/**
 * Classifies anything a tool or a model threw (or rejected with). Looks at the thrown value and at
 * the errors linked to it — `cause`, `AggregateError.errors`, the Vercel AI SDK's
 * `RetryError.lastError` — breadth-first, up to 8 levels and 32 errors, and decides by the first
 * that says something:
 * - a `ToolError`: by its `kind` (and `misconfiguration`, `retryAfterMs` or `headers`);
 * - a `ModelResponseError` (or a Vercel AI SDK invalid-response error): kind `invalid_response`, transient;
 * - `TimeoutError`, the OpenAI/Anthropic SDK's `APIConnectionTimeoutError`: `TIMEOUT`; their
 *   `APIUserAbortError`: `CANCELLED`; `AI_LoadAPIKeyError` (no API key): `AUTH_EXPIRED`, a misconfiguration;
 * - an HTTP status in `status`, `statusCode` or `response.status` (fetch `Response`, axios, the
 *   OpenAI and Anthropic SDKs' `APIError`, the AI SDK's `APICallError`): by status (see
 *   {@link kindFromHttpStatus}; 529 "overloaded" is a transient 5xx; a 403 whose rate-limit remaining
 *   header is 0 is a rate limit; a 429 `insufficient_quota` is not transient and is a
 *   misconfiguration); the server's `x-should-retry: true|false` overrides `transient`;
 * - a Node/undici network error `code` (`ECONNRESET`, `ENOTFOUND`…), also inside `cause` (`fetch failed`);
 * - an Anthropic/OpenAI error-body `type` (`overloaded_error`…) when there is no status;
 * - weaker hints, used only when nothing more specific is found: the SDKs' `APIConnectionError`
 *   and the AI SDK's `APICallError` without a status (network errors; `isRetryable` is kept), `AbortError` (cancelled);
 * - anything else: a bug, `TOOL_EXCEPTION` (kind `exception`), not retryable.
 *
 * `retryAfterMs` comes from an explicit `ToolError.retryAfterMs`, else the headers (`headers`,
 * `responseHeaders`, `response.headers`; a `Headers` object, a `Map` or a plain record) of the
 * error that decided: `retry-after-ms`, `Retry-After`, and for a rate limit the reset headers
 * (`x-ratelimit-reset-requests`/`-tokens`, `x-ratelimit-reset`, `RateLimit`…; see
 * `parseRateLimitReset`). It is a whole number of ms from 0 to 24 h; a negative or `NaN` value is dropped.
 *
 * For `misconfiguration` (what feeds the shared breaker) see {@link ClassifiedError.misconfiguration}.
 *
 * Never throws, whatever was thrown: a symbol, a BigInt, a null-prototype object, getters that
 * throw, a revoked proxy — an unreadable value is a `TOOL_EXCEPTION`.
 */
export function classifyError(thrown: unknown, context: ClassifyErrorContext): ClassifiedError {
  if (context.abortReason === 'timeout') {
    return {
      code: 'TIMEOUT',
      kind: 'timeout',
      status: null,
      transient: true,
      ambiguous: true,
      misconfiguration: false,
      message: 'The tool did not answer within its timeout',
    };
  }
  if (context.abortReason === 'cancelled') {
    return {
      code: 'CANCELLED',
      kind: 'cancelled',
      status: null,
      transient: false,
      ambiguous: true,
      misconfiguration: false,
      message: 'The call was cancelled by the caller',
    };
  }
  try {
    const finding = find(thrown);
    const resolved: ResolvedContext = { nowMs: context.nowMs, target: context.target ?? 'resource-from-arguments' };
    const { message: own, ...outcome } = finding ? finding.classify(resolved) : { ...EXCEPTION, status: null, message: undefined };
    return { ...outcome, message: composeMessage(thrown, finding, own) };
  } catch {
    return { ...EXCEPTION, status: null, message: 'A value was thrown that could not be read' };
  }
}

/**
 * {@link classifyError} for a model call: the target is `fixed` (the model's endpoint, name and
 * key are configuration, not the run's), so 401, 403, 404 and an unknown host are
 * misconfigurations — a rejected key or a wrong model name opens the shared model breaker — while
 * 429, 5xx (and 529 overloaded), timeouts and network errors are transient with the provider's
 * `Retry-After` or rate-limit reset as `retryAfterMs`, 400/413/422 are this run's request
 * (`INVALID_INPUT`, not transient), and an invalid answer is kind `invalid_response`, transient.
 * Never throws.
 */
export function classifyModelError(thrown: unknown, context: Omit<ClassifyErrorContext, 'target'>): ClassifiedError {
  return classifyError(thrown, { ...context, target: 'fixed' });
}
