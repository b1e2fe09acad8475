import type { ErrorObject } from 'ajv';
import type { JsonSchema } from '../ground/ports/schema-validator.ts';
import { findClosestName } from './closest-name.ts';
import {
  describeListOfValues,
  describeMissing,
  describeReceivedType,
  describeTypeMismatch,
  describeUnknownProperty,
  findMisplacedValues,
  nameInSentence,
} from './describe-values.ts';
import { describeSchemaBriefly, listValues } from './describe-schema.ts';
import { describeDatePattern, describeFormat, describeImpossibleDate } from './format-expectations.ts';
import { describeJsonPointer, escapeJsonPointerToken, parseJsonPointer } from './json-pointer.ts';
import { jsonTypeOf, previewJson, truncateText } from './preview.ts';
import { summariseFieldErrors, type DescribedFieldError, type ValidationFailure } from './summarise-field-errors.ts';

/**
 * Turns Ajv's errors (produced with `allErrors: true, verbose: true`) into one model-readable
 * validation failure with field-level errors.
 *
 * - Paths are JSON Pointers (RFC 6901) to the offending value; a missing or unknown property is
 *   addressed by its own path (`/date`), not its parent's.
 * - `anyOf`/`oneOf` failures are summarised once (what was received, which alternatives exist);
 *   when exactly one alternative fits the received value's type, that alternative's own errors are
 *   reported instead. The sub-errors Ajv emits for each alternative are not repeated.
 * - Codes per problem: `required`/`dependentRequired` → `MISSING_REQUIRED`; `type` → `INVALID_TYPE`;
 *   `enum`/`const` → `INVALID_ENUM`; `format`/`pattern` → `INVALID_FORMAT` (`DATE_FORMAT_ERROR` for
 *   date, date-time and time formats and date-like patterns); bounds, lengths, counts and
 *   `multipleOf` → `OUT_OF_RANGE`; `additionalProperties`/`unevaluatedProperties: false` and
 *   `propertyNames` → `UNKNOWN_PARAMETER` (with the closest allowed name); anything else →
 *   `SCHEMA_VALIDATION_FAILED`. Mixed codes → `SCHEMA_VALIDATION_FAILED`.
 *
 * Never throws; an empty error list still yields one root field.
 *
 * @param rootSchema - the compiled schema, to resolve local `$ref`s of alternatives.
 * @see JSON Schema 2020-12 Core §10.2 (applicators), RFC 6901
 */
export function describeAjvErrors(errors: readonly ErrorObject[], rootSchema: JsonSchema): ValidationFailure {
  const { fields, notDescribed } = describeBounded(errors, rootSchema);
  return summariseFieldErrors(fields, { notDescribed });
}

/**
 * At most this many Ajv errors are described (5,000 wrong array items give 5,000 errors): the
 * summary still counts them all, and no envelope shows more than a few fields anyway.
 */
export const MAX_DESCRIBED_ERRORS = 1000;

/** Names a model chose (property names, paths) are cut to this many characters where a message quotes them. */
const MAX_NAME_CHARS = 128;

/** The field-level part of {@link describeAjvErrors}, before deduplication and summary; at most {@link MAX_DESCRIBED_ERRORS} fields. */
export function describeAjvFieldErrors(errors: readonly ErrorObject[], rootSchema: JsonSchema): DescribedFieldError[] {
  return describeBounded(errors, rootSchema).fields;
}

function describeBounded(errors: readonly ErrorObject[], rootSchema: JsonSchema): { fields: DescribedFieldError[]; notDescribed: number } {
  const collapsed = collapseAlternatives([...errors], rootSchema);
  const meaningful = collapsed.filter((item) => !('keyword' in item) || !isNoiseKeyword(item, collapsed.length));
  const fields: DescribedFieldError[] = [];
  let index = 0;
  for (; index < meaningful.length && fields.length < MAX_DESCRIBED_ERRORS; index++) {
    const item = meaningful[index]!;
    if ('keyword' in item) fields.push(...describeOne(item));
    else fields.push(item);
  }
  return { fields, notDescribed: meaningful.length - index };
}

/** A model-chosen name as a message quotes it: at most {@link MAX_NAME_CHARS} characters. */
function shown(name: string): string {
  return truncateText(name, MAX_NAME_CHARS);
}

