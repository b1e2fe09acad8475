import { describe, expect, it } from 'vitest';
import { createBreakerGenerationTracker, generationOf } from './postgres-breaker-generation.ts';

describe('createBreakerGenerationTracker', () => {
  it('holds a state fresh while its generation is the latest seen, up to maxStalenessMs after the statement that confirmed it', () => {
    const tracker = createBreakerGenerationTracker(50);
    expect(tracker.isFresh(0, 0)).toBe(false); // nothing seen yet
    tracker.observe(3, 1_000);
    expect(tracker.isFresh(3, 1_000)).toBe(true);
    expect(tracker.isFresh(3, 1_050)).toBe(true);
    expect(tracker.isFresh(3, 1_051)).toBe(false);
    expect(tracker.isFresh(2, 1_000)).toBe(false);
    // the same generation seen again by a later statement confirms it anew
    tracker.observe(3, 1_040);
    expect(tracker.isFresh(3, 1_090)).toBe(true);
    expect(tracker.isFresh(3, 1_091)).toBe(false);
  });

  it('never goes back: an older generation or an earlier confirmation, arriving late, changes nothing', () => {
    const tracker = createBreakerGenerationTracker(50);
    tracker.observe(5, 1_000);
    tracker.observe(4, 2_000); // a statement whose snapshot predates the write that made 5
    expect(tracker.isFresh(4, 2_000)).toBe(false);
    expect(tracker.isFresh(5, 1_050)).toBe(true);
    expect(tracker.isFresh(5, 2_000)).toBe(false);
    tracker.observe(5, 900); // an earlier statement answering last
    expect(tracker.isFresh(5, 1_050)).toBe(true);
    expect(tracker.isFresh(5, 1_051)).toBe(false);
    // a newer generation makes every state read before it stale at once
    tracker.observe(6, 1_010);
    expect(tracker.isFresh(5, 1_010)).toBe(false);
    expect(tracker.isFresh(6, 1_010)).toBe(true);
  });

  it('ignores what is not a generation, and with 0 ms reuses a state only at the moment it was confirmed', () => {
    const tracker = createBreakerGenerationTracker(0);
    tracker.observe(Number.NaN, 10);
    tracker.observe(1, Number.NaN);
    expect(tracker.isFresh(1, 10)).toBe(false);
    tracker.observe(1, 10);
    expect(tracker.isFresh(1, 10)).toBe(true);
    expect(tracker.isFresh(1, 11)).toBe(false);
    expect(tracker.isFresh(Number.NaN, 10)).toBe(false);
  });

  it('parses the counter as the driver gives it', () => {
    expect(generationOf('42')).toBe(42);
    expect(generationOf(7)).toBe(7);
    expect(generationOf(undefined)).toBeNaN();
    expect(generationOf(null)).toBeNaN();
    expect(generationOf('x')).toBeNaN();
  });
});
