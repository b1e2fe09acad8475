import { describe, expect, it } from 'vitest';
import { copyPlainJson, NOT_COPIED } from './copy-json.ts';

const roundTrip = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

describe('copyPlainJson', () => {
  it.each([
    ['a small result', { flights: ['JFK', 'SEA'], count: 2, ok: true, none: null }],
    ['nested objects and arrays', { a: [{ b: [1, [2, [3]]] }, { c: { d: 'e' } }], f: [] }],
    ['undefined, functions and symbols', { a: undefined, b: () => 1, c: Symbol('s'), d: [undefined, () => 1, Symbol('t')] }],
    ['-0, NaN and infinities', { a: -0, b: Number.NaN, c: Number.POSITIVE_INFINITY, d: [-0, Number.NEGATIVE_INFINITY] }],
    // eslint-disable-next-line no-sparse-arrays -- a hole is the case under test
    ['a sparse array', { a: [1, , 3] }],
    ['a null-prototype object', Object.assign(Object.create(null) as object, { a: 1 })],
    ['lone surrogates and escapes', { a: '\ud800x\n"\\', 'k"ey\u0000': 'v' }],
    ['numeric keys (JSON order)', { b: 1, 2: 'two', a: 3, 1: 'one' }],
  ])('%s: equal to JSON.parse(JSON.stringify(value)), and a copy', (_, value) => {
    const copy = copyPlainJson(value, 1_000_000);
    expect(copy).not.toBe(NOT_COPIED);
    expect(copy).toStrictEqual(roundTrip(value));
    expect(Object.is((copy as { a?: unknown }).a, -0)).toBe(false);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(value));
    expect(copy).not.toBe(value);
  });

  it('the copy shares nothing with the value', () => {
    const value = { list: [{ x: 1 }] };
    const copy = copyPlainJson(value, 1000) as typeof value;
    copy.list[0]!.x = 2;
    expect(value.list[0]!.x).toBe(1);
  });

  it.each([
    ['a Date (toJSON)', { at: new Date(0) }],
    ['a class instance', { thing: new (class Thing {})() }],
    ['a Map', { map: new Map([[1, 2]]) }],
    ['an own toJSON', { a: 1, toJSON: () => 'x' }],
    ['a BigInt', { n: 1n }],
    ['a __proto__ key', JSON.parse('{"__proto__": {"polluted": true}}') as object],
    ['a boxed string', { s: new String('x') }],
    ['an array subclass', { list: new (class List extends Array {})() }],
  ])('%s: not copied (JSON.stringify decides)', (_, value) => {
    expect(copyPlainJson(value, 1_000_000)).toBe(NOT_COPIED);
  });

  it('a cycle or deep nesting is not copied', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(copyPlainJson(cycle, 1_000_000)).toBe(NOT_COPIED);
    let deep: unknown = 1;
    for (let level = 0; level < 40; level++) deep = [deep];
    expect(copyPlainJson(deep as object, 1_000_000)).toBe(NOT_COPIED);
  });

  it('a value whose JSON may be longer than the bound is not copied; one surely within it is', () => {
    const text = 'x'.repeat(100);
    expect(copyPlainJson({ text }, 6 * 100 + 2 + 6 * 4 + 4 + 2)).not.toBe(NOT_COPIED);
    expect(copyPlainJson({ text }, 6 * 100)).toBe(NOT_COPIED);
    expect(copyPlainJson(new Array(10_000).fill(1), 1000)).toBe(NOT_COPIED);
  });

  it.each([
    ['escaped characters', { list: ['\u0000'.repeat(50), '"\\'] }],
    ['long numbers', [-1.2345678901234567e-308, -123456789012345680000, 5e-324]],
    ['keys that need escaping', { '\u0001\u0002': true, '"': false, '': null }],
  ])('%s: copied only under a bound at least as long as the JSON text', (_, value) => {
    let smallest = 0;
    while (copyPlainJson(value, smallest) === NOT_COPIED) smallest += 1;
    expect(JSON.stringify(value).length).toBeLessThanOrEqual(smallest);
  });
});
