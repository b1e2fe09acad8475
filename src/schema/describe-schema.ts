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

/**
 * A value that satisfies `schema` (as far as a brief reading tells), for the `e.g.` of a message,
 * built from what the model sent first: a scalar sent for an array becomes a one-item array
 * (`"vegan"` → `["vegan"]`, an enum value in the schema's spelling), a list sent as one string
 * keeps every item (`"3, 24"` → `[3, 24]`), a number sent as a string or a word becomes the number
 * (`"four"` → `4`), an enum value sent in another case becomes the schema's. Otherwise, in order:
 * the schema's `const`, first `enum` value, first `examples` value, a `default` of an allowed type,
 * the example of its `format`, a bound of a number, an object of its required properties, an array
 * of one item. A number without bounds is not invented for the field itself (`undefined`: no
 * `e.g. 1` a model may copy); inside an object or array example it is 1. `expectedTypes` (the types
 * the error names) wins over the schema's `type`. Never throws.
 */
export function exampleValue(schema: unknown, received?: unknown, expectedTypes?: readonly string[]): unknown {
  try {
    return exampleOf(schema, received, expectedTypes, 0);
  } catch {
    return undefined;
  }
}

function exampleOf(schema: unknown, received: unknown, expectedTypes: readonly string[] | undefined, depth: number): unknown {
  if (depth > 4) return undefined;
  const record = isObject(schema) ? schema : {};
  if ('const' in record) return record.const;
  if (Array.isArray(record.enum) && record.enum.length > 0) return enumValueOf(record.enum, received) ?? record.enum[0];
  const declared = typeof record.type === 'string' ? [record.type] : Array.isArray(record.type) ? record.type.map(String) : [];
  const types = (expectedTypes && expectedTypes.length > 0 ? expectedTypes : declared).filter((type) => type !== 'null');
  const type = types[0] ?? (isObject(record.properties) ? 'object' : isObject(record.items) ? 'array' : undefined);
  const fits = (value: unknown) => value !== undefined && (type === undefined || typeFits(value, type));
  const sent = type === undefined ? undefined : fromReceived(record, type, received);
  if (sent !== undefined) return sent;
  if (Array.isArray(record.examples) && fits(record.examples[0])) return record.examples[0];
  if ('default' in record && record.default !== null && fits(record.default)) return record.default;
  switch (type) {
    case 'string': {
      if (typeof record.format === 'string') {
        const example = describeFormat(record.format).example;
        if (example !== '') return example;
      }
      if (typeof received === 'number' || typeof received === 'boolean') return String(received);
      return typeof record.pattern === 'string' ? undefined : 'text';
    }
    case 'integer':
    case 'number': {
      const minimum =
        typeof record.minimum === 'number' ? record.minimum : typeof record.exclusiveMinimum === 'number' ? record.exclusiveMinimum + 1 : undefined;
      const maximum =
        typeof record.maximum === 'number' ? record.maximum : typeof record.exclusiveMaximum === 'number' ? record.exclusiveMaximum - 1 : undefined;
      // a bound is the schema's own value; a bare 1 for the field itself is a placeholder a model may copy
      if (depth === 0 && minimum === undefined && maximum === undefined) return undefined;
      let value = minimum ?? (maximum !== undefined && maximum < 1 ? maximum : 1);
      if (type === 'integer') value = Math.ceil(value);
      return value;
    }
    case 'boolean':
      return true;
    case 'array': {
      const itemSchema = itemSchemaOf(record);
      const item = exampleOf(itemSchema, undefined, undefined, depth + 1);
      return item === undefined ? [] : [item];
    }
    case 'object': {
      const properties = isObject(record.properties) ? record.properties : {};
      const required = Array.isArray(record.required) ? record.required.filter((name): name is string => typeof name === 'string') : [];
      const names = (required.length > 0 ? required : Object.keys(properties).slice(0, 1)).slice(0, 4);
      const example: Record<string, unknown> = {};
      for (const name of names) {
        const value = exampleOf(properties[name], undefined, undefined, depth + 1);
        example[name] = value === undefined ? 'text' : value;
      }
      return example;
    }
    case 'null':
      return null;
    default:
      return undefined;
  }
}

/** Number words a model may write for a count (`"four"`). */
const NUMBER_WORDS: Readonly<Record<string, number>> = Object.fromEntries(
  'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty'
    .split(' ')
    .map((word, index) => [word, index] as const),
);

