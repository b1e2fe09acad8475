import type { RandomSource } from '../ground/ports/clock.ts';

/**
 * A seeded pseudo-random source (mulberry32): the same seed gives the same sequence in [0, 1), so
 * jitter, fault schedules and generated inputs are reproducible in tests.
 */
export function createSeededRandom(seed: number): RandomSource {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}
