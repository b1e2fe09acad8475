/** Default bound of a received-value preview, in characters. */
export const DEFAULT_PREVIEW_MAX_CHARS = 120;

/**
 * Cuts a string to at most `maxChars` characters, marking the cut with `…` (the marker counts).
 */
export function truncateText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  if (maxChars <= 1) return '…'.slice(0, Math.max(0, maxChars));
  return `${text.slice(0, maxChars - 1)}…`;
}

/**
 * A bounded JSON preview of any value, for `received` and `detail`: JSON text (strings quoted),
 * `undefined` for undefined, a placeholder for values JSON cannot hold (cycles, bigint, functions).
 * Never throws.
 *
 * @param maxChars - bound on the result length, in characters. @defaultValue 120
 */
export function previewJson(value: unknown, maxChars: number = DEFAULT_PREVIEW_MAX_CHARS): string {
  return truncateText(stringifyForPreview(value), maxChars);
}

function stringifyForPreview(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'bigint') return `${value.toString()}n`;
  if (typeof value === 'function') return '[function]';
  if (typeof value === 'symbol') return value.toString();
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  try {
    const text = JSON.stringify(value, (_key, inner: unknown) => (typeof inner === 'bigint' ? `${inner.toString()}n` : inner));
    return text ?? String(value);
  } catch {
    return Array.isArray(value) ? '[array]' : '[object]';
  }
}

/** A short JSON-ish type name of a value: `string`, `integer`, `number`, `boolean`, `null`, `array`, `object`, `undefined`. */
export function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}
