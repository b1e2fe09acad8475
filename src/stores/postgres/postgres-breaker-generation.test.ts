import { describe, expect, it } from 'vitest';
import { breakerFingerprintSql, createBreakerGenerationTracker } from './postgres-breaker-generation.ts';

describe('createBreakerGenerationTracker', () => {
  it('holds a state fresh while its fingerprint is the one the latest-sent statement saw, up to maxStalenessMs after that send', () => {
    const tracker = createBreakerGenerationTracker(50);
    expect(tracker.isFresh('0:0', 0)).toBe(false); // nothing seen yet
    tracker.observe('3:7', tracker.send(1_000));
    expect(tracker.isFresh('3:7', 1_000)).toBe(true);
    expect(tracker.isFresh('3:7', 1_050)).toBe(true);
    expect(tracker.isFresh('3:7', 1_051)).toBe(false);
    expect(tracker.isFresh('2:5', 1_000)).toBe(false);
    // the same fingerprint seen by a later statement confirms it anew
    tracker.observe('3:7', tracker.send(1_040));
    expect(tracker.isFresh('3:7', 1_090)).toBe(true);
    expect(tracker.isFresh('3:7', 1_091)).toBe(false);
  });

  it('counts the statement sent last, whatever order the answers come in', () => {
    const tracker = createBreakerGenerationTracker(50);
    const early = tracker.send(1_000);
    const late = tracker.send(1_010);
    tracker.observe('after', late);
    tracker.observe('before', early); // answered last, but sent first: its snapshot may predate the other's
    expect(tracker.isFresh('before', 1_020)).toBe(false);
    expect(tracker.isFresh('after', 1_020)).toBe(true);
    expect(tracker.isFresh('after', 1_061)).toBe(false);
  });

  it('after invalidate, nothing is fresh and statements sent before it are ignored', () => {
    const tracker = createBreakerGenerationTracker(50);
    const before = tracker.send(1_000);
    tracker.observe('old', tracker.send(1_000));
    tracker.invalidate();
    expect(tracker.isFresh('old', 1_000)).toBe(false);
    tracker.observe('old', before);
    expect(tracker.isFresh('old', 1_000)).toBe(false);
    tracker.observe('new', tracker.send(1_001));
    expect(tracker.isFresh('new', 1_001)).toBe(true);
  });

  it('ignores what is not a fingerprint, and a clock that stepped back behind the confirming send', () => {
    const tracker = createBreakerGenerationTracker(50);
    tracker.observe(undefined, tracker.send(10));
    tracker.observe(null, tracker.send(10));
    tracker.observe('x', tracker.send(Number.NaN));
    expect(tracker.isFresh('x', 10)).toBe(false);
    tracker.observe('x', tracker.send(60_000));
    expect(tracker.isFresh('x', 60_000)).toBe(true);
    expect(tracker.isFresh('x', 0)).toBe(false); // the clock went back a minute
    const zero = createBreakerGenerationTracker(0);
    zero.observe('y', zero.send(10));
    expect(zero.isFresh('y', 10)).toBe(true);
    expect(zero.isFresh('y', 11)).toBe(false);
  });

  it('reads the fingerprint from the rows and their xmin, with no lock', () => {
    expect(breakerFingerprintSql('"s".breakers')).toBe(
      `(SELECT count(*) || ':' || coalesce(sum(hashtextextended(key || ':' || xmin::text, 0)), 0) FROM "s".breakers)`,
    );
  });
});
