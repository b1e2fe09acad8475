import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS, parseHttpDate, parseRetryAfter, resolveTwoDigitYear } from './retry-after.ts';

/** Wed, 15 Jan 2025 12:00:00 GMT */
const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);

describe('parseRetryAfter: delta-seconds', () => {
  it.each([
    ['120', 120_000],
    ['0', 0],
    ['007', 7000],
    [' 3 ', 3000],
    ['\t3\r\n', 3000],
    ['1.5', 1500],
    ['0.0001', 1],
  ])('%j → %d ms', (value, expected) => {
    expect(parseRetryAfter(value, NOW)).toBe(expected);
  });

  it.each(['-1', '-0', '+5', '1e3', '12abc', 'abc', '', '   ', '1.', '.5', '1,5', '0x10', 'Infinity', 'NaN', '3 4'])('%j is garbage → undefined', (value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });

  it('caps huge values at 24 h instead of overflowing', () => {
    expect(MAX_RETRY_AFTER_MS).toBe(86_400_000);
    expect(parseRetryAfter('86400', NOW)).toBe(86_400_000);
    expect(parseRetryAfter('86401', NOW)).toBe(86_400_000);
    expect(parseRetryAfter('99999999999999999999999999', NOW)).toBe(86_400_000);
    expect(parseRetryAfter('9'.repeat(400), NOW)).toBe(86_400_000);
  });
});

