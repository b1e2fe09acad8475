import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { FailureCode } from '../ground/failure-codes.ts';
import type { CompiledToolSchema, JsonSchema, SchemaValidator, ToolSchemaInput, ValidateOptions, ValidationResult } from '../ground/ports/schema-validator.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { findClosestName } from './closest-name.ts';
import { listValues } from './describe-schema.ts';
import { describeMissing, describeTypeMismatch, describeUnknownProperty, findMisplacedValues, nameInSentence } from './describe-values.ts';
import { describeFormat, describeImpossibleDate } from './format-expectations.ts';
import { describeJsonPointer, toJsonPointer } from './json-pointer.ts';
import { normaliseArguments } from './normalise-arguments.ts';
import { previewJson, truncateText } from './preview.ts';
import { summariseFieldErrors, type DescribedFieldError } from './summarise-field-errors.ts';
import { validationCrashed } from './validation-crashed.ts';

/** Converts a Standard Schema object to the JSON Schema advertised to the model; `undefined` when it cannot. */
export type StandardSchemaToJsonSchema = (schema: StandardSchemaV1) => JsonSchema | undefined;

/** The schema advertised when a Standard Schema object cannot be converted: any object. */
export const FALLBACK_ADVERTISED_SCHEMA: JsonSchema = Object.freeze({ type: 'object' });

/** True for an object that implements Standard Schema v1 (`'~standard'` with a `validate` function). */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null || !('~standard' in value)) return false;
  const props = (value as { '~standard': unknown })['~standard'];
  return typeof props === 'object' && props !== null && typeof (props as { validate?: unknown }).validate === 'function';
}

/**
 * The JSON Schema to advertise for a Standard Schema object, tried in order: the Standard JSON
 * Schema extension (`~standard.jsonSchema.input({ target: 'draft-2020-12' })`, which Zod 4
 * implements), then `convert`, else `undefined`. A converter that throws counts as "cannot".
 *
 * @see https://standardschema.dev (Standard Schema v1 and Standard JSON Schema)
 */
