import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ValidationResult } from '../ground/ports/schema-validator.ts';
import { createAjvSchemaValidator } from './ajv-schema-validator.ts';
import { FALLBACK_ADVERTISED_SCHEMA, isStandardSchema } from './standard-schema.ts';

const zodBooking = z.strictObject({
  date: z.iso.date(),
  passengers: z.number().int().min(1),
  cabin: z.enum(['economy', 'business']),
  note: z.string().optional(),
});

const valibotBooking = v.strictObject({
  date: v.pipe(v.string(), v.isoDate()),
  passengers: v.pipe(v.number(), v.integer(), v.minValue(1)),
  cabin: v.picklist(['economy', 'business']),
  note: v.optional(v.string()),
});

async function validate(
  schema: Parameters<ReturnType<typeof createAjvSchemaValidator>['compile']>[0],
  value: unknown,
  coerce: 'none' | 'scalars' = 'none',
): Promise<ValidationResult> {
  return createAjvSchemaValidator().compile(schema, { coerce }).validate(value);
}

describe('Standard Schema objects', () => {
  it('recognises Zod 4 and Valibot schemas, not JSON Schema', () => {
    expect(isStandardSchema(zodBooking)).toBe(true);
    expect(isStandardSchema(valibotBooking)).toBe(true);
    expect(isStandardSchema({ type: 'object' })).toBe(false);
  });

  it('advertises Zod 4 through the Standard JSON Schema extension', () => {
    const compiled = createAjvSchemaValidator().compile(zodBooking, { coerce: 'none' });
    expect(compiled.jsonSchema).toMatchObject({
      type: 'object',
      properties: { passengers: { type: 'integer', minimum: 1 }, cabin: { enum: ['economy', 'business'] }, note: { type: 'string' } },
      required: ['date', 'passengers', 'cabin'],
      additionalProperties: false,
    });
  });

  it('advertises Valibot through the given converter, else any object', () => {
    expect(createAjvSchemaValidator().compile(valibotBooking, { coerce: 'none' }).jsonSchema).toBe(FALLBACK_ADVERTISED_SCHEMA);
    const converted = { type: 'object', properties: { passengers: { type: 'integer' } } };
    expect(createAjvSchemaValidator({ toJsonSchema: () => converted }).compile(valibotBooking, { coerce: 'none' }).jsonSchema).toBe(converted);
  });

  it.each([
    ['zod', zodBooking],
    ['valibot', valibotBooking],
  ] as const)('%s: valid arguments pass, optional null removed', async (_name, schema) => {
    const converted = { type: 'object', properties: { note: { type: 'string' }, passengers: { type: 'integer' } } };
    const validator = createAjvSchemaValidator({ toJsonSchema: () => converted });
    const result = await validator.compile(schema, { coerce: 'none' }).validate({ date: '2024-01-15', passengers: 2, cabin: 'economy', note: null });
    expect(result).toEqual({ ok: true, value: { date: '2024-01-15', passengers: 2, cabin: 'economy' }, normalisations: ['null-as-absent:/note'] });
  });

  it.each([
    ['zod', zodBooking],
    ['valibot', valibotBooking],
  ] as const)('%s: a wrong date is a DATE_FORMAT_ERROR on /date', async (_name, schema) => {
    const result = await validate(schema, { date: '2024/1/5', passengers: 2, cabin: 'economy' });
    expect(result).toMatchObject({
      ok: false,
      code: 'DATE_FORMAT_ERROR',
      message: 'date has the wrong format',
      fields: [{ path: '/date', problem: 'format', expected: 'YYYY-MM-DD, e.g. 2024-01-15', received: '"2024/1/5"' }],
    });
  });

  it.each([
    ['zod', zodBooking],
    ['valibot', valibotBooking],
  ] as const)('%s: a missing field is MISSING_REQUIRED on its own path', async (_name, schema) => {
    const result = await validate(schema, { date: '2024-01-15', cabin: 'economy' });
    expect(result).toMatchObject({ ok: false, code: 'MISSING_REQUIRED', fields: [{ path: '/passengers', problem: 'required' }] });
  });

  it.each([
    ['zod', zodBooking],
    ['valibot', valibotBooking],
  ] as const)('%s: enum, unknown key and type problems map to field errors', async (_name, schema) => {
    const result = await validate(schema, { date: '2024-01-15', passengers: 'two', cabin: 'first', notes: 'x' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.code).toBe('SCHEMA_VALIDATION_FAILED');
    const byPath = Object.fromEntries(result.fields.map((field) => [field.path, field.problem]));
    expect(byPath).toEqual({ '/passengers': 'type', '/cabin': 'enum', '/notes': 'unknown' });
  });

  it('zod: coerces "2" with coerce: scalars, driven by the advertised JSON Schema', async () => {
    expect(await validate(zodBooking, { date: '2024-01-15', passengers: '2', cabin: 'economy' }, 'scalars')).toEqual({
      ok: true,
      value: { date: '2024-01-15', passengers: 2, cabin: 'economy' },
      normalisations: ['coerced:/passengers'],
    });
  });

  it('supports async Standard Schema validation', async () => {
    const asyncSchema = z.object({ name: z.string() }).refine(async (value) => value.name !== 'taken', { message: 'name is taken', path: ['name'] });
    const compiled = createAjvSchemaValidator().compile(asyncSchema, { coerce: 'none' });
    const pending = compiled.validate({ name: 'taken' });
    expect(pending).toBeInstanceOf(Promise);
    expect(await pending).toMatchObject({ ok: false, code: 'SCHEMA_VALIDATION_FAILED', fields: [{ path: '/name', problem: 'other' }] });
  });
});
