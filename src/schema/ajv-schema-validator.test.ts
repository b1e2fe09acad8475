import { describe, expect, it } from 'vitest';
import type { JsonSchema, ValidationResult } from '../ground/ports/schema-validator.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { createAjvSchemaValidator } from './ajv-schema-validator.ts';

const bookingSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['date', 'passengers', 'cabin'],
  properties: {
    date: { type: 'string', format: 'date', description: 'Travel date' },
    passengers: { type: 'integer', minimum: 1, maximum: 9 },
    cabin: { type: 'string', enum: ['economy', 'business', 'first'] },
    note: { type: 'string' },
    insured: { type: 'boolean' },
    code: { type: 'string', pattern: '^[A-Z]{3}$' },
    birthday: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
  },
} as const satisfies JsonSchema;

function validateSync(schema: JsonSchema, value: unknown, coerce: 'none' | 'scalars' = 'none'): ValidationResult {
  const result = createAjvSchemaValidator().compile(schema, { coerce }).validate(value);
  if (result instanceof Promise) throw new Error('expected a synchronous result');
  return result;
}

describe('createAjvSchemaValidator: verdicts and normalisations', () => {
  it('accepts valid arguments and returns them with no normalisations', () => {
    expect(validateSync(bookingSchema, { date: '2024-01-15', passengers: 2, cabin: 'economy' })).toEqual({
      ok: true,
      value: { date: '2024-01-15', passengers: 2, cabin: 'economy' },
      normalisations: [],
    });
  });

  it('treats null for an optional, non-nullable property as absent, on a copy', () => {
    const args = { date: '2024-01-15', passengers: 2, cabin: 'economy', note: null };
    expect(validateSync(bookingSchema, args)).toEqual({
      ok: true,
      value: { date: '2024-01-15', passengers: 2, cabin: 'economy' },
      normalisations: ['null-as-absent:/note'],
    });
    expect(args).toEqual({ date: '2024-01-15', passengers: 2, cabin: 'economy', note: null });
  });

  it('keeps null for a required property and reports it', () => {
    const result = validateSync(bookingSchema, { date: null, passengers: 2, cabin: 'economy' });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.fields.map((field) => [field.path, field.problem])).toEqual([['/date', 'type']]);
  });

  it('keeps null for a nullable optional property', () => {
    const schema = { type: 'object', properties: { note: { type: ['string', 'null'] }, other: { anyOf: [{ type: 'string' }, { type: 'null' }] } } };
    expect(validateSync(schema, { note: null, other: null })).toEqual({ ok: true, value: { note: null, other: null }, normalisations: [] });
  });

  it('coerces exact scalars with coerce: scalars, never into string fields', () => {
    const args = { date: '2024-01-15', passengers: '2', cabin: 'economy', insured: 'true', note: '5' };
    expect(validateSync(bookingSchema, args, 'scalars')).toEqual({
      ok: true,
      value: { date: '2024-01-15', passengers: 2, cabin: 'economy', insured: true, note: '5' },
      normalisations: ['coerced:/passengers', 'coerced:/insured'],
    });
    expect(args.passengers).toBe('2');
  });

  it.each(['2.5', ' 2', '2abc', '0x10', 'yes'])('does not coerce the inexact %j', (passengers) => {
    const result = validateSync(
      { type: 'object', properties: { n: { type: 'integer' }, b: { type: 'boolean' } } },
      { n: passengers, b: passengers },
      'scalars',
    );
    expect(result.ok).toBe(false);
  });

  it('caches compiled schemas by object identity and coerce mode', () => {
    const validator = createAjvSchemaValidator();
    const first = validator.compile(bookingSchema, { coerce: 'none' });
    expect(validator.compile(bookingSchema, { coerce: 'none' })).toBe(first);
    expect(validator.compile(bookingSchema, { coerce: 'scalars' })).not.toBe(first);
    expect(validator.compile({ ...bookingSchema }, { coerce: 'none' })).not.toBe(first);
    expect(first.jsonSchema).toBe(bookingSchema);
  });

  it('throws INVALID_SCHEMA for a schema that does not compile', () => {
    const validator = createAjvSchemaValidator();
    const attempt = (): unknown => validator.compile({ type: 'object', properties: { a: { type: 'strin' } } }, { coerce: 'none' });
    expect(attempt).toThrow(ToolrunError);
    try {
      attempt();
    } catch (error) {
      expect(ToolrunError.is(error) && error.code).toBe('INVALID_SCHEMA');
    }
    expect(() => validator.compile([] as unknown as JsonSchema, { coerce: 'none' })).toThrow(/JSON Schema object/);
  });

  it('runs draft-07 schemas as draft-07 (items as an array is a tuple)', () => {
    const draft7 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'array', items: [{ type: 'string' }], additionalItems: false };
    expect(validateSync(draft7, ['a']).ok).toBe(true);
    expect(validateSync(draft7, ['a', 'b']).ok).toBe(false);
  });

  it('gives two schemas that share an $id their own instances', () => {
    const validator = createAjvSchemaValidator();
    const one = validator.compile({ $id: 'https://example.com/tool', type: 'string' }, { coerce: 'none' });
    const two = validator.compile({ $id: 'https://example.com/tool', type: 'integer' }, { coerce: 'none' });
    expect(one.validate('x')).toMatchObject({ ok: true });
    expect(two.validate(1)).toMatchObject({ ok: true });
  });

  it('never throws, whatever the value', () => {
    const compiled = createAjvSchemaValidator().compile(bookingSchema, { coerce: 'scalars' });
    const cyclic: Record<string, unknown> = { date: '2024-01-15' };
    cyclic.self = cyclic;
    for (const value of [undefined, null, 1, 'x', [], cyclic, { passengers: 10n }, Object.create(null)]) {
      expect(() => compiled.validate(value)).not.toThrow();
    }
  });
});

