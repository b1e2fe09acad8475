/**
 * Bounded pieces of an option error message: a value or key written by the caller may be a
 * megabyte long, and an object may have thousands of keys, yet the message stays a few lines.
 */

/** How many characters of a received string or key a message quotes. */
const MAX_QUOTED_CHARS = 40;
/** How many keys a message lists before `and N more`. */
const MAX_LISTED_KEYS = 10;

/** `text`, cut to its first 40 characters with `…` after when longer. */
export function boundedText(text: string): string {
  return text.length > MAX_QUOTED_CHARS ? `${text.slice(0, MAX_QUOTED_CHARS)}…` : text;
}

/** A key in backquotes, cut as {@link boundedText} cuts it. */
export function quotedKey(key: string): string {
  return `\`${boundedText(key)}\``;
}

/** The first 10 of `keys`, each {@link quotedKey}, comma-separated, then `and N more` when there are more. */
export function keyList(keys: readonly string[]): string {
  const shown = keys.slice(0, MAX_LISTED_KEYS).map(quotedKey).join(', ');
  return keys.length > MAX_LISTED_KEYS ? `${shown} and ${keys.length - MAX_LISTED_KEYS} more` : shown;
}
