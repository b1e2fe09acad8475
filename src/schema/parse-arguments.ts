import type { FieldError } from '../ground/tool-result.ts';
import { describeJsonPointer, toJsonPointer } from './json-pointer.ts';
import { diagnoseJson } from './diagnose-json.ts';
import { jsonTypeOf, previewJson, truncateText } from './preview.ts';

/** Bound of the raw-text preview in a malformed-arguments failure, in characters. */
export const ARGUMENTS_PREVIEW_MAX_CHARS = 200;

/**
 * A failure to read the arguments: `MALFORMED_ARGUMENTS` when they are not one JSON object;
 * `INVALID_TYPE` when the JSON text holds an integer beyond ±2^53 − 1 (it cannot be a JSON number
 * without being rounded: the model is asked to send it as a string).
 */
export interface MalformedArgumentsFailure {
  code: 'MALFORMED_ARGUMENTS' | 'INVALID_TYPE';
  /** One line: what is wrong (`arguments are truncated JSON`, ...). */
  message: string;
  /** Bounded detail: where parsing stopped and a preview of at most 200 characters of the text. */
  detail: string;
  /** What to send instead. */
  suggestion: string;
  /** One field at the root path `""`. */
  fields: FieldError[];
}

/**
 * Outcome of {@link parseArguments}.
 * - `ok: true`: `value` is a plain object; `normalisations` names each change made (`empty-arguments`,
 *   `unwrapped-json-string`), for the log.
 * - `ok: false`: a `MALFORMED_ARGUMENTS` failure.
 */
export type ParseResult = { ok: true; value: unknown; normalisations: string[] } | { ok: false; failure: MalformedArgumentsFailure };

/** Options of {@link parseArguments}. */
export interface ParseArgumentsOptions {
  /**
   * Redacts text (e.g. `redactor.text`). Given, every excerpt of the argument text in a failure is
   * cut from redacted text: the excerpt and 4,096 code units on each side are redacted first, so a
   * secret that the excerpt's edges would split (`…y: Hdr3canaryKey` of `x-api-key: Hdr3canaryKey`)
   * is masked whole. @defaultValue none (excerpts of the raw text)
   */
  redactText?: (text: string) => string;
}

const identity = (text: string): string => text;

/** Code units redacted on each side of an excerpt before it is cut. */
const EXCERPT_MARGIN = 4096;
/** Code units kept clear of a redacted region's cut edges (where a split secret may remain). */
const EDGE_GUARD = 256;

/**
 * `text.slice(start, end)` as it reads after redaction: the excerpt plus a margin on each side is
 * redacted, and the excerpt is then taken at the same relative place (scaled when redaction changed
 * the length), never within {@link EDGE_GUARD} of a cut edge.
 */
function redactedSlice(text: string, start: number, end: number, redact: (text: string) => string): string {
  if (redact === identity) return text.slice(start, end);
  const from = Math.max(0, start - EXCERPT_MARGIN);
  const to = Math.min(text.length, end + EXCERPT_MARGIN);
  const region = text.slice(from, to);
  const redacted = redact(region);
  if (redacted === region) return text.slice(start, end);
  const scale = region.length === 0 ? 1 : redacted.length / region.length;
  let first = Math.round((start - from) * scale);
  let last = Math.round((end - from) * scale);
  if (from > 0) first = Math.max(first, Math.min(EDGE_GUARD, redacted.length));
  if (to < text.length) last = Math.min(last, Math.max(first, redacted.length - EDGE_GUARD));
  return redacted.slice(first, Math.max(first, last));
}

const SUGGESTION_SINGLE_OBJECT = 'Send the arguments as one JSON object, e.g. {"name": "value"}, and call again';

