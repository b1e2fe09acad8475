/**
 * Plain strings (ids, keys, message bodies) stored in columns and keys that cannot hold every
 * JavaScript string: PostgreSQL `text` rejects `\u0000`, and UTF-8 drivers (pg, better-sqlite3,
 * ioredis) turn a lone surrogate into U+FFFD, so two different ids could meet as one. JSON values
 * need none of this: `JSON.stringify` already escapes both.
 *
 * The encoding is the identity for every string without `\u0000`, without a lone surrogate and not
 * starting with U+0001, so rows written before it stay readable and SQL on them (`status =
 * 'completed'`) keeps working. Any other string is stored as U+0001 followed by its JSON text
 * (ASCII for the characters in question). It is deterministic, so an encoded key still finds its row.
 */

/** Marks an escaped string. */
const MARK = '\u0001';

/** `\u0000`, a high surrogate not followed by a low one, a low surrogate not preceded by a high one. */
// eslint-disable-next-line no-control-regex -- finding \u0000 is the point
const NEEDS_ESCAPE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The form of `text` to store (see the module comment). */
export function toStoredText(text: string): string {
  return text.startsWith(MARK) || NEEDS_ESCAPE.test(text) ? MARK + JSON.stringify(text) : text;
}

/** The string {@link toStoredText} was given. */
export function fromStoredText(stored: string): string {
  return stored.startsWith(MARK) ? (JSON.parse(stored.slice(MARK.length)) as string) : stored;
}
