/**
 * Rate-limit reset headers: when a rate-limited server says its limit resets, as a wait in
 * milliseconds, so a 429 is retried after the reset instead of spending every attempt before it.
 */
import { MAX_HEADER_VALUE_LENGTH, readHeaderValue } from './header-source.ts';
import { MAX_RETRY_AFTER_MS, parseHttpDate } from './retry-after.ts';

/** A decimal number: digits, optionally a fraction. No sign, no exponent. */
const DECIMAL = /^\d+(?:\.\d+)?$/;
/** RFC 3339 date-time (`2025-01-15T12:00:30Z`, `2025-01-15T12:00:30.5+01:00`; a space instead of `T` is tolerated). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$/;
/** One `<number><unit>` step of a Go-style duration (`1h2m3.5s`, `20ms`). */
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|us|µs|μs|ns|h|m|s)/y;
const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, µs: 0.001, μs: 0.001, ns: 0.000_001 };

/** A bare number in a reset header at or above this is epoch milliseconds (2001-09-09 and later). */
const EPOCH_MS_THRESHOLD = 1e12;
/** A bare number in a reset header at or above this (and below {@link EPOCH_MS_THRESHOLD}) is epoch seconds (2001-09-09 and later). */
const EPOCH_SECONDS_THRESHOLD = 1e9;

/** How the value of one reset header is written. */
type ResetFormat =
  /** Go-style duration (`6m0s`, `1s`, `20ms`); a bare number is seconds. */
  | 'duration'
  /** A bare number is delta-seconds or an epoch (see {@link parseResetValue}); a duration or a date is accepted too. */
  | 'seconds-or-epoch'
  /** RFC 3339 date-time; a date in another form is accepted too. */
  | 'date';

/** One family of reset headers: the reset header and the remaining-count header of the same limit. */
const RESET_HEADERS: ReadonlyArray<{ reset: string; remaining: string; format: ResetFormat }> = [
  // OpenAI, Groq and other OpenAI-compatible APIs
  { reset: 'x-ratelimit-reset-requests', remaining: 'x-ratelimit-remaining-requests', format: 'duration' },
  { reset: 'x-ratelimit-reset-tokens', remaining: 'x-ratelimit-remaining-tokens', format: 'duration' },
  // Anthropic
  { reset: 'anthropic-ratelimit-requests-reset', remaining: 'anthropic-ratelimit-requests-remaining', format: 'date' },
  { reset: 'anthropic-ratelimit-tokens-reset', remaining: 'anthropic-ratelimit-tokens-remaining', format: 'date' },
  { reset: 'anthropic-ratelimit-input-tokens-reset', remaining: 'anthropic-ratelimit-input-tokens-remaining', format: 'date' },
  { reset: 'anthropic-ratelimit-output-tokens-reset', remaining: 'anthropic-ratelimit-output-tokens-remaining', format: 'date' },
  // GitHub, Discord, Twitter/X and many others; the IETF draft before its structured form
  { reset: 'x-ratelimit-reset', remaining: 'x-ratelimit-remaining', format: 'seconds-or-epoch' },
  { reset: 'x-ratelimit-reset-after', remaining: 'x-ratelimit-remaining', format: 'seconds-or-epoch' },
  { reset: 'x-rate-limit-reset', remaining: 'x-rate-limit-remaining', format: 'seconds-or-epoch' },
  { reset: 'ratelimit-reset', remaining: 'ratelimit-remaining', format: 'seconds-or-epoch' },
];

/** Every remaining-count header {@link isRateLimitExhausted} looks at, besides the structured `RateLimit` header. */
const REMAINING_HEADERS = [...new Set(RESET_HEADERS.map((family) => family.remaining))];

/** One limit a server reported: when it resets and, when known, how much of it is left. */
interface ResetCandidate {
  waitMs: number;
  remaining: number | undefined;
}

