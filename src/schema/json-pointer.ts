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
 * `""` → `the arguments`.
 */
export function describeJsonPointer(pointer: string): string {
  if (pointer === '') return 'the arguments';
  return parseJsonPointer(pointer).join('/') || '(empty name)';
}
