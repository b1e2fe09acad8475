const BRAND = Symbol.for('toolrun.ToolrunError');

/**
 * The stable code of a {@link ToolrunError}. Every code is a programmer's or an operator's problem,
 * never a tool's failure (those are envelopes, with a `FailureCode`):
 *
 * - `INVALID_DEFINITION`: a tool definition is malformed (no name, no `execute`, two tools with one
 *   name, a retry wait longer than a timer can hold); thrown when the runtime is built.
 * - `INVALID_SCHEMA`: a tool's schema does not compile, or holds a `pattern` that cannot be matched
 *   in linear time; thrown when the runtime is built.
 * - `INVALID_OPTIONS`: an option of a toolrun function is out of range or of the wrong type (a
 *   non-positive timeout, neither `tools` nor `runtime` given); thrown by the function called.
 * - `INVALID_CONFIG`: a `toolrun.config` file (or the factory it exports) is not a valid config.
 * - `STORE_UNAVAILABLE`: a store cannot be opened or reached at start-up, its driver package is not
 *   installed, or its schema is newer than this toolrun knows.
 * - `STORE_CONFLICT`: a store lost too many compare-and-set rounds to other writers (the Redis
 *   breaker state under heavy contention); the write did not happen.
 * - `MISSING_DEPENDENCY`: an adapter's optional peer package is not installed (`npm install openai`).
 * - `INVALID_INPUT`: a value handed to a toolrun call at run time is not what it takes (an enqueued
 *   message whose body is not a string); nothing was done.
 * - `UPSTREAM_FAILED`: a server toolrun connects to (an MCP server) could not be started, did not
 *   answer as its protocol requires, or its connection was closed.
 * - `LISTEN_FAILED`: a server toolrun starts (the dashboard, the metrics endpoint, the MCP proxy)
 *   cannot listen on its host and port (in use, not allowed).
 *
 * The `toolrun` command's own usage errors have codes of their own (`USAGE`, `NOT_FOUND`, …), not
 * in this union.
 */
export type ToolrunErrorCode =
  | 'INVALID_DEFINITION'
  | 'INVALID_SCHEMA'
  | 'INVALID_OPTIONS'
  | 'INVALID_CONFIG'
  | 'STORE_UNAVAILABLE'
  | 'STORE_CONFLICT'
  | 'MISSING_DEPENDENCY'
  | 'INVALID_INPUT'
  | 'UPSTREAM_FAILED'
  | 'LISTEN_FAILED';

/**
 * The one error toolrun throws, for programmer errors only: an invalid tool definition, a schema
 * that does not compile, a store that cannot be opened. A tool's failure is never thrown; it is a
 * `ToolResult` with `status: 'failed'`.
 *
 * Switch on {@link ToolrunError.code} (a {@link ToolrunErrorCode}; `Code` is only ever widened by
 * the `toolrun` command for its own usage errors); the message is for people and may change. Use {@link ToolrunError.is} rather than `instanceof`: the brand survives two bundled
 * copies of toolrun.
 *
 * @example
 * ```ts
 * try {
 *   createToolRuntime({ tools });
 * } catch (error) {
 *   if (ToolrunError.is(error) && error.code === 'INVALID_SCHEMA') console.error(error.message);
 *   else throw error;
 * }
 * ```
 */
export class ToolrunError<Code extends string = ToolrunErrorCode> extends Error {
  /** What went wrong, stable across versions. */
  readonly code: Code;
  /** The brand {@link ToolrunError.is} checks (`Symbol.for('toolrun.ToolrunError')`). */
  readonly [BRAND] = true;

  /**
   * @param code - the stable code
   * @param message - one sentence for people: what is wrong and how to fix it
   * @param options - `cause`: the underlying error, kept as `error.cause`
   */
  constructor(code: NoInfer<Code>, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ToolrunError';
    this.code = code;
  }

  /** True for any ToolrunError, even one from another copy of the package. Never throws. */
  static is(value: unknown): value is ToolrunError {
    if (typeof value !== 'object' || value === null) return false;
    try {
      return (value as Record<symbol, unknown>)[BRAND] === true;
    } catch {
      return false;
    }
  }
}
