import { findClosestName, editDistance } from './closest-name.ts';
import { describeSchemaBriefly, exampleValue, listValues, numberFromText } from './describe-schema.ts';
import { describeJsonPointer, escapeControlCharacters } from './json-pointer.ts';
import { jsonTypeOf, previewJson, truncateText } from './preview.ts';
import type { DescribedFieldError } from './summarise-field-errors.ts';

/** Bound of a schema description quoted in a message, in characters. */
export const DESCRIPTION_MAX_CHARS = 160;

/** Names a model chose, as a message quotes them: at most this many characters. */
const MAX_NAME_CHARS = 128;

/** Bound of an example value quoted in a message, in characters. */
const EXAMPLE_MAX_CHARS = 80;

/** The longest string read as a JSON or Python literal for a hint. */
const MAX_LITERAL_TEXT = 10_000;

/** Words that start the example of a description: it is kept when the description is cut. */
const EXAMPLE_MARKER = /\b(?:e\.g\.|eg\.|for example|for instance|example:|examples:|such as|ex\.)/i;

/**
 * A schema's `description` as a message quotes it: whitespace collapsed, at most `maxChars`
 * characters. A description cut before its example (`… e.g. 2024-01-15`) keeps the example: the
 * text before it is cut instead (at a word, marked `…`).
 */
export function describeDescription(description: string, maxChars: number = DESCRIPTION_MAX_CHARS): string {
  const text = description.replace(/\s+/g, ' ').trim();
  if (text.length <= maxChars) return text;
  const marker = EXAMPLE_MARKER.exec(text);
  if (marker !== null && marker.index > maxChars / 3) {
    const example = truncateText(untilSentenceEnd(text.slice(marker.index)), Math.floor(maxChars / 2));
    const room = maxChars - example.length - 2;
    if (room >= 20) return `${cutAtWord(text.slice(0, marker.index), room)} ${example}`;
  }
  return cutAtWord(text, maxChars);
}

function untilSentenceEnd(text: string): string {
  // `e.g.` itself holds dots: a sentence ends at a dot followed by a space and a capital letter
  const end = /[.;!?](?=\s+\p{Lu})|[;!?]\s/u.exec(text.slice(5));
  return end === null ? text : text.slice(0, end.index + 6);
}