export function standardSchemaToJsonSchema(schema: StandardSchemaV1, convert?: StandardSchemaToJsonSchema): JsonSchema | undefined {
  const converter = (schema['~standard'] as { jsonSchema?: { input?: (options: { target: string }) => Record<string, unknown> } }).jsonSchema;
  if (typeof converter?.input === 'function') {
    try {
      return converter.input({ target: 'draft-2020-12' });
    } catch {
      // fall through to the user's converter
    }
  }
  if (convert !== undefined) {
    try {
      return convert(schema);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Options of {@link compileStandardSchema}. */
export interface CompileStandardSchemaOptions extends ValidateOptions {
  /** Remove `null` for optional, non-nullable properties (read from the advertised JSON Schema). @defaultValue true */
  nullAsAbsent?: boolean;
  /** Used when the schema does not implement the Standard JSON Schema extension. */
  toJsonSchema?: StandardSchemaToJsonSchema;
}

/**
 * Compiles a Standard Schema object (Zod 4, Valibot, ArkType...) into a {@link CompiledToolSchema}.
 * `jsonSchema` comes from {@link standardSchemaToJsonSchema}, or is `{ type: 'object' }` when no
 * conversion exists (then no schema-driven normalisation happens). `validate` runs the library's
 * own `validate` (which may be async), returns the library's output value on success, and maps its
 * issues (path → JSON Pointer) into the same field errors and codes as JSON Schema validation.
 * `validate` never throws or rejects.
 */
export function compileStandardSchema(schema: StandardSchemaV1, options: CompileStandardSchemaOptions): CompiledToolSchema {
  const converted = standardSchemaToJsonSchema(schema, options.toJsonSchema);
  const jsonSchema = converted ?? FALLBACK_ADVERTISED_SCHEMA;
  const normalise = {
    nullAsAbsent: converted !== undefined && (options.nullAsAbsent ?? true),
    coerce: converted === undefined ? 'none' : options.coerce,
  } as const;
  return {
    jsonSchema,
    validate(value: unknown): ValidationResult | Promise<ValidationResult> {
      try {
        const normalised = normaliseArguments(value, jsonSchema, normalise);
        const result = schema['~standard'].validate(normalised.value);
        if (result instanceof Promise) {
          return result.then(
            (settled) => toValidationResult(settled, normalised.value, normalised.normalisations, jsonSchema),
            (error: unknown) => validationCrashed(error),
          );
        }
        return toValidationResult(result, normalised.value, normalised.normalisations, jsonSchema);
      } catch (error) {
        return validationCrashed(error);
      }
    },
  };
}

function toValidationResult(result: StandardSchemaV1.Result<unknown>, input: unknown, normalisations: string[], jsonSchema: JsonSchema): ValidationResult {
  if (result.issues === undefined) return { ok: true, value: result.value, normalisations };
  return summariseFieldErrors(result.issues.flatMap((issue) => describeIssue(issue, input, jsonSchema)));
}

type LooseIssue = StandardSchemaV1.Issue & Record<string, unknown>;

const TYPE_KINDS = new Set([
  'invalid_type',
  'string',
  'number',
  'bigint',
  'boolean',
  'object',
  'array',
  'tuple',
  'date',
  'integer',
  'null',
  'symbol',
  'function',
  'safe_integer',
  'finite',
]);
const ENUM_KINDS = new Set(['invalid_value', 'picklist', 'enum', 'literal']);
const RANGE_KINDS = new Set([
  'too_small',
  'too_big',
  'not_multiple_of',
  'min_length',
  'max_length',
  'length',
  'min_value',
  'max_value',
  'value',
  'min_size',
  'max_size',
  'size',
  'multiple_of',
  'non_empty',
  'min_entries',
  'max_entries',
]);
const UNION_KINDS = new Set(['invalid_union', 'union', 'variant']);
const FORMAT_BY_KIND: Record<string, string> = {
  iso_date: 'date',
  iso_date_time: 'date-time',
  iso_timestamp: 'date-time',
  iso_time: 'time',
  email: 'email',
  rfc_email: 'email',
  url: 'uri',
  uuid: 'uuid',
  ip: 'ipv4',
  ipv4: 'ipv4',
  ipv6: 'ipv6',
};
const ZOD_FORMATS: Record<string, string> = { datetime: 'date-time', url: 'uri' };

function describeIssue(issue: StandardSchemaV1.Issue, input: unknown, jsonSchema: JsonSchema): DescribedFieldError[] {
  const loose = issue as LooseIssue;
  const segments = (issue.path ?? []).map((segment) => {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment;
    return typeof key === 'number' ? key : String(key);
  });
  const path = toJsonPointer(segments);
  const name = describeJsonPointer(path);
  const kind = typeof loose.code === 'string' ? loose.code : typeof loose.type === 'string' ? loose.type : '';
  const found = lookUp(input, segments);
  const libraryMessage = truncateText(issue.message, 200);

  if (kind === 'unrecognized_keys' && Array.isArray(loose.keys)) {
    const parentSchema = propertySchemaAt(jsonSchema, segments);
    const properties = propertiesOf(parentSchema);
    const misplaced = findMisplacedValues(found.value, parentSchema);
    return loose.keys.map((key) => {
      const pair = misplaced.find((candidate) => candidate.sent === String(key));
      return describeUnknownProperty(path, String(key), {
        allowed: Object.keys(properties),
        data: found.value,
        paired: pair === undefined ? undefined : { property: pair.missing, schema: properties[pair.missing] },
      });
    });
  }
  if (!found.found && segments.length > 0) {
    const last = String(segments[segments.length - 1]);
    const parent = lookUp(input, segments.slice(0, -1));
    const misplaced = findMisplacedValues(parent.value, propertySchemaAt(jsonSchema, segments.slice(0, -1))).find((pair) => pair.missing === last);
    return [describeMissing(path, last, propertySchemaAt(jsonSchema, segments), misplaced?.sent)];
  }
  const received = previewJson(found.value);
  if (loose.expected === 'never' && found.found && segments.length > 0) {
    const parentSegments = segments.slice(0, -1);
    const parentAllowed = propertyNamesAt(jsonSchema, parentSegments);
    return [
      describeUnknownProperty(toJsonPointer(parentSegments), String(segments[segments.length - 1]), {
        allowed: parentAllowed,
        data: lookUp(input, parentSegments).value,
      }),
    ];
  }
  if (kind === 'invalid_type' || (TYPE_KINDS.has(kind) && kind !== 'invalid_type' && typeof loose.expected === 'string')) {
    const types = expectedJsonTypes(propertySchemaAt(jsonSchema, segments), loose.expected);
    if (types.length > 0) return [describeTypeMismatch(path, types, found.value, propertySchemaAt(jsonSchema, segments))];
  }
  let code: FailureCode = 'SCHEMA_VALIDATION_FAILED';
  let problem = 'other';
  let expected: string | undefined = typeof loose.expected === 'string' ? loose.expected : undefined;
  let headline = `${name} is invalid`;
  let fix = `fix ${nameInSentence(name)}: ${libraryMessage}`;
  const format = kind === 'invalid_format' && typeof loose.format === 'string' ? (ZOD_FORMATS[loose.format] ?? loose.format) : FORMAT_BY_KIND[kind];

  if (format !== undefined) {
    const expectation = describeFormat(format);
    expected = expectation.example ? `${expectation.expected}, e.g. ${expectation.example}` : expectation.expected;
    code = expectation.isDate ? 'DATE_FORMAT_ERROR' : 'INVALID_FORMAT';
    problem = 'format';
    const impossible = describeImpossibleDate(format, found.value);
    if (impossible !== undefined) {
      return [
        {
          path,
          problem,
          expected,
          received,
          message: `${name}: ${received} is in the right layout but is not a valid ${format}: ${impossible}`,
          code: 'DATE_FORMAT_ERROR',
          headline: `${name} is not a valid ${format}`,
          fix: `correct ${nameInSentence(name)}: ${impossible} (${expected})`,
        },
      ];
    }
    headline = `${name} has the wrong format`;
    fix = `convert ${nameInSentence(name)} to ${expected}`;
    return [{ path, problem, expected, received, message: `${name}: expected ${expected}, received ${received}`, code, headline, fix }];
  }
  if (kind === 'regex' || (kind === 'invalid_format' && loose.format === 'regex')) {
    code = 'INVALID_FORMAT';
    problem = 'pattern';
    headline = `${name} has the wrong format`;
  } else if (TYPE_KINDS.has(kind)) {
    code = 'INVALID_TYPE';
    problem = 'type';
    headline = `${name} has the wrong type`;
    fix = expected === undefined ? `send ${nameInSentence(name)} with the right type` : `send ${nameInSentence(name)} as ${expected}`;
  } else if (ENUM_KINDS.has(kind)) {
    code = 'INVALID_ENUM';
    problem = 'enum';
    const values = Array.isArray(loose.values) ? (loose.values as unknown[]) : enumOf(propertySchemaAt(jsonSchema, segments));
    if (values !== undefined) {
      const closest =
        typeof found.value === 'string'
          ? findClosestName(
              found.value,
              values.filter((value): value is string => typeof value === 'string'),
            )
          : undefined;
      expected = values.length === 1 ? `exactly ${previewJson(values[0], 60)}` : `one of ${listValues(values, 12)}`;
      return [
        {
          path,
          problem: 'enum',
          expected,
          received,
          message: `${name}: ${received} is not allowed; ${values.length === 1 ? 'the only allowed value is' : 'allowed values are'} ${listValues(values, 12)}${closest === undefined ? '' : ` (did you mean ${JSON.stringify(closest)}?)`}`,
          code: 'INVALID_ENUM',
          headline: `${name} is not one of the allowed values`,
          fix: closest === undefined ? `use ${expected} for ${nameInSentence(name)}` : `use ${JSON.stringify(closest)} for ${nameInSentence(name)}`,
        },
      ];
    }
    headline = `${name} is not one of the allowed values`;
    fix = `use ${expected ?? 'an allowed value'} for ${nameInSentence(name)}`;
  } else if (RANGE_KINDS.has(kind)) {
    code = 'OUT_OF_RANGE';
    problem = /length|size|entries|empty/.test(kind) || loose.origin === 'string' || loose.origin === 'array' ? 'length' : 'range';
    headline = `${name} is out of range`;
  } else if (UNION_KINDS.has(kind)) {
    problem = 'alternatives';
    headline = `${name} matches none of the allowed alternatives`;
  }
  return [
    {
      path,
      problem,
      ...(expected === undefined ? {} : { expected }),
      received,
      message: `${name}: ${libraryMessage} (received ${received})`,
      code,
      headline,
      fix,
    },
  ];
}

function lookUp(value: unknown, segments: ReadonlyArray<string | number>): { found: boolean; value: unknown } {
  let current = value;
  for (const segment of segments) {
    if (typeof current !== 'object' || current === null || !(String(segment) in current)) return { found: false, value: undefined };
    current = (current as Record<string, unknown>)[String(segment)];
  }
  return { found: true, value: current };
}

function propertySchemaAt(schema: JsonSchema, segments: ReadonlyArray<string | number>): unknown {
  let current: unknown = schema;
  for (const segment of segments) {
    if (typeof current !== 'object' || current === null) return undefined;
    const record = current as Record<string, unknown>;
    if (typeof segment === 'number' || /^\d+$/.test(segment)) current = record.items;
    else current = (record.properties as Record<string, unknown> | undefined)?.[segment];
  }
  return current;
}

function propertyNamesAt(schema: JsonSchema, segments: ReadonlyArray<string | number>): string[] {
  const target = segments.length === 0 ? schema : propertySchemaAt(schema, segments);
  const properties = typeof target === 'object' && target !== null ? (target as Record<string, unknown>).properties : undefined;
  return typeof properties === 'object' && properties !== null ? Object.keys(properties) : [];
}

function propertiesOf(schema: unknown): Record<string, unknown> {
  const properties = typeof schema === 'object' && schema !== null ? (schema as Record<string, unknown>).properties : undefined;
  return typeof properties === 'object' && properties !== null ? (properties as Record<string, unknown>) : {};
}

function enumOf(schema: unknown): unknown[] | undefined {
  const values = typeof schema === 'object' && schema !== null ? (schema as Record<string, unknown>).enum : undefined;
  return Array.isArray(values) ? values : undefined;
}

/** Library type names (Zod, Valibot, ArkType) as JSON types. */
const LIBRARY_TYPES: Record<string, string> = {
  string: 'string',
  number: 'number',
  int: 'integer',
  integer: 'integer',
  safe_integer: 'integer',
  bigint: 'integer',
  boolean: 'boolean',
  array: 'array',
  tuple: 'array',
  set: 'array',
  object: 'object',
  record: 'object',
  map: 'object',
  null: 'null',
};

/** The JSON types a field takes: from the advertised JSON Schema when it names them, else from the library's `expected`. */
function expectedJsonTypes(schema: unknown, libraryExpected: unknown): string[] {
  const record = typeof schema === 'object' && schema !== null ? (schema as Record<string, unknown>) : {};
  if (typeof record.type === 'string') return [record.type];
  if (Array.isArray(record.type)) return record.type.map(String);
  if (typeof libraryExpected !== 'string') return [];
  const types = libraryExpected
    .split(/\s*\|\s*|\s+or\s+/)
    .map((part) => LIBRARY_TYPES[part.trim().toLowerCase()])
    .filter((type): type is string => type !== undefined);
  return [...new Set(types)];
}

/**
 * The `SchemaValidator` both built-in validators are: a boolean or JSON Schema object goes to
 * `compileJsonSchema`, a Standard Schema object to {@link compileStandardSchema}, and a compiled
 * schema is cached by schema identity and `coerce` mode (a boolean is compiled on every call).
 *
 * @throws ToolrunError `INVALID_SCHEMA` from `compile` for a schema that is neither an object, a
 *   boolean nor a Standard Schema; whatever `compileJsonSchema` throws.
 */
export function cachingSchemaValidator(
  compileJsonSchema: (schema: JsonSchema, validateOptions: ValidateOptions) => CompiledToolSchema,
  options: { nullAsAbsent: boolean; toJsonSchema?: StandardSchemaToJsonSchema | undefined },
): SchemaValidator {
  const cache = new WeakMap<object, Map<ValidateOptions['coerce'], CompiledToolSchema>>();
  return {
    compile(schema: ToolSchemaInput, validateOptions: ValidateOptions): CompiledToolSchema {
      if (typeof schema === 'boolean') return compileJsonSchema(schema, validateOptions);
      if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
        throw new ToolrunError(
          'INVALID_SCHEMA',
          `a tool schema must be a JSON Schema object, a boolean or a Standard Schema object, received ${Array.isArray(schema) ? 'an array' : typeof schema}`,
        );
      }
      let byMode = cache.get(schema);
      const cached = byMode?.get(validateOptions.coerce);
      if (cached !== undefined) return cached;
      const compiled = isStandardSchema(schema)
        ? compileStandardSchema(schema, {
            coerce: validateOptions.coerce,
            nullAsAbsent: options.nullAsAbsent,
            ...(options.toJsonSchema ? { toJsonSchema: options.toJsonSchema } : {}),
          })
        : compileJsonSchema(schema as JsonSchema, validateOptions);
      if (byMode === undefined) {
        byMode = new Map();
        cache.set(schema, byMode);
      }
      byMode.set(validateOptions.coerce, compiled);
      return compiled;
    },
  };
}
