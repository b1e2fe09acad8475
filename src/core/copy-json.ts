/**
 * A copy of a small, plain JSON value equal to `JSON.parse(JSON.stringify(value))`, made in one walk
 * instead of a serialisation and a parse (the success envelope of every call copies the tool's
 * result). Only values whose JSON meaning is plain are copied: objects whose prototype is
 * `Object.prototype` or `null`, arrays, strings, numbers, booleans and `null` — anything else (a
 * `toJSON`, a class instance, a BigInt, a `__proto__` key, deep nesting, a cycle, a JSON text that may
 * exceed the size bound) gives {@link NOT_COPIED}, and the caller serialises the value instead.
 */

/** The value could not be copied here: serialise it with `JSON.stringify` instead. */
export const NOT_COPIED: unique symbol = Symbol('not copied');

/** Nesting deeper than this is left to `JSON.stringify` (which also reports cycles). */
const MAX_DEPTH = 32;

/** The longest JSON text of a number (`-1.2345678901234567e-308`). */
const MAX_NUMBER_CHARS = 24;

interface Budget {
  /** Upper bound of the JSON text's length still allowed, in UTF-16 code units. */
  left: number;
}

/**
 * Copies `value` as `JSON.parse(JSON.stringify(value))` would, when its JSON text is at most
 * `maxChars` code units long by a conservative bound (a string counts 6 per character, as if every
 * one were escaped). Returns {@link NOT_COPIED} when the value is not plain JSON or may be longer.
 * A getter is read once (its error is thrown, as `JSON.stringify` would); when the copy is given up
 * part way, the caller's `JSON.stringify` reads it again.
 */
export function copyPlainJson(value: object, maxChars: number): unknown {
  const budget: Budget = { left: maxChars };
  const copy = Array.isArray(value) ? copyArray(value, budget, 0) : copyObject(value as Record<string, unknown>, budget, 0);
  return budget.left < 0 ? NOT_COPIED : copy;
}

function copyObject(value: Record<string, unknown>, budget: Budget, depth: number): unknown {
  if (depth > MAX_DEPTH) return NOT_COPIED;
  const prototype = Object.getPrototypeOf(value) as unknown;
  if ((prototype !== Object.prototype && prototype !== null) || 'toJSON' in value) return NOT_COPIED;
  const copy: Record<string, unknown> = {};
  budget.left -= 2;
  for (const key of Object.keys(value)) {
    if (key === '__proto__') return NOT_COPIED;
    const inner = copyMember(value[key], budget, depth);
    if (inner === NOT_COPIED) return NOT_COPIED;
    if (inner === undefined) continue; // JSON leaves out undefined, functions and symbols
    budget.left -= 6 * key.length + 4;
    if (budget.left < 0) return NOT_COPIED;
    copy[key] = inner;
  }
  return copy;
}

function copyArray(value: readonly unknown[], budget: Budget, depth: number): unknown {
  if (depth > MAX_DEPTH) return NOT_COPIED;
  if (Object.getPrototypeOf(value) !== Array.prototype || 'toJSON' in value) return NOT_COPIED;
  const length = value.length;
  budget.left -= 2 + length;
  if (budget.left < 0) return NOT_COPIED;
  const copy = new Array<unknown>(length);
  for (let index = 0; index < length; index++) {
    const inner = copyMember(value[index], budget, depth);
    if (inner === NOT_COPIED) return NOT_COPIED;
    copy[index] = inner === undefined ? null : inner; // JSON writes null for undefined, functions and symbols (and holes)
  }
  return copy;
}

/** A member's copy; `undefined` for what JSON leaves out of an object (and writes as null in an array). */
function copyMember(inner: unknown, budget: Budget, depth: number): unknown {
  switch (typeof inner) {
    case 'string':
      budget.left -= 6 * inner.length + 2;
      return budget.left < 0 ? NOT_COPIED : inner;
    case 'number':
      budget.left -= MAX_NUMBER_CHARS;
      // -0 is written as 0; NaN and ±Infinity as null
      return inner === 0 ? 0 : Number.isFinite(inner) ? inner : null;
    case 'boolean':
      budget.left -= 5;
      return inner;
    case 'object':
      if (inner === null) {
        budget.left -= 4;
        return null;
      }
      return Array.isArray(inner) ? copyArray(inner, budget, depth + 1) : copyObject(inner as Record<string, unknown>, budget, depth + 1);
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    default:
      return NOT_COPIED; // a BigInt: JSON.stringify throws, and says why
  }
}
