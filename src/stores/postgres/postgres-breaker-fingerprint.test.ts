import { describe, expect, it } from 'vitest';
import { BREAKER_FINGERPRINT_MAX_ROWS, breakerFingerprintSql, createBreakerFingerprintTracker } from './postgres-breaker-fingerprint.ts';

describe('createBreakerFingerprintTracker', () => {
  it('holds a state fresh while its fingerprint is the one the latest-sent statement saw, up to maxStalenessMs after that send', () => {
    const tracker = createBreakerFingerprintTracker(50);
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
    const tracker = createBreakerFingerprintTracker(50);
    const early = tracker.send(1_000);
    const late = tracker.send(1_010);
    tracker.observe('1:after', late);
    tracker.observe('1:before', early); // answered last, but sent first: its snapshot may predate the other's
    expect(tracker.isFresh('1:before', 1_020)).toBe(false);
    expect(tracker.isFresh('1:after', 1_020)).toBe(true);
    expect(tracker.isFresh('1:after', 1_061)).toBe(false);
  });

  it('after invalidate, nothing is fresh and statements sent before it are ignored', () => {
    const tracker = createBreakerFingerprintTracker(50);
    const before = tracker.send(1_000);
    tracker.observe('1:old', tracker.send(1_000));
    tracker.invalidate();
    expect(tracker.isFresh('1:old', 1_000)).toBe(false);
    tracker.observe('1:old', before);
    expect(tracker.isFresh('1:old', 1_000)).toBe(false);
    tracker.observe('1:new', tracker.send(1_001));
    expect(tracker.isFresh('1:new', 1_001)).toBe(true);
  });

  it('ignores what is not a fingerprint, and a clock that stepped back behind the confirming send', () => {
    const tracker = createBreakerFingerprintTracker(50);
    tracker.observe(undefined, tracker.send(10));
    tracker.observe(null, tracker.send(10));
    tracker.observe('1:x', tracker.send(Number.NaN));
    expect(tracker.isFresh('1:x', 10)).toBe(false);
    tracker.observe('1:x', tracker.send(60_000));
    expect(tracker.isFresh('1:x', 60_000)).toBe(true);
    expect(tracker.isFresh('1:x', 0)).toBe(false); // the clock went back a minute
    const zero = createBreakerFingerprintTracker(0);
    zero.observe('1:y', zero.send(10));
    expect(zero.isFresh('1:y', 10)).toBe(true);
    expect(zero.isFresh('1:y', 11)).toBe(false);
  });

  it('past the row limit, reuses nothing and asks for the fingerprint once per 10 s, until the table is small again', () => {
    const tracker = createBreakerFingerprintTracker(50);
    expect(tracker.wanted(0)).toBe(true);
    tracker.observe(`${BREAKER_FINGERPRINT_MAX_ROWS + 1}:123`, tracker.send(1_000));
    expect(tracker.isFresh(`${BREAKER_FINGERPRINT_MAX_ROWS + 1}:123`, 1_000)).toBe(false);
    expect(tracker.wanted(1_000)).toBe(false);
    expect(tracker.wanted(10_999)).toBe(false);
    expect(tracker.wanted(11_000)).toBe(true); // the recheck
    expect(tracker.wanted(11_001)).toBe(false);
    tracker.observe(`${BREAKER_FINGERPRINT_MAX_ROWS}:5`, tracker.send(11_000));
    expect(tracker.wanted(11_001)).toBe(true);
    expect(tracker.isFresh(`${BREAKER_FINGERPRINT_MAX_ROWS}:5`, 11_001)).toBe(true);
  });

  it('after an answer of a large table, an answer to a statement sent before it does not count', () => {
    const tracker = createBreakerFingerprintTracker(1_000_000);
    const early = tracker.send(1_000);
    tracker.observe(`${BREAKER_FINGERPRINT_MAX_ROWS + 44}:9`, tracker.send(1_001));
    tracker.observe('1:small', early);
    expect(tracker.isFresh('1:small', 1_002)).toBe(false);
    expect(tracker.wanted(1_002)).toBe(false);
  });

  it('a clock that stepped back never makes the confirmation fresh again, even once it catches up', () => {
    const tracker = createBreakerFingerprintTracker(50);
    tracker.observe('1:x', tracker.send(20_000));
    expect(tracker.isFresh('1:x', 10_000)).toBe(false);
    expect(tracker.isFresh('1:x', 20_010)).toBe(false);
    tracker.observe('1:x', tracker.send(20_020));
    expect(tracker.isFresh('1:x', 20_030)).toBe(true);
  });

  it('reads the fingerprint from the rows and their xmin, with no lock', () => {
    expect(breakerFingerprintSql('"s".breakers')).toBe(
      `(SELECT count(*) || ':' || coalesce(sum(hashtextextended(key || ':' || xmin::text, 0)), 0) FROM "s".breakers)`,
    );
  });
});
