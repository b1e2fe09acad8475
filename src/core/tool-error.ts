import type { ToolErrorKind } from '../ground/failure-cause.ts';

const BRAND = Symbol.for('toolrun.ToolError');
const MODEL_RESPONSE_BRAND = Symbol.for('toolrun.ModelResponseError');

/** Options of {@link ToolError}. */
export interface ToolErrorOptions {
  kind: ToolErrorKind;
  /** Upstream HTTP status, when there was one. */
  status?: number;
  /** What went wrong, for the model (truncated and sanitised before it is shown). */
  message?: string;
  /** Server-requested wait before the next attempt, in milliseconds (from `Retry-After`). */
  retryAfterMs?: number;
  /** A machine-readable code of the tool's own, kept in the developer log. */
  code?: string;
  /** Suggestion for the model that replaces the runtime's default one. */
  suggestion?: string;
  /**
   * Whether this failure is broken for every caller (it then feeds the shared circuit breaker),
   * overriding what the kind implies: `kind: 'auth'` is by default (the tool's own credential was
   * rejected), so a tool that forwards a per-user token sets `false`; a tool whose fixed endpoint
   * answered 404 may set `true`. @defaultValue implied by `kind` (see `classifyError`)
   */
  misconfiguration?: boolean;
  /**
   * Whether another attempt can succeed (the runtime then retries it in-band, within the tool's
   * retry policy), overriding what the kind implies — e.g. `false` for an unavailable service that
   * said it will not come back soon. @defaultValue implied by `kind` (see `classifyError`)
   */
  transient?: boolean;
  /**
   * The upstream response's headers (`Headers`, a `Map` or a plain record), read for `Retry-After`,
   * `retry-after-ms` and rate-limit reset headers when `retryAfterMs` is not given.
   */
  headers?: unknown;
  cause?: unknown;
}

/**
 * What a tool throws to say how it failed. The runtime turns it into a classified failure
 * envelope; it never escapes `runtime.run`.
 *
 * @example
 * ```ts
 * throw new ToolError({ kind: 'rate_limit', status: 429, retryAfterMs: 2000 });
 * ```
 */
export class ToolError extends Error {
  readonly kind: ToolErrorKind;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly toolCode: string | undefined;
  readonly suggestion: string | undefined;
  /** See {@link ToolErrorOptions.misconfiguration}; `undefined` = implied by `kind`. */
  readonly misconfiguration: boolean | undefined;
  /** See {@link ToolErrorOptions.transient}; `undefined` = implied by `kind`. */
  readonly transient: boolean | undefined;
  /** See {@link ToolErrorOptions.headers}. */
  readonly headers: unknown;
  readonly [BRAND] = true;

  constructor(options: ToolErrorOptions) {
    super(options.message ?? options.kind, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ToolError';
    this.kind = options.kind;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.toolCode = options.code;
    this.suggestion = options.suggestion;
    this.misconfiguration = options.misconfiguration;
    this.transient = options.transient;
    this.headers = options.headers;
  }

  /** True for any ToolError, even one from another copy of the package. Never throws (an exotic proxy is not one). */
  static is(value: unknown): value is ToolError {
    return hasBrand(value, BRAND);
  }
}

/**
 * What a model function (or a model adapter such as `createOpenAiChatModel`) throws when the
 * provider answered, but not with a usable model response: no `choices`, a tool call without a
 * name, a body that is not JSON. `classifyError` classifies it as kind `invalid_response`,
 * transient (a sampled answer may be well-formed next time), not a misconfiguration.
 *
 * Recognised by its brand (see {@link ModelResponseError.is}) and, for errors built by other code,
 * by `name === 'ModelResponseError'`.
 *
 * @example
 * ```ts
 * throw new ModelResponseError('the completion has no choices', { cause: body });
 * ```
 */
export class ModelResponseError extends Error {
  readonly [MODEL_RESPONSE_BRAND] = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ModelResponseError';
  }

  /** True for any ModelResponseError, even one from another copy of the package. Never throws. */
  static is(value: unknown): value is ModelResponseError {
    return hasBrand(value, MODEL_RESPONSE_BRAND);
  }
}

function hasBrand(value: unknown, brand: symbol): boolean {
  if (typeof value !== 'object' || value === null) return false;
  try {
    return (value as Record<symbol, unknown>)[brand] === true;
  } catch {
    return false;
  }
}