/**
 * Reads tool-call arguments as models really send them, into one JSON object.
 *
 * - an object passes through unchanged (not copied);
 * - `undefined`, `null`, `""`, a blank string or the JSON text `null` → `{}` (`empty-arguments`);
 * - a string is parsed as JSON; a JSON string whose content is itself a JSON object is unwrapped
 *   once (`unwrapped-json-string`);
 * - two JSON values glued together (`{"a":1}{"b":2}`) → `MALFORMED_ARGUMENTS`, "two JSON values concatenated";
 * - JSON cut off mid-way (an unterminated string, object or array: a token limit) → `MALFORMED_ARGUMENTS`, "truncated";
 * - any other syntax error → `MALFORMED_ARGUMENTS` with the position and a bounded preview;
 * - a value that is not an object (array, number, boolean) → `MALFORMED_ARGUMENTS`, expected object;
 * - an integer literal beyond ±2^53 − 1 in the JSON text (`{"id": 12345678901234567890}`, which
 *   `JSON.parse` would round to 12345678901234567000) → `INVALID_TYPE` at that field (JSON Pointer),
 *   asking for the value as a string. Object arguments hold numbers already parsed, so this is
 *   checked only for argument text.
 *
 * Never returns `{}` for bad input. Pure and safe to call concurrently; never throws.
 *
 * @see RFC 8259 (JSON)
 */
export function parseArguments(raw: unknown, options: ParseArgumentsOptions = {}): ParseResult {
  if (raw === undefined || raw === null) return { ok: true, value: {}, normalisations: ['empty-arguments'] };
  if (typeof raw === 'string') return parseArgumentsText(raw, options.redactText ?? identity);
  if (isPlainObjectLike(raw)) return { ok: true, value: raw, normalisations: [] };
  return notAnObject(raw);
}

function parseArgumentsText(text: string, redact: (text: string) => string): ParseResult {
  if (text.trim() === '') return { ok: true, value: {}, normalisations: ['empty-arguments'] };
  const parsed = parseJsonText(text, redact);
  if (!parsed.ok) return parsed;
  const value = parsed.value;
  if (value === null) return { ok: true, value: {}, normalisations: ['empty-arguments'] };
  if (typeof value === 'string') {
    // A JSON string holding JSON: unwrap once, never twice.
    if (value.trim() === '') return { ok: true, value: {}, normalisations: ['unwrapped-json-string', 'empty-arguments'] };
    const inner = parseJsonText(value, redact);
    if (inner.ok && isPlainObjectLike(inner.value)) {
      return { ok: true, value: inner.value, normalisations: ['unwrapped-json-string'] };
    }
    if (!inner.ok && looksLikeJsonContainer(value)) return inner;
    return notAnObject(value);
  }
  if (isPlainObjectLike(value)) return { ok: true, value, normalisations: [] };
  return notAnObject(value);
}

type JsonTextResult = { ok: true; value: unknown } | { ok: false; failure: MalformedArgumentsFailure };

function parseJsonText(text: string, redact: (text: string) => string): JsonTextResult {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    return { ok: false, failure: describeSyntaxError(text, error, redact) };
  }
  // Cheap test first: an unsafe integer has at least 16 digits in a row.
  if (SIXTEEN_DIGITS.test(text)) {
    const unsafe = findUnsafeIntegers(text);
    if (unsafe.length > 0) return { ok: false, failure: unsafeIntegerFailure(unsafe) };
  }
  return { ok: true, value };
}

const SIXTEEN_DIGITS = /\d{16}/;
/** Number.MAX_SAFE_INTEGER's digits: an integer literal of 16 digits is unsafe when greater. */
const MAX_SAFE_DIGITS = String(Number.MAX_SAFE_INTEGER);
/** How many unsafe integers one failure names. */
const MAX_UNSAFE_REPORTED = 20;
/** Characters of an unsafe integer quoted in a failure. */
const MAX_LITERAL_CHARS = 40;

interface UnsafeInteger {
  path: string;
  literal: string;
}

type Frame = { kind: 'object'; key: string | undefined; expectingKey: boolean } | { kind: 'array'; index: number };

/**
 * The integer literals of valid JSON `text` beyond ±2^53 − 1, with their JSON Pointers (at most
 * 20). One pass over the text, no recursion (nesting depth costs nothing).
 */
