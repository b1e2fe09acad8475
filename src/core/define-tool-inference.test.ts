import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from './define-tool.ts';

describe('defineTool infers the arguments', () => {
  it('from a JSON Schema written as const', () => {
    const tool = defineTool({
      name: 'book_flight',
      description: 'Books a seat',
      inputSchema: {
        type: 'object',
        properties: {
          flight: { type: 'string' },
          seats: { type: 'integer', minimum: 1 },
          cabin: { enum: ['economy', 'business'] },
          notes: { type: 'array', items: { type: 'string' } },
        },
        required: ['flight', 'seats'],
        additionalProperties: false,
      } as const,
      execute: (args) => {
        expectTypeOf(args.flight).toEqualTypeOf<string>();
        expectTypeOf(args.seats).toEqualTypeOf<number>();
        expectTypeOf(args.cabin).toEqualTypeOf<'economy' | 'business' | undefined>();
        expectTypeOf(args.notes).toEqualTypeOf<string[] | undefined>();
        return { booked: args.flight };
      },
    });
    expectTypeOf(tool.execute).parameter(0).toEqualTypeOf<{ flight: string; seats: number; cabin?: 'economy' | 'business'; notes?: string[] }>();
  });

  it('as a plain object from a JSON Schema built at run time (not as const)', () => {
    const schema: Record<string, unknown> = { type: 'object', properties: { q: { type: 'string' } } };
    defineTool({
      name: 'search',
      description: 'Searches',
      inputSchema: schema,
      execute: (args) => {
        expectTypeOf(args).toEqualTypeOf<Record<string, unknown>>();
        return null;
      },
    });
    const widened = { type: 'object', properties: { q: { type: 'string' } } };
    defineTool({
      name: 'search_widened',
      description: 'Searches',
      inputSchema: widened,
      execute: (args) => {
        expectTypeOf(args).toEqualTypeOf<Record<string, unknown>>();
        return null;
      },
    });
  });

  it('from a Standard Schema (Zod)', () => {
    defineTool({
      name: 'weather',
      description: 'Forecast',
      inputSchema: z.object({ city: z.string(), days: z.number().optional() }),
      execute: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ city: string; days?: number | undefined }>();
        return null;
      },
    });
  });
});
