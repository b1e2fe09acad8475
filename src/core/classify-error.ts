import { parseRetryAfter } from '../policies/retry-after.ts';
import type { FailureCode } from './failure-codes.ts';
import { ToolError, type ToolErrorKind } from './tool-error.ts';

/**
 * What the runtime learned from one thrown value: the failure code, whether a retry can help and
 * whether the work may already have happened.
 */
export interface ClassifiedError {
  code: FailureCode;
  /** The `ToolError` kind, or `exception` for an unexpected throw, `cancelled` for a caller abort. */
  kind: ToolErrorKind | 'exception' | 'cancelled';
  /** Upstream HTTP status, or null. */
  status: number | null;
  /** An environment failure: another attempt after a delay may succeed. */
  transient: boolean;
  /** The work may have taken effect (timeout, connection reset mid-call). */
  ambiguous: boolean;
  /** Broken for every caller (credential rejected, endpoint gone, host unknown): feeds the shared breaker. */
  misconfiguration: boolean;
  retryAfterMs?: number;
  /** The tool's own text (unbounded, unsanitised: the runtime bounds and redacts it). */
  message: string;
  /** A suggestion the tool supplied. */
  suggestion?: string;
}

const NETWORK_CODES: Record<string, { code: FailureCode; ambiguous: boolean; misconfiguration?: boolean; transient?: boolean }> = {
  ECONNRESET: { code: 'NETWORK_ERROR', ambiguous: true },
  EPIPE: { code: 'NETWORK_ERROR', ambiguous: true },
  ECONNABORTED: { code: 'NETWORK_ERROR', ambiguous: true },
  UND_ERR_SOCKET: { code: 'NETWORK_ERROR', ambiguous: true },
  ECONNREFUSED: { code: 'NETWORK_ERROR', ambiguous: false },
  EHOSTUNREACH: { code: 'NETWORK_ERROR', ambiguous: false },
  ENETUNREACH: { code: 'NETWORK_ERROR', ambiguous: false },
  EAI_AGAIN: { code: 'NETWORK_ERROR', ambiguous: false },
  UND_ERR_CONNECT_TIMEOUT: { code: 'TIMEOUT', ambiguous: false },
  ETIMEDOUT: { code: 'TIMEOUT', ambiguous: true },
  ESOCKETTIMEDOUT: { code: 'TIMEOUT', ambiguous: true },
  UND_ERR_HEADERS_TIMEOUT: { code: 'TIMEOUT', ambiguous: true },
  UND_ERR_BODY_TIMEOUT: { code: 'TIMEOUT', ambiguous: true },
  ENOTFOUND: { code: 'UNAVAILABLE', ambiguous: false, misconfiguration: true, transient: false },
  CERT_HAS_EXPIRED: { code: 'UNAVAILABLE', ambiguous: false, misconfiguration: true, transient: false },
  DEPTH_ZERO_SELF_SIGNED_CERT: { code: 'UNAVAILABLE', ambiguous: false, misconfiguration: true, transient: false },
};

function fromKind(kind: ToolErrorKind, status: number | null): Omit<ClassifiedError, 'message' | 'kind' | 'status'> {
  switch (kind) {
    case 'server':
      return { code: 'UNAVAILABLE', transient: true, ambiguous: false, misconfiguration: false };
    case 'timeout':
      return { code: 'TIMEOUT', transient: true, ambiguous: true, misconfiguration: false };
    case 'network':
      return { code: 'NETWORK_ERROR', transient: true, ambiguous: true, misconfiguration: false };
    case 'rate_limit':
      return { code: 'RATE_LIMITED', transient: true, ambiguous: false, misconfiguration: false };
    case 'auth':
      return { code: 'AUTH_EXPIRED', transient: false, ambiguous: false, misconfiguration: true };
    case 'forbidden':
      return { code: 'PERMISSION_DENIED', transient: false, ambiguous: false, misconfiguration: false };
    case 'not_found':
      return { code: 'NOT_FOUND', transient: false, ambiguous: false, misconfiguration: false };
    case 'precondition':
      return { code: 'PRECONDITION_FAILED', transient: false, ambiguous: false, misconfiguration: false };
    case 'invalid_input':
      return { code: 'INVALID_INPUT', transient: false, ambiguous: false, misconfiguration: false };
    case 'misconfigured':
      return { code: status === 401 ? 'AUTH_EXPIRED' : 'UNAVAILABLE', transient: false, ambiguous: false, misconfiguration: true };
    default: {
      const unreachable: never = kind;
      return unreachable;
    }
  }
}

/** Maps an HTTP status to a `ToolError` kind (RFC 9110 §15). */
export function kindFromHttpStatus(status: number): ToolErrorKind | undefined {
  if (status === 401) return 'auth';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not_found';
  if (status === 408 || status === 504) return 'timeout';
  if (status === 409 || status === 412 || status === 428) return 'precondition';
  if (status === 410) return 'misconfigured';
  if (status === 429) return 'rate_limit';
  if (status === 400 || status === 422) return 'invalid_input';
  if (status >= 500 && status <= 599) return 'server';
  return undefined;
}

