import { dereference, format as cfworkerFormats, validate as cfworkerValidate, type OutputUnit, type Schema, type SchemaDraft } from '@cfworker/json-schema';
import type { ErrorObject } from 'ajv';
import type { CompiledToolSchema, JsonSchema, SchemaValidator, ValidationResult } from '../ground/ports/schema-validator.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { describeAjvErrors } from './describe-ajv-errors.ts';
import { escapeJsonPointerToken, unescapeJsonPointerToken } from './json-pointer.ts';
import { chooseDialect, type JsonSchemaDialect } from './json-schema-dialect.ts';
import { compileLinearRegExp, type LinearRegExp } from './linear-regexp.ts';
import { normaliseArguments, type NormaliseOptions } from './normalise-arguments.ts';
import { truncateText } from './preview.ts';
import { cachingSchemaValidator, type StandardSchemaToJsonSchema } from './standard-schema.ts';
import { stringFormatCheck } from './string-formats.ts';
import { validationCrashed } from './validation-crashed.ts';

/** Options of {@link createCfworkerSchemaValidator}. */
export interface CfworkerSchemaValidatorOptions {
  /** Dialect for a schema without `$schema`. @defaultValue 'draft-2020-12' */
  defaultDialect?: JsonSchemaDialect;
  /**
   * Remove `null` sent for an optional property whose schema does not accept `null`, before
   * validation (recorded as `null-as-absent:/path`). @defaultValue true
   */
  nullAsAbsent?: boolean;
  /** Converts a Standard Schema object without the Standard JSON Schema extension (e.g. Valibot) to JSON Schema. */
  toJsonSchema?: StandardSchemaToJsonSchema;
}

/**
 * Creates a {@link SchemaValidator} that never generates code: JSON Schema through the interpreting
 * validator `@cfworker/json-schema` (no `eval`, no `new Function`), for runtimes that forbid code
 * generation from strings (Cloudflare Workers, a page under a strict Content Security Policy, Node
 * with `--disallow-code-generation-from-strings`). Standard Schema objects go through their own
 * `validate`, as with the default validator.
 *
 * What matches the default (Ajv) validator:
 * - the field-level failure: Ajv's error shapes are rebuilt from the interpreter's output and
 *   worded by `describeAjvErrors` (same codes, paths, headlines and fixes);
 * - `pattern` and `propertyNames` patterns run in time linear in the string (`compileLinearRegExp`);
 *   a pattern with lookaround or a backreference is refused at compile time (`INVALID_SCHEMA`);
 * - formats are ajv-formats' (`date`, `date-time`, `email`, `uri`, `uuid`, ...; `url` checks at most
 *   2,083 characters); an unknown format accepts every string;
 * - dialect selection (`$schema`, `defaultDialect`), the normalisations (`null` as absent, `coerce`),
 *   the cache by schema identity and `coerce` mode; `validate` never throws.
 *
 * Known differences (see docs/portability.md): the schema is checked for the usual mistakes only
 * (unknown `type` names, non-array `required`/`enum`, non-numeric bounds, unresolvable local `$ref`s),
 * not against the whole meta-schema; `patternProperties` patterns run on the platform's `RegExp`;
 * the numeric formats `int32`/`int64` are not checked; `$dynamicRef` is not supported; `$async`
 * schemas run synchronously; a property name with a lone surrogate fails validation as
 * "could not be validated".
 *
 * Implementation note: the interpreter looks formats up in one shared table, so each distinct
 * `pattern`/`format` pair of a compiled schema is added to it once, under a `toolrun:` key that
 * names the pair (the entry is a pure function of its key).
 *
 * @throws ToolrunError `INVALID_SCHEMA` from `compile` for a schema that fails the checks above, or
 *   that is neither an object, a boolean nor a Standard Schema.
 */
export function createCfworkerSchemaValidator(options: CfworkerSchemaValidatorOptions = {}): SchemaValidator {
  const nullAsAbsent = options.nullAsAbsent ?? true;
  const dialect = options.defaultDialect ?? 'draft-2020-12';
  return cachingSchemaValidator(
    (schema, validateOptions) => compileJsonSchemaWithoutCodeGeneration(schema, dialect, { nullAsAbsent, coerce: validateOptions.coerce }),
    {
      nullAsAbsent,
      toJsonSchema: options.toJsonSchema,
    },
  );
}