/**
 * The wait until a rate limit resets, in ms, from the rate-limit headers of a response, or
 * `undefined` when it carries none that can be read. Meant for a 429 (or another answer that says
 * the caller is rate limited); `Retry-After` is read by `parseRetryAfter` and takes precedence.
 *
 * Reads, each with its remaining-count header:
 * - `x-ratelimit-reset-requests`, `x-ratelimit-reset-tokens` (OpenAI style): a Go-style duration
 *   such as `6m0s`, `1s`, `20ms`, `1h2m3.5s` (units h, m, s, ms, us/µs, ns); a bare number is seconds;
 * - `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-reset`: an RFC 3339 date-time;
 * - `x-ratelimit-reset`, `x-ratelimit-reset-after`, `x-rate-limit-reset`, `ratelimit-reset`: a bare
 *   number is told apart by size — below 10^9 it is delta-seconds (10^9 s would be 31 years), from
 *   10^9 it is epoch seconds, from 10^12 epoch milliseconds (both thresholds are September 2001);
 *   a duration, an RFC 3339 date-time or an HTTP-date is accepted too;
 * - the IETF structured `RateLimit` header: `"default";r=0;t=60` (one item per policy) or the older
 *   `limit=100, remaining=0, reset=60` (`t`/`reset` in delta-seconds).
 *
 * When several limits are reported, the limits whose remaining count is 0 are the ones that were
 * hit, and the longest of their waits is returned (every exhausted limit must reset first); when no
 * remaining count says 0, the longest wait of all is returned (the limit that was hit is unknown,
 * and retrying before a reported reset spends attempts against a server that said "not yet").
 *
 * A date or epoch at or before `nowMs` gives 0. Values are rounded up to whole ms and capped at
 * `MAX_RETRY_AFTER_MS` (24 h); negative, `NaN`, exponent or otherwise malformed values are ignored;
 * huge ones never overflow. Pure; never throws.
 *
 * @param source the response headers (see `HeaderSource`).
 * @param nowMs the current time in ms since the epoch (from the injected `Clock`).
 */
export function parseRateLimitReset(source: unknown, nowMs: number): number | undefined {
  const candidates: ResetCandidate[] = [];
  for (const family of RESET_HEADERS) {
    const value = readHeaderValue(source, family.reset);
    if (value === undefined) continue;
    const waitMs = parseResetValue(value, family.format, nowMs);
    if (waitMs !== undefined) candidates.push({ waitMs, remaining: parseCount(readHeaderValue(source, family.remaining)) });
  }
  const structured = readHeaderValue(source, 'ratelimit');
  if (structured !== undefined) candidates.push(...parseStructuredRateLimit(structured));
  if (candidates.length === 0) return undefined;
  const exhausted = candidates.filter((candidate) => candidate.remaining !== undefined && candidate.remaining <= 0);
  const chosen = exhausted.length > 0 ? exhausted : candidates;
  return capWait(Math.max(...chosen.map((candidate) => candidate.waitMs)));
}

/**
 * True when a remaining-count header of the response says a rate limit is used up
 * (`x-ratelimit-remaining: 0`, `x-ratelimit-remaining-requests: 0`,
 * `anthropic-ratelimit-requests-remaining: 0`, `ratelimit-remaining: 0`, or `r=0`/`remaining=0` in
 * a structured `RateLimit` header). Some APIs (GitHub) answer 403 instead of 429 when the caller is
 * rate limited; this tells the two apart. Never throws.
 */
export function isRateLimitExhausted(source: unknown): boolean {
  for (const name of REMAINING_HEADERS) {
    const remaining = parseCount(readHeaderValue(source, name));
    if (remaining !== undefined && remaining <= 0) return true;
  }
  const structured = readHeaderValue(source, 'ratelimit');
  if (structured === undefined) return false;
  return parseStructuredRateLimit(structured).some((candidate) => candidate.remaining !== undefined && candidate.remaining <= 0);
}

/**
 * Parses a Go-style duration (`6m0s`, `1s`, `20ms`, `1h2m3.5s`, `1.5µs`; units h, m, s, ms, us/µs,
 * ns, in any order, at least one) into milliseconds, not rounded. `undefined` for anything else
 * (a sign, an exponent, a missing unit, spaces inside). Huge values give `Infinity`, never `NaN`.
 */
