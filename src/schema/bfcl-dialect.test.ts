import { describe, expect, it } from 'vitest';
import { mapBfclSchema } from './bfcl-dialect.ts';

describe('mapBfclSchema', () => {
  it('maps dict, float, tuple and any, drops optional, and does not mutate the input', () => {
    const bfcl = {
      type: 'dict',
      required: ['point'],
      properties: {
        point: { type: 'tuple', items: { type: 'float' }, optional: false },
        options: { type: 'dict', properties: { anything: { type: 'any' } } },
        tags: { type: 'array', items: { type: 'string' }, optional: true },
      },
    };
    const copy = structuredClone(bfcl);
    expect(mapBfclSchema(bfcl)).toEqual({
      schema: {
        type: 'object',
        required: ['point'],
        properties: {
          point: { type: 'array', items: { type: 'number' } },
          options: { type: 'object', properties: { anything: {} } },
          tags: { type: 'array', items: { type: 'string' } },
        },
      },
      warnings: [],
    });
    expect(bfcl).toEqual(copy);
  });

  it('reports mismatched defaults and enums that mix types, without throwing', () => {
    const { warnings } = mapBfclSchema({
      type: 'dict',
      properties: {
        limit: { type: 'integer', default: '10' },
        ratio: { type: 'float', default: 1 },
        adults: { type: 'integer', enum: ['1', '2', 'dontcare'] },
      },
    });
    expect(warnings).toEqual([
      '/properties/limit: default "10" does not match type integer',
      '/properties/adults: enum mixes types: values of type string under type integer',
    ]);
  });
});
