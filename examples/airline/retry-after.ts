/**
 * A tiny `Retry-After` parser for the airline HTTP tools (to be replaced by the policies' one).
 *
 * @see RFC 9110 §10.2.3 (delta-seconds or an HTTP-date)
 */

/**
 * The wait a `Retry-After` value asks for, in milliseconds, or `undefined` when absent or not
 * understood. Delta-seconds (`"2"`) → 2000; an HTTP-date → its distance from `nowMs` (0 if past).
 */
export function parseRetryAfterMs(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const dateMs = Date.parse(text);
  if (Number.isNaN(dateMs) || !/[A-Za-z]/.test(text)) return undefined;
  return Math.max(0, dateMs - nowMs);
}