export function parseGoDuration(value: string): number | undefined {
  const text = value.trim();
  if (text === '' || text.length > MAX_HEADER_VALUE_LENGTH) return undefined;
  let totalMs = 0;
  let position = 0;
  while (position < text.length) {
    DURATION_PART.lastIndex = position;
    const match = DURATION_PART.exec(text);
    if (match === null) return undefined;
    totalMs += Number(match[1]) * UNIT_MS[match[2] as string]!;
    position = DURATION_PART.lastIndex;
  }
  return totalMs;
}

/**
 * Parses one reset value into a wait in ms (not capped, not rounded), or `undefined`.
 * `seconds-or-epoch`: a bare number below 10^9 is delta-seconds, from 10^9 epoch seconds, from 10^12
 * epoch ms. `duration`: a bare number is seconds. `date`: RFC 3339. Every format also accepts a
 * Go-style duration and an RFC 3339 or HTTP-date.
 */
function parseResetValue(value: string, format: ResetFormat, nowMs: number): number | undefined {
  if (DECIMAL.test(value)) {
    const number = Number(value);
    if (format === 'seconds-or-epoch') {
      if (number >= EPOCH_MS_THRESHOLD) return Math.max(0, number - nowMs);
      if (number >= EPOCH_SECONDS_THRESHOLD) return Math.max(0, number * 1000 - nowMs);
    }
    return number * 1000;
  }
  const durationMs = parseGoDuration(value);
  if (durationMs !== undefined) return durationMs;
  const dateMs = parseDate(value, nowMs);
  return dateMs === undefined ? undefined : Math.max(0, dateMs - nowMs);
}

function parseDate(value: string, nowMs: number): number | undefined {
  if (RFC3339.test(value)) {
    const parsed = Date.parse(value.replace(' ', 'T'));
    return Number.isFinite(parsed) ? parsed : undefined;
  }
  return parseHttpDate(value, nowMs);
}

/** The IETF `RateLimit` header, in its structured form (`"name";r=0;t=60, …`) or the older dictionary (`limit=…, remaining=…, reset=…`). */
function parseStructuredRateLimit(value: string): ResetCandidate[] {
  const items = value.split(',').map((item) => parseParameters(item));
  const structured = items.some((parameters) => parameters.has('t') || parameters.has('r'));
  if (structured) {
    const candidates: ResetCandidate[] = [];
    for (const parameters of items) {
      const resetSeconds = parseCount(parameters.get('t'));
      if (resetSeconds !== undefined) candidates.push({ waitMs: resetSeconds * 1000, remaining: parseCount(parameters.get('r')) });
    }
    return candidates;
  }
  const merged = new Map<string, string>();
  for (const parameters of items) for (const [key, entry] of parameters) merged.set(key, entry);
  const resetSeconds = parseCount(merged.get('reset'));
  return resetSeconds === undefined ? [] : [{ waitMs: resetSeconds * 1000, remaining: parseCount(merged.get('remaining')) }];
}

function parseParameters(item: string): Map<string, string> {
  const parameters = new Map<string, string>();
  for (const part of item.split(';')) {
    const equals = part.indexOf('=');
    if (equals < 0) continue;
    const key = part.slice(0, equals).trim().toLowerCase();
    const entry = part
      .slice(equals + 1)
      .trim()
      .replace(/^"|"$/g, '');
    if (key !== '') parameters.set(key, entry);
  }
  return parameters;
}

/** A non-negative decimal count, or `undefined`. */
function parseCount(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return DECIMAL.test(trimmed) ? Number(trimmed) : undefined;
}

function capWait(waitMs: number): number | undefined {
  if (Number.isNaN(waitMs)) return undefined;
  if (!Number.isFinite(waitMs)) return MAX_RETRY_AFTER_MS;
  return Math.min(Math.ceil(Math.max(0, waitMs)), MAX_RETRY_AFTER_MS);
}