/** `if` says "must match then": its sub-errors say why; `propertyNames` sub-errors are restated by it. */
function isNoiseKeyword(error: ErrorObject, count: number): boolean {
  if (error.keyword === 'if' && count > 1) return true;
  if ((error as ErrorObject & { propertyName?: string }).propertyName !== undefined && error.keyword !== 'propertyNames') return true;
  return false;
}

type CollapsedItem = ErrorObject | DescribedFieldError;

function collapseAlternatives(errors: ErrorObject[], rootSchema: JsonSchema): CollapsedItem[] {
  const swallowed = new Set<number>();
  const replacements = new Map<number, CollapsedItem[]>();
  // Outermost first: a shorter schema path is an enclosing alternative.
  const alternatives = errors
    .map((error, index) => ({ error, index }))
    .filter(({ error }) => error.keyword === 'anyOf' || error.keyword === 'oneOf')
    .sort((a, b) => a.error.schemaPath.length - b.error.schemaPath.length);
  for (const { error, index } of alternatives) {
    if (swallowed.has(index)) continue;
    const members = memberIndexes(errors, index);
    for (const member of members) swallowed.add(member);
    const branchErrors = pickSingleFittingBranch(error, members.map((member) => errors[member]).filter(isDefined), rootSchema);
    replacements.set(index, branchErrors === undefined ? [describeAlternatives(error, rootSchema)] : collapseAlternatives(branchErrors, rootSchema));
  }
  const result: CollapsedItem[] = [];
  errors.forEach((error, index) => {
    if (swallowed.has(index)) return;
    result.push(...(replacements.get(index) ?? [error]));
  });
  return result;
}

/**
 * The errors Ajv emitted while trying the alternatives of the error at `index`: the contiguous run
 * just before it, at or below its instance path, whose schema path lies under the alternatives or
 * outside the enclosing schema (reached through a `$ref`).
 */
function memberIndexes(errors: ErrorObject[], index: number): number[] {
  const alternative = errors[index];
  if (alternative === undefined) return [];
  const ownPath = `${alternative.schemaPath}/`;
  const parentPath = alternative.schemaPath.slice(0, alternative.schemaPath.lastIndexOf('/'));
  const members: number[] = [];
  for (let cursor = index - 1; cursor >= 0; cursor--) {
    const candidate = errors[cursor];
    if (candidate === undefined || !isPointerPrefix(alternative.instancePath, candidate.instancePath)) break;
    const under = candidate.schemaPath.startsWith(ownPath);
    const viaReference = !candidate.schemaPath.startsWith(`${parentPath}/`) && candidate.schemaPath !== parentPath;
    if (!under && !viaReference) break;
    members.push(cursor);
  }
  return members;
}

/** When exactly one alternative fits the value's type (and const/enum), its own errors; else `undefined`. */
function pickSingleFittingBranch(error: ErrorObject, members: ErrorObject[], rootSchema: JsonSchema): ErrorObject[] | undefined {
  const branches = Array.isArray(error.schema) ? (error.schema as unknown[]) : [];
  const passing = (error.params as { passingSchemas?: unknown }).passingSchemas;
  if (Array.isArray(passing)) return undefined;
  const fitting = branches
    .map((branch, branchIndex) => ({ branchIndex, fits: fitsShape(resolveLocal(branch, rootSchema), error.data) }))
    .filter((entry) => entry.fits);
  if (fitting.length !== 1 || fitting[0] === undefined) return undefined;
  const chosen = fitting[0].branchIndex;
  const own = `${error.schemaPath}/${chosen}/`;
  const picked = members.filter((member) => {
    const underSomeBranch = member.schemaPath.startsWith(`${error.schemaPath}/`);
    if (underSomeBranch) return member.schemaPath.startsWith(own);
    // Reached through a $ref: keep unless it is another alternative's type complaint about this value.
    return !(member.keyword === 'type' && member.instancePath === error.instancePath);
  });
  return picked.length > 0 ? picked.reverse() : undefined;
}

