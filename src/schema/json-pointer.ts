/**
 * JSON Pointer helpers for field paths.
 *
 * @see RFC 6901 (JavaScript Object Notation (JSON) Pointer)
 */

/** Escapes one reference token: `~` → `~0`, `/` → `~1` (RFC 6901 §3). */
export function escapeJsonPointerToken(token: string | number): string {
  return String(token).replaceAll('~', '~0').replaceAll('/', '~1');
}

/** Unescapes one reference token: `~1` → `/`, `~0` → `~` (RFC 6901 §4, in that order). */
export function unescapeJsonPointerToken(token: string): string {
  return token.replaceAll('~1', '/').replaceAll('~0', '~');
}

/**
 * Builds a JSON Pointer from path segments; `[]` gives `""` (the whole value).
 *
 * @example toJsonPointer(['passengers', 0, 'dob']) // '/passengers/0/dob'
 */
export function toJsonPointer(segments: ReadonlyArray<string | number>): string {
  return segments.map((segment) => `/${escapeJsonPointerToken(segment)}`).join('');
}

/** Splits a JSON Pointer into unescaped tokens; `""` gives `[]`. A pointer not starting with `/` is read as one token. */
export function parseJsonPointer(pointer: string): string[] {
  if (pointer === '') return [];
  const body = pointer.startsWith('/') ? pointer.slice(1) : pointer;
  return body.split('/').map(unescapeJsonPointerToken);
}

/**
 * A short, human-readable name for a pointer, for messages: `/passengers/0/dob` → `passengers/0/dob`,
 * `""` → `the arguments`. Control characters in a name a model sent are written as JSON escapes
 * (`que\nry`), so a message never carries a raw newline, NUL or terminal escape.
 */
export function describeJsonPointer(pointer: string): string {
  if (pointer === '') return 'the arguments';
  return escapeControlCharacters(parseJsonPointer(pointer).join('/')) || '(empty name)';
}

const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

/** `text` with each control character (C0, DEL, C1, U+2028/9) written as its JSON escape (`\n`, `\u0000`). */
export function escapeControlCharacters(text: string): string {
  // eslint-disable-next-line no-control-regex -- the control characters are what is replaced
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (char) => SHORT_ESCAPES[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
