import { describeFormat } from './format-expectations.ts';
import { previewJson, truncateText } from './preview.ts';

/** Bound of a brief schema description, in characters. */
export const SCHEMA_SUMMARY_MAX_CHARS = 120;

/**
 * A brief, human-readable statement of what a schema accepts, for `expected`:
 * `string (YYYY-MM-DD)`, `one of "a", "b"`, `array of string`, `object with a, b`, `integer >= 1`,
 * `string or null`. Bounded to 120 characters; never throws.
 */
export function describeSchemaBriefly(schema: unknown): string {
  return truncateText(describe(schema, 0), SCHEMA_SUMMARY_MAX_CHARS);
}

function describe(schema: unknown, depth: number): string {
  if (schema === true || (isObject(schema) && Object.keys(schema).length === 0)) return 'any value';
  if (schema === false) return 'no value';
  if (!isObject(schema) || depth > 3) return 'a value';
  if ('const' in schema) return `exactly ${previewJson(schema.const, 40)}`;
  if (Array.isArray(schema.enum)) return `one of ${listValues(schema.enum, 6)}`;
  const types = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? schema.type.map(String) : [];
  if (types.length > 0) return types.map((type) => describeType(type, schema, depth)).join(' or ');
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const branches = schema[keyword];
    if (Array.isArray(branches))
      return `one of: ${branches
        .slice(0, 4)
        .map((branch) => describe(branch, depth + 1))
        .join(' | ')}${branches.length > 4 ? ' | …' : ''}`;
  }
  if (typeof schema.$ref === 'string') return `a value matching ${schema.$ref}`;
  if (isObject(schema.properties)) return describeType('object', schema, depth);
  if (typeof schema.format === 'string') return describeType('string', schema, depth);
  return 'a value';
}

function describeType(type: string, schema: Record<string, unknown>, depth: number): string {
  switch (type) {
    case 'string': {
      if (typeof schema.format === 'string') return `string (${describeFormat(schema.format).expected})`;
      if (typeof schema.pattern === 'string') return `string matching ${truncateText(schema.pattern, 40)}`;
      return 'string';
    }
    case 'integer':
    case 'number': {
      const bounds: string[] = [];
      if (typeof schema.minimum === 'number') bounds.push(`>= ${schema.minimum}`);
      if (typeof schema.exclusiveMinimum === 'number') bounds.push(`> ${schema.exclusiveMinimum}`);
      if (typeof schema.maximum === 'number') bounds.push(`<= ${schema.maximum}`);
      if (typeof schema.exclusiveMaximum === 'number') bounds.push(`< ${schema.exclusiveMaximum}`);
      return bounds.length > 0 ? `${type} ${bounds.join(', ')}` : type;
    }
    case 'array':
      return isObject(schema.items) || typeof schema.items === 'boolean' ? `array of ${describe(schema.items, depth + 1)}` : 'array';
    case 'object': {
      const names = isObject(schema.properties) ? Object.keys(schema.properties) : [];
      return names.length > 0 ? `object with ${names.slice(0, 6).join(', ')}${names.length > 6 ? ', …' : ''}` : 'object';
    }
    default:
      return type;
  }
}

/** `"a", "b", "c"` with `… (N more)` past `max` values. */
export function listValues(values: readonly unknown[], max: number): string {
  const shown = values.slice(0, max).map((value) => previewJson(value, 40));
  return values.length > max ? `${shown.join(', ')}, … (${values.length - max} more)` : shown.join(', ');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
