import type { JsonSchema } from '../ground/ports/schema-validator.ts';
import { escapeJsonPointerToken } from './json-pointer.ts';
import { jsonTypeOf, previewJson } from './preview.ts';

/** What {@link mapBfclSchema} produced: the JSON Schema and what looked wrong in the source. */
export interface BfclSchemaMapping {
  schema: JsonSchema;
  /**
   * Problems found, one line each, prefixed by the JSON Pointer of the schema node: a `default` that
   * does not match its declared type, an `enum` whose values mix types or do not match the declared
   * type (`"1"` under `integer`). Reported, never thrown.
   */
  warnings: string[];
}

const TYPE_MAP: Record<string, string | undefined> = {
  dict: 'object',
  float: 'number',
  tuple: 'array',
  list: 'array',
  any: undefined,
};

/**
 * Maps a Berkeley Function Calling Leaderboard (BFCL) parameter schema to JSON Schema:
 * `dict` → `object`, `float` → `number`, `tuple` → `array`, `any` → no type constraint; the
 * non-standard `optional` key is dropped; `properties`, `items` and `additionalProperties` are
 * mapped recursively. The input is not mutated. Never throws: mismatched `default`s and `enum`s
 * that mix types are listed in `warnings` and kept as they are (`default` is an annotation).
 *
 * @see https://gorilla.cs.berkeley.edu/leaderboard.html (BFCL); JSON Schema 2020-12 Validation §6.1.1
 */
export function mapBfclSchema(parameters: unknown): BfclSchemaMapping {
  const warnings: string[] = [];
  const schema = mapNode(parameters, '', warnings);
  return { schema: typeof schema === 'object' && schema !== null ? (schema as Record<string, unknown>) : {}, warnings };
}

function mapNode(node: unknown, pointer: string, warnings: string[]): unknown {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return node;
  const source = node as Record<string, unknown>;
  const mapped: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === 'optional') continue;
    if (key === 'type') {
      const type = mapType(value);
      if (type !== undefined) mapped.type = type;
      continue;
    }
    if (key === 'properties' && typeof value === 'object' && value !== null) {
      mapped.properties = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([name, inner]) => [
          name,
          mapNode(inner, `${pointer}/properties/${escapeJsonPointerToken(name)}`, warnings),
        ]),
      );
      continue;
    }
    if (key === 'items' || key === 'additionalProperties') {
      mapped[key] = Array.isArray(value)
        ? value.map((inner, index) => mapNode(inner, `${pointer}/${key}/${index}`, warnings))
        : mapNode(value, `${pointer}/${key}`, warnings);
      continue;
    }
    mapped[key] = value;
  }
  checkAnnotations(mapped, pointer, warnings);
  return mapped;
}

function mapType(type: unknown): unknown {
  if (typeof type === 'string') return type in TYPE_MAP ? TYPE_MAP[type] : type;
  if (Array.isArray(type)) {
    const mapped = type.map((inner) => (typeof inner === 'string' && inner in TYPE_MAP ? TYPE_MAP[inner] : inner));
    return mapped.includes(undefined) ? undefined : mapped;
  }
  return type;
}

function checkAnnotations(schema: Record<string, unknown>, pointer: string, warnings: string[]): void {
  const where = pointer === '' ? '(root)' : pointer;
  const types = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? schema.type.map(String) : [];
  if ('default' in schema && types.length > 0 && !types.some((type) => matchesType(schema.default, type))) {
    warnings.push(`${where}: default ${previewJson(schema.default, 60)} does not match type ${types.join(' or ')}`);
  }
  if (Array.isArray(schema.enum)) {
    const enumTypes = new Set(schema.enum.map((value) => (jsonTypeOf(value) === 'integer' ? 'number' : jsonTypeOf(value))));
    const offType = types.length === 0 ? [] : schema.enum.filter((value) => !types.some((type) => matchesType(value, type)));
    if (enumTypes.size > 1 || offType.length > 0) {
      warnings.push(`${where}: enum mixes types: values of type ${[...enumTypes].join(', ')}${types.length > 0 ? ` under type ${types.join(' or ')}` : ''}`);
    }
  }
}

function matchesType(value: unknown, type: string): boolean {
  const actual = jsonTypeOf(value);
  if (type === 'number') return actual === 'number' || actual === 'integer';
  return actual === type;
}
