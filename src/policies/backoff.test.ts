import { describe, expect, it } from 'vitest';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { computeBackoffMs, DEFAULT_BACKOFF, type BackoffOptions } from './backoff.ts';

const zero = () => 0;
const half = () => 0.5;

describe('computeBackoffMs', () => {
  it('gives the default waits of SPEC §1.4: 500, 1000, 2000 ms before jitter', () => {
    expect([0, 1, 2].map((index) => computeBackoffMs(index, DEFAULT_BACKOFF, zero))).toEqual([500, 1000, 2000]);
  });

  it('adds floor(random() * jitterMs)', () => {
    expect(computeBackoffMs(0, DEFAULT_BACKOFF, half)).toBe(550);
    expect(computeBackoffMs(1, DEFAULT_BACKOFF, () => 0.999)).toBe(1099);
    expect(computeBackoffMs(2, DEFAULT_BACKOFF, () => 0.123)).toBe(2012);
  });

  it('caps the exponential part at maxDelayMs and adds the jitter after the cap', () => {
    expect(computeBackoffMs(6, DEFAULT_BACKOFF, zero)).toBe(30_000); // 500 * 64 = 32_000 → 30_000
    expect(computeBackoffMs(5, DEFAULT_BACKOFF, zero)).toBe(16_000);
    expect(computeBackoffMs(6, DEFAULT_BACKOFF, half)).toBe(30_050);
  });

  it('does not overflow for huge retry indexes', () => {
    expect(computeBackoffMs(10_000, DEFAULT_BACKOFF, zero)).toBe(30_000);
    const options: BackoffOptions = { baseDelayMs: 0, factor: 2, maxDelayMs: 1000, jitterMs: 0 };
    // 0 * Infinity is NaN: treated as the cap, never NaN
    expect(computeBackoffMs(5000, options, zero)).toBe(1000);
  });

  it('supports a constant wait (factor 1) and no jitter', () => {
    const options: BackoffOptions = { baseDelayMs: 250, factor: 1, maxDelayMs: 10_000, jitterMs: 0 };
    expect([0, 1, 7].map((index) => computeBackoffMs(index, options, () => 0.9))).toEqual([250, 250, 250]);
  });

  it('clamps a random source that strays outside [0, 1)', () => {
    expect(computeBackoffMs(0, DEFAULT_BACKOFF, () => -3)).toBe(500);
    expect(computeBackoffMs(0, DEFAULT_BACKOFF, () => Number.NaN)).toBe(500);
    expect(computeBackoffMs(0, DEFAULT_BACKOFF, () => 7)).toBe(599);
  });

  it('throws INVALID_OPTIONS for a negative, fractional or non-finite index', () => {
    for (const index of [-1, 0.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => computeBackoffMs(index, DEFAULT_BACKOFF, zero)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    }
    try {
      computeBackoffMs(-1, DEFAULT_BACKOFF, zero);
    } catch (error) {
      expect(ToolrunError.is(error)).toBe(true);
    }
  });
});
