const BRAND = Symbol.for('toolrun.ToolError');

/**
 * How a tool failed, as the tool itself knows it.
 *
 * - `server`: 5xx / unavailable (environment, retried)
 * - `timeout`: the call took too long (environment, ambiguous for writes)
 * - `network`: connection refused/reset, DNS (environment; a reset mid-call is ambiguous)
 * - `rate_limit`: 429 (environment, honours `retryAfterMs`)
 * - `auth`: credentials missing, expired or rejected (permission; `onAuthError` may refresh once)
 * - `forbidden`: authenticated but not allowed (permission)
 * - `not_found`: the thing asked for does not exist (logic)
 * - `precondition`: a business rule refused the call (logic)
 * - `invalid_input`: the tool itself rejected its arguments (invalid_parameter)
 * - `misconfigured`: broken for every caller: endpoint gone, host not found (environment, opens the shared breaker)
 */
export type ToolErrorKind =
  | 'server'
  | 'timeout'
  | 'network'
  | 'rate_limit'
  | 'auth'
  | 'forbidden'
  | 'not_found'
  | 'precondition'
  | 'invalid_input'
  | 'misconfigured';

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
  cause?: unknown;
}

/**
 * What a tool throws to say how it failed. The runtime turns it into a classified failure
 * envelope; it never escapes `runtime.run`.
 *
 * @example throw new ToolError({ kind: 'rate_limit', status: 429, retryAfterMs: 2000 })
 */
export class ToolError extends Error {
  readonly kind: ToolErrorKind;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly toolCode: string | undefined;
  readonly suggestion: string | undefined;
  readonly [BRAND] = true;

  constructor(options: ToolErrorOptions) {
    super(options.message ?? options.kind, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ToolError';
    this.kind = options.kind;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.toolCode = options.code;
    this.suggestion = options.suggestion;
  }

  /** True for any ToolError, even one from another copy of the package. */
  static is(value: unknown): value is ToolError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}
