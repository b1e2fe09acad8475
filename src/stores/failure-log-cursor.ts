import type { FailureLogPageOptions } from '../ground/ports/failure-log.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';

/**
 * Checks the options of `FailureLog.listPage` and returns its cursor: `null` for the first page,
 * else the decimal digits (at most `maxDigits` of them) a backend's cursor is made of.
 *
 * @throws ToolrunError `INVALID_OPTIONS` for a `limit` that is not an integer ≥ 1 or an `after`
 * that is not such a cursor.
 */
export function failureLogCursor(options: FailureLogPageOptions, maxDigits: number): string | null {
  if (!Number.isInteger(options.limit) || options.limit < 1) {
    throw new ToolrunError('INVALID_OPTIONS', `listPage needs a limit that is an integer ≥ 1, received ${String(options.limit)}`);
  }
  const after = options.after ?? null;
  if (after !== null && (typeof after !== 'string' || !new RegExp(`^\\d{1,${maxDigits}}$`).test(after))) {
    throw new ToolrunError('INVALID_OPTIONS', `listPage: ${JSON.stringify(after)} is not a cursor of this failure log (pass the next of an earlier page)`);
  }
  return after;
}
