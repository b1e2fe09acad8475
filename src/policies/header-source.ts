/**
 * Reading one response header out of whatever an HTTP client or SDK put on its error: a `Headers`
 * object, a `Map`, a plain record in any letter case, or a list of `[name, value]` pairs.
 */

/**
 * Where response headers may be found: a `Headers` object (fetch, the OpenAI and Anthropic SDKs),
 * anything with a case-insensitive `get(name)` (axios, node-fetch), a `Map` (names in any case), a
 * plain record such as Node's `IncomingHttpHeaders` or the Vercel AI SDK's `responseHeaders`
 * (names in any case; a value may be a string, a number or an array of strings), or an iterable of
 * `[name, value]` pairs.
 */
export type HeaderSource =
  | Headers
  | { get(name: string): string | null | undefined }
  | ReadonlyMap<string, unknown>
  | Readonly<Record<string, unknown>>
  | Iterable<readonly [string, unknown]>;

/** Header values longer than this many characters are ignored (no header this module reads is legitimately longer). */
export const MAX_HEADER_VALUE_LENGTH = 1024;

/** Plain records, maps and pair lists are scanned for at most this many entries. */
const MAX_SCANNED_ENTRIES = 500;

/**
 * The value of header `name` in `source`, or `undefined` when it is absent, empty, longer than
 * {@link MAX_HEADER_VALUE_LENGTH}, or cannot be read. Names are compared case-insensitively; for an
 * array value the first element is used; a number is turned into its decimal text.
 *
 * Never throws: a source whose getters or `get` throw (an exotic proxy, a revoked one) reads as
 * having no such header.
 *
 * @param name the header name, in lower case.
 */
export function readHeaderValue(source: unknown, name: string): string | undefined {
  try {
    return normalise(lookUp(source, name));
  } catch {
    return undefined;
  }
}

/** True when `source` is something {@link readHeaderValue} can read (not a primitive). */
export function isHeaderSource(source: unknown): source is HeaderSource {
  return (typeof source === 'object' && source !== null) || typeof source === 'function';
}

function lookUp(source: unknown, name: string): unknown {
  if (!isHeaderSource(source)) return undefined;
  if (source instanceof Map) return scanPairs(source.entries(), name);
  const get = (source as { get?: unknown }).get;
  if (typeof get === 'function') return (get as (key: string) => unknown).call(source, name) ?? undefined;
  if (Array.isArray(source)) return scanPairs(source.values(), name);
  let scanned = 0;
  for (const key of Object.keys(source)) {
    if (scanned++ >= MAX_SCANNED_ENTRIES) break;
    if (key.length === name.length && key.toLowerCase() === name) return (source as Record<string, unknown>)[key];
  }
  return undefined;
}

function scanPairs(entries: Iterator<unknown>, name: string): unknown {
  for (let scanned = 0; scanned < MAX_SCANNED_ENTRIES; scanned++) {
    const next = entries.next();
    if (next.done === true) return undefined;
    const pair = next.value;
    if (!Array.isArray(pair)) continue;
    const key: unknown = pair[0];
    if (typeof key === 'string' && key.length === name.length && key.toLowerCase() === name) return pair[1];
  }
  return undefined;
}

function normalise(value: unknown): string | undefined {
  const first = Array.isArray(value) ? (value as unknown[])[0] : value;
  let text: string | undefined;
  if (typeof first === 'string') text = first;
  else if (typeof first === 'number' && Number.isFinite(first)) text = String(first);
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (trimmed === '' || trimmed.length > MAX_HEADER_VALUE_LENGTH) return undefined;
  return trimmed;
}
