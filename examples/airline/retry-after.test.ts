import { describe, expect, it } from 'vitest';
import { parseRetryAfterMs } from './retry-after.ts';

describe('parseRetryAfterMs (RFC 9110 §10.2.3)', () => {
  const nowMs = Date.parse('Wed, 15 May 2024 15:00:00 GMT');
  it('reads delta-seconds and HTTP-dates', () => {
    expect(parseRetryAfterMs('0', nowMs)).toBe(0);
    expect(parseRetryAfterMs(' 2 ', nowMs)).toBe(2000);
    expect(parseRetryAfterMs('Wed, 15 May 2024 15:00:05 GMT', nowMs)).toBe(5000);
    expect(parseRetryAfterMs('Wed, 15 May 2024 14:00:00 GMT', nowMs)).toBe(0);
  });
  it('ignores absent and garbage values', () => {
    expect(parseRetryAfterMs(null, nowMs)).toBeUndefined();
    expect(parseRetryAfterMs('-1', nowMs)).toBeUndefined();
    expect(parseRetryAfterMs('soon', nowMs)).toBeUndefined();
    expect(parseRetryAfterMs('1.5', nowMs)).toBeUndefined();
  });
});