describe('parseRetryAfter: HTTP-date (RFC 9110 §5.6.7)', () => {
  it('IMF-fixdate', () => {
    expect(parseRetryAfter('Wed, 15 Jan 2025 12:00:30 GMT', NOW)).toBe(30_000);
    expect(parseRetryAfter('Thu, 16 Jan 2025 12:00:00 GMT', NOW)).toBe(86_400_000);
  });

  it('obsolete RFC 850 form', () => {
    expect(parseRetryAfter('Wednesday, 15-Jan-25 12:00:30 GMT', NOW)).toBe(30_000);
    expect(parseRetryAfter('Wednesday, 15-Jan-2025 12:01:00 GMT', NOW)).toBe(60_000);
  });

  it('ANSI C asctime form, with the space-padded day', () => {
    expect(parseRetryAfter('Wed Jan 15 12:00:30 2025', NOW)).toBe(30_000);
    const fifth = Date.UTC(2025, 0, 5, 12, 0, 0);
    expect(parseRetryAfter('Sun Jan  5 12:00:10 2025', fifth)).toBe(10_000);
    expect(parseRetryAfter('Sun Jan 5 12:00:10 2025', fifth)).toBe(10_000);
  });

  it('a date in the past or now → 0', () => {
    expect(parseRetryAfter('Wed, 15 Jan 2025 12:00:00 GMT', NOW)).toBe(0);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', NOW)).toBe(0);
    expect(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', NOW)).toBe(0);
    expect(parseRetryAfter('Sun Nov  6 08:49:37 1994', NOW)).toBe(0);
  });

  it('a date far in the future is capped at 24 h', () => {
    expect(parseRetryAfter('Fri, 31 Dec 9999 23:59:59 GMT', NOW)).toBe(MAX_RETRY_AFTER_MS);
  });

  it('tolerates any letter case and extra whitespace', () => {
    expect(parseRetryAfter('  wed,  15 JAN 2025   12:00:30 gmt ', NOW)).toBe(30_000);
  });

  it('rolls a leap second (:60) into the next minute', () => {
    expect(parseRetryAfter('Wed, 15 Jan 2025 12:00:60 GMT', NOW)).toBe(60_000);
  });

  it('rounds a wait up to whole ms when now has a fraction', () => {
    expect(parseRetryAfter('Wed, 15 Jan 2025 12:00:01 GMT', NOW + 0.25)).toBe(1000);
  });

  it.each([
    'Wed, 30 Feb 2025 12:00:00 GMT', // no such day
    'Wed, 29 Feb 2025 12:00:00 GMT', // 2025 is not a leap year
    'Wed, 00 Jan 2025 12:00:00 GMT',
    'Wed, 15 Jan 2025 24:00:00 GMT',
    'Wed, 15 Jan 2025 12:60:00 GMT',
    'Wed, 15 Jan 2025 12:00:61 GMT',
    'Wed, 15 Foo 2025 12:00:00 GMT',
    'Xyz, 15 Jan 2025 12:00:00 GMT',
    'Wed, 15 Jan 2025 12:00:00', // no zone
    'Wed, 15 Jan 2025 12:00:00 UTC',
    'Wed, 15 Jan 2025 12:00:00 +0000',
    'Wed, 15 Jan 25 12:00:00 GMT', // two-digit year in the IMF form
    'Wed, 5 Jan 2025 12:00:00 GMT', // IMF needs two digits for the day
    'Wed, 15-Jan-25 12:00:00 GMT', // RFC 850 needs the long day name
    'Wednesday, 15 Jan 2025 12:00:00 GMT',
    'Wed Jan 15 12:00:00 25',
    '2025-01-15T12:00:30Z', // ISO 8601 is not an HTTP-date
    'tomorrow',
  ])('%j is not an HTTP-date → undefined', (value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });

  it('accepts 29 Feb in a leap year', () => {
    expect(parseHttpDate('Thu, 29 Feb 2024 00:00:00 GMT', NOW)).toBe(Date.UTC(2024, 1, 29));
  });
});

describe('resolveTwoDigitYear (RFC 9110 §5.6.7: more than 50 years ahead means the past century)', () => {
  it.each([
    [25, 2025, 2025],
    [24, 2025, 2024],
    [0, 2025, 2000],
    [75, 2025, 2075], // exactly 50 years ahead: kept
    [76, 2025, 1976], // 51 years ahead: the past
    [94, 2025, 1994],
    [1, 2099, 2101], // 2001 would be 98 years back; 2101 is 2 ahead
    [49, 2099, 2149],
    [50, 2099, 2050],
    [99, 2000, 1999],
  ])('%d in %d → %d', (twoDigitYear, currentYear, expected) => {
    expect(resolveTwoDigitYear(twoDigitYear, Date.UTC(currentYear, 5, 1))).toBe(expected);
  });

  it('applies to RFC 850 dates', () => {
    expect(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', NOW)).toBe(Date.UTC(1994, 10, 6, 8, 49, 37));
    expect(parseHttpDate('Tuesday, 01-Jan-75 00:00:00 GMT', NOW)).toBe(Date.UTC(2075, 0, 1));
    expect(parseHttpDate('Thursday, 01-Jan-76 00:00:00 GMT', NOW)).toBe(Date.UTC(1976, 0, 1));
    expect(parseRetryAfter('Thursday, 16-Jan-25 12:00:00 GMT', NOW)).toBe(86_400_000);
  });
});

describe('parseRetryAfter: headers', () => {
  it('reads a Headers object', () => {
    expect(parseRetryAfter(new Headers({ 'Retry-After': '3' }), NOW)).toBe(3000);
    expect(parseRetryAfter(new Headers({ 'Retry-After': 'Wed, 15 Jan 2025 12:00:02 GMT' }), NOW)).toBe(2000);
    expect(parseRetryAfter(new Headers(), NOW)).toBeUndefined();
  });

  it('reads a plain record case-insensitively, the first of an array', () => {
    expect(parseRetryAfter({ 'RETRY-AFTER': '4' }, NOW)).toBe(4000);
    expect(parseRetryAfter({ 'content-type': 'text/plain', 'retry-after': ['7', '9'] }, NOW)).toBe(7000);
    expect(parseRetryAfter({ 'retry-after': undefined }, NOW)).toBeUndefined();
    expect(parseRetryAfter({ 'retry-after': [] }, NOW)).toBeUndefined();
    expect(parseRetryAfter({}, NOW)).toBeUndefined();
  });

  it('prefers retry-after-ms (milliseconds, rounded up) over retry-after', () => {
    expect(parseRetryAfter({ 'retry-after': '10', 'Retry-After-Ms': '250' }, NOW)).toBe(250);
    expect(parseRetryAfter(new Headers({ 'retry-after': '10', 'retry-after-ms': '1.2' }), NOW)).toBe(2);
    expect(parseRetryAfter({ 'retry-after-ms': '0' }, NOW)).toBe(0);
    expect(parseRetryAfter({ 'retry-after-ms': '999999999999' }, NOW)).toBe(MAX_RETRY_AFTER_MS);
  });

  it('falls back to retry-after when retry-after-ms is garbage', () => {
    expect(parseRetryAfter({ 'retry-after-ms': 'soon', 'retry-after': '2' }, NOW)).toBe(2000);
    expect(parseRetryAfter({ 'retry-after-ms': '-5' }, NOW)).toBeUndefined();
  });

  it('returns undefined for null, undefined and garbage headers', () => {
    expect(parseRetryAfter(null, NOW)).toBeUndefined();
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
    expect(parseRetryAfter({ 'retry-after': 'later' }, NOW)).toBeUndefined();
  });
});

describe('parseRetryAfter: more header sources', () => {
  it('reads a Map with names in any case', () => {
    expect(parseRetryAfter(new Map([['Retry-After', '3']]), NOW)).toBe(3000);
    expect(parseRetryAfter(new Map([['RETRY-AFTER-MS', '1500']]), NOW)).toBe(1500);
  });

  it('reads a number value of a plain record', () => {
    expect(parseRetryAfter({ 'retry-after': 3 } as unknown as Record<string, string>, NOW)).toBe(3000);
  });

  it('never throws on a hostile source: a revoked proxy, throwing getters, a throwing get()', () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(parseRetryAfter(proxy as Record<string, string>, NOW)).toBeUndefined();
    expect(
      parseRetryAfter(
        Object.defineProperty({}, 'retry-after', {
          get: () => {
            throw new Error('x');
          },
          enumerable: true,
        }),
        NOW,
      ),
    ).toBeUndefined();
    expect(
      parseRetryAfter(
        {
          get: () => {
            throw new Error('x');
          },
        },
        NOW,
      ),
    ).toBeUndefined();
  });
});
