import { describe, expect, it } from 'vitest';
import { normaliseArguments } from './normalise-arguments.ts';

const both = { nullAsAbsent: true, coerce: 'scalars' } as const;

describe('normaliseArguments', () => {
  it('removes nulls and coerces through properties, items, prefixItems, allOf and local $refs', () => {
    const schema = {
      $defs: { leg: { type: 'object', properties: { seats: { type: 'integer' }, meal: { type: 'string' } } } },
      allOf: [{ properties: { flag: { type: 'boolean' } } }],
      properties: {
        legs: { type: 'array', items: { $ref: '#/$defs/leg' } },
        pair: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'string' }] },
      },
    };
    const value = { flag: 'false', legs: [{ seats: '2', meal: null }, { seats: 3 }], pair: ['1.5', '7'] };
    expect(normaliseArguments(value, schema, both)).toEqual({
      value: { flag: false, legs: [{ seats: 2 }, { seats: 3 }], pair: [1.5, '7'] },
      normalisations: ['coerced:/flag', 'coerced:/legs/0/seats', 'null-as-absent:/legs/0/meal', 'coerced:/pair/0'],
    });
    expect(value.legs[0]).toEqual({ seats: '2', meal: null });
  });

  it('shares unchanged branches and returns the same object when nothing changes', () => {
    const value = { a: { b: 1 }, c: 'x' };
    const result = normaliseArguments(value, { properties: { a: { properties: { b: { type: 'integer' } } }, c: { type: 'string' } } }, both);
    expect(result.value).toBe(value);
    expect(result.normalisations).toEqual([]);
  });

  it('keeps null where the schema accepts it or says nothing', () => {
    const schema = {
      required: ['req'],
      properties: {
        req: { type: 'string' },
        nullable: { type: 'string', nullable: true },
        union: { anyOf: [{ type: 'string' }, { type: 'null' }] },
        anything: {},
        enumWithNull: { enum: ['a', null] },
      },
    };
    const value = { req: null, nullable: null, union: null, anything: null, enumWithNull: null };
    expect(normaliseArguments(value, schema, both)).toEqual({ value, normalisations: [] });
  });

  it('does nothing when both normalisations are off', () => {
    const value = { n: '1', s: null };
    expect(normaliseArguments(value, { properties: { n: { type: 'integer' }, s: { type: 'string' } } }, { nullAsAbsent: false, coerce: 'none' })).toEqual({
      value,
      normalisations: [],
    });
  });

  it('never coerces into a field that also accepts strings, nor unsafe integers', () => {
    const schema = { properties: { either: { type: ['string', 'integer'] }, big: { type: 'integer' }, huge: { type: 'number' } } };
    const value = { either: '5', big: '9007199254740993', huge: '1e999' };
    expect(normaliseArguments(value, schema, both)).toEqual({ value, normalisations: [] });
  });
});
