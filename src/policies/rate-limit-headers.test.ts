import { describe, expect, it } from 'vitest';
import { readHeaderValue } from './header-source.ts';
import { isRateLimitExhausted, parseGoDuration, parseRateLimitReset } from './rate-limit-headers.ts';
import { MAX_RETRY_AFTER_MS } from './retry-after.ts';

/** Wed, 15 Jan 2025 12:00:00 GMT */
const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);

describe('parseGoDuration (OpenAI-style reset durations)', () => {
  it.each([
    ['6m0s', 360_000],
    ['1s', 1000],
    ['20ms', 20],
    ['1h2m3.5s', 3_723_500],
    ['2m59.56s', 179_560],
    ['0s', 0],
    ['1.5us', 0.0015],
    ['500µs', 0.5],
    ['3ns', 0.000_003],
  ])('%j → %d ms', (value, expected) => {
    expect(parseGoDuration(value)).toBeCloseTo(expected, 9);
  });

  it.each(['', 's', '6', '-1s', '+1s', '1e3s', '6 m', '1x', '1.s', 'm6', '1h 2m', '1s garbage'])('%j → undefined', (value) => {
    expect(parseGoDuration(value)).toBeUndefined();
  });

  it('a huge duration is Infinity, never NaN', () => {
    expect(parseGoDuration(`${'9'.repeat(400)}h`)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('parseRateLimitReset', () => {
  it('OpenAI x-ratelimit-reset-requests / -tokens durations', () => {
    expect(parseRateLimitReset({ 'x-ratelimit-reset-requests': '6m0s' }, NOW)).toBe(360_000);
    expect(parseRateLimitReset({ 'x-ratelimit-reset-tokens': '1s' }, NOW)).toBe(1000);
    expect(parseRateLimitReset({ 'x-ratelimit-reset-tokens': '20ms' }, NOW)).toBe(20);
    expect(parseRateLimitReset({ 'x-ratelimit-reset-requests': '1h2m3.5s' }, NOW)).toBe(3_723_500);
    // sub-millisecond waits round up to a whole ms
    expect(parseRateLimitReset({ 'x-ratelimit-reset-requests': '1.5us' }, NOW)).toBe(1);
    // a bare number is seconds
    expect(parseRateLimitReset({ 'x-ratelimit-reset-requests': '7' }, NOW)).toBe(7000);
  });

  it('the exhausted limit decides: its reset, not the other limit’s', () => {
    const headers = {
      'x-ratelimit-reset-requests': '6m0s',
      'x-ratelimit-remaining-requests': '42',
      'x-ratelimit-reset-tokens': '1s',
      'x-ratelimit-remaining-tokens': '0',
    };
    expect(parseRateLimitReset(headers, NOW)).toBe(1000);
    // both exhausted: wait for both
    expect(parseRateLimitReset({ ...headers, 'x-ratelimit-remaining-requests': '0' }, NOW)).toBe(360_000);
    // none says 0 (the limit hit is unknown): the longest reported wait
    expect(parseRateLimitReset({ ...headers, 'x-ratelimit-remaining-tokens': '12000' }, NOW)).toBe(360_000);
  });

  it('x-ratelimit-reset: delta-seconds, epoch seconds and epoch ms told apart by size', () => {
    expect(parseRateLimitReset({ 'x-ratelimit-reset': '60' }, NOW)).toBe(60_000);
    expect(parseRateLimitReset({ 'x-ratelimit-reset': '1.5' }, NOW)).toBe(1500);
    expect(parseRateLimitReset({ 'x-ratelimit-reset': String(NOW / 1000 + 30) }, NOW)).toBe(30_000);
    expect(parseRateLimitReset({ 'x-ratelimit-reset': String(NOW / 1000 + 30.25) }, NOW)).toBe(30_250);
    expect(parseRateLimitReset({ 'x-ratelimit-reset': String(NOW + 1500) }, NOW)).toBe(1500);
    // an epoch in the past: the limit has already reset
    expect(parseRateLimitReset({ 'x-ratelimit-reset': String(NOW / 1000 - 5) }, NOW)).toBe(0);
    expect(parseRateLimitReset({ 'x-ratelimit-reset': String(NOW - 5) }, NOW)).toBe(0);
    // 999,999,999 s is still read as delta-seconds (31 years): capped
    expect(parseRateLimitReset({ 'x-ratelimit-reset': '999999999' }, NOW)).toBe(MAX_RETRY_AFTER_MS);
    // a duration or a date is accepted too
    expect(parseRateLimitReset({ 'x-ratelimit-reset': '2m' }, NOW)).toBe(120_000);
    expect(parseRateLimitReset({ 'x-ratelimit-reset': '2025-01-15T12:00:10Z' }, NOW)).toBe(10_000);
    expect(parseRateLimitReset({ 'x-ratelimit-reset': 'Wed, 15 Jan 2025 12:00:20 GMT' }, NOW)).toBe(20_000);
  });

  it('other families: x-ratelimit-reset-after, x-rate-limit-reset, ratelimit-reset, Anthropic RFC 3339', () => {
    expect(parseRateLimitReset({ 'x-ratelimit-reset-after': '2.5' }, NOW)).toBe(2500);
    expect(parseRateLimitReset({ 'x-rate-limit-reset': String(NOW / 1000 + 15) }, NOW)).toBe(15_000);
    expect(parseRateLimitReset({ 'ratelimit-reset': '50' }, NOW)).toBe(50_000);
    expect(parseRateLimitReset({ 'anthropic-ratelimit-tokens-reset': '2025-01-15T12:01:00Z' }, NOW)).toBe(60_000);
    expect(parseRateLimitReset({ 'anthropic-ratelimit-requests-reset': '2025-01-15T13:00:30.5+01:00' }, NOW)).toBe(30_500);
  });

  it('the IETF RateLimit header, structured and older dictionary forms', () => {
    expect(parseRateLimitReset({ RateLimit: '"default";r=0;t=60' }, NOW)).toBe(60_000);
    expect(parseRateLimitReset({ ratelimit: '"burst";r=5;t=1, "daily";r=0;t=3600' }, NOW)).toBe(3_600_000);
    expect(parseRateLimitReset({ ratelimit: '"burst";r=5;t=1, "daily";r=7;t=30' }, NOW)).toBe(30_000);
    expect(parseRateLimitReset({ ratelimit: 'limit=100, remaining=0, reset=50' }, NOW)).toBe(50_000);
  });

  it('reads a Headers object, a Map and a plain record in any case, pairs, and number values', () => {
    expect(parseRateLimitReset(new Headers({ 'X-RateLimit-Reset-Requests': '6m0s' }), NOW)).toBe(360_000);
    expect(parseRateLimitReset(new Map([['X-RateLimit-Reset', '60']]), NOW)).toBe(60_000);
    expect(parseRateLimitReset({ 'X-RATELIMIT-RESET': 60 }, NOW)).toBe(60_000);
    expect(parseRateLimitReset({ 'x-ratelimit-reset': ['60', '90'] }, NOW)).toBe(60_000);
    expect(parseRateLimitReset([['x-ratelimit-reset', '60']], NOW)).toBe(60_000);
  });

  it('absent, malformed or absurd values: undefined or capped, never NaN or Infinity', () => {
    expect(parseRateLimitReset({}, NOW)).toBeUndefined();
    expect(parseRateLimitReset(undefined, NOW)).toBeUndefined();
    expect(parseRateLimitReset('60', NOW)).toBeUndefined();
    for (const value of ['-5', 'NaN', 'Infinity', '1e3', 'soon', '', '0x10']) expect(parseRateLimitReset({ 'x-ratelimit-reset': value }, NOW)).toBeUndefined();
    expect(parseRateLimitReset({ 'x-ratelimit-reset': '1000000000000000' }, NOW)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRateLimitReset({ 'x-ratelimit-reset': '9'.repeat(400) }, NOW)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRateLimitReset({ 'x-ratelimit-reset-requests': `${'9'.repeat(400)}h` }, NOW)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRateLimitReset({ ratelimit: '"p";r=0;t=-4' }, NOW)).toBeUndefined();
    // a value longer than the header bound is ignored, not scanned
    expect(parseRateLimitReset({ 'x-ratelimit-reset': `${'1'.repeat(2000)}` }, NOW)).toBeUndefined();
  });

  it('never throws on a hostile source', () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const throwing = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error('trap');
        },
        get: () => {
          throw new Error('trap');
        },
      },
    );
    expect(parseRateLimitReset(proxy, NOW)).toBeUndefined();
    expect(parseRateLimitReset(throwing, NOW)).toBeUndefined();
    expect(isRateLimitExhausted(proxy)).toBe(false);
  });
});

describe('isRateLimitExhausted', () => {
  it.each([
    [{ 'x-ratelimit-remaining': '0' }, true],
    [{ 'X-RateLimit-Remaining-Requests': '0' }, true],
    [{ 'anthropic-ratelimit-tokens-remaining': '0' }, true],
    [{ 'ratelimit-remaining': '0' }, true],
    [{ ratelimit: '"default";r=0;t=60' }, true],
    [{ ratelimit: 'limit=10, remaining=0, reset=5' }, true],
    [{ 'x-ratelimit-remaining': '3' }, false],
    [{ ratelimit: '"default";r=4;t=60' }, false],
    [{}, false],
  ])('%j → %s', (headers, expected) => {
    expect(isRateLimitExhausted(headers)).toBe(expected);
  });
});

describe('readHeaderValue', () => {
  it('reads case-insensitively from every source shape; trims; first array element; numbers', () => {
    expect(readHeaderValue(new Headers({ 'Retry-After': ' 5 ' }), 'retry-after')).toBe('5');
    expect(readHeaderValue(new Map([['RETRY-AFTER', '5']]), 'retry-after')).toBe('5');
    expect(readHeaderValue({ 'Retry-After': ['5', '6'] }, 'retry-after')).toBe('5');
    expect(readHeaderValue({ 'retry-after': 5 }, 'retry-after')).toBe('5');
    expect(readHeaderValue({ get: (name: string) => (name === 'retry-after' ? '5' : null) }, 'retry-after')).toBe('5');
    expect(readHeaderValue([['Retry-After', '5']], 'retry-after')).toBe('5');
    expect(readHeaderValue({ 'retry-after': '' }, 'retry-after')).toBeUndefined();
    expect(readHeaderValue({ 'retry-after': { toString: () => '5' } }, 'retry-after')).toBeUndefined();
    expect(readHeaderValue('retry-after: 5', 'retry-after')).toBeUndefined();
  });

  it('a get that throws, a revoked proxy, a throwing getter: undefined', () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(readHeaderValue(proxy, 'retry-after')).toBeUndefined();
    expect(
      readHeaderValue(
        {
          get: () => {
            throw new Error('x');
          },
        },
        'retry-after',
      ),
    ).toBeUndefined();
    expect(
      readHeaderValue(
        Object.defineProperty({}, 'Retry-After', {
          get: () => {
            throw new Error('x');
          },
          enumerable: true,
        }),
        'retry-after',
      ),
    ).toBeUndefined();
  });
});