function findUnsafeIntegers(text: string): UnsafeInteger[] {
  const found: UnsafeInteger[] = [];
  const frames: Frame[] = [];
  const length = text.length;
  let index = 0;
  while (index < length && found.length < MAX_UNSAFE_REPORTED) {
    const char = text.charCodeAt(index);
    if (char === 0x22 /* " */) {
      const end = endOfString(text, index);
      const top = frames[frames.length - 1];
      if (top?.kind === 'object' && top.expectingKey) {
        top.key = JSON.parse(text.slice(index, end)) as string;
        top.expectingKey = false;
      }
      index = end;
      continue;
    }
    if (char === 0x7b /* { */) frames.push({ kind: 'object', key: undefined, expectingKey: true });
    else if (char === 0x5b /* [ */) frames.push({ kind: 'array', index: 0 });
    else if (char === 0x7d /* } */ || char === 0x5d /* ] */) frames.pop();
    else if (char === 0x2c /* , */) {
      const top = frames[frames.length - 1];
      if (top?.kind === 'object') top.expectingKey = true;
      else if (top?.kind === 'array') top.index += 1;
    } else if (char === 0x2d /* - */ || (char >= 0x30 && char <= 0x39)) {
      let end = index + 1;
      let integer = true;
      while (end < length) {
        const inner = text.charCodeAt(end);
        if (inner >= 0x30 && inner <= 0x39) end += 1;
        else if (inner === 0x2e /* . */ || inner === 0x65 /* e */ || inner === 0x45 /* E */ || inner === 0x2b /* + */ || inner === 0x2d /* - */) {
          integer = false;
          end += 1;
        } else break;
      }
      if (integer) {
        const digits = text.charCodeAt(index) === 0x2d ? end - index - 1 : end - index;
        const unsigned = text.slice(end - digits, end);
        if (digits > MAX_SAFE_DIGITS.length || (digits === MAX_SAFE_DIGITS.length && unsigned > MAX_SAFE_DIGITS)) {
          found.push({
            path: toJsonPointer(frames.map((frame) => (frame.kind === 'array' ? frame.index : (frame.key ?? '')))),
            literal: text.slice(index, Math.min(end, index + MAX_LITERAL_CHARS + 1)),
          });
        }
      }
      index = end;
      continue;
    }
    index += 1;
  }
  return found;
}

/** The index just past the string literal starting at `start` (a `"`). */
function endOfString(text: string, start: number): number {
  let index = start + 1;
  while (index < text.length) {
    const char = text.charCodeAt(index);
    if (char === 0x5c /* \ */) index += 2;
    else if (char === 0x22) return index + 1;
    else index += 1;
  }
  return index;
}

function unsafeIntegerFailure(unsafe: readonly UnsafeInteger[]): MalformedArgumentsFailure {
  const fields: FieldError[] = unsafe.map(({ path, literal }) => {
    const shown = truncateText(literal, MAX_LITERAL_CHARS);
    const name = truncateText(describeJsonPointer(path), 128);
    return {
      path,
      problem: 'type',
      expected: `a string (an integer beyond ±${MAX_SAFE_DIGITS} cannot be sent as a JSON number), e.g. "${shown}"`,
      received: shown,
      message: `${name}: the integer ${shown} is too large to be exact as a JSON number (it would be rounded); send it as a string: "${shown}"`,
    };
  });
  const first = fields[0]!;
  const name = truncateText(describeJsonPointer(first.path), 128);
  return {
    code: 'INVALID_TYPE',
    message:
      fields.length === 1
        ? `${name} is an integer too large to be exact as a JSON number`
        : `${fields.length} integers are too large to be exact as JSON numbers`,
    detail: truncateText(fields.map((field) => field.message).join('; '), 1024),
    suggestion: `Send ${fields.length === 1 ? `${name} as a string (e.g. "${first.received}")` : 'each of these integers as a string'}, unchanged, and call again`,
    fields,
  };
}