function cutAtWord(text: string, maxChars: number): string {
  const trimmed = text.trim();
  if (trimmed.length <= maxChars) return trimmed;
  const cut = trimmed.slice(0, maxChars - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > maxChars / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:]+$/, '')}…`;
}

/** A property that was not sent, and the undeclared property that probably carries its value. */
export interface MisplacedValue {
  /** The required property that is missing. */
  missing: string;
  /** The undeclared property sent instead. */
  sent: string;
}

/**
 * Pairs the required properties absent from `data` with the undeclared properties sent in it that
 * probably carry their values: a name equal up to case and separators (`class` for `_class`) or
 * close by edit distance; else, when exactly one required property is missing and exactly one
 * undeclared property was sent, that one if its value fits the missing property's schema type
 * (`scores` sent as an object for `gradeDict`). Each name is paired at most once. Never throws.
 */
export function findMisplacedValues(data: unknown, schema: unknown): MisplacedValue[] {
  if (!isObject(data) || !isObject(schema) || !isObject(schema.properties)) return [];
  const properties = schema.properties;
  const required = Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string') : [];
  const missing = required.filter((name) => !Object.hasOwn(data, name)).slice(0, 20);
  if (missing.length === 0) return [];
  const undeclared = Object.keys(data)
    .filter((key) => !Object.hasOwn(properties, key))
    .slice(0, 50);
  if (undeclared.length === 0) return [];
  const pairs: MisplacedValue[] = [];
  const used = new Set<string>();
  for (const name of missing) {
    const free = undeclared.filter((key) => !used.has(key));
    const same = free.find((key) => compact(key) === compact(name));
    const close = same ?? findClosestName(name, free);
    if (close !== undefined) {
      pairs.push({ missing: name, sent: close });
      used.add(close);
    }
  }
  if (pairs.length === 0 && missing.length === 1 && undeclared.length === 1) {
    const [name] = missing as [string];
    const [key] = undeclared as [string];
    if (valueFitsType(data[key], properties[name])) pairs.push({ missing: name, sent: key });
  }
  return pairs;
}

/**
 * The field error for a required property that is absent: names it, its type and, when the schema
 * has one, its description (cut as {@link describeDescription}). `received` is left out (nothing
 * was received). With `sentInstead` (an undeclared property that probably carries the value, see
 * {@link findMisplacedValues}) the message and fix say to send that value under the right name.
 */
export function describeMissing(path: string, property: string, propertySchema: unknown, sentInstead?: string): DescribedFieldError {
  const expected = propertySchema === undefined ? 'a value' : describeSchemaBriefly(propertySchema);
  const description = isObject(propertySchema) && typeof propertySchema.description === 'string' ? describeDescription(propertySchema.description) : undefined;
  const name = describeJsonPointer(path);
  const base = `missing required field "${name}" (${expected}${description ? `: ${description}` : ''})`;
  if (sentInstead !== undefined) {
    const sent = shown(sentInstead);
    return {
      path,
      problem: 'required',
      expected,
      message: `${base}; "${sent}" was sent, which is not a parameter: if it holds this value, send it as "${property}"`,
      code: 'MISSING_REQUIRED',
      headline: `${name} is missing`,
      fix: misplacedFix(sentInstead, property, expected),
    };
  }
  return {
    path,
    problem: 'required',
    expected,
    message: base,
    code: 'MISSING_REQUIRED',
    headline: `${name} is missing`,
    fix: `add "${property}" (${expected})`,
  };
}

function misplacedFix(sent: string, property: string, expected: string): string {
  return `send the value of "${shown(sent)}" as "${property}" (${expected}), not as "${shown(sent)}"`;
}

/**
 * The field error for an undeclared property. The suggestion is only as firm as the evidence:
 * - the value probably belongs to a missing required property (`paired`): send it under that name;
 * - a close name (one edit in five characters, or equal up to case and separators): rename it;
 * - a weaker resemblance: "if you meant X, send the value under that name; otherwise remove it";
 * - none: remove it.
 *
 * @param path - JSON Pointer of the parent object; the field's path is the parent's plus the name.
 * @param around - `allowed`: the property names the schema declares there; `data`: the parent
 *   object sent; `paired`: the missing required property this one probably carries.
 */
export function describeUnknownProperty(
  path: string,
  fullProperty: string,
  { allowed, data, paired }: { allowed: readonly string[]; data: unknown; paired?: { property: string; schema: unknown } | undefined },
): DescribedFieldError {
  const property = shown(fullProperty);
  const value = isObject(data) ? data[fullProperty] : undefined;
  const allowedText = allowed.length > 0 ? `allowed: ${allowed.slice(0, 20).join(', ')}${allowed.length > 20 ? ', …' : ''}` : 'no other properties are allowed';
  const fieldPath = `${path}/${truncateText(fullProperty, MAX_NAME_CHARS).replaceAll('~', '~0').replaceAll('/', '~1')}`;
  const label = describeJsonPointer(fieldPath);
  const base = {
    path: fieldPath,
    problem: 'unknown',
    received: previewJson(value),
    code: 'UNKNOWN_PARAMETER' as const,
    headline: `unknown parameter "${label}"`,
  };
  if (paired !== undefined) {
    const expected = describeSchemaBriefly(paired.schema);
    return {
      ...base,
      expected: `"${paired.property}" (${allowedText})`,
      message: `unknown parameter "${label}"; it probably holds the required "${paired.property}" (${expected}); ${allowedText}`,
      fix: misplacedFix(fullProperty, paired.property, expected),
    };
  }
  const closest = findClosestName(fullProperty, allowed);
  if (closest === undefined) {
    return { ...base, expected: allowedText, message: `unknown parameter "${label}"; ${allowedText}`, fix: `remove "${property}"` };
  }
  if (isCloseName(fullProperty, closest)) {
    return {
      ...base,
      expected: `"${closest}" (${allowedText})`,
      message: `unknown parameter "${label}" (did you mean "${closest}"?); ${allowedText}`,
      fix: `rename "${property}" to "${closest}"`,
    };
  }
  return {
    ...base,
    expected: `"${closest}" (${allowedText})`,
    message: `unknown parameter "${label}"; the nearest allowed name is "${closest}"; ${allowedText}`,
    fix: `remove "${property}", or, if it was meant as "${closest}", send its value as "${closest}"`,
  };
}

/**
 * A rename is advised only for a close name: equal up to case and separators, sharing a stem (a
 * common start of at least 4 characters and 80 % of the shorter name: `passenger_count` and
 * `passengers`), or at most one edit per five characters.
 */
function isCloseName(name: string, candidate: string): boolean {
  const a = compact(name);
  const b = compact(candidate);
  if (a === b) return true;
  let common = 0;
  while (common < a.length && common < b.length && a[common] === b[common]) common += 1;
  if (common >= 4 && common >= 0.8 * Math.min(a.length, b.length)) return true;
  const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
  return distance <= Math.max(1, Math.floor(Math.max(name.length, candidate.length) / 5));
}

/**
 * The field error for a value of the wrong JSON type, with a value to send in every message:
 * - a number, integer or boolean sent as a string (`"5"`, `"True"`): send it unquoted (`5`, `true`);
 * - JSON or a Python literal sent as a string (`"['vegan']"`, `"{'a': 1}"`): send the value itself
 *   as JSON (`["vegan"]`, `{"a": 1}`);
 * - `null`: the value the field takes, e.g. one built from its schema;
 * - anything else: an example built from the received value and the schema (`"vegan"` for an array
 *   of strings → `["vegan"]`), or from the schema alone.
 *
 * @param expectedTypes - the JSON types the schema allows there (`integer`, `array`, ...).
 * @param propertySchema - the schema at the field, for the example; may be undefined.
 */
export function describeTypeMismatch(path: string, expectedTypes: readonly string[], data: unknown, propertySchema?: unknown): DescribedFieldError {
  const name = shown(describeJsonPointer(path));
  const expected = expectedTypes.join(' or ');
  const received = previewJson(data);
  const hint = typeHint(data, expectedTypes, propertySchema);
  return {
    path,
    problem: 'type',
    expected,
    received,
    message: `${name}: expected ${expected}, received ${describeReceivedValue(data)} — ${hint.advice}`,
    code: 'INVALID_TYPE',
    headline: `${name} has the wrong type`,
    fix: hint.fix ?? `for ${nameInSentence(name)}, ${hint.advice}`,
  };
}

interface TypeHint {
  advice: string;
  fix?: string;
}

function typeHint(data: unknown, expectedTypes: readonly string[], schema: unknown): TypeHint {
  const wants = (type: string) => expectedTypes.includes(type);
  if (typeof data === 'string') {
    const trimmed = data.trim();
    const number = wants('integer') || wants('number') ? numberFromText(trimmed) : undefined;
    if (number !== undefined && (wants('number') || Number.isInteger(number))) {
      const word = !Number.isFinite(Number(trimmed));
      return {
        advice: word
          ? `send ${String(number)} (a number in digits), not ${previewJson(data, 40)} (a word)`
          : `send ${String(number)} (a number), not ${previewJson(data, 40)} (a string)`,
      };
    }
    if (wants('boolean') && /^(?:true|false)$/i.test(trimmed)) {
      const value = trimmed.toLowerCase();
      return { advice: `send ${value} (a JSON boolean: lowercase, no quotes), not ${previewJson(data, 40)} (a string)` };
    }
    if (wants('null') && /^(?:null|none|nil)$/i.test(trimmed)) return { advice: `send null (no quotes), not ${previewJson(data, 40)} (a string)` };
    const literal = readLiteralText(data);
    if (literal !== undefined && expectedTypes.includes(jsonTypeOf(literal.value) === 'integer' ? 'integer' : jsonTypeOf(literal.value))) {
      const value = previewJson(literal.value, EXAMPLE_MAX_CHARS);
      return literal.python
        ? { advice: `${previewJson(data, 40)} is a Python literal inside a string; send the value itself as JSON, not as a string: ${value}` }
        : { advice: `send the ${jsonTypeOf(literal.value)} itself, not a string holding its JSON: ${value}` };
    }
  }
  if ((typeof data === 'number' || typeof data === 'boolean') && wants('string')) {
    return { advice: `send ${JSON.stringify(String(data))} (a string), not ${String(data)} (a ${typeof data})` };
  }
  const example = exampleValue(schema, data, expectedTypes);
  const shownExample = example === undefined ? undefined : previewJson(example, EXAMPLE_MAX_CHARS);
  const kind = withArticle(expectedTypes.join(' or '));
  if (data === null) {
    return { advice: `null is not accepted here: send ${kind}${shownExample ? `, e.g. ${shownExample}` : ''}` };
  }
  if ((isObject(data) || Array.isArray(data)) && wants('string')) {
    return { advice: `send a string, not ${Array.isArray(data) ? 'an array' : 'an object'}${shownExample ? `, e.g. ${shownExample}` : ''}` };
  }
  if (wants('array') && !Array.isArray(data) && example !== undefined) {
    if (typeof data === 'string' && Array.isArray(example) && example.length > 1) {
      // a list sent as one string: every item, and — for text items — the one-item reading too
      const items = isObject(schema) && isObject(schema.items) ? schema.items : undefined;
      const textItems = example.every((item) => typeof item === 'string') && !Array.isArray(items?.enum);
      const oneItem = textItems ? ` (or ${previewJson([data], EXAMPLE_MAX_CHARS)} if it is one item)` : '';
      return { advice: `send the items as a JSON array, not one string: ${shownExample}${oneItem}` };
    }
    return { advice: `send an array, even for one item: ${shownExample}` };
  }
  if (example === undefined && (wants('integer') || wants('number'))) {
    // no number is invented: a model may copy it
    const brief = describeSchemaBriefly(schema);
    const bounded = /^(?:integer|number) [<>]/.test(brief) ? brief : expectedTypes.join(' or ');
    return { advice: `send ${withArticle(bounded)}, written as digits without quotes` };
  }
  return { advice: `send ${kind}${shownExample ? `, e.g. ${shownExample}` : ''}` };
}

/**
 * Reads a string that holds a JSON value or a Python literal (a list, dict or tuple; `True`,
 * `False`, `None`; single-quoted strings) into the JSON value it stands for; `undefined` for any
 * other text, or text over 10,000 characters. `python` tells which it was. Only arrays and objects
 * are read (a plain word is a string, not a literal). Never throws.
 */
export function readLiteralText(text: string): { value: unknown; python: boolean } | undefined {
  if (typeof text !== 'string' || text.length > MAX_LITERAL_TEXT) return undefined;
  const trimmed = text.trim();
  const first = trimmed[0];
  if (first !== '[' && first !== '{' && first !== '(') return undefined;
  if (first !== '(') {
    try {
      return { value: JSON.parse(trimmed) as unknown, python: false };
    } catch {
      // not JSON: maybe Python
    }
  }
  const converted = pythonLiteralToJson(trimmed);
  if (converted === undefined) return undefined;
  try {
    return { value: JSON.parse(converted) as unknown, python: true };
  } catch {
    return undefined;
  }
}

/** Python literal text → JSON text: quotes, `True`/`False`/`None`, tuples; `undefined` when a token is not one of these. */
function pythonLiteralToJson(text: string): string | undefined {
  let out = '';
  for (let index = 0; index < text.length;) {
    const char = text[index]!;
    if (char === '"' || char === "'") {
      let end = index + 1;
      let value = '';
      while (end < text.length && text[end] !== char) {
        if (text[end] === '\\' && end + 1 < text.length) {
          const next = text[end + 1]!;
          value += next === 'n' ? '\n' : next === 't' ? '\t' : next;
          end += 2;
        } else {
          value += text[end];
          end += 1;
        }
      }
      if (end >= text.length) return undefined;
      out += JSON.stringify(value);
      index = end + 1;
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(index, index + 16));
    if (word !== null) {
      const mapped = word[0] === 'True' ? 'true' : word[0] === 'False' ? 'false' : word[0] === 'None' ? 'null' : undefined;
      if (mapped === undefined) return undefined;
      out += mapped;
      index += word[0].length;
      continue;
    }
    if (char === '(') out += '[';
    else if (char === ')') out += ']';
    else out += char;
    index += 1;
  }
  // a trailing comma is allowed in Python: `(1,)`, `[1, 2,]`
  return out.replace(/,\s*([\]}])/g, '$1');
}

/** The received value as a message states it: `string "x"`, `integer 5`, `null` (not `null null`). */
export function describeReceivedValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  return `${jsonTypeOf(value)} ${previewJson(value)}`;
}

/** The JSON type of a received value, as a message says it: `string`, `integer`, `array`, ... */
export function describeReceivedType(value: unknown): string {
  return jsonTypeOf(value);
}

/** Allowed values for a message: `"a", "b", "c"` (at most 12, then `… (N more)`). */
export function describeListOfValues(values: readonly unknown[]): string {
  return listValues(values, 12);
}

function valueFitsType(value: unknown, schema: unknown): boolean {
  if (!isObject(schema)) return false;
  const types = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? schema.type.map(String) : [];
  if (types.length === 0) return false;
  const actual = jsonTypeOf(value);
  return types.includes(actual) || (actual === 'integer' && types.includes('number'));
}

function withArticle(text: string): string {
  return /^[aeiou]/i.test(text) ? `an ${text}` : `a ${text}`;
}

/** Words a field name can be confused with in a sentence (`Convert to to …`). */
const SENTENCE_WORDS = new Set(['a', 'an', 'and', 'as', 'at', 'by', 'for', 'from', 'in', 'into', 'is', 'it', 'of', 'on', 'or', 'not', 'the', 'to', 'with']);

/**
 * A field name as a sentence of advice uses it: bare (`date`), but quoted when it is a word the
 * sentence itself could use (`"to"`, `"from"`, `"for"`) or holds a space, so `Convert "to" to an
 * e-mail address` cannot be misread.
 */
export function nameInSentence(name: string): string {
  return SENTENCE_WORDS.has(name.toLowerCase()) || /\s/.test(name) ? JSON.stringify(name) : name;
}

function compact(name: string): string {
  return name.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
}

/** A name a model chose, as a message quotes it: control characters escaped, at most {@link MAX_NAME_CHARS} characters. */
function shown(name: string): string {
  return truncateText(escapeControlCharacters(name), MAX_NAME_CHARS);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
