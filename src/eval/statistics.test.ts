import { describe, expect, it } from 'vitest';
import { createSeededRandom } from '../testing/seeded-random.ts';
import { sdkDefaultErrorText } from './sdk-error-text.ts';
import { bootstrapMeanInterval, bootstrapRatioInterval, wilsonInterval } from './statistics.ts';

describe('wilsonInterval', () => {
  it('matches the textbook values', () => {
    // 8 of 10 at 95 %: [0.4902, 0.9433]
    const interval = wilsonInterval(8, 10);
    expect(interval.estimate).toBe(0.8);
    expect(interval.low).toBeCloseTo(0.4902, 4);
    expect(interval.high).toBeCloseTo(0.9433, 4);
  });

  it('stays in [0, 1] at the edges, and refuses impossible counts', () => {
    expect(wilsonInterval(0, 5).low).toBe(0);
    expect(wilsonInterval(5, 5).high).toBe(1);
    expect(wilsonInterval(0, 0)).toEqual({ estimate: 0, low: 0, high: 1 });
    expect(() => wilsonInterval(6, 5)).toThrow(RangeError);
  });
});

describe('bootstrapMeanInterval', () => {
  it('brackets the mean, is reproducible with a seed, narrows with more data', () => {
    const values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    const first = bootstrapMeanInterval(values, createSeededRandom(7));
    expect(first).toEqual(bootstrapMeanInterval(values, createSeededRandom(7)));
    expect(first.estimate).toBe(5.5);
    expect(first.low).toBeLessThan(5.5);
    expect(first.high).toBeGreaterThan(5.5);
    const more = bootstrapMeanInterval([...values, ...values, ...values, ...values], createSeededRandom(7));
    expect(more.high - more.low).toBeLessThan(first.high - first.low);
  });

  it('no values: NaN; one value: a point', () => {
    expect(Number.isNaN(bootstrapMeanInterval([], Math.random).estimate)).toBe(true);
    expect(bootstrapMeanInterval([3], Math.random)).toEqual({ estimate: 3, low: 3, high: 3 });
  });
});

describe('bootstrapRatioInterval', () => {
  it('brackets the ratio of sums (tokens per solved task), is reproducible, and is NaN with nothing solved', () => {
    // 10 tasks, 6 solved, 1000 tokens each: 10000 / 6
    const pairs = Array.from({ length: 10 }, (_, index) => ({ numerator: 1000, denominator: index < 6 ? 1 : 0 }));
    const interval = bootstrapRatioInterval(pairs, createSeededRandom(3));
    expect(interval.estimate).toBeCloseTo(10_000 / 6, 6);
    expect(interval.low).toBeLessThan(interval.estimate);
    expect(interval.high).toBeGreaterThan(interval.estimate);
    expect(bootstrapRatioInterval(pairs, createSeededRandom(3))).toEqual(interval);
    expect(Number.isNaN(bootstrapRatioInterval([{ numerator: 5, denominator: 0 }], createSeededRandom(1)).estimate)).toBe(true);
  });
});

describe('sdkDefaultErrorText', () => {
  const error = new Error('Service Unavailable');
  it('reproduces each SDK default', () => {
    expect(sdkDefaultErrorText('ai-sdk', error)).toBe('Service Unavailable');
    expect(sdkDefaultErrorText('ai-sdk', null)).toBe('unknown error');
    expect(sdkDefaultErrorText('langchain', error)).toBe('Error: Service Unavailable\n Please fix your mistakes.');
    expect(sdkDefaultErrorText('openai-agents', error)).toBe('An error occurred while running the tool. Please try again.');
  });
});