function describeSyntaxError(text: string, error: unknown, redact: (text: string) => string): MalformedArgumentsFailure {
  const trimmed = text.trim();
  const scan = scanStructure(trimmed);
  const reportedPosition = positionFromErrorMessage(error);

  if (scan.firstValueEnd !== undefined && scan.firstValueEnd < trimmed.length) {
    const first = trimmed.slice(0, scan.firstValueEnd);
    const rest = trimmed.slice(scan.firstValueEnd).trim();
    if (rest !== '' && canParse(first) && (rest.startsWith('{') || rest.startsWith('['))) {
      return malformed(
        {
          message: 'arguments are two JSON values concatenated',
          detail: `two JSON values concatenated: a complete value ends at position ${scan.firstValueEnd} and another starts after it; text: ${previewText(trimmed, scan.firstValueEnd, redact)}`,
          suggestion: 'Send exactly one JSON object: merge the values into one object, or make one call per value, and call again',
        },
        trimmed,
        redact,
      );
    }
  }

  const endsOpen = scan.inString || scan.openBrackets > 0;
  const errorAtEnd = reportedPosition === undefined || reportedPosition >= trimmed.length - 1;
  if (!scan.mismatched && ((endsOpen && errorAtEnd) || /end of (json )?input|unexpected end/i.test(errorMessageOf(error)))) {
    const what = scan.inString ? 'an unterminated string' : `${scan.openBrackets} unclosed bracket${scan.openBrackets === 1 ? '' : 's'}`;
    return malformed(
      {
        message: 'arguments are truncated JSON',
        detail: `truncated JSON: the text (${trimmed.length} characters) ends inside ${what}, as when output hits a token limit; text ends with: ${previewTail(trimmed, redact)}`,
        suggestion: 'The arguments were cut off: send the complete JSON object (shorten long values if needed) and call again',
      },
      trimmed,
      redact,
    );
  }

  const position = reportedPosition ?? scan.mismatchPosition;
  const where = position === undefined ? '' : ` at position ${position}`;
  const diagnosis = diagnoseJson(trimmed);
  const example = diagnosis.repaired === undefined ? '' : `, e.g. ${truncateText(redact(diagnosis.repaired), REPAIRED_PREVIEW_MAX_CHARS)}`;
  const what = diagnosis.problems.length > 0 ? diagnosis.problems.map((problem) => problem.what).join('; ') : describeUnexpected(trimmed, position);
  const advice =
    diagnosis.problems.length > 0
      ? `${capitalise(diagnosis.problems.map((problem) => problem.advice).join('; '))}: send one JSON object${example}, and call again`
      : `${SUGGESTION_SINGLE_OBJECT} (double-quoted names and strings, no trailing commas)`;
  return malformed(
    {
      message: diagnosis.problems.length > 0 ? `arguments are not valid JSON: ${diagnosis.problems[0]!.headline}` : 'arguments are not valid JSON',
      detail: `invalid JSON${where}: ${what}; text: ${previewText(trimmed, position ?? 0, redact)}`,
      suggestion: advice,
    },
    trimmed,
    redact,
  );
}

/** Bound of the corrected arguments quoted in a suggestion, in characters. */
const REPAIRED_PREVIEW_MAX_CHARS = 300;
/** What the character at `position` breaks, in words (no engine message: it may quote the text). */
function describeUnexpected(text: string, position: number | undefined): string {
  if (position === undefined || position >= text.length) return 'the text is not one JSON object';
  const char = text[position]!;
  let before = position - 1;
  while (before >= 0 && /\s/.test(text[before]!)) before -= 1;
  const previous = before >= 0 ? text[before]! : '';
  const shownChar = /[\p{L}\p{N}]/u.test(char) ? 'a value' : JSON.stringify(char);
  // an operator after a value is an expression or unquoted text (`2024-01-15`), not a missing comma
  if (/[-+*/%]/.test(char)) return `${shownChar} after a value: values must be single JSON values (no operators, text in double quotes)`;
  if ((previous === '"' || /[\d\]}el]/.test(previous)) && !',:}]'.includes(char)) return `${shownChar} follows a value without a comma between them`;
  return `unexpected ${shownChar} here`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function notAnObject(value: unknown): ParseResult {
  const type = jsonTypeOf(value);
  const received = previewJson(value);
  return {
    ok: false,
    failure: {
      code: 'MALFORMED_ARGUMENTS',
      message: `arguments must be a JSON object, received ${withArticle(type)}`,
      detail: `expected a JSON object of named arguments, received ${type} ${truncateText(received, ARGUMENTS_PREVIEW_MAX_CHARS)}`,
      suggestion: `${SUGGESTION_SINGLE_OBJECT}; put each value under its parameter name`,
      fields: [
        {
          path: '',
          problem: 'type',
          expected: 'object',
          received,
          message: `expected a JSON object, received ${type} ${received}`,
        },
      ],
    },
  };
}

