/**
 * Parsing of the `Retry-After` response header (RFC 9110 §10.2.3) and the de-facto
 * `retry-after-ms` header into a wait in milliseconds.
 */
import { readHeaderValue, type HeaderSource } from './header-source.ts';

/** The longest wait {@link parseRetryAfter} returns, in ms (24 hours). Larger values are capped to it. */
export const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * What {@link parseRetryAfter} reads: response headers (a `Headers` object, a `Map`, a plain header
 * record in any letter case, … — see `HeaderSource`), or one raw `Retry-After` value.
 */
export type RetryAfterSource = HeaderSource | string | null | undefined;

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'] as const;
const SHORT_DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const LONG_DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;

/** A non-negative decimal number: digits, optionally a fraction. No sign, no exponent. */
const DECIMAL = /^\d+(?:\.\d+)?$/;
/** IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`. */
const IMF_FIXDATE = /^([a-z]{3}), (\d{2}) ([a-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) gmt$/;
/** Obsolete RFC 850 date: `Sunday, 06-Nov-94 08:49:37 GMT` (a four-digit year is tolerated). */
const RFC850_DATE = /^([a-z]+), (\d{2})-([a-z]{3})-(\d{2}|\d{4}) (\d{2}):(\d{2}):(\d{2}) gmt$/;
/** ANSI C asctime(): `Sun Nov  6 08:49:37 1994` (the day is space-padded; after collapsing spaces, one space). */
const ASCTIME_DATE = /^([a-z]{3}) ([a-z]{3}) (\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/;

/**
 * The wait a server asked for, in milliseconds, or `undefined` when it asked for none.
 *
 * Reads, in order of preference:
 * - `retry-after-ms`: milliseconds (a non-standard header some APIs send, e.g. OpenAI and Azure);
 *   used when present and valid, otherwise `retry-after` is read;
 * - `retry-after`: delta-seconds, or an HTTP-date in any of the three forms of RFC 9110 §5.6.7 —
 *   IMF-fixdate, obsolete RFC 850 (two-digit year: a date more than 50 years in the future, by
 *   calendar year, is taken as the most recent past year with those digits), and asctime — all GMT.
 *
 * `source` is a `Headers` object, a `Map` or a plain header record (names matched
 * case-insensitively; for an array value the first element is used), or one raw `Retry-After`
 * value as a string. A source that cannot be read (throwing getters) reads as no header.
 *
 * Returns:
 * - `undefined` for an absent, empty or unparseable value, a negative number, or a date that does
 *   not exist (`31 Feb`);
 * - `0` for an HTTP-date at or before `nowMs`;
 * - otherwise the wait in ms, rounded up to a whole ms, capped at {@link MAX_RETRY_AFTER_MS}
 *   (24 h) so that huge values never overflow into `Infinity` or lose precision.
 *
 * Leniencies beyond the RFC grammar (each documented, none ambiguous): surrounding and repeated
 * whitespace, any letter case, fractional delta-seconds (`1.5`), a four-digit year in the RFC 850 form.
 * The day name is checked to be a day name but not checked against the date.
 *
 * Pure; never throws.
 *
 * @param nowMs the current time in ms since the epoch (from the injected `Clock`), used for HTTP-dates.
 * @see RFC 9110 §10.2.3 (Retry-After), §5.6.7 (Date/Time Formats)
 */
export function parseRetryAfter(source: RetryAfterSource, nowMs: number): number | undefined {
  if (source === null || source === undefined) return undefined;
  if (typeof source === 'string') return parseRetryAfterValue(source, nowMs);
  const milliseconds = readHeaderValue(source, 'retry-after-ms');
  if (milliseconds !== undefined && DECIMAL.test(milliseconds)) return capWait(Math.ceil(Number(milliseconds)));
  const value = readHeaderValue(source, 'retry-after');
  return value === undefined ? undefined : parseRetryAfterValue(value, nowMs);
}

/**
 * Parses one raw `Retry-After` value (delta-seconds or HTTP-date) into a wait in ms; see
 * {@link parseRetryAfter} for the rules.
 */
export function parseRetryAfterValue(value: string, nowMs: number): number | undefined {
  const normalised = value.trim().replace(/\s+/g, ' ').toLowerCase();
  if (normalised === '') return undefined;
  if (DECIMAL.test(normalised)) return capWait(Math.ceil(Number(normalised) * 1000));
  const dateMs = parseHttpDate(normalised, nowMs);
  if (dateMs === undefined) return undefined;
  return capWait(Math.max(0, Math.ceil(dateMs - nowMs)));
}

/**
 * Parses an HTTP-date (any of the three forms of RFC 9110 §5.6.7, GMT) into ms since the epoch,
 * or `undefined` when it is not one. `nowMs` resolves the two-digit years of the RFC 850 form.
 *
 * @see RFC 9110 §5.6.7
 */
export function parseHttpDate(value: string, nowMs: number): number | undefined {
  const normalised = value.trim().replace(/\s+/g, ' ').toLowerCase();
  let match = IMF_FIXDATE.exec(normalised);
  if (match) {
    const [, dayName, day, month, year, hour, minute, second] = match as unknown as string[];
    if (!isOneOf(dayName, SHORT_DAYS)) return undefined;
    return buildDate({ year: Number(year), month, day, hour, minute, second });
  }
  match = RFC850_DATE.exec(normalised);
  if (match) {
    const [, dayName, day, month, year, hour, minute, second] = match as unknown as string[];
    if (!isOneOf(dayName, LONG_DAYS)) return undefined;
    const yearText = year ?? '';
    const fullYear = yearText.length === 2 ? resolveTwoDigitYear(Number(yearText), nowMs) : Number(yearText);
    return buildDate({ year: fullYear, month, day, hour, minute, second });
  }
  match = ASCTIME_DATE.exec(normalised);
  if (match) {
    const [, dayName, month, day, hour, minute, second, year] = match as unknown as string[];
    if (!isOneOf(dayName, SHORT_DAYS)) return undefined;
    return buildDate({ year: Number(year), month, day, hour, minute, second });
  }
  return undefined;
}

/**
 * The full year of a two-digit RFC 850 year: the year with those last two digits that is not more
 * than 50 years after the current year (RFC 9110 §5.6.7: "more than 50 years in the future" means
 * the most recent past year with the same last two digits). Compared by calendar year, UTC.
 */
export function resolveTwoDigitYear(twoDigitYear: number, nowMs: number): number {
  const currentYear = new Date(nowMs).getUTCFullYear();
  let year = currentYear - (currentYear % 100) + twoDigitYear;
  if (year > currentYear + 50) year -= 100;
  else if (year + 100 <= currentYear + 50) year += 100;
  return year;
}

/** The fields of an HTTP-date as its pattern matched them (the year already resolved). */
interface DateFields {
  year: number;
  month: string | undefined;
  day: string | undefined;
  hour: string | undefined;
  minute: string | undefined;
  second: string | undefined;
}

/** Ms since the epoch of `fields`, or `undefined` when they name no real moment (31 April, hour 24). */
function buildDate(fields: DateFields): number | undefined {
  const { year } = fields;
  const [day, hour, minute, second] = [Number(fields.day), Number(fields.hour), Number(fields.minute), Number(fields.second)];
  const month = MONTHS.indexOf(fields.month as (typeof MONTHS)[number]);
  if (month < 0) return undefined;
  if (day < 1 || day > daysInMonth(year, month)) return undefined;
  // RFC 9110 allows second 60 (leap second); Date.UTC rolls it into the next minute.
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  const utc = new Date(0);
  utc.setUTCFullYear(year, month, day);
  utc.setUTCHours(hour, minute, second, 0);
  return utc.getTime();
}

function daysInMonth(year: number, month: number): number {
  const probe = new Date(0);
  probe.setUTCFullYear(year, month + 1, 0);
  return probe.getUTCDate();
}

function isOneOf(value: string | undefined, names: readonly string[]): boolean {
  return value !== undefined && names.includes(value);
}

function capWait(waitMs: number): number | undefined {
  if (!Number.isFinite(waitMs)) return Number.isNaN(waitMs) ? undefined : MAX_RETRY_AFTER_MS;
  return Math.min(waitMs, MAX_RETRY_AFTER_MS);
}