/** The number a string stands for: digits (`"5"`, `" 2.5 "`) or a number word up to twenty (`"four"`); `undefined` otherwise. */
export function numberFromText(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed !== '' && Number.isFinite(Number(trimmed))) return Number(trimmed);
  const word = trimmed.toLowerCase();
  return Object.hasOwn(NUMBER_WORDS, word) ? NUMBER_WORDS[word] : undefined;
}

/** The enum value `received` is, compared as sent, then ignoring case and surrounding spaces; `undefined` when none. */
function enumValueOf(values: readonly unknown[], received: unknown): unknown {
  if (received === undefined) return undefined;
  if (values.some((value) => value === received)) return received;
  if (typeof received !== 'string') return undefined;
  const wanted = received.trim().toLowerCase();
  const matches = values.filter((value) => typeof value === 'string' && value.toLowerCase() === wanted);
  return matches.length === 1 ? matches[0] : undefined;
}

function itemSchemaOf(record: Record<string, unknown>): unknown {
  return isObject(record.items) ? record.items : Array.isArray(record.prefixItems) ? record.prefixItems[0] : undefined;
}

/** Splits a list sent as one string (`"pumpkin, eggs"`, `"3; 24"`) into its items; `undefined` for fewer than two. */
export function splitListText(text: string): string[] | undefined {
  if (!/[,;]/.test(text) || text.length > 2_000) return undefined;
  const items = text
    .split(/\s*[,;]\s*/)
    .map((item) => item.trim().replace(/^(["'])(.*)\1$/s, '$2'))
    .filter((item) => item !== '');
  return items.length >= 2 ? items : undefined;
}

/** One received value as an item of `itemSchema` (its enum spelling, a number from text); `undefined` when it does not fit. */
function asItem(itemSchema: unknown, value: unknown): unknown {
  if (itemSchema === undefined || !isObject(itemSchema)) return value;
  if (Array.isArray(itemSchema.enum)) return enumValueOf(itemSchema.enum, value);
  const types = typeof itemSchema.type === 'string' ? [itemSchema.type] : Array.isArray(itemSchema.type) ? itemSchema.type.map(String) : [];
  if (types.length === 0 || fitsBriefly(itemSchema, value)) return value;
  if (typeof value === 'string' && (types.includes('number') || types.includes('integer'))) {
    const number = numberFromText(value);
    if (number !== undefined && (types.includes('number') || Number.isInteger(number))) return number;
  }
  if (typeof value === 'string' && types.includes('boolean') && /^(?:true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
  return undefined;
}

/** The example built from what the model sent, for a field of type `type`; `undefined` when what it sent tells nothing. */
function fromReceived(record: Record<string, unknown>, type: string, received: unknown): unknown {
  if (received === undefined || received === null) return undefined;
  switch (type) {
    case 'integer':
    case 'number': {
      if (typeof received !== 'string') return undefined;
      const number = numberFromText(received);
      return number !== undefined && (type === 'number' || Number.isInteger(number)) ? number : undefined;
    }
    case 'boolean':
      return typeof received === 'string' && /^(?:true|false)$/i.test(received.trim()) ? received.trim().toLowerCase() === 'true' : undefined;
    case 'array': {
      if (Array.isArray(received)) return undefined;
      const itemSchema = itemSchemaOf(record);
      const listed = typeof received === 'string' ? splitListText(received) : undefined;
      if (listed !== undefined) {
        const items = listed.map((item) => asItem(itemSchema, item));
        if (items.every((item) => item !== undefined)) return items;
      }
      const item = asItem(itemSchema, received);
      return item === undefined ? undefined : [item];
    }
    default:
      return undefined;
  }
}

function typeFits(value: unknown, type: string): boolean {
  switch (type) {
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    case 'null':
      return value === null;
    default:
      return typeof value === type;
  }
}

/** Whether `value` has a type `schema` allows (type only; any value when it names none). */
function fitsBriefly(schema: unknown, value: unknown): boolean {
  if (!isObject(schema)) return true;
  if (Array.isArray(schema.enum)) return schema.enum.includes(value);
  const types = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? schema.type.map(String) : [];
  return types.length === 0 || types.some((type) => typeFits(value, type) || (type === 'number' && Number.isInteger(value)));
}

/** `"a", "b", "c"` with `… (N more)` past `max` values. */
export function listValues(values: readonly unknown[], max: number): string {
  const shown = values.slice(0, max).map((value) => previewJson(value, 40));
  return values.length > max ? `${shown.join(', ')}, … (${values.length - max} more)` : shown.join(', ');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