/** The failure of arguments that are not one JSON object: its words, and an excerpt of `text` (redacted) as the value received. */
function malformed(
  { message, detail, suggestion }: { message: string; detail: string; suggestion: string },
  text: string,
  redact: (text: string) => string,
): MalformedArgumentsFailure {
  return {
    code: 'MALFORMED_ARGUMENTS',
    message,
    detail,
    suggestion,
    fields: [
      { path: '', problem: 'syntax', expected: 'a single, complete JSON object', received: truncateText(redactedSlice(text, 0, 121, redact), 120), message },
    ],
  };
}

interface StructureScan {
  /** End (exclusive) of the first complete top-level object, array or string, when there is one. */
  firstValueEnd: number | undefined;
  /** The text ends inside a string. */
  inString: boolean;
  /** Brackets still open at the end of the text. */
  openBrackets: number;
  /** A closing bracket did not match its opener. */
  mismatched: boolean;
  mismatchPosition: number | undefined;
}

/** Tracks strings and brackets only (not full JSON grammar): enough to tell "cut off" from "glued". */
function scanStructure(text: string): StructureScan {
  const stack: string[] = [];
  let inString = false;
  let escaped = false;
  let firstValueEnd: number | undefined;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (inString) {
      if (escaped) escaped = false;
      else if (char === '\\') escaped = true;
      else if (char === '"') {
        inString = false;
        if (stack.length === 0 && firstValueEnd === undefined) firstValueEnd = index + 1;
      }
      continue;
    }
    if (char === '"') inString = true;
    else if (char === '{' || char === '[') stack.push(char === '{' ? '}' : ']');
    else if (char === '}' || char === ']') {
      if (stack.pop() !== char) return { firstValueEnd, inString, openBrackets: stack.length, mismatched: true, mismatchPosition: index };
      if (stack.length === 0 && firstValueEnd === undefined) firstValueEnd = index + 1;
    }
  }
  return { firstValueEnd, inString, openBrackets: stack.length, mismatched: false, mismatchPosition: undefined };
}

function canParse(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function errorMessageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** V8 and others write `at position N`; some write `(line L column C)` only. */
function positionFromErrorMessage(error: unknown): number | undefined {
  const match = /position (\d+)/i.exec(errorMessageOf(error));
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** At most 200 characters of the text, centred on `position`, with `…` where cut (cut from redacted text, see {@link redactedSlice}). */
function previewText(text: string, position: number, redact: (text: string) => string): string {
  const quoted = (slice: string): string => JSON.stringify(slice);
  if (text.length <= ARGUMENTS_PREVIEW_MAX_CHARS - 2) return truncateText(quoted(redact(text)), ARGUMENTS_PREVIEW_MAX_CHARS);
  const window = ARGUMENTS_PREVIEW_MAX_CHARS - 8;
  const start = Math.max(0, Math.min(position - Math.floor(window / 2), text.length - window));
  const slice = redactedSlice(text, start, start + window, redact);
  return truncateText(`${start > 0 ? '…' : ''}${quoted(slice)}${start + window < text.length ? '…' : ''}`, ARGUMENTS_PREVIEW_MAX_CHARS);
}

function previewTail(text: string, redact: (text: string) => string): string {
  const window = 80;
  return truncateText(
    text.length <= window ? JSON.stringify(redact(text)) : `…${JSON.stringify(redactedSlice(text, text.length - window, text.length, redact))}`,
    ARGUMENTS_PREVIEW_MAX_CHARS,
  );
}

function isPlainObjectLike(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function looksLikeJsonContainer(text: string): boolean {
  const start = text.trimStart()[0];
  return start === '{' || start === '[';
}

function withArticle(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}
