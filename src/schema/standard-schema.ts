import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { FailureCode } from '../ground/failure-codes.ts';
import type { CompiledToolSchema, JsonSchema, ValidateOptions, ValidationResult } from '../ground/ports/schema-validator.ts';
import { findClosestName } from './closest-name.ts';
import { describeMissing } from './describe-values.ts';
import { describeFormat } from './format-expectations.ts';
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
    const allowed = propertyNamesAt(jsonSchema, segments);
    return loose.keys.map((key) =>
      describeUnknownKey(
        `${path}/${String(key).replaceAll('~', '~0').replaceAll('/', '~1')}`,
        String(key),
        allowed,
        found.found ? (found.value as Record<string, unknown>)[String(key)] : undefined,
      ),
    );
  }
  if (!found.found && segments.length > 0) {
    const last = segments[segments.length - 1];
    return [describeMissing(path, String(last), propertySchemaAt(jsonSchema, segments))];
  }
  const received = previewJson(found.value);
  if (loose.expected === 'never' && found.found && segments.length > 0) {
    const parentAllowed = propertyNamesAt(jsonSchema, segments.slice(0, -1));
    return [describeUnknownKey(path, String(segments[segments.length - 1]), parentAllowed, found.value)];
  }

  let code: FailureCode = 'SCHEMA_VALIDATION_FAILED';
  let problem = 'other';
  let expected: string | undefined = typeof loose.expected === 'string' ? loose.expected : undefined;
  let headline = `${name} is invalid`;
  let fix = `fix ${name}: ${libraryMessage}`;
  const format = kind === 'invalid_format' && typeof loose.format === 'string' ? (ZOD_FORMATS[loose.format] ?? loose.format) : FORMAT_BY_KIND[kind];

  if (format !== undefined) {
    const expectation = describeFormat(format);
    expected = expectation.example ? `${expectation.expected}, e.g. ${expectation.example}` : expectation.expected;
    code = expectation.isDate ? 'DATE_FORMAT_ERROR' : 'INVALID_FORMAT';
    problem = 'format';
    headline = `${name} has the wrong format`;
    fix = `convert ${name} to ${expected}`;
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
    fix = expected === undefined ? `send ${name} with the right type` : `send ${name} as ${expected}`;
  } else if (ENUM_KINDS.has(kind)) {
    code = 'INVALID_ENUM';
    problem = 'enum';
    if (Array.isArray(loose.values)) expected = `one of ${loose.values.map((value) => previewJson(value, 40)).join(', ')}`;
    headline = `${name} is not one of the allowed values`;
    fix = `use ${expected ?? 'an allowed value'} for ${name}`;
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

function describeUnknownKey(path: string, key: string, allowed: string[], value: unknown): DescribedFieldError {
  const closest = findClosestName(key, allowed);
  const allowedText = allowed.length > 0 ? `allowed: ${allowed.slice(0, 20).join(', ')}` : 'no other properties are allowed';
  return {
    path,
    problem: 'unknown',
    expected: closest === undefined ? allowedText : `"${closest}" (${allowedText})`,
    received: previewJson(value),
    message: `unknown parameter "${describeJsonPointer(path)}"${closest === undefined ? '' : ` (did you mean "${closest}"?)`}; ${allowedText}`,
    code: 'UNKNOWN_PARAMETER',
    headline: `unknown parameter "${describeJsonPointer(path)}"`,
    fix: closest === undefined ? `remove "${key}"` : `rename "${key}" to "${closest}"`,
  };
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