describe('createAjvSchemaValidator: error wording', () => {
  it('a wrong date names the format and gives an example (DATE_FORMAT_ERROR)', () => {
    expect(validateSync(bookingSchema, { date: '2024/1/5', passengers: 1, cabin: 'economy' })).toEqual({
      ok: false,
      code: 'DATE_FORMAT_ERROR',
      message: 'date has the wrong format',
      detail: 'date: expected YYYY-MM-DD, e.g. 2024-01-15, received "2024/1/5"',
      suggestion: 'Convert date to YYYY-MM-DD, e.g. 2024-01-15, and call again',
      fields: [
        {
          path: '/date',
          problem: 'format',
          expected: 'YYYY-MM-DD, e.g. 2024-01-15',
          received: '"2024/1/5"',
          message: 'date: expected YYYY-MM-DD, e.g. 2024-01-15, received "2024/1/5"',
        },
      ],
    });
  });

  it('a date-like pattern is a DATE_FORMAT_ERROR; another pattern is INVALID_FORMAT', () => {
    const date = validateSync(bookingSchema, { date: '2024-01-15', passengers: 1, cabin: 'economy', birthday: '15/01/1990' });
    expect(!date.ok && [date.code, date.fields[0]?.expected]).toEqual(['DATE_FORMAT_ERROR', 'YYYY-MM-DD, e.g. 2024-01-15']);
    const other = validateSync(bookingSchema, { date: '2024-01-15', passengers: 1, cabin: 'economy', code: 'jfk' });
    expect(other).toMatchObject({
      ok: false,
      code: 'INVALID_FORMAT',
      message: 'code has the wrong format',
      fields: [{ path: '/code', problem: 'pattern', expected: 'a string matching ^[A-Z]{3}$', received: '"jfk"' }],
    });
  });

  it('an enum lists the allowed values and the closest one', () => {
    expect(validateSync(bookingSchema, { date: '2024-01-15', passengers: 1, cabin: 'Economy' })).toEqual({
      ok: false,
      code: 'INVALID_ENUM',
      message: 'cabin is not one of the allowed values',
      detail: 'cabin: "Economy" is not allowed; allowed values are "economy", "business", "first" (did you mean "economy"?)',
      suggestion: 'Use "economy" for cabin, and call again',
      fields: [
        {
          path: '/cabin',
          problem: 'enum',
          expected: 'one of "economy", "business", "first"',
          received: '"Economy"',
          message: 'cabin: "Economy" is not allowed; allowed values are "economy", "business", "first" (did you mean "economy"?)',
        },
      ],
    });
  });

  it('a missing field is named with its type and description', () => {
    expect(validateSync(bookingSchema, { passengers: 1, cabin: 'first' })).toEqual({
      ok: false,
      code: 'MISSING_REQUIRED',
      message: 'date is missing',
      detail: 'missing required field "date" (string (YYYY-MM-DD): Travel date)',
      suggestion: 'Add "date" (string (YYYY-MM-DD)), and call again',
      fields: [
        { path: '/date', problem: 'required', expected: 'string (YYYY-MM-DD)', message: 'missing required field "date" (string (YYYY-MM-DD): Travel date)' },
      ],
    });
  });

  it('"5" for an integer says send 5, not "5"', () => {
    expect(validateSync(bookingSchema, { date: '2024-01-15', passengers: '5', cabin: 'first' })).toEqual({
      ok: false,
      code: 'INVALID_TYPE',
      message: 'passengers has the wrong type',
      detail: 'passengers: expected integer, received string "5" — send 5 (a number), not "5" (a string)',
      suggestion: 'For passengers, send 5 (a number), not "5" (a string), and call again',
      fields: [
        {
          path: '/passengers',
          problem: 'type',
          expected: 'integer',
          received: '"5"',
          message: 'passengers: expected integer, received string "5" — send 5 (a number), not "5" (a string)',
        },
      ],
    });
  });

  it('out of range names the bound', () => {
    const result = validateSync(bookingSchema, { date: '2024-01-15', passengers: 12, cabin: 'first' });
    expect(result).toMatchObject({
      ok: false,
      code: 'OUT_OF_RANGE',
      message: 'passengers is out of range',
      fields: [{ path: '/passengers', problem: 'range', expected: '<= 9', received: '12' }],
    });
  });

  it('an unknown parameter is named with the closest allowed name', () => {
    const result = validateSync(bookingSchema, { date: '2024-01-15', passengers: 1, cabin: 'first', passenger_count: 1, notes: 'x' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.code).toBe('UNKNOWN_PARAMETER');
    expect(result.fields.map((field) => [field.path, field.problem, field.received])).toEqual([
      ['/passenger_count', 'unknown', '1'],
      ['/notes', 'unknown', '"x"'],
    ]);
    expect(result.fields[1]?.message).toBe('unknown parameter "notes" (did you mean "note"?); allowed: date, passengers, cabin, note, insured, code, birthday');
    expect(result.suggestion).toBe('Rename "passenger_count" to "passengers"; rename "notes" to "note", and call again');
  });

  it('unevaluatedProperties: false is an unknown parameter too, and JSON Pointer escapes the name', () => {
    const schema = { type: 'object', properties: { 'a/b': { type: 'string' } }, unevaluatedProperties: false };
    const result = validateSync(schema, { 'a/b': 'x', 'a~c': 1 });
    expect(result).toMatchObject({ ok: false, code: 'UNKNOWN_PARAMETER', fields: [{ path: '/a~0c', problem: 'unknown' }] });
  });

  it('summarises an anyOf failure once, with the alternatives', () => {
    const schema = {
      type: 'object',
      properties: {
        when: {
          anyOf: [
            { type: 'integer', minimum: 0 },
            { type: 'object', required: ['date'], properties: { date: { type: 'string' } } },
          ],
        },
      },
    };
    expect(validateSync(schema, { when: true })).toEqual({
      ok: false,
      code: 'SCHEMA_VALIDATION_FAILED',
      message: 'when matches none of the allowed alternatives',
      detail: 'when: true (boolean) matches none of the alternatives; expected one of: integer >= 0 | object with date',
      suggestion: 'Send when as one of: integer >= 0 | object with date, and call again',
      fields: [
        {
          path: '/when',
          problem: 'alternatives',
          expected: 'one of: integer >= 0 | object with date',
          received: 'true',
          message: 'when: true (boolean) matches none of the alternatives; expected one of: integer >= 0 | object with date',
        },
      ],
    });
  });

  it('reports the errors of the one alternative that fits the value (a nullable date)', () => {
    const schema = { type: 'object', properties: { when: { anyOf: [{ type: 'string', format: 'date' }, { type: 'null' }] } } };
    const result = validateSync(schema, { when: '2024/1/5' });
    expect(result).toMatchObject({ ok: false, code: 'DATE_FORMAT_ERROR', fields: [{ path: '/when', problem: 'format' }] });
    expect(!result.ok && result.fields).toHaveLength(1);
  });

  it('says which alternatives a oneOf matched more than once', () => {
    const schema = { oneOf: [{ type: 'integer' }, { type: 'number' }] };
    const result = validateSync(schema, 3);
    expect(result).toMatchObject({
      ok: false,
      code: 'SCHEMA_VALIDATION_FAILED',
      fields: [
        { path: '', problem: 'alternatives', message: 'the arguments: 3 matches alternatives 0 and 1, but must match exactly one of one of: integer | number' },
      ],
    });
  });

  it('mixed problems give SCHEMA_VALIDATION_FAILED with every field and a bounded detail', () => {
    const result = validateSync(bookingSchema, { date: '2024/1/5', passengers: 0, cabin: 'x'.repeat(5000) });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.code).toBe('SCHEMA_VALIDATION_FAILED');
    expect(result.message).toBe('3 problems with the arguments: date has the wrong format; passengers is out of range; cabin is not one of the allowed values');
    expect(result.fields.map((field) => field.path)).toEqual(['/date', '/passengers', '/cabin']);
    expect(result.detail.length).toBeLessThanOrEqual(1024);
    for (const field of result.fields) expect(field.received?.length ?? 0).toBeLessThanOrEqual(120);
  });

  it('nested paths are JSON Pointers', () => {
    const schema = {
      type: 'object',
      properties: { passengers: { type: 'array', items: { type: 'object', required: ['dob'], properties: { dob: { type: 'string', format: 'date' } } } } },
    };
    const result = validateSync(schema, { passengers: [{ dob: '1990-01-01' }, { dob: '01/01/1990' }, {}] });
    expect(!result.ok && result.fields.map((field) => [field.path, field.problem])).toEqual([
      ['/passengers/1/dob', 'format'],
      ['/passengers/2/dob', 'required'],
    ]);
  });
});
