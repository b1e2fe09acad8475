const BRAND = Symbol.for('toolrun.ToolrunError');

/**
 * The one error toolrun throws, for programmer errors only: an invalid tool definition, a schema
 * that does not compile, a store that cannot be opened. A tool's failure is never thrown; it is a
 * {@link ToolResult}.
 *
 * `code` is stable (`INVALID_DEFINITION`, `INVALID_SCHEMA`, `INVALID_OPTIONS`, `STORE_UNAVAILABLE`, ...).
 * Use {@link ToolrunError.is} rather than `instanceof`: the brand survives two bundled copies.
 */
export class ToolrunError extends Error {
  readonly code: string;
  readonly [BRAND] = true;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ToolrunError';
    this.code = code;
  }

  /** True for any ToolrunError, even one from another copy of the package. */
  static is(value: unknown): value is ToolrunError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}
