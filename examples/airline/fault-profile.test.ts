import { describe, expect, it } from 'vitest';
import { drawFault, hashToUnitInterval, type FaultDrawKey } from './fault-profile.ts';

describe('drawFault', () => {
  const key: FaultDrawKey = { seed: 1, runId: 'run-1', toolName: 'get_user_details', callIndex: 0, attempt: 1 };

  it('is a pure function of the profile and the call identity', () => {
    const profile = { unavailableRate: 0.25, rateLimitRate: 0.25, hangRate: 0.25 };
    const draws = Array.from({ length: 200 }, (_, callIndex) => drawFault(profile, { ...key, callIndex }));
    expect(Array.from({ length: 200 }, (_, callIndex) => drawFault(profile, { ...key, callIndex }))).toEqual(draws);
    // each outcome gets roughly its share
    for (const fault of ['unavailable', 'rate_limit', 'hang', 'none'] as const) {
      const share = draws.filter((draw) => draw === fault).length / draws.length;
      expect(share).toBeGreaterThan(0.15);
      expect(share).toBeLessThan(0.35);
    }
  });

  it('draws again for another attempt, another seed or another run', () => {
    const values = new Set([
      hashToUnitInterval('1|run-1|t|0|1'),
      hashToUnitInterval('1|run-1|t|0|2'),
      hashToUnitInterval('2|run-1|t|0|1'),
      hashToUnitInterval('1|run-2|t|0|1'),
    ]);
    expect(values.size).toBe(4);
    for (const value of values) expect(value >= 0 && value < 1).toBe(true);
  });

  it('answers unauthorized for a listed tool whatever the rates, and none with an empty profile', () => {
    expect(drawFault({ unauthorizedTools: ['get_user_details'], unavailableRate: 1 }, key)).toBe('unauthorized');
    expect(drawFault({}, key)).toBe('none');
    expect(drawFault({ unavailableRate: 1 }, key)).toBe('unavailable');
  });
});
