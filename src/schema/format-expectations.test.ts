import { describe, expect, it } from 'vitest';
import { describeDatePattern, describeFormat } from './format-expectations.ts';

describe('format expectations', () => {
  it('describes date formats with an example and marks them as dates', () => {
    expect(describeFormat('date')).toEqual({ expected: 'YYYY-MM-DD', example: '2024-01-15', isDate: true });
    expect(describeFormat('date-time').isDate).toBe(true);
    expect(describeFormat('email')).toEqual({ expected: 'an e-mail address', example: 'name@example.com', isDate: false });
    expect(describeFormat('made-up')).toEqual({ expected: 'a made-up value', example: '', isDate: false });
  });

  it.each([
    ['^\\d{4}-\\d{2}-\\d{2}$', 'YYYY-MM-DD'],
    ['^[0-9]{4}-[0-9]{2}-[0-9]{2}$', 'YYYY-MM-DD'],
    ['^\\d{2}/\\d{2}/\\d{4}$', 'MM/DD/YYYY'],
    ['^\\d{2}:\\d{2}$', 'HH:MM'],
  ])('reads the date pattern %s as %s', (pattern, expected) => {
    expect(describeDatePattern(pattern)?.expected).toBe(expected);
  });

  it.each(['^[A-Z]{3}$', '^\\d+$', '^\\d{4}$'])('does not read %s as a date', (pattern) => {
    expect(describeDatePattern(pattern)).toBeUndefined();
  });
});