/**
 * Whether this realm lets code be generated from strings (`new Function`), which Ajv needs to
 * compile a schema. Probed on every call (it costs one tiny function): a Worker may allow it while
 * its module loads and forbid it once it serves requests.
 */
export function canGenerateCode(): boolean {
  try {
    return (new Function('return 1') as () => number)() === 1;
  } catch {
    return false;
  }
}

/**
 * Compiles one JSON Schema for the interpreting validator (see {@link createCfworkerSchemaValidator}).
 *
 * @param fallback - the dialect of a schema without `$schema`.
 * @throws ToolrunError `INVALID_SCHEMA` for a schema that fails the checks.
 */
export function compileJsonSchemaWithoutCodeGeneration(schema: JsonSchema, fallback: JsonSchemaDialect, normalise: NormaliseOptions): CompiledToolSchema {
  const { dialect, prepared: chosen } = chooseDialect(schema, fallback);
  let prepared: Schema | boolean;
  let lookup: Record<string, Schema | boolean>;
  const originals = new WeakMap<object, Record<string, unknown>>();
  try {
    prepared = prepareSchema(chosen, originals);
    lookup = dereference(prepared);
    checkReferences(lookup);
  } catch (error) {
    if (ToolrunError.is(error)) throw error;
    throw new ToolrunError(
      'INVALID_SCHEMA',
      `the JSON Schema does not compile (${dialect}): ${truncateText(error instanceof Error ? error.message : String(error), 300)}`,
      { cause: error },
    );
  }
  const draft = DRAFTS[dialect];
  return {
    jsonSchema: schema,
    validate(value: unknown): ValidationResult {
      try {
        const normalised = normaliseArguments(value, schema, normalise);
        const result = cfworkerValidate(normalised.value, prepared, draft, lookup, false);
        if (result.valid) return { ok: true, value: normalised.value, normalisations: normalised.normalisations };
        return describeAjvErrors(toAjvErrors(result.errors, normalised.value, { draft, root: prepared, lookup, originals }), schema);
      } catch (error) {
        return validationCrashed(error);
      }
    },
  };
}

const DRAFTS: Record<JsonSchemaDialect, SchemaDraft> = { 'draft-2020-12': '2020-12', 'draft-2019-09': '2019-09', 'draft-07': '7' };

// ---------------------------------------------------------------------------------------------
// Preparing a schema: a deep copy (the interpreter marks the schemas it dereferences) in which
// `pattern`/`format` become one registered format (linear patterns, ajv-formats) and `false`
// subschemas become `{ not: {} }` (so that every error has its true keyword location).

const KEY_PREFIX = 'toolrun:';

/** The string checks behind a registered format key. */
interface StringChecks {
  pattern?: string;
  format?: string;
}

type RegisteredCheck = ((text: string) => boolean) & { readonly checks: { pattern?: LinearRegExp; format?: (text: string) => boolean; source: StringChecks } };

const SCHEMA_VALUED = new Set([
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'additionalProperties',
  'unevaluatedProperties',
  'additionalItems',
  'unevaluatedItems',
]);
const SCHEMA_ARRAY_VALUED = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCHEMA_MAP_VALUED = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const NUMERIC = new Set([
  'minimum',
  'maximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'minContains',
  'maxContains',
]);
const TYPE_NAMES = new Set(['array', 'boolean', 'integer', 'null', 'number', 'object', 'string']);
/** Marks the `{ not: {} }` that stands for a `false` subschema (a symbol: the interpreter never reads it). */
const STANDS_FOR_FALSE = Symbol('toolrun.standsForFalse');
const FALSE_SCHEMA = (): Schema => Object.defineProperty({ not: {} }, STANDS_FOR_FALSE, { value: true });

/** The prepared copy of a schema; `originals` maps each prepared subschema back to the one it was made from. */
function prepareSchema(schema: JsonSchema, originals: WeakMap<object, Record<string, unknown>>): Schema | boolean {
  const preparation: Preparation = { memo: new Map<object, unknown>(), originals, prepare: (node, at) => prepareNode(node, at, preparation) };
  return preparation.prepare(schema, '') as Schema | boolean;
}

/** One schema's preparation: the copies made so far (a cycle is copied once), the map back to the originals, and the recursion. */
interface Preparation {
  readonly memo: Map<object, unknown>;
  readonly originals: WeakMap<object, Record<string, unknown>>;
  readonly prepare: (node: unknown, at: string) => unknown;
}