function fitsShape(schema: unknown, data: unknown): boolean {
  if (schema === false) return false;
  if (typeof schema !== 'object' || schema === null) return true;
  const record = schema as Record<string, unknown>;
  const types = typeof record.type === 'string' ? [record.type] : Array.isArray(record.type) ? record.type.map(String) : undefined;
  if (types !== undefined) {
    const actual = jsonTypeOf(data);
    const fits = types.includes(actual) || (actual === 'integer' && types.includes('number'));
    if (!fits) return false;
  }
  if ('const' in record && !jsonEqual(record.const, data)) return false;
  if (Array.isArray(record.enum) && !record.enum.some((value) => jsonEqual(value, data))) return false;
  return true;
}

/**
 * `anyOf: [{ required: ["input"] }, { required: ["messages"] }]` unmet: one of these fields is
 * missing. The names with their types (`"input" (string) or "messages" (array …)`), or `undefined`
 * when the alternatives are not all bare `required` lists.
 */
function describeRequiredAlternatives(error: ErrorObject, rootSchema: JsonSchema): DescribedFieldError | undefined {
  const branches = Array.isArray(error.schema) ? (error.schema as unknown[]).map((branch) => resolveLocal(branch, rootSchema)) : [];
  if (branches.length < 2 || branches.length > 8) return undefined;
  const sets: string[][] = [];
  for (const branch of branches) {
    if (!isObject(branch) || !Array.isArray(branch.required) || Object.keys(branch).some((key) => key !== 'required' && key !== 'description'))
      return undefined;
    sets.push(branch.required.map(String));
  }
  const parent = isObject(error.parentSchema) ? error.parentSchema : {};
  const properties = isObject(parent.properties) ? parent.properties : {};
  const data = isObject(error.data) ? error.data : {};
  const phrase = (names: string[]): string =>
    names
      .filter((name) => !Object.hasOwn(data, name))
      .map((name) => `"${shown(name)}" (${properties[name] === undefined ? 'a value' : describeSchemaBriefly(properties[name])})`)
      .join(' and ');
  const options = sets.map(phrase).filter((text) => text !== '');
  const expected = options.join(' or ');
  const firstName = sets[0]?.[0] ?? '';
  const where = error.instancePath === '' ? 'the arguments' : shown(describeJsonPointer(error.instancePath));
  return {
    path: `${error.instancePath}/${escapeJsonPointerToken(firstName)}`,
    problem: 'required',
    expected,
    message: `${where}: missing a required field: send ${expected}`,
    code: 'MISSING_REQUIRED',
    headline: `${sets.map((names) => names.map((name) => `"${shown(name)}"`).join(' and ')).join(' or ')} is missing`,
    fix: `add ${expected}`,
  };
}

function describeAlternatives(error: ErrorObject, rootSchema: JsonSchema): DescribedFieldError {
  const requiredOnly = describeRequiredAlternatives(error, rootSchema);
  if (requiredOnly !== undefined) return requiredOnly;
  const branches = Array.isArray(error.schema) ? (error.schema as unknown[]) : [];
  const options = branches.slice(0, 5).map((branch) => describeSchemaBriefly(resolveLocal(branch, rootSchema)));
  const expected = `one of: ${options.join(' | ')}${branches.length > 5 ? ' | …' : ''}`;
  const name = shown(describeJsonPointer(error.instancePath));
  const received = previewJson(error.data);
  const passing = (error.params as { passingSchemas?: unknown }).passingSchemas;
  const many = Array.isArray(passing);
  const message = many
    ? `${name}: ${received} matches alternatives ${passing.join(' and ')}, but must match exactly one of ${expected}`
    : `${name}: ${received} (${describeReceivedType(error.data)}) matches none of the alternatives; expected ${expected}`;
  return {
    path: error.instancePath,
    problem: 'alternatives',
    expected,
    received,
    message,
    code: 'SCHEMA_VALIDATION_FAILED',
    headline: many ? `${name} matches more than one alternative` : `${name} matches none of the allowed alternatives`,
    fix: `send ${nameInSentence(name)} as ${expected}`,
  };
}

