import { describe, expect, it } from 'vitest';
import { editDistance, findClosestName } from './closest-name.ts';

describe('closest name', () => {
  it('computes the Levenshtein distance', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('same', 'same')).toBe(0);
  });

  it('finds the closest name case-insensitively, or none when nothing is close', () => {
    expect(findClosestName('dat', ['date', 'cabin'])).toBe('date');
    expect(findClosestName('Cabin', ['date', 'cabin'])).toBe('cabin');
    expect(findClosestName('passenger_count', ['date', 'cabin'])).toBeUndefined();
  });
});
