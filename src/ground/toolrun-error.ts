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
 * - `METRICS_UNAVAILABLE`: the metrics endpoint cannot listen on its port.
 * - `USAGE`, `NOT_FOUND`, `INVALID_INPUT`, `UNSUPPORTED_BACKEND`: the `toolrun` command's usage
 *   errors (a bad flag, an unknown file or entry id, an invalid message, a store URL it cannot open);
 *   the command exits with code 2.
 */
export type ToolrunErrorCode =
  | 'INVALID_DEFINITION'
  | 'INVALID_SCHEMA'
  | 'INVALID_OPTIONS'
  | 'INVALID_CONFIG'
  | 'STORE_UNAVAILABLE'
  | 'STORE_CONFLICT'
  | 'MISSING_DEPENDENCY'
  | 'METRICS_UNAVAILABLE'
  | 'USAGE'
  | 'NOT_FOUND'
  | 'INVALID_INPUT'
  | 'UNSUPPORTED_BACKEND';

/**
 * The one error toolrun throws, for programmer errors only: an invalid tool definition, a schema
 * that does not compile, a store that cannot be opened. A tool's failure is never thrown; it is a
 * `ToolResult` with `status: 'failed'`.
 *
 * Switch on {@link ToolrunError.code} (a {@link ToolrunErrorCode}); the message is for people and
 * may change. Use {@link ToolrunError.is} rather than `instanceof`: the brand survives two bundled
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
export class ToolrunError extends Error {
  /** What went wrong, stable across versions. */
  readonly code: ToolrunErrorCode;
  /** The brand {@link ToolrunError.is} checks (`Symbol.for('toolrun.ToolrunError')`). */
  readonly [BRAND] = true;

  /**
   * @param code - the stable code
   * @param message - one sentence for people: what is wrong and how to fix it
   * @param options - `cause`: the underlying error, kept as `error.cause`
   */
  constructor(code: ToolrunErrorCode, message: string, options?: { cause?: unknown }) {
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