/** The prepared copy of the subschema `node` at JSON Pointer `at`. */
function prepareNode(node: unknown, at: string, { memo, originals, prepare }: Preparation): unknown {
  if (node === false) return FALSE_SCHEMA();
  if (!isPlainObject(node)) return copyData(node, memo);
  const seen = memo.get(node);
  if (seen !== undefined) return seen;
  const out: Record<string, unknown> = {};
  memo.set(node, out);
  originals.set(out, node);
  checkKeywords(node, at);
  const pattern = typeof node.pattern === 'string' ? node.pattern : undefined;
  const format = typeof node.format === 'string' ? node.format : undefined;
  for (const [key, value] of Object.entries(node)) {
    const here = `${at}/${escapeJsonPointerToken(key)}`;
    if ((key === 'pattern' && pattern !== undefined) || (key === 'format' && format !== undefined)) continue;
    if (SCHEMA_VALUED.has(key)) out[key] = prepare(value, here);
    else if (key === 'items') out[key] = Array.isArray(value) ? value.map((item, index) => prepare(item, `${here}/${index}`)) : prepare(value, here);
    else if (SCHEMA_ARRAY_VALUED.has(key))
      out[key] = Array.isArray(value) ? value.map((item, index) => prepare(item, `${here}/${index}`)) : copyData(value, memo);
    else if (SCHEMA_MAP_VALUED.has(key) && isPlainObject(value))
      out[key] = mapValues(value, (item, name) => prepare(item, `${here}/${escapeJsonPointerToken(name)}`));
    else if (key === 'dependencies' && isPlainObject(value))
      out[key] = mapValues(value, (item, name) => (Array.isArray(item) ? copyData(item, memo) : prepare(item, `${here}/${escapeJsonPointerToken(name)}`)));
    else out[key] = copyData(value, memo);
  }
  if (isPlainObject(node.patternProperties)) {
    // Refused where the default validator refuses them (lookaround, backreferences); run natively by the interpreter.
    for (const key of Object.keys(node.patternProperties)) compileLinearRegExp(key, 'u');
  }
  if (pattern !== undefined || format !== undefined)
    out.format = registerStringChecks({ ...(pattern !== undefined ? { pattern } : {}), ...(format !== undefined ? { format } : {}) });
  return out;
}