/** One Ajv error, and what every description of it reads: the field's path and name, its value shown, the schema around it. */
interface ErrorAt {
  readonly error: ErrorObject;
  readonly params: Record<string, unknown>;
  readonly path: string;
  readonly name: string;
  /** The value sent, shown (computed only where it is shown: `error.data` may be the whole, large, argument object). */
  readonly received: () => string;
  readonly parent: Record<string, unknown>;
}

function describeOne(error: ErrorObject): DescribedFieldError[] {
  const path = error.instancePath;
  let receivedText: string | undefined;
  const at: ErrorAt = {
    error,
    params: error.params as Record<string, unknown>,
    path,
    name: shown(describeJsonPointer(path)),
    received: () => (receivedText ??= previewJson(error.data)),
    parent: isObject(error.parentSchema) ? error.parentSchema : {},
  };
  switch (error.keyword) {
    case 'required':
    case 'dependentRequired':
    case 'dependencies':
      return describeMissingError(at) ?? [describeOtherError(at)];
    case 'type': {
      const { params } = at;
      const expectedTypes = Array.isArray(params.type) ? params.type.map(String) : String(params.type).split(',');
      return [describeTypeMismatch(path, expectedTypes, error.data, at.parent)];
    }
    case 'enum':
    case 'const':
      return [describeEnumError(at)];
    case 'format':
    case 'pattern':
      return [describeFormatError(at)];
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
    case 'multipleOf':
    case 'minLength':
    case 'maxLength':
    case 'minItems':
    case 'maxItems':
    case 'minProperties':
    case 'maxProperties':
    case 'additionalItems':
    case 'unevaluatedItems':
      return [describeRangeError(at)];
    case 'additionalProperties':
    case 'unevaluatedProperties': {
      const { params, parent } = at;
      const property = String(params.additionalProperty ?? params.unevaluatedProperty ?? '');
      const pair = findMisplacedValues(error.data, parent).find((candidate) => candidate.sent === property);
      const properties = isObject(parent.properties) ? parent.properties : {};
      return [
        describeUnknownProperty(path, property, {
          allowed: allowedPropertyNames(parent),
          data: error.data,
          paired: pair === undefined ? undefined : { property: pair.missing, schema: properties[pair.missing] },
        }),
      ];
    }
    default:
      return [describeOtherError(at)];
  }
}

/** A missing required (or dependent-required) property; `undefined` for a `dependencies` error without one. */
function describeMissingError({ error, params, path, parent }: ErrorAt): DescribedFieldError[] | undefined {
  const missing = String(params.missingProperty ?? '');
  if (error.keyword === 'dependencies' && missing === '') return undefined;
  const fieldPath = `${path}/${escapeJsonPointerToken(missing)}`;
  const properties = isObject(parent.properties) ? parent.properties : {};
  const because = typeof params.property === 'string' ? `, required when "${params.property}" is present` : '';
  if (because) return [{ ...describeMissing(fieldPath, missing, properties[missing]), message: `missing required field "${missing}"${because}` }];
  const misplaced = findMisplacedValues(error.data, parent).find((pair) => pair.missing === missing);
  return [describeMissing(fieldPath, missing, properties[missing], misplaced?.sent)];
}

/** A value outside an `enum` or other than a `const`, with the closest allowed name when one is near. */
function describeEnumError({ error, params, path, name, received }: ErrorAt): DescribedFieldError {
  const allowed = error.keyword === 'enum' ? (Array.isArray(params.allowedValues) ? params.allowedValues : []) : [params.allowedValue];
  const closest =
    typeof error.data === 'string'
      ? findClosestName(
          error.data,
          allowed.filter((value): value is string => typeof value === 'string'),
        )
      : undefined;
  const didYouMean = closest === undefined ? '' : ` (did you mean ${JSON.stringify(closest)}?)`;
  const expected = allowed.length === 1 ? `exactly ${previewJson(allowed[0], 60)}` : `one of ${listValues(allowed, 12)}`;
  return {
    path,
    problem: error.keyword,
    expected,
    received: received(),
    message: `${name}: ${received()} is not allowed; ${allowed.length === 1 ? 'the only allowed value is' : 'allowed values are'} ${describeListOfValues(allowed)}${didYouMean}`,
    code: 'INVALID_ENUM',
    headline: `${name} is not one of the allowed values`,
    fix: closest === undefined ? `use ${expected} for ${nameInSentence(name)}` : `use ${JSON.stringify(closest)} for ${nameInSentence(name)}`,
  };
}

