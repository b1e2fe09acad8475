/**
 * The example a type error carries is built from what the model sent: a list sent as one string
 * keeps every item, an enum array uses the valid value the model sent (not the schema's default),
 * a number written as a word becomes the number, no bare `e.g. 1` is invented, and a key with
 * control characters is echoed escaped. Schemas and values from BFCL's questions and recorded answers.
 */
import { describe, expect, it } from 'vitest';
import { createToolRuntime, defineTool, type ToolResult } from '../src/index.ts';

function failed(result: ToolResult) {
  if (result.status !== 'failed') throw new Error(`expected a failure, got ${JSON.stringify(result)}`);
  return result.error;
}

const echo = async (args: unknown) => args;
const runtime = createToolRuntime({
  tools: [
    // BFCL multiple_78: "For multiple details, separate them by comma."
    defineTool({
      name: 'tourist_spot_info',
      description: 'Information about a tourist spot',
      inputSchema: {
        type: 'object',
        properties: {
          spot: { type: 'string' },
          details: {
            type: 'array',
            items: { type: 'string', enum: ['timing', 'attractions', 'tickets', 'accessibility', 'history'] },
            default: ['timing', 'attractions'],
          },
        },
        required: ['spot'],
      },
      execute: echo,
    }),
    // BFCL parallel_44
    defineTool({
      name: 'concert_find_nearby',
      description: 'Concerts nearby',
      inputSchema: {
        type: 'object',
        properties: {
          location: { type: 'string' },
          amenities: {
            type: 'array',
            items: { type: 'string', enum: ['Parking', 'Food and Beverages', 'VIP Seating', 'Disability Access'] },
            default: ['Parking'],
          },
        },
        required: ['location'],
      },
      execute: echo,
    }),
    // Nexusflow-Raven-v2 on rotateVertices: pivot "12, 17"
    defineTool({
      name: 'rotateVertices',
      description: 'Rotates vertices around a pivot',
      inputSchema: {
        type: 'object',
        properties: { pivot: { type: 'array', items: { type: 'number' } }, angle: { type: 'number' } },
        required: ['pivot', 'angle'],
      },
      execute: echo,
    }),
    defineTool({
      name: 'check_price',
      description: 'Prices of grocery items',
      inputSchema: {
        type: 'object',
        properties: { items: { type: 'array', items: { type: 'string' } }, quantities: { type: 'array', items: { type: 'integer' } } },
        required: ['items'],
        additionalProperties: false,
      },
      execute: echo,
    }),
    defineTool({
      name: 'count_things',
      description: 'Counts',
      inputSchema: { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'], additionalProperties: false },
      execute: echo,
    }),
  ],
});

describe('a list sent as one comma-separated string', () => {
  it('keeps every item, in the schema spelling of an enum (tourist_spot_info details "Timing, tickets")', async () => {
    const error = failed(await runtime.run({ name: 'tourist_spot_info', args: { spot: 'Eiffel Tower', details: 'Timing, tickets' } }));
    expect(error.suggestion).toContain('send the items as a JSON array, not one string: ["timing","tickets"]');
    expect(error.suggestion).not.toContain('(or ');
  });

  it('numbers are numbers (rotateVertices pivot "12, 17")', async () => {
    const error = failed(await runtime.run({ name: 'rotateVertices', args: { pivot: '12, 17', angle: 30 } }));
    expect(error.suggestion).toContain('[12,17]');
    expect(error.suggestion).not.toContain('[1]');
  });

  it('text items: every item, and the one-item reading offered too', async () => {
    const error = failed(await runtime.run({ name: 'check_price', args: { items: 'pumpkin, eggs, milk' } }));
    expect(error.suggestion).toContain('["pumpkin","eggs","milk"] (or ["pumpkin, eggs, milk"] if it is one item)');
  });
});

describe('an enum array', () => {
  it('uses the valid value the model sent, not the default (concert_find_nearby amenities "Disability Access")', async () => {
    const error = failed(await runtime.run({ name: 'concert_find_nearby', args: { location: 'Berlin', amenities: 'Disability Access' } }));
    expect(error.suggestion).toContain('["Disability Access"]');
    expect(error.suggestion).not.toContain('Parking');
  });

  it('a value that is not allowed falls back to an allowed one', async () => {
    const error = failed(await runtime.run({ name: 'concert_find_nearby', args: { location: 'Berlin', amenities: 'Free drinks' } }));
    expect(error.suggestion).toContain('["Parking"]');
  });
});

describe('no number a model may copy', () => {
  it('a number word becomes the number', async () => {
    const error = failed(await runtime.run({ name: 'count_things', args: { count: 'twelve' } }));
    expect(error.suggestion).toBe('For count, send 12 (a number in digits), not "twelve" (a word), and call again');
  });

  it('a value that says no number: no e.g. 1', async () => {
    const error = failed(await runtime.run({ name: 'count_things', args: { count: 'a few' } }));
    expect(error.detail).not.toMatch(/e\.g\. 1\b/);
    expect(error.suggestion).toBe('For count, send an integer, written as digits without quotes, and call again');
  });
});

describe('keys with control characters', () => {
  it('are echoed escaped in every message, the path keeps the key', async () => {
    const key = 'ite\u0000ms\n\u001b[2J';
    const error = failed(await runtime.run({ name: 'check_price', args: { [key]: ['eggs'] } }));
    for (const text of [error.message, error.detail, error.suggestion, ...(error.fields ?? []).map((field) => field.message ?? '')]) {
      expect([...text].some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f)).toBe(false);
    }
    expect(error.detail).toContain('ite\\u0000ms\\n\\u001b[2J');
    expect(error.fields?.some((field) => field.path === `/${key}`)).toBe(true);
  });
});
