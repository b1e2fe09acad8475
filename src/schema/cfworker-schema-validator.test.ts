import { describe, expect, it } from 'vitest';
import type { JsonSchema, ValidationResult } from '../ground/ports/schema-validator.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { createAjvSchemaValidator } from './ajv-schema-validator.ts';
import { canGenerateCode, createCfworkerSchemaValidator } from './cfworker-schema-validator.ts';

function run(engine: 'ajv' | 'cfworker', schema: JsonSchema, value: unknown, coerce: 'none' | 'scalars' = 'none'): ValidationResult {
  const result = createAjvSchemaValidator({ jsonSchemaEngine: engine }).compile(schema, { coerce }).validate(value);
  if (result instanceof Promise) throw new Error('expected a synchronous result');
  return result;
}

const booking = {
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

/** [name, schema, value, coerce?]: the interpreter's failure must equal Ajv's, field for field. */
const sameAsAjv: Array<[string, JsonSchema, unknown, ('none' | 'scalars')?]> = [
  ['valid booking', booking, { date: '2024-01-15', passengers: 2, cabin: 'economy' }],
  ['wrong date format', booking, { date: '15/01/2024', passengers: 2, cabin: 'economy' }],
  ['date-like pattern', booking, { date: '2024-01-15', passengers: 2, cabin: 'economy', birthday: '1/2/1990' }],
  ['other pattern', booking, { date: '2024-01-15', passengers: 2, cabin: 'economy', code: 'ab' }],
  ['enum with a closest value', booking, { date: '2024-01-15', passengers: 2, cabin: 'econmy' }],
  ['missing fields', booking, { passengers: 2 }],
  ['"5" for an integer', booking, { date: '2024-01-15', passengers: '5', cabin: 'economy' }],
  ['out of range', booking, { date: '2024-01-15', passengers: 20, cabin: 'economy' }],
  ['unknown parameter with a closest name', booking, { date: '2024-01-15', passengers: 2, cabin: 'economy', pasengers: 3 }],
  ['everything wrong at once', booking, { date: '15/01/2024', passengers: '2', cabin: 'econmy', extra: 1, code: 'ab' }],
  ['null for an optional field (normalised)', booking, { date: '2024-01-15', passengers: 2, cabin: 'economy', note: null }],
  ['coerced scalars', booking, { date: '2024-01-15', passengers: '2', cabin: 'economy', insured: 'true' }, 'scalars'],
  ['not an object', booking, ['a']],
  [
    'unevaluatedProperties: false, escaped name',
    { type: 'object', properties: { a: { type: 'string' } }, unevaluatedProperties: false },
    { a: 'x', 'b/c~d': 1 },
  ],
  [
    'anyOf: none fits',
    {
      type: 'object',
      properties: {
        when: {
          anyOf: [
            { type: 'string', format: 'date' },
            { type: 'integer', minimum: 0 },
          ],
        },
      },
    },
    { when: true },
  ],
  [
    'anyOf: the one alternative that fits (nullable date)',
    { type: 'object', properties: { when: { anyOf: [{ type: 'string', format: 'date' }, { type: 'null' }] } } },
    { when: 'tomorrow' },
  ],
  ['oneOf matched twice', { type: 'object', properties: { n: { oneOf: [{ type: 'integer' }, { type: 'number' }] } } }, { n: 3 }],
  ['oneOf matched by none', { oneOf: [{ type: 'string' }, { type: 'boolean' }] }, 3],
  [
    'nested paths',
    {
      type: 'object',
      properties: {
        passengers: {
          type: 'array',
          items: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 2 }, age: { type: 'integer', exclusiveMinimum: 0 } } },
        },
      },
    },
    { passengers: [{ name: 'A', age: 0 }, { age: 3 }] },
  ],
  [
    'additionalProperties as a schema',
    { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'number' } },
    { a: 'x', b: 'y', c: 2 },
  ],
  ['a false property schema', { type: 'object', properties: { secret: false } }, { secret: 1 }],
  ['the false schema', false, { a: 1 }],
  [
    '$ref to $defs',
    {
      type: 'object',
      $defs: { code: { type: 'string', pattern: '^[A-Z]{3}$' } },
      properties: { from: { $ref: '#/$defs/code' }, to: { $ref: '#/$defs/code' } },
    },
    { from: 'lhr', to: 7 },
  ],
  ['not: {} written by the user (not a false schema)', { type: 'object', properties: { a: { not: {} } } }, { a: 1 }],
  ['const and not', { type: 'object', properties: { kind: { const: 'flight' }, id: { not: { type: 'string' } } } }, { kind: 'fligt', id: 'x' }],
  [
    'multipleOf, lengths and counts',
    {
      type: 'object',
      properties: {
        step: { multipleOf: 5 },
        name: { type: 'string', maxLength: 3 },
        tags: { type: 'array', minItems: 2, maxItems: 3 },
        meta: { type: 'object', minProperties: 1 },
      },
    },
    { step: 7, name: 'abcd', tags: ['a'], meta: {} },
  ],
  ['uniqueItems of scalars', { type: 'array', items: { type: 'string' }, uniqueItems: true }, ['a', 'b', 'a', 'b']],
  ['uniqueItems of objects', { type: 'array', uniqueItems: true }, [{ a: 1, b: 2 }, { c: 3 }, { b: 2, a: 1 }]],
  ['propertyNames', { type: 'object', propertyNames: { pattern: '^[a-z]+$' } }, { good: 1, Bad: 2 }],
  ['propertyNames with maxLength', { type: 'object', propertyNames: { maxLength: 3 } }, { abcd: 1 }],
  ['contains', { type: 'array', contains: { type: 'integer' } }, ['a', 'b']],
  ['minContains', { type: 'array', contains: { type: 'integer' }, minContains: 2 }, [1, 'b']],
  ['maxContains', { type: 'array', contains: { type: 'integer' }, maxContains: 1 }, [1, 2]],
  ['dependentRequired', { type: 'object', dependentRequired: { card: ['cvv'] } }, { card: '4111' }],
  ['if / then', { type: 'object', if: { properties: { cabin: { const: 'first' } } }, then: { required: ['lounge'] } }, { cabin: 'first' }],
  [
    'draft-07 tuple with additionalItems: false',
    { $schema: 'http://json-schema.org/draft-07/schema#', type: 'array', items: [{ type: 'string' }], additionalItems: false },
    ['a', 'b', 'c'],
  ],
  ['2020-12 prefixItems with items: false', { type: 'array', prefixItems: [{ type: 'string' }], items: false }, ['a', 'b', 'c']],
  ['draft-04 schema runs as draft-07', { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object', required: ['a'] }, {}],
  [
    'formats: email, uri, date-time, uuid, time',
    {
      type: 'object',
      properties: {
        email: { type: 'string', format: 'email' },
        uri: { type: 'string', format: 'uri' },
        at: { type: 'string', format: 'date-time' },
        id: { type: 'string', format: 'uuid' },
        time: { type: 'string', format: 'time' },
      },
    },
    { email: 'a@', uri: 'nope', at: '2024-01-15 10:00', id: '123', time: '25:00:00Z' },
  ],
  [
    'valid formats',
    {
      type: 'object',
      properties: { email: { type: 'string', format: 'email' }, at: { type: 'string', format: 'date-time' }, id: { type: 'string', format: 'uuid' } },
    },
    { email: 'a@example.com', at: '2024-01-15T10:00:00Z', id: '123e4567-e89b-12d3-a456-426614174000' },
  ],
  ['an unknown format accepts every string', { type: 'string', format: 'x-airport' }, 'anything'],
  ['pattern and format together', { type: 'string', format: 'date', pattern: '^2024' }, '2023-13-01'],
  ['a url longer than the bound', { type: 'string', format: 'url' }, `https://example.com/${'a'.repeat(2100)}`],
  [
    'a property named pattern is a property',
    { type: 'object', properties: { pattern: { type: 'string' }, format: { type: 'integer' } }, required: ['pattern'] },
    { format: 'x' },
  ],
  ['type arrays', { type: 'object', properties: { v: { type: ['string', 'null'] } } }, { v: 3 }],
];

describe('createCfworkerSchemaValidator: the same failures as Ajv', () => {
  it.each(sameAsAjv)('%s', (_name, schema, value, coerce = 'none') => {
    const interpreted = run('cfworker', schema, value, coerce);
    expect(interpreted).toEqual(run('ajv', schema, value, coerce));
  });

  it('the standalone validator gives the same failure as the engine option', () => {
    const value = { date: '15/01/2024', passengers: 0, cabin: 'econmy', extra: 1 };
    const standalone = createCfworkerSchemaValidator().compile(booking, { coerce: 'none' }).validate(value);
    expect(standalone).toEqual(run('ajv', booking, value));
    expect(standalone).toMatchObject({ ok: false, fields: [{ path: '/extra' }, { path: '/date' }, { path: '/passengers' }, { path: '/cabin' }] });
  });
});

describe('createCfworkerSchemaValidator: schema checks', () => {
  const compileError = (schema: unknown): ToolrunError | undefined => {
    try {
      createCfworkerSchemaValidator().compile(schema as JsonSchema, { coerce: 'none' });
    } catch (error) {
      if (ToolrunError.is(error)) return error;
      throw error;
    }
    return undefined;
  };

  it.each([
    ['an unknown type name', { type: 'object', properties: { a: { type: 'strin' } } }, /type must be one of/],
    ['required not an array', { type: 'object', required: 'a' }, /required must be an array/],
    ['a pattern with lookahead', { type: 'string', pattern: '^(?=a)a$' }, /lookahead|lookaround|look/i],
    ['a patternProperties pattern with a backreference', { type: 'object', patternProperties: { '^(a)\\1$': {} } }, /backreference|\\1/i],
    ['an unresolvable $ref', { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } }, /can't resolve reference/],
    ['a non-numeric bound', { type: 'integer', minimum: '1' }, /minimum must be a number/],
  ])('refuses %s with INVALID_SCHEMA, as Ajv does', (_name, schema, message) => {
    const error = compileError(schema);
    expect(error?.code).toBe('INVALID_SCHEMA');
    expect(error?.message).toMatch(message);
    expect(() => createAjvSchemaValidator({ jsonSchemaEngine: 'ajv' }).compile(schema as JsonSchema, { coerce: 'none' })).toThrow(ToolrunError);
  });

  it('leaves the caller schema untouched (the interpreter marks the copy it dereferences)', () => {
    const schema = { type: 'object', properties: { code: { type: 'string', pattern: '^[A-Z]{3}$', format: 'x' } }, $defs: { a: { type: 'string' } } };
    const before = JSON.stringify(schema);
    const compiled = createCfworkerSchemaValidator().compile(schema, { coerce: 'none' });
    compiled.validate({ code: 'abc' });
    expect(JSON.stringify(schema)).toBe(before);
    expect(Object.getOwnPropertyNames(schema.properties.code)).toEqual(['type', 'pattern', 'format']);
    expect(compiled.jsonSchema).toBe(schema);
  });

  it('caches by schema identity and coerce mode, and never throws', () => {
    const validator = createCfworkerSchemaValidator();
    const first = validator.compile(booking, { coerce: 'none' });
    expect(validator.compile(booking, { coerce: 'none' })).toBe(first);
    expect(validator.compile(booking, { coerce: 'scalars' })).not.toBe(first);
    const cyclic: Record<string, unknown> = { date: '2024-01-15' };
    cyclic.self = cyclic;
    for (const value of [undefined, null, 1, 'x', [], cyclic, { passengers: 10n }, Object.create(null), { ['\ud800']: 1 }]) {
      expect(() => first.validate(value)).not.toThrow();
    }
  });
});

describe('createCfworkerSchemaValidator: linear-time patterns', () => {
  it('runs a catastrophic pattern on the linear engine: 30,000 characters answer at once', () => {
    const compiled = createCfworkerSchemaValidator().compile({ type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } }, { coerce: 'none' });
    // A backtracking engine takes 2^n steps on "aaa…a!"; the linear engine answers in one pass.
    const result = compiled.validate({ s: `${'a'.repeat(30_000)}!` });
    expect(result).toMatchObject({ ok: false, code: 'INVALID_FORMAT', fields: [{ path: '/s', problem: 'pattern' }] });
    expect(compiled.validate({ s: 'aaaa' })).toMatchObject({ ok: true });
  });
});

describe('jsonSchemaEngine: auto', () => {
  it('uses Ajv where code generation is allowed (here)', () => {
    expect(canGenerateCode()).toBe(true);
    // Ajv refuses the unknown type at compile time; so does the interpreter: both compile paths throw.
    expect(() => createAjvSchemaValidator().compile({ type: 'strin' }, { coerce: 'none' })).toThrow(/does not compile/);
  });
});
