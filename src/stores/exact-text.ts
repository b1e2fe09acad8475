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

/** The UTF-8 length of `text` in bytes, without encoding it (a lone surrogate counts 3, as U+FFFD). */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        index += 1;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}
