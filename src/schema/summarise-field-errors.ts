import type { FailureCode } from '../ground/failure-codes.ts';
import type { FieldError } from '../ground/tool-result.ts';
import { truncateText } from './preview.ts';

/** Bound of the envelope's `detail`, in characters. */
export const DETAIL_MAX_CHARS = 1024;
/** Bound of the envelope's `suggestion`, in characters. */
export const SUGGESTION_MAX_CHARS = 600;

/** A field error with what the summary needs: its own failure code, a headline and a fix. */
export interface DescribedFieldError extends FieldError {
  /** The envelope code this problem alone would get (`MISSING_REQUIRED`, `DATE_FORMAT_ERROR`, ...). */
  code: FailureCode;
  /** Short statement for the one-line message: `date has the wrong format`. */
  headline: string;
  /** What to change, as a verb phrase: `convert date to YYYY-MM-DD, e.g. 2024-01-15`. */
  fix: string;
}

/** The validation failure, as the `ok: false` branch of `ValidationResult` carries it. */
export interface ValidationFailure {
  ok: false;
  code: FailureCode;
  message: string;
  detail: string;
  suggestion: string;
  fields: FieldError[];
  /** Problems found but not described in `fields` (beyond the describer's cap); absent when none. */
  omittedFields?: number;
}

/**
 * Summarises field errors into one failure: duplicates removed (same path, problem and message);
 * `code` is the fields' common code (`INVALID_FORMAT` when dates and other formats mix), else
 * `SCHEMA_VALIDATION_FAILED`; `message` is one line; `detail` joins every field message (bounded to
 * 1,024 characters); `suggestion` joins the fixes and ends with "and call again" (bounded to 600).
 *
 * An empty list still yields a failure, with one root field (`path: ""`), so every invalid
 * instance names at least one field.
 *
 * `notDescribed` (problems found but left out of `described`) is added to the count the message
 * states and returned as `omittedFields`. The texts are joined only up to their bounds, so
 * thousands of fields cost no more text than a few.
 */
export function summariseFieldErrors(described: readonly DescribedFieldError[], options: { notDescribed?: number } = {}): ValidationFailure {
  const unique = deduplicate(described);
  if (unique.length === 0) {
    unique.push({
      path: '',
      problem: 'other',
      message: 'the arguments do not match the schema',
      code: 'SCHEMA_VALIDATION_FAILED',
      headline: 'the arguments do not match the schema',
      fix: 'check the arguments against the tool schema',
    });
  }
  const code = commonCode(unique.map((field) => field.code));
  const first = unique[0];
  const notDescribed = Math.max(0, options.notDescribed ?? 0);
  const total = unique.length + notDescribed;
  const message =
    total === 1 && first !== undefined
      ? first.headline
      : `${total} problems with the arguments: ${joinBounded(distinct(unique.map((field) => field.headline)), '; ', 200)}`;
  const detail = joinBounded(
    unique.map((field) => field.message ?? field.headline),
    '; ',
    DETAIL_MAX_CHARS,
  );
  const fixes = distinct(unique.map((field) => field.fix));
  const suggestion = `${capitalise(joinBounded(fixes, '; ', SUGGESTION_MAX_CHARS - 20))}, and call again`;
  return {
    ok: false,
    code,
    message,
    detail,
    suggestion,
    fields: unique.map(({ code: _code, headline: _headline, fix: _fix, ...field }) => field),
    ...(notDescribed > 0 ? { omittedFields: notDescribed } : {}),
  };
}

function deduplicate(described: readonly DescribedFieldError[]): DescribedFieldError[] {
  const seen = new Set<string>();
  const result: DescribedFieldError[] = [];
  for (const field of described) {
    const key = `${field.path}\u0000${field.problem}\u0000${field.message ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    result.push(field);
  }
  return result;
}

function commonCode(codes: FailureCode[]): FailureCode {
  const set = new Set(codes);
  if (set.size === 1) return codes[0] ?? 'SCHEMA_VALIDATION_FAILED';
  if (set.size === 2 && set.has('DATE_FORMAT_ERROR') && set.has('INVALID_FORMAT')) return 'INVALID_FORMAT';
  return 'SCHEMA_VALIDATION_FAILED';
}

/** `parts.join(separator)` cut to `maxChars` (see `truncateText`), without building the whole join. */
function joinBounded(parts: readonly string[], separator: string, maxChars: number): string {
  let text = '';
  for (let index = 0; index < parts.length; index++) {
    text += (index > 0 ? separator : '') + parts[index];
    if (text.length > maxChars) break;
  }
  return truncateText(text, maxChars);
}

function distinct(values: string[]): string[] {
  return [...new Set(values)];
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
