import type { JsonSchema } from '../ground/ports/schema-validator.ts';
import { parseJsonPointer, toJsonPointer } from './json-pointer.ts';

/** Which schema-driven normalisations {@link normaliseArguments} applies. */
export interface NormaliseOptions {
  /** Remove `null` sent for an optional property whose schema does not accept `null`. */
  nullAsAbsent: boolean;
  /** `'scalars'`: convert strings exactly into numbers, integers and booleans where the schema asks for them. */
  coerce: 'none' | 'scalars';
}

/** What {@link normaliseArguments} produced: the value to validate and the changes made, for the log. */
export interface NormaliseResult {
  value: unknown;
  /** One entry per change: `null-as-absent:/path` or `coerced:/path` (JSON Pointer). */
  normalisations: string[];
}

const MAX_REFERENCE_DEPTH = 16;
const EXACT_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
/** `true`/`false` as JSON, Python (`True`, `False`) and shouting (`TRUE`, `FALSE`) write them. */
const EXACT_BOOLEAN = /^(?:true|false|True|False|TRUE|FALSE)$/;

/**
 * Applies the schema-driven normalisations before validation, on a copy (the caller's value is never
 * mutated; unchanged branches are shared):
 * - `null` for a property that is not `required` and whose schema does not accept `null` → the
 *   property is removed (`null-as-absent:/path`);
 * - with `coerce: 'scalars'`, a string where the schema's `type` is number/integer/boolean (and not
 *   string) is converted when the conversion is exact: `"5"` → 5, `"2.5"` → 2.5, `"true"` → true,
 *   and Python's `"True"`/`"False"` (and `"TRUE"`/`"FALSE"`) → true/false (`coerced:/path`).
 *   `"5.5"` for an integer, `" 5"`, `"1e999"`, `"tRuE"` or `"yes"` are left alone.
 *
 * Only properties reachable through `properties`, `items`, `prefixItems` and `allOf` are visited;
 * local `$ref`s (`#/...`) are followed to a bounded depth. Pure; never throws.
 *
 * @see JSON Schema 2020-12 Validation §6.1.1 (`type`)
 */
export function normaliseArguments(value: unknown, schema: JsonSchema, options: NormaliseOptions): NormaliseResult {
  const normalisations: string[] = [];
  if (normalisesNothing(value, options)) return { value, normalisations };
  const walker = new Walker(schema, options, normalisations);
  return { value: walker.visit(value, schema, 0), normalisations };
}

/** The properties and required names a schema object declares (with its `allOf` parts), per schema object. */
interface DeclaredProperties {
  properties: Map<string, unknown>;
  required: Set<string>;
}

/**
 * Compiled schemas are not changed after compilation, so what they declare is computed once per
 * schema object (and root, which `$ref`s resolve against).
 */
const declaredCache = new WeakMap<object, WeakMap<object, DeclaredProperties>>();

class Walker {
  /** The JSON Pointer of the value being visited, as segments: built into a string only for a normalisation. */
  private readonly segments: Array<string | number> = [];
  private readonly declared: WeakMap<object, DeclaredProperties>;

  constructor(
    private readonly root: JsonSchema,
    private readonly options: NormaliseOptions,
    private readonly normalisations: string[],
  ) {
    const rootKey = typeof root === 'object' && root !== null ? root : Walker;
    let declared = declaredCache.get(rootKey);
    if (declared === undefined) {
      declared = new WeakMap();
      declaredCache.set(rootKey, declared);
    }
    this.declared = declared;
  }

  visit(value: unknown, rawSchema: unknown, depth: number): unknown {
    const schema = this.resolve(rawSchema);
    if (schema === undefined || depth > 64) return value;
    if (typeof value === 'string') return this.coerce(value, schema);
    if (Array.isArray(value)) return this.visitArray(value, schema, depth);
    if (typeof value === 'object' && value !== null) return this.visitObject(value as Record<string, unknown>, schema, depth);
    return value;
  }

  private path(): string {
    return toJsonPointer(this.segments);
  }

  private visitObject(value: Record<string, unknown>, schema: Record<string, unknown>, depth: number): unknown {
    const { properties, required } = this.collectProperties(schema);
    if (properties.size === 0) return value;
    let copy: Record<string, unknown> | undefined;
    for (const key of Object.keys(value)) {
      const propertySchema = properties.get(key);
      if (propertySchema === undefined) continue;
      const inner = value[key];
      if (inner === null) {
        if (this.options.nullAsAbsent && !required.has(key) && this.rejectsNull(propertySchema, 0)) {
          copy ??= { ...value };
          delete copy[key];
          this.segments.push(key);
          this.normalisations.push(`null-as-absent:${this.path()}`);
          this.segments.pop();
        }
        continue;
      }
      this.segments.push(key);
      const next = this.visit(inner, propertySchema, depth + 1);
      this.segments.pop();
      if (next !== inner) {
        copy ??= { ...value };
        copy[key] = next;
      }
    }
    return copy ?? value;
  }

