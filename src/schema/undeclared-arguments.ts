/**
 * Arguments an open schema lets through without declaring them: a misspelled key (`querry` for
 * `query`) validates against a schema that does not set `additionalProperties`, and the tool runs
 * without the value the model meant to send. They are reported to the model as warnings on the
 * success envelope.
 */
import type { ToolWarning } from '../ground/tool-result.ts';
import { findClosestName } from './closest-name.ts';
import { escapeControlCharacters, escapeJsonPointerToken } from './json-pointer.ts';

/** At most this many warnings per call. */
export const MAX_ARGUMENT_WARNINGS = 10;
/** An undeclared key is shown to at most this many characters (control characters escaped). */
const SHOWN_KEY_LENGTH = 64;
/** How deep nested objects are checked, and how many keys are read per object. */
const MAX_DEPTH = 4;
const MAX_KEYS = 256;

/**
 * Keywords that make an object schema's set of keys something other than its `properties`: with
 * any of them the object is left alone (its author decided what else it takes).
 */
const OPENING_KEYWORDS = [
  'additionalProperties',
  'patternProperties',
  'unevaluatedProperties',
  'propertyNames',
  '$ref',
  '$dynamicRef',
  'if',
  'dependentSchemas',
  'not',
] as const;

interface Level {
  /** The keys declared at this level (any branch of `allOf`/`anyOf`/`oneOf` counts). */
  declared: Set<string>;
  /** The sub-schemas of the declared keys (several when branches declare a key twice). */
  children: Map<string, unknown[]>;
}

/** The keys an object schema declares, or `undefined` when it says nothing about unknown keys or leaves them open. */
function levelOf(schema: unknown, depth = 0): Level | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema) || depth > 3) return undefined;
  const record = schema as Record<string, unknown>;
  for (const keyword of OPENING_KEYWORDS) if (record[keyword] !== undefined) return undefined;
  const level: Level = { declared: new Set(), children: new Map() };
  let described = false;
  if (typeof record.properties === 'object' && record.properties !== null && !Array.isArray(record.properties)) {
    described = true;
    for (const [key, child] of Object.entries(record.properties as Record<string, unknown>)) {
      level.declared.add(key);
      level.children.set(key, [...(level.children.get(key) ?? []), child]);
    }
  }
  for (const keyword of ['allOf', 'anyOf', 'oneOf'] as const) {
    const branches = record[keyword];
    if (!Array.isArray(branches)) continue;
    for (const branch of branches) {
      if (typeof branch !== 'object' || branch === null) continue;
      const inner = levelOf(branch, depth + 1);
      // a branch that is open, or whose keys are not listed, leaves the whole level open
      if (inner === undefined) {
        if (Object.keys(branch).some((key) => key === 'properties' || OPENING_KEYWORDS.includes(key as (typeof OPENING_KEYWORDS)[number]))) return undefined;
        continue;
      }
      described = true;
      for (const key of inner.declared) level.declared.add(key);
      for (const [key, children] of inner.children) level.children.set(key, [...(level.children.get(key) ?? []), ...children]);
    }
  }
  return described ? level : undefined;
}

/** A key as shown in a message: control characters escaped, at most {@link SHOWN_KEY_LENGTH} characters. */
export function showKey(key: string): string {
  const cut = key.length > SHOWN_KEY_LENGTH ? `${key.slice(0, SHOWN_KEY_LENGTH)}…` : key;
  return escapeControlCharacters(JSON.stringify(cut));
}

/**
 * The arguments `value` holds that `schema` (JSON Schema) lets through without declaring: keys of an
 * object whose schema lists `properties` and leaves `additionalProperties` (and every keyword that
 * decides on other keys) unset, at the top level and in nested declared objects (4 levels).
 * Each warning names the key by JSON Pointer and, when one is close, the declared key it resembles.
 * At most {@link MAX_ARGUMENT_WARNINGS}; none for a schema that is not an object schema.
 */
export function findUndeclaredArguments(schema: unknown, value: unknown): ToolWarning[] {
  const warnings: ToolWarning[] = [];
  // A top level that is closed (`additionalProperties` set: most tool schemas) or lists no keys ends the search before any walk.
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return warnings;
  const top = levelOf(schema);
  if (top === undefined) return warnings;
  const visit = (levels: ReadonlyArray<Level | undefined>, current: unknown, path: string, depth: number): void => {
    if (warnings.length >= MAX_ARGUMENT_WARNINGS || depth > MAX_DEPTH) return;
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return;
    // several schemas for one key (two branches): only what none of them declares, and only when all are closed
    if (levels.length === 0 || levels.some((level) => level === undefined)) return;
    const declared = new Set(levels.flatMap((level) => [...level!.declared]));
    let read = 0;
    for (const key in current) {
      if (!Object.hasOwn(current, key)) continue;
      if (++read > MAX_KEYS || warnings.length >= MAX_ARGUMENT_WARNINGS) break;
      const pointer = `${path}/${escapeJsonPointerToken(key)}`;
      if (declared.has(key)) {
        const children = levels.flatMap((level) => level!.children.get(key) ?? []);
        visit(
          children.map((child) => levelOf(child)),
          (current as Record<string, unknown>)[key],
          pointer,
          depth + 1,
        );
        continue;
      }
      const closest = findClosestName(key, declared);
      warnings.push({
        code: 'UNDECLARED_ARGUMENT',
        path: pointer.length > 256 ? `${pointer.slice(0, 256)}…` : pointer,
        ...(closest === undefined ? {} : { closest }),
        message:
          closest === undefined
            ? `${showKey(key)} is not a parameter of this tool, so the tool ignored its value; send only the declared parameters (${[...declared].slice(0, 8).join(', ')}${declared.size > 8 ? ', …' : ''}).`
            : `${showKey(key)} is not a parameter of this tool, so the tool ignored its value; if you meant "${closest}", call again with "${closest}".`,
      });
    }
  };
  visit([top], value, '', 0);
  return warnings;
}
