/**
 * Field errors (`{ path, problem, expected?, received?, message? }`) as every sink keeps them: the
 * JSON Pointer and texts redacted and bounded, and the received value of a field whose name is
 * sensitive (`/password`, `/headers/x-api-key`) or is a secret itself (`/AKIA…`) masked whole — on
 * its own a password does not look like one, so only its key can tell.
 */
import { redactBounded } from './build-failure.ts';
import type { Redactor } from './redact.ts';

/** The parts of a field error this module reads and rewrites. */
export interface FieldErrorLike {
  path: string;
  expected?: string;
  received?: string;
  message?: string;
}

/** Options of {@link redactFieldErrors}. */
export interface RedactFieldErrorsOptions {
  /** Extra sensitive keys (a tool's `sensitive` list). */
  extraKeys?: readonly string[];
  /** Bound of each text of a field (path, expected, received, message), in UTF-8 bytes, cut before redaction. @defaultValue 200 */
  maxBytes?: number;
  /** Fields kept; the rest are dropped (the caller reports the count). @defaultValue 20 */
  maxFields?: number;
  /** What replaces a masked value. @defaultValue `'***'` */
  replacement?: string;
}

/** Longest pointer examined for sensitive keys, in code units. */
const MAX_POINTER_UNITS = 2048;
/** Values shorter than this are not searched for in other texts (too many false hits). */
const MIN_MASKED_VALUE_UNITS = 3;

/**
 * Whether the JSON Pointer `pointer` names a sensitive key for `redactor` (or one of `extraKeys`):
 * its last token that is not an array index (`/password`, `/credentials/0`, `/headers/x-api-key`;
 * not `/passengers/0/dob` even when `passengers` is sensitive: the field is `dob`). `false` for a
 * redactor without `isSensitiveKey`.
 */
export function isSensitivePointer(redactor: Pick<Redactor, 'isSensitiveKey'>, pointer: string, extraKeys?: readonly string[]): boolean {
  if (typeof redactor.isSensitiveKey !== 'function') return false;
  const key = lastKey(pointer);
  return key !== undefined && redactor.isSensitiveKey(key, extraKeys);
}

/** The last token of `pointer` that is not an array index, unescaped; `undefined` when there is none. */
function lastKey(pointer: string): string | undefined {
  if (typeof pointer !== 'string') return undefined;
  const tokens = pointer.slice(-MAX_POINTER_UNITS).split('/');
  for (let index = tokens.length - 1; index >= 0; index -= 1) {
    const token = tokens[index]!;
    if (token === '' || /^\d+$/.test(token)) continue;
    return token.includes('~') ? token.replaceAll('~1', '/').replaceAll('~0', '~') : token;
  }
  return undefined;
}

/**
 * Whether the field `pointer` names holds a secret by its name: a sensitive key (see
 * {@link isSensitivePointer}), or a key that is itself a secret (`/AKIA…`, an access key id whose
 * value is its secret key), which the redactor masks.
 */
function namesSecret(redactor: Redactor, pointer: string, extraKeys?: readonly string[]): boolean {
  if (isSensitivePointer(redactor, pointer, extraKeys)) return true;
  const key = lastKey(pointer);
  return key !== undefined && redactor.text(key) !== key;
}

/** The raw value a `received` text stands for: a JSON string's content, else the text itself. */
function rawReceived(received: string): string {
  if (received.startsWith('"') && received.endsWith('"') && received.length >= 2) {
    try {
      const parsed: unknown = JSON.parse(received);
      if (typeof parsed === 'string') return parsed;
    } catch {
      // not JSON: the text as it is
    }
  }
  return received;
}

/**
 * Redacts and bounds field errors: every text is cut to `maxBytes` and redacted; a field whose
 * pointer names a sensitive key, or a key that is itself a secret, gets `received` = the replacement, and its value is masked in its
 * own `expected` and `message`. `maskText` masks the raw values of those sensitive fields in any
 * other text built from them (an envelope's `message` or `detail`). Never throws.
 */
export function redactFieldErrors<T extends FieldErrorLike>(
  redactor: Redactor,
  fields: readonly T[],
  options: RedactFieldErrorsOptions = {},
): { fields: T[]; maskText: (text: string) => string } {
  const maxBytes = options.maxBytes ?? 200;
  const replacement = options.replacement ?? '***';
  const values: string[] = [];
  const maskValues = (text: string): string => {
    let out = text;
    for (const value of values) if (out.includes(value)) out = out.split(value).join(replacement);
    return out;
  };
  const bounded = (text: string) => redactBounded(redactor, String(text), maxBytes);
  const out: T[] = [];
  for (const field of fields.slice(0, options.maxFields ?? 20)) {
    try {
      const sensitive = namesSecret(redactor, field.path, options.extraKeys);
      if (sensitive && typeof field.received === 'string') {
        for (const value of new Set([field.received, rawReceived(field.received)])) {
          if (value.length >= MIN_MASKED_VALUE_UNITS && value !== replacement) values.push(value.slice(0, MAX_POINTER_UNITS));
        }
      }
      const copy: T = { ...field, path: bounded(field.path) };
      if (field.expected !== undefined) copy.expected = bounded(sensitive ? maskValues(field.expected) : field.expected);
      if (field.received !== undefined) copy.received = sensitive ? replacement : bounded(field.received);
      if (field.message !== undefined) copy.message = bounded(sensitive ? maskValues(field.message) : field.message);
      out.push(copy);
    } catch {
      out.push({
        ...field,
        path: replacement,
        ...(field.expected !== undefined ? { expected: replacement } : {}),
        ...(field.received !== undefined ? { received: replacement } : {}),
        ...(field.message !== undefined ? { message: replacement } : {}),
      });
    }
  }
  return { fields: out, maskText: (text) => (values.length === 0 ? text : maskValues(text)) };
}
