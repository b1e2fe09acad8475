/**
 * UTF-8 lengths and cuts without encoding: one walk over the UTF-16 code units, no allocation. A
 * lone surrogate counts as the 3 bytes of U+FFFD, as `TextEncoder` encodes it. The one place text
 * is cut to a byte bound.
 */

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** The UTF-8 length of `text` in bytes. */
export function utf8ByteLength(text: string): number {
  return fitUtf8(text, Number.POSITIVE_INFINITY).bytes;
}

/**
 * The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes` bytes, never ending between
 * the two halves of a surrogate pair: its length in code units and in bytes. Linear in the prefix.
 */
export function fitUtf8(text: string, maxBytes: number): { units: number; bytes: number } {
  let bytes = 0;
  const length = text.length;
  let index = 0;
  while (index < length) {
    const unit = text.charCodeAt(index);
    let width = 1;
    let units = 1;
    if (unit >= 0x80) {
      if (unit < 0x800) width = 2;
      else if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < length && isLowSurrogate(text.charCodeAt(index + 1))) {
        width = 4;
        units = 2;
      } else width = 3;
    }
    if (bytes + width > maxBytes) break;
    bytes += width;
    index += units;
  }
  return { units: index, bytes };
}

/** Whether the code unit at `index` is the second half of a surrogate pair. */
export function isLowSurrogateAt(text: string, index: number): boolean {
  return isLowSurrogate(text.charCodeAt(index));
}

/** What ends a text {@link truncateUtf8} cut. */
export const TRUNCATION_MARKER = '… [truncated]';
const TRUNCATION_MARKER_BYTES = utf8ByteLength(TRUNCATION_MARKER);

/**
 * Cuts `text` to at most `maxBytes` UTF-8 bytes. A cut text ends with the marker `… [truncated]`
 * (counted in the bound) and never splits a surrogate pair. Linear in `maxBytes`, whatever the
 * length of `text`. When `maxBytes` is smaller than the marker (15 bytes), a cut text is the marker
 * alone. `alreadyCut`: `text` is itself the head of a longer text, so it is marked even when it fits.
 */
export function truncateUtf8(text: string, maxBytes: number, alreadyCut = false): string {
  const bound = Math.max(0, Math.floor(maxBytes));
  if (!alreadyCut) {
    // Every code unit is at least one byte and at most three (a pair is four bytes for two units).
    if (text.length * 3 <= bound) return text;
    if (text.length <= bound && utf8ByteLength(text) <= bound) return text;
  }
  const room = Math.max(0, bound - TRUNCATION_MARKER_BYTES);
  return text.slice(0, fitUtf8(text, room).units) + TRUNCATION_MARKER;
}