/** The mistakes Ajv's meta-schema check catches most often, refused the same way. */
function checkKeywords(node: Record<string, unknown>, at: string): void {
  const where = at === '' ? 'the schema' : `the schema at ${at}`;
  const refuse = (problem: string): never => {
    throw new ToolrunError('INVALID_SCHEMA', `the JSON Schema does not compile: ${where}: ${truncateText(problem, 200)}`);
  };
  if ('type' in node) {
    const types = Array.isArray(node.type) ? node.type : [node.type];
    for (const type of types)
      if (typeof type !== 'string' || !TYPE_NAMES.has(type))
        refuse(`type must be one of ${[...TYPE_NAMES].join(', ')} (or an array of them), received ${JSON.stringify(type) ?? String(type)}`);
  }
  if ('required' in node && (!Array.isArray(node.required) || !node.required.every((item) => typeof item === 'string')))
    refuse('required must be an array of strings');
  if ('enum' in node && !Array.isArray(node.enum)) refuse('enum must be an array');
  for (const key of NUMERIC) if (key in node && typeof node[key] !== 'number') refuse(`${key} must be a number`);
  for (const key of ['exclusiveMinimum', 'exclusiveMaximum']) if (key in node && typeof node[key] !== 'number') refuse(`${key} must be a number`);
  for (const key of ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'])
    if (key in node && !isPlainObject(node[key])) refuse(`${key} must be an object`);
  for (const key of ['allOf', 'anyOf', 'oneOf', 'prefixItems'])
    if (key in node && (!Array.isArray(node[key]) || (node[key] as unknown[]).length === 0)) refuse(`${key} must be a non-empty array`);
  if ('pattern' in node && typeof node.pattern !== 'string') refuse('pattern must be a string');
  if ('format' in node && typeof node.format !== 'string') refuse('format must be a string');
  if ('$ref' in node && typeof node.$ref !== 'string') refuse('$ref must be a string');
}

/** Every `$ref` resolves to a schema the interpreter knows (it would otherwise throw on first use). */
function checkReferences(lookup: Record<string, Schema | boolean>): void {
  for (const schema of Object.values(lookup)) {
    if (typeof schema !== 'object') continue;
    const target = schema.__absolute_ref__;
    if (typeof target === 'string' && lookup[target] === undefined)
      throw new ToolrunError('INVALID_SCHEMA', `the JSON Schema does not compile: can't resolve reference ${truncateText(String(schema.$ref), 200)}`);
  }
}

function registerStringChecks(source: StringChecks): string {
  const key = `${KEY_PREFIX}${JSON.stringify([source.pattern ?? null, source.format ?? null])}`;
  if (Object.hasOwn(cfworkerFormats, key)) return key;
  const pattern = source.pattern === undefined ? undefined : compileLinearRegExp(source.pattern, 'u');
  const format = source.format === undefined ? undefined : stringFormatCheck(source.format);
  const check = Object.assign((text: string) => (pattern === undefined || pattern.test(text)) && (format === undefined || format(text)), {
    checks: { ...(pattern ? { pattern } : {}), ...(format ? { format } : {}), source },
  });
  cfworkerFormats[key] = check;
  return key;
}

// ---------------------------------------------------------------------------------------------
// The interpreter's errors as Ajv's (`allErrors: true, verbose: true`), for `describeAjvErrors`.

/** Applicators whose own error only says "a subschema failed": the subschema's errors say why. */
const WRAPPERS = new Set([
  'properties',
  'patternProperties',
  'items',
  'prefixItems',
  '$ref',
  '$recursiveRef',
  'allOf',
  'if',
  'dependentSchemas',
  'additionalProperties',
  'unevaluatedProperties',
  'additionalItems',
  'unevaluatedItems',
]);
/** Wrappers that are the failure themselves when their subschema is `false` (no more items / properties allowed). */
const CLOSING = new Set(['additionalProperties', 'unevaluatedProperties', 'items', 'additionalItems', 'unevaluatedItems']);
const COMPARISONS: Record<string, string> = { minimum: '>=', maximum: '<=', exclusiveMinimum: '>', exclusiveMaximum: '<' };

/**
 * The order in which Ajv evaluates the keywords of one schema (its type check first, then the
 * keywords of no type, then those of numbers, strings, arrays and objects, then the unevaluated
 * ones): errors are listed in that order, as Ajv lists them.
 */
const KEYWORD_RANK: Record<string, number> = Object.fromEntries(
  [
    ['type'],
    ['$ref', '$recursiveRef'],
    ['const'],
    ['enum'],
    ['not'],
    ['anyOf'],
    ['oneOf'],
    ['allOf'],
    ['if', 'then', 'else'],
    ['maximum'],
    ['minimum'],
    ['exclusiveMaximum'],
    ['exclusiveMinimum'],
    ['multipleOf'],
    ['maxLength'],
    ['minLength'],
    ['pattern'],
    ['format'],
    ['maxItems'],
    ['minItems'],
    ['uniqueItems'],
    ['additionalItems', 'prefixItems'],
    ['items'],
    ['contains', 'minContains', 'maxContains'],
    ['maxProperties'],
    ['minProperties'],
    ['required'],
    ['propertyNames'],
    ['additionalProperties'],
    ['dependencies'],
    ['properties'],
    ['patternProperties'],
    ['dependentRequired', 'dependantRequired'],
    ['dependentSchemas'],
    ['unevaluatedProperties'],
    ['unevaluatedItems'],
  ].flatMap((names, rank) => names.map((name) => [name, rank] as const)),
);
const MEMBER_MAPS = new Set(['$defs', 'definitions', 'dependentSchemas', 'dependencies']);
const MEMBER_ARRAYS = new Set(['allOf', 'anyOf', 'oneOf']);

interface Located {
  error: ErrorObject;
  /** The interpreter's keyword location (what nesting is read from). */
  location: string;
  /** The instance location's tokens. */
  instanceTokens: string[];
}

interface PreparedContext {
  draft: SchemaDraft;
  root: Schema | boolean;
  lookup: Record<string, Schema | boolean>;
  originals: WeakMap<object, Record<string, unknown>>;
}

function toAjvErrors(reported: readonly OutputUnit[], instance: unknown, context: PreparedContext): ErrorObject[] {
  const units = withContainedItemErrors(reported, instance, context);
  const located: Located[] = [];
  const absorbedUnder: string[] = [];
  const closed = new Set<string>();
  const isAbsorbed = (unit: OutputUnit): boolean => absorbedUnder.some((prefix) => unit.keywordLocation.startsWith(prefix));

  for (let index = 0; index < units.length; index++) {
    const unit = units[index]!;
    if (isAbsorbed(unit)) continue;
    const tokens = locationTokens(unit.keywordLocation);
    const resolved = resolveLocation(context, tokens);
    const parent = resolved.original;
    const keywordValue = resolved.keyword !== undefined && Object.hasOwn(parent, resolved.keyword) ? parent[resolved.keyword] : resolved.value;
    const instanceTokens = locationTokens(unit.instanceLocation);
    const data = valueAt(instance, instanceTokens);
    const base = {
      instancePath: toPointer(instanceTokens),
      schemaPath: unit.keywordLocation,
      message: unit.error,
      data,
      parentSchema: parent,
      schema: keywordValue,
    };
    const push = (keyword: string, params: Record<string, unknown>, extra: Partial<ErrorObject> = {}): void => {
      const error = { ...base, keyword, params, ...extra } as ErrorObject;
      located.push({ error, location: keyword === 'contains' ? error.schemaPath : unit.keywordLocation, instanceTokens });
    };
    const next = units[index + 1];
    const childToken = (): string | undefined =>
      next !== undefined && next.keywordLocation.startsWith(`${unit.keywordLocation}/`) ? lastToken(next.instanceLocation) : undefined;

    if (CLOSING.has(unit.keyword) && isFalseSchema(resolved.value) && !(unit.keyword === 'items' && Array.isArray(parent.items))) {
      absorbedUnder.push(`${unit.keywordLocation}/`);
      if (unit.keyword === 'additionalProperties' || unit.keyword === 'unevaluatedProperties') {
        const property = childToken() ?? quoted(unit.error, /^Property "(.*)" does not match/s) ?? '';
        push(unit.keyword, unit.keyword === 'additionalProperties' ? { additionalProperty: property } : { unevaluatedProperty: property });
      } else {
        const closedKey = `${unit.keyword}\u0000${unit.instanceLocation}\u0000${unit.keywordLocation}`;
        if (closed.has(closedKey)) continue;
        closed.add(closedKey);
        const limit =
          unit.keyword === 'items'
            ? Array.isArray(parent.prefixItems)
              ? parent.prefixItems.length
              : 0
            : unit.keyword === 'additionalItems'
              ? Array.isArray(parent.items)
                ? parent.items.length
                : 0
              : Number(childToken() ?? 0);
        push(unit.keyword, { limit }, { message: `must NOT have more than ${limit} items` });
      }
      continue;
    }
    if (unit.keyword === 'dependencies' && unit.error.endsWith('does not match dependant schema.')) continue;
    if (WRAPPERS.has(unit.keyword)) continue;

    switch (unit.keyword) {
      case 'not':
        if (isFalseSchema(resolved.parent)) push('false schema', {}, { schema: false, parentSchema: {}, schemaPath: parentLocation(unit.keywordLocation) });
        else push('not', {});
        break;
      case 'type':
        push('type', { type: keywordValue });
        break;
      case 'const':
        push('const', { allowedValue: keywordValue });
        break;
      case 'enum':
        push('enum', { allowedValues: keywordValue });
        break;
      case 'required':
        push('required', { missingProperty: quoted(unit.error, /^Instance does not have required property "(.*)"\.$/s) ?? '' });
        break;
      case 'dependentRequired':
      case 'dependencies': {
        const match = /^Instance has "(.*)" but does not have "(.*)"\.$/s.exec(unit.error);
        push(
          unit.keyword,
          { property: match?.[1] ?? '', missingProperty: match?.[2] ?? '' },
          { schema: parent[unit.keyword], schemaPath: `${parentLocation(unit.keywordLocation)}/${unit.keyword}` },
        );
        break;
      }
      case 'propertyNames':
        absorbedUnder.push(`${unit.keywordLocation}/`);
        push('propertyNames', { propertyName: quoted(unit.error, /^Property name "(.*)" does not match schema\.$/s) ?? childToken() ?? '' });
        break;
      case 'contains':
      case 'minContains':
      case 'maxContains': {
        const params: Record<string, unknown> = {};
        if (typeof parent.minContains === 'number') params.minContains = parent.minContains;
        if (typeof parent.maxContains === 'number') params.maxContains = parent.maxContains;
        push('contains', params, { schema: parent.contains, schemaPath: `${parentLocation(unit.keywordLocation)}/contains` });
        break;
      }
      case 'anyOf':
        push('anyOf', {});
        break;
      case 'oneOf': {
        const branches = Array.isArray(keywordValue) ? keywordValue.length : 0;
        const failing = new Set<number>();
        for (let cursor = index + 1; cursor < units.length; cursor++) {
          const member = units[cursor]!;
          if (!member.keywordLocation.startsWith(`${unit.keywordLocation}/`)) break;
          failing.add(Number(locationTokens(member.keywordLocation.slice(unit.keywordLocation.length))[0]));
        }
        const passing = Array.from({ length: branches }, (_, branch) => branch).filter((branch) => !failing.has(branch));
        push('oneOf', { passingSchemas: passing.length > 1 ? passing : null });
        break;
      }
      case 'format': {
        const key = resolved.value;
        const checks = typeof key === 'string' ? (cfworkerFormats[key] as RegisteredCheck | undefined)?.checks : undefined;
        const text = typeof data === 'string' ? data : '';
        const at = parentLocation(unit.keywordLocation);
        if (checks?.pattern !== undefined && !checks.pattern.test(text)) {
          push(
            'pattern',
            { pattern: checks.source.pattern },
            { schema: checks.source.pattern, schemaPath: `${at}/pattern`, message: `must match pattern "${checks.source.pattern ?? ''}"` },
          );
        }
        if (checks?.format !== undefined && !checks.format(text)) {
          push(
            'format',
            { format: checks.source.format },
            { schema: checks.source.format, schemaPath: `${at}/format`, message: `must match format "${checks.source.format ?? ''}"` },
          );
        }
        break;
      }
      case 'minimum':
      case 'maximum':
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        push(unit.keyword, { comparison: COMPARISONS[unit.keyword], limit: keywordValue });
        break;
      case 'multipleOf':
        push('multipleOf', { multipleOf: keywordValue });
        break;
      case 'minLength':
      case 'maxLength':
      case 'minItems':
      case 'maxItems':
      case 'minProperties':
      case 'maxProperties':
        push(unit.keyword, { limit: keywordValue });
        break;
      case 'uniqueItems':
        push('uniqueItems', duplicatePair(Array.isArray(data) ? data : [], parent.items));
        break;
      default:
        push(unit.keyword, {});
    }
  }
  return placeAlternativesAfterTheirBranches(sortLikeAjv(located)).map((item) => item.error);
}

/**
 * A failing `contains` (without `minContains`) drops the errors of the items it tried; Ajv reports
 * them before the `contains` error, so they are recomputed here, item by item.
 */
function withContainedItemErrors(units: readonly OutputUnit[], instance: unknown, context: PreparedContext): OutputUnit[] {
  if (!units.some((unit) => unit.keyword === 'contains')) return [...units];
  const result: OutputUnit[] = [];
  for (const unit of units) {
    result.push(unit);
    if (unit.keyword !== 'contains') continue;
    const resolved = resolveLocation(context, locationTokens(unit.keywordLocation));
    const items = valueAt(instance, locationTokens(unit.instanceLocation));
    if (!Array.isArray(items) || (isPlainObject(resolved.parent) && resolved.parent.minContains !== undefined)) continue;
    items.forEach((item: unknown, index) => {
      result.push(
        ...cfworkerValidate(
          item,
          resolved.value as Schema | boolean,
          context.draft,
          context.lookup,
          false,
          null,
          `${unit.instanceLocation}/${index}`,
          unit.keywordLocation,
        ).errors,
      );
    });
  }
  return result;
}

/**
 * The pair of equal items Ajv names (`i` before `j` in its message's order): Ajv scans from the
 * last item, through a table of seen values when the items are typed as scalars, else pairwise.
 */
function duplicatePair(items: readonly unknown[], itemsSchema: unknown): { i: number; j: number } {
  const itemTypes = isPlainObject(itemsSchema)
    ? Array.isArray(itemsSchema.type)
      ? itemsSchema.type
      : itemsSchema.type === undefined
        ? []
        : [itemsSchema.type]
    : [];
  const scalarTyped = itemTypes.length > 0 && !itemTypes.some((type) => type === 'object' || type === 'array');
  if (scalarTyped) {
    const seen = new Map<string, number>();
    for (let i = items.length - 1; i >= 0; i--) {
      const item = items[i];
      const key = typeof item === 'string' ? `"${item}` : String(item);
      const later = seen.get(key);
      if (later !== undefined) return { i, j: later };
      seen.set(key, i);
    }
  }
  for (let i = items.length - 1; i > 0; i--) for (let j = i - 1; j >= 0; j--) if (jsonEqual(items[i], items[j])) return { i, j };
  return { i: 0, j: 0 };
}

/** Keywords whose one subschema applies to several child values (each property, each item). */
const EACH_CHILD = new Set(['additionalProperties', 'unevaluatedProperties', 'additionalItems', 'unevaluatedItems', 'contains']);
/** Keywords whose members each apply to one child value (the member's name or index is the child's). */
const CHILD_MEMBERS = new Set(['properties', 'prefixItems']);

/**
 * Errors in the order Ajv would list them, a depth-first walk over (schema, value) pairs: at every
 * schema, by {@link KEYWORD_RANK}; a subschema that applies to several values (`items`,
 * `additionalProperties`, `contains`) value by value; members (properties, branches) in the
 * interpreter's order, which is the schema's, as in Ajv. A keyword's own error comes before the
 * errors inside it.
 */
function sortLikeAjv(items: readonly Located[]): Located[] {
  interface Entry {
    item: Located;
    tokens: string[];
  }
  const groupBy = (entries: readonly Entry[], key: (entry: Entry) => string | undefined): { ended: Entry[]; groups: Map<string, Entry[]> } => {
    const ended: Entry[] = [];
    const groups = new Map<string, Entry[]>();
    for (const entry of entries) {
      const token = key(entry);
      if (token === undefined) {
        ended.push(entry);
        continue;
      }
      const group = groups.get(token);
      if (group === undefined) groups.set(token, [entry]);
      else group.push(entry);
    }
    return { ended, groups };
  };
  /** Entries at a schema whose keyword tokens start at `depth`, applied to the value at `valueDepth`. */
  const atSchema = (entries: readonly Entry[], depth: number, valueDepth: number): Entry[] => {
    const { ended, groups } = groupBy(entries, (entry) => entry.tokens[depth]);
    const result = [...ended];
    const keywords = [...groups.keys()].sort((a, b) => (KEYWORD_RANK[a] ?? 100) - (KEYWORD_RANK[b] ?? 100));
    for (const keyword of keywords) {
      const group = groups.get(keyword)!;
      const tuple = keyword === 'items' && group.some((entry) => /^\d+$/.test(entry.tokens[depth + 1] ?? ''));
      if (EACH_CHILD.has(keyword) || (keyword === 'items' && !tuple)) {
        const byValue = groupBy(group, (entry) => (entry.tokens.length > depth + 1 ? entry.item.instanceTokens[valueDepth] : undefined));
        result.push(...byValue.ended);
        for (const perValue of byValue.groups.values()) result.push(...atSchema(perValue, depth + 1, valueDepth + 1));
      } else if (CHILD_MEMBERS.has(keyword) || tuple || keyword === 'patternProperties') {
        result.push(...atMembers(group, depth + 1, valueDepth + 1, keyword === 'patternProperties'));
      } else if (MEMBER_MAPS.has(keyword) || MEMBER_ARRAYS.has(keyword)) {
        result.push(...atMembers(group, depth + 1, valueDepth, false));
      } else {
        result.push(...atSchema(group, depth + 1, valueDepth));
      }
    }
    return result;
  };
  const atMembers = (entries: readonly Entry[], depth: number, valueDepth: number, perValue: boolean): Entry[] => {
    const { ended, groups } = groupBy(entries, (entry) => entry.tokens[depth]);
    const result = [...ended];
    for (const group of groups.values()) {
      if (!perValue) {
        result.push(...atSchema(group, depth + 1, valueDepth));
        continue;
      }
      const byValue = groupBy(group, (entry) => entry.item.instanceTokens[valueDepth - 1]);
      result.push(...byValue.ended);
      for (const values of byValue.groups.values()) result.push(...atSchema(values, depth + 1, valueDepth));
    }
    return result;
  };
  return atSchema(
    items.map((item) => ({ item, tokens: locationTokens(item.error.schemaPath) })),
    0,
    0,
  ).map((entry) => entry.item);
}

/**
 * The interpreter puts an `anyOf`/`oneOf`/`contains` error before the errors of its branches
 * (items); Ajv puts it after them, and `describeAjvErrors` reads the branches as the run just
 * before it.
 */
function placeAlternativesAfterTheirBranches(items: readonly Located[]): Located[] {
  const result: Located[] = [];
  let index = 0;
  while (index < items.length) {
    const item = items[index]!;
    if (item.error.keyword !== 'anyOf' && item.error.keyword !== 'oneOf' && item.error.keyword !== 'contains') {
      result.push(item);
      index++;
      continue;
    }
    let end = index + 1;
    while (end < items.length && items[end]!.location.startsWith(`${item.location}/`)) end++;
    result.push(...placeAlternativesAfterTheirBranches(items.slice(index + 1, end)), item);
    index = end;
  }
  return result;
}

/** `#/a/b%20c` → `['a', 'b c']` (the interpreter's locations: URI-encoded JSON Pointer fragments). */
function locationTokens(location: string): string[] {
  const body = location.startsWith('#') ? location.slice(1) : location;
  if (body === '') return [];
  return body
    .slice(body.startsWith('/') ? 1 : 0)
    .split('/')
    .map((token) => unescapeJsonPointerToken(decodeURIComponent(token)));
}

function lastToken(location: string): string | undefined {
  return locationTokens(location).at(-1);
}

function parentLocation(location: string): string {
  return location.slice(0, location.lastIndexOf('/'));
}

function toPointer(tokens: readonly string[]): string {
  return tokens.map((token) => `/${escapeJsonPointerToken(token)}`).join('');
}

/**
 * The prepared schema value at a keyword location (following `$ref`s through the lookup), the
 * prepared schema holding it, that schema's original (what the user wrote) and the last token.
 */
function resolveLocation(
  context: PreparedContext,
  tokens: readonly string[],
): { value: unknown; parent: unknown; original: Record<string, unknown>; keyword: string | undefined } {
  let current: unknown = context.root;
  let parent: unknown = undefined;
  for (const token of tokens) {
    parent = current;
    if (!isPlainObject(current) && !Array.isArray(current)) {
      current = undefined;
      continue;
    }
    const node = current as Record<string, unknown>;
    if (token === '$ref' && isPlainObject(node)) current = context.lookup[String(node.__absolute_ref__ ?? node.$ref)];
    else if (token === '$recursiveRef' && isPlainObject(node)) current = context.lookup[String(node.__absolute_recursive_ref__ ?? '')] ?? context.root;
    else if (token === 'dependantRequired') current = node.dependentRequired;
    else current = Object.hasOwn(node, token) ? node[token] : undefined;
  }
  const original = isPlainObject(parent) ? (context.originals.get(parent) ?? parent) : {};
  const last = tokens.at(-1);
  const keyword = last === undefined || last === '$ref' || last === '$recursiveRef' ? undefined : last === 'dependantRequired' ? 'dependentRequired' : last;
  return { value: current, parent, original, keyword };
}

function valueAt(value: unknown, tokens: readonly string[]): unknown {
  let current = value;
  for (const token of tokens) {
    if (Array.isArray(current)) current = current[Number(token)];
    else if (isPlainObject(current)) current = Object.hasOwn(current, token) ? current[token] : undefined;
    else return undefined;
  }
  return current;
}

function isFalseSchema(schema: unknown): boolean {
  return schema === false || (isPlainObject(schema) && (schema as { [STANDS_FOR_FALSE]?: boolean })[STANDS_FOR_FALSE] === true);
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, index) => jsonEqual(item, b[index]));
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  return keys.length === Object.keys(right).length && keys.every((key) => Object.hasOwn(right, key) && jsonEqual(left[key], right[key]));
}

function quoted(text: string, expression: RegExp): string | undefined {
  return expression.exec(text)?.[1];
}

function copyData(value: unknown, memo: Map<object, unknown>): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const seen = memo.get(value);
  if (seen !== undefined) return seen;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    memo.set(value, out);
    for (const item of value) out.push(copyData(item, memo));
    return out;
  }
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  memo.set(value, out);
  for (const [key, item] of Object.entries(value)) out[key] = copyData(item, memo);
  return out;
}

function mapValues(record: Record<string, unknown>, map: (value: unknown, key: string) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) out[key] = map(value, key);
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