/** A string of the wrong `format` or not matching its `pattern` (dates told apart: wrong layout, or an impossible day). */
function describeFormatError({ error, params, path, name, received }: ErrorAt): DescribedFieldError {
  const expectation = error.keyword === 'format' ? describeFormat(String(params.format)) : describeDatePattern(String(params.pattern));
  if (expectation === undefined) {
    const pattern = String(params.pattern);
    return {
      path,
      problem: 'pattern',
      expected: `a string matching ${pattern}`,
      received: received(),
      message: `${name}: ${received()} does not match the pattern ${pattern}`,
      code: 'INVALID_FORMAT',
      headline: `${name} has the wrong format`,
      fix: `make ${nameInSentence(name)} match the pattern ${pattern}`,
    };
  }
  const expected = expectation.example ? `${expectation.expected}, e.g. ${expectation.example}` : expectation.expected;
  const impossible = error.keyword === 'format' ? describeImpossibleDate(String(params.format), error.data) : undefined;
  if (impossible !== undefined) {
    return {
      path,
      problem: error.keyword,
      expected,
      received: received(),
      message: `${name}: ${received()} is in the right layout but is not a valid ${String(params.format)}: ${impossible}`,
      code: 'DATE_FORMAT_ERROR',
      headline: `${name} is not a valid ${String(params.format)}`,
      fix: `correct ${nameInSentence(name)}: ${impossible} (${expected})`,
    };
  }
  return {
    path,
    problem: error.keyword,
    expected,
    received: received(),
    message: `${name}: expected ${expected}, received ${received()}`,
    code: expectation.isDate ? 'DATE_FORMAT_ERROR' : 'INVALID_FORMAT',
    headline: `${name} has the wrong format`,
    fix: `convert ${nameInSentence(name)} to ${expected}`,
  };
}

/** A number out of its bounds or not a multiple, or a string, array or object of the wrong length. */
function describeRangeError(at: ErrorAt): DescribedFieldError {
  const { error, params, name, received } = at;
  switch (error.keyword) {
    case 'multipleOf': {
      const expected = `a multiple of ${String(params.multipleOf)}`;
      const message = `${name}: must be ${expected}, received ${received()}`;
      return rangeField(at, { problem: 'range', expected, message, fix: `send ${expected} for ${nameInSentence(name)}` });
    }
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum': {
      const expected = `${String(params.comparison)} ${String(params.limit)}`;
      const message = `${name}: must be ${expected}, received ${received()}`;
      return rangeField(at, { problem: 'range', expected, message, fix: `send a value ${expected} for ${nameInSentence(name)}` });
    }
    default: {
      const expected = describeLength(error.keyword, Number(params.limit));
      const message = `${name}: must have ${expected}, received ${received()}`;
      return rangeField(at, { problem: 'length', expected, message, fix: `send ${nameInSentence(name)} with ${expected}` });
    }
  }
}