  private visitArray(value: unknown[], schema: Record<string, unknown>, depth: number): unknown {
    const prefixItems = Array.isArray(schema.prefixItems) ? (schema.prefixItems as unknown[]) : Array.isArray(schema.items) ? (schema.items as unknown[]) : [];
    const items = isSchemaObject(schema.items) ? schema.items : undefined;
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const itemSchema = index < prefixItems.length ? prefixItems[index] : items;
      if (itemSchema === undefined) continue;
      const inner = value[index];
      this.segments.push(index);
      const next = this.visit(inner, itemSchema, depth + 1);
      this.segments.pop();
      if (next !== inner) {
        copy ??= [...value];
        copy[index] = next;
      }
    }
    return copy ?? value;
  }

  private coerce(value: string, schema: Record<string, unknown>): unknown {
    if (this.options.coerce !== 'scalars') return value;
    const types = typesOf(schema);
    if (types.length === 0 || types.includes('string')) return value;
    let converted: unknown = value;
    if ((types.includes('integer') || types.includes('number')) && EXACT_NUMBER.test(value)) {
      const number = Number(value);
      if (Number.isFinite(number) && (types.includes('number') || Number.isSafeInteger(number))) converted = number;
    } else if (types.includes('boolean') && EXACT_BOOLEAN.test(value)) {
      converted = value.toLowerCase() === 'true';
    }
    if (converted !== value) this.normalisations.push(`coerced:${this.path()}`);
    return converted;
  }

  private collectProperties(schema: Record<string, unknown>): DeclaredProperties {
    const cached = this.declared.get(schema);
    if (cached !== undefined) return cached;
    const declared = this.declareProperties(schema);
    this.declared.set(schema, declared);
    return declared;
  }

  private declareProperties(schema: Record<string, unknown>): DeclaredProperties {
    const properties = new Map<string, unknown>();
    const required = new Set<string>();
    const add = (part: Record<string, unknown>): void => {
      if (isSchemaObject(part.properties)) {
        for (const [key, inner] of Object.entries(part.properties)) if (!properties.has(key)) properties.set(key, inner);
      }
      if (Array.isArray(part.required)) for (const key of part.required) if (typeof key === 'string') required.add(key);
    };
    add(schema);
    if (Array.isArray(schema.allOf)) {
      for (const part of schema.allOf) {
        const resolved = this.resolve(part);
        if (resolved !== undefined) add(resolved);
      }
    }
    return { properties, required };
  }

  /** True only when the schema clearly refuses `null`. */
  private rejectsNull(rawSchema: unknown, depth: number): boolean {
    const schema = this.resolve(rawSchema);
    if (schema === undefined || depth > 8) return false;
    if (schema.nullable === true) return false;
    if ('type' in schema) return !typesOf(schema).includes('null');
    if ('const' in schema) return schema.const !== null;
    if (Array.isArray(schema.enum)) return !schema.enum.includes(null);
    for (const keyword of ['anyOf', 'oneOf'] as const) {
      const branches = schema[keyword];
      if (Array.isArray(branches) && branches.length > 0) return branches.every((branch) => this.rejectsNull(branch, depth + 1));
    }
    if (Array.isArray(schema.allOf)) return schema.allOf.some((branch) => this.rejectsNull(branch, depth + 1));
    return false;
  }

  /** Follows local `$ref`s (`#`, `#/$defs/x`); anything else is taken as it stands. */
  private resolve(rawSchema: unknown): Record<string, unknown> | undefined {
    let schema = rawSchema;
    for (let depth = 0; depth < MAX_REFERENCE_DEPTH; depth++) {
      if (!isSchemaObject(schema)) return undefined;
      const reference = schema.$ref;
      if (typeof reference !== 'string' || !reference.startsWith('#')) return schema;
      const target = lookUpPointer(this.root, decodeURIComponent(reference.slice(1)));
      if (target === undefined) return schema;
      schema = target;
    }
    return undefined;
  }
}

function lookUpPointer(root: unknown, pointer: string): unknown {
  let current: unknown = root;
  for (const token of parseJsonPointer(pointer)) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[token];
  }
  return current;
}

function typesOf(schema: Record<string, unknown>): string[] {
  if (typeof schema.type === 'string') return [schema.type];
  if (Array.isArray(schema.type)) return schema.type.filter((type): type is string => typeof type === 'string');
  return [];
}

function isSchemaObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether {@link normaliseArguments} is sure to leave `value` as it is, whatever the schema: no
 * normalisation is on, or without coercion an object of nothing but non-null scalars (only a `null`
 * can change then). A cheap test without allocation; `false` means the walk decides.
 */
export function normalisesNothing(value: unknown, options: NormaliseOptions): boolean {
  if (!options.nullAsAbsent && options.coerce === 'none') return true;
  return options.coerce === 'none' && isFlatWithoutNull(value);
}

/**
 * Whether `value` is a non-array object whose enumerable values are all scalars other than `null`
 * (`for…in`, no key array: an inherited enumerable key is checked too, which can only send the value
 * to the walk).
 */
function isFlatWithoutNull(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (typeof record[key] === 'object') return false; // null, an object or an array: the walk decides
  }
  return true;
}
