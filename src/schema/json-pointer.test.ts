import { describe, expect, it } from 'vitest';
import { describeJsonPointer, parseJsonPointer, toJsonPointer } from './json-pointer.ts';

describe('JSON Pointer (RFC 6901)', () => {
  it('escapes ~ and / and round-trips', () => {
    expect(toJsonPointer(['a/b', 'm~n', 0])).toBe('/a~1b/m~0n/0');
    expect(parseJsonPointer('/a~1b/m~0n/0')).toEqual(['a/b', 'm~n', '0']);
    expect(parseJsonPointer('/~01')).toEqual(['~1']);
    expect(toJsonPointer([])).toBe('');
  });

  it('describes a pointer for messages', () => {
    expect(describeJsonPointer('/passengers/0/dob')).toBe('passengers/0/dob');
    expect(describeJsonPointer('')).toBe('the arguments');
  });
});