/** The other keywords: a property name not allowed, repeated items, a missing `contains`, `false` and `not` schemas, and any other. */
function describeOtherError(at: ErrorAt): DescribedFieldError {
  const { error, params, path, name, received, parent } = at;
  switch (error.keyword) {
    case 'propertyNames': {
      const property = shown(String(params.propertyName ?? ''));
      const rule = describeSchemaBriefly(error.schema);
      return {
        path: `${path}/${escapeJsonPointerToken(property)}`,
        problem: 'unknown',
        expected: `a property name that is ${rule}`,
        received: JSON.stringify(property),
        message: `${name}: the property name ${JSON.stringify(property)} is not allowed; names must be ${rule}`,
        code: 'UNKNOWN_PARAMETER',
        headline: `property name ${JSON.stringify(property)} is not allowed`,
        fix: `rename or remove ${JSON.stringify(property)}`,
      };
    }
    case 'uniqueItems': {
      const message = `${name}: items ${String(params.j)} and ${String(params.i)} are identical; items must be unique`;
      return otherField(at, {
        problem: 'unique',
        expected: 'items that are all different',
        message,
        fix: `remove the duplicate items from ${nameInSentence(name)}`,
      });
    }
    case 'contains': {
      const min = typeof params.minContains === 'number' ? params.minContains : 1;
      const max = typeof params.maxContains === 'number' ? ` and at most ${params.maxContains}` : '';
      const expected = `at least ${min}${max} item(s) that are ${describeSchemaBriefly(error.schema)}`;
      return otherField(at, {
        problem: 'contains',
        expected,
        message: `${name}: must contain ${expected}`,
        fix: `make ${nameInSentence(name)} contain ${expected}`,
      });
    }
    case 'false schema':
      return otherField(at, { problem: 'other', expected: 'no value', message: `${name}: no value is allowed here`, fix: `remove ${nameInSentence(name)}` });
    case 'not': {
      const expected = `not ${describeSchemaBriefly(error.schema)}`;
      const message = `${name}: ${received()} must not be ${describeSchemaBriefly(error.schema)}`;
      return otherField(at, { problem: 'other', expected, message, fix: `send ${nameInSentence(name)} as a value that is ${expected}` });
    }
    default: {
      const message = `${name}: ${error.message ?? `fails ${error.keyword}`}`;
      return otherField(at, { problem: 'other', expected: describeSchemaBriefly(parent), message, fix: `fix ${nameInSentence(name)} (${error.keyword})` });
    }
  }
}

/** What a field error says besides its path, value, code and headline. */
interface FieldWords {
  problem: string;
  expected: string;
  message: string;
  fix: string;
}

function allowedPropertyNames(schema: Record<string, unknown>): string[] {
  const names = new Set<string>();
  const add = (part: unknown, depth: number): void => {
    if (!isObject(part) || depth > 2) return;
    if (isObject(part.properties)) for (const key of Object.keys(part.properties)) names.add(key);
    for (const keyword of ['allOf', 'anyOf', 'oneOf'] as const) {
      const branches = part[keyword];
      if (Array.isArray(branches)) for (const branch of branches) add(branch, depth + 1);
    }
    add(part.then, depth + 1);
    add(part.else, depth + 1);
  };
  add(schema, 0);
  return [...names];
}

function rangeField({ path, name, received }: ErrorAt, words: FieldWords): DescribedFieldError {
  const { problem, expected, message, fix } = words;
  return { path, problem, expected, received: received(), message, code: 'OUT_OF_RANGE', headline: `${name} is out of range`, fix };
}

function otherField({ path, name, received }: ErrorAt, words: FieldWords): DescribedFieldError {
  const { problem, expected, message, fix } = words;
  return { path, problem, expected, received: received(), message, code: 'SCHEMA_VALIDATION_FAILED', headline: `${name} is invalid`, fix };
}

function describeLength(keyword: string, limit: number): string {
  const plural = (count: number, noun: string): string => `${count} ${noun}${count === 1 ? '' : 's'}`;
  switch (keyword) {
    case 'minLength':
      return `at least ${plural(limit, 'character')}`;
    case 'maxLength':
      return `at most ${plural(limit, 'character')}`;
    case 'minItems':
      return `at least ${plural(limit, 'item')}`;
    case 'minProperties':
      return `at least ${plural(limit, 'property')}`.replace('propertys', 'properties');
    case 'maxProperties':
      return `at most ${plural(limit, 'property')}`.replace('propertys', 'properties');
    default:
      return `at most ${plural(limit, 'item')}`;
  }
}

function resolveLocal(schema: unknown, rootSchema: JsonSchema): unknown {
  let current = schema;
  for (let depth = 0; depth < 8; depth++) {
    if (!isObject(current) || typeof current.$ref !== 'string' || !current.$ref.startsWith('#')) return current;
    let target: unknown = rootSchema;
    for (const token of parseJsonPointer(decodeURIComponent(current.$ref.slice(1)))) {
      target = isObject(target) || Array.isArray(target) ? (target as Record<string, unknown>)[token] : undefined;
    }
    if (target === undefined) return current;
    current = target;
  }
  return current;
}

function isPointerPrefix(prefix: string, path: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  try {
    return JSON.stringify(a) === JSON.stringify(b);
  } catch {
    return false;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isDefined<T>(value: T | undefined): value is T {
  return value !== undefined;
}