function readStatus(value: Record<string, unknown>): number | undefined {
  for (const candidate of [value.status, value.statusCode, (value.response as Record<string, unknown> | undefined)?.status]) {
    if (typeof candidate === 'number' && Number.isInteger(candidate) && candidate >= 100 && candidate <= 599) return candidate;
  }
  return undefined;
}

function readHeaders(value: Record<string, unknown>): unknown {
  return value.headers ?? (value.response as Record<string, unknown> | undefined)?.headers;
}

function retryAfterFrom(headers: unknown, nowMs: number): number | undefined {
  if (headers === undefined || headers === null) return undefined;
  if (typeof headers === 'object') return parseRetryAfter(headers as Headers | Record<string, string | string[] | undefined>, nowMs);
  return undefined;
}

function messageOf(value: unknown): string {
  if (value instanceof Error) return value.message;
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) {
    const message = (value as { message?: unknown }).message;
    if (typeof message === 'string') return message;
    const status = readStatus(value as Record<string, unknown>);
    if (status !== undefined) return `HTTP ${status}${typeof (value as { statusText?: unknown }).statusText === 'string' ? ` ${(value as { statusText: string }).statusText}` : ''}`;
  }
  return String(value);
}

/** Walks `cause` links (bounded) looking for a Node/undici error code. */
function findErrorCode(value: unknown): string | undefined {
  let current: unknown = value;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code in NETWORK_CODES) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Classifies anything a tool threw (or rejected with):
 * - a `ToolError`: by its `kind`;
 * - an HTTP response or an error carrying `status`/`statusCode`/`response.status` (fetch `Response`,
 *   axios, the OpenAI SDK): by status, with `Retry-After` read from its headers;
 * - Node and undici network errors by `code`, also inside `cause` (`fetch failed`);
 * - `AbortError`/`TimeoutError`: `TIMEOUT` when the runtime's own timeout fired, `CANCELLED` when the caller aborted;
 * - anything else: a bug in the tool, `TOOL_EXCEPTION`, not retryable.
 *
 * @param abortReason why the attempt's signal was aborted by the runtime, if it was.
 */
export function classifyError(thrown: unknown, context: { nowMs: number; abortReason?: 'timeout' | 'cancelled' }): ClassifiedError {
  if (context.abortReason === 'timeout') {
    return { code: 'TIMEOUT', kind: 'timeout', status: null, transient: true, ambiguous: true, misconfiguration: false, message: 'The tool did not answer within its timeout' };
  }
  if (context.abortReason === 'cancelled') {
    return { code: 'CANCELLED', kind: 'cancelled', status: null, transient: false, ambiguous: true, misconfiguration: false, message: 'The call was cancelled by the caller' };
  }
  if (ToolError.is(thrown)) {
    const status = thrown.status ?? null;
    const base = fromKind(thrown.kind, status);
    const retryAfterMs = thrown.retryAfterMs ?? retryAfterFrom(readHeaders(thrown as unknown as Record<string, unknown>), context.nowMs);
    return {
      ...base,
      kind: thrown.kind,
      status,
      message: thrown.message,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      ...(thrown.suggestion !== undefined ? { suggestion: thrown.suggestion } : {}),
    };
  }
  if (typeof thrown === 'object' && thrown !== null) {
    const record = thrown as Record<string, unknown>;
    const name = (thrown as { name?: unknown }).name;
    if (name === 'TimeoutError') {
      return { code: 'TIMEOUT', kind: 'timeout', status: null, transient: true, ambiguous: true, misconfiguration: false, message: messageOf(thrown) };
    }
    const status = readStatus(record);
    const kind = status === undefined ? undefined : kindFromHttpStatus(status);
    if (status !== undefined && kind !== undefined) {
      const retryAfterMs = retryAfterFrom(readHeaders(record), context.nowMs);
      return { ...fromKind(kind, status), kind, status, message: messageOf(thrown), ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
    }
    const networkCode = findErrorCode(thrown);
    if (networkCode !== undefined) {
      const known = NETWORK_CODES[networkCode]!;
      const misconfiguration = known.misconfiguration ?? false;
      return {
        code: known.code,
        kind: misconfiguration ? 'misconfigured' : known.code === 'TIMEOUT' ? 'timeout' : 'network',
        status: null,
        transient: known.transient ?? true,
        ambiguous: known.ambiguous,
        misconfiguration,
        message: `${networkCode}: ${messageOf(thrown)}`,
      };
    }
    if (name === 'AbortError') {
      return { code: 'CANCELLED', kind: 'cancelled', status: null, transient: false, ambiguous: true, misconfiguration: false, message: 'The work was aborted' };
    }
  }
  return { code: 'TOOL_EXCEPTION', kind: 'exception', status: null, transient: false, ambiguous: false, misconfiguration: false, message: messageOf(thrown) };
}
