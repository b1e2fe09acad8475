/**
 * The deep copy the memory stores make of every value on the way in and out: the result of
 * `structuredClone`, made by a plain walk for plain data (what the stores hold: JSON values) and by
 * `structuredClone` itself for anything else, so a value it rejects is rejected with its error.
 */

/** The walk gave up: the value is copied (or rejected) by `structuredClone` instead. */
const NOT_PLAIN: unique symbol = Symbol('not plain');

/** Nesting deeper than this (or a cycle) is left to `structuredClone`. */
const MAX_DEPTH = 256;

/** Objects and arrays walked before the rest is left to `structuredClone` (which copies a value that shares members once per member). */
const MAX_NODES = 1_000_000;

interface Budget {
  /** Objects and arrays that may still be walked. */
  nodes: number;
}

/**
 * A deep copy of `value`, equal to `structuredClone(value)` for the values the memory stores hold.
 *
 * Plain data is copied by a walk: strings, numbers (`-0` and `NaN` included), booleans, `null`,
 * `undefined` and BigInts as they are; arrays whose prototype is `Array.prototype` and that have no
 * holes, element by element; objects whose prototype is `Object.prototype` or `null`, own
 * enumerable string-keyed property by property (a getter is read; the copy's prototype is
 * `Object.prototype`, as `structuredClone` makes it). Anything else anywhere in the value — a
 * function, a symbol, a class instance, a `Date`, a `Map`, a hole, an own `__proto__` key, nesting
 * deeper than 256, a cycle, more than 10^6 objects — makes the whole value go through
 * `structuredClone`, which copies it as before or throws its `DataCloneError` (a getter is then
 * read again). Unlike `structuredClone` (and like `JSON.stringify`), the walk does not keep two
 * members that are one object as one object in the copy, copies only the elements of an array (not
 * other properties set on it), and copies a `Proxy` of plain data rather than rejecting it — none
 * of which a JSON value has.
 *
 * @throws DOMException `DataCloneError` (from `structuredClone`) for a value it cannot copy: a
 * function or a symbol anywhere in it, among others.
 */
export function copyStoredValue<T>(value: T): T {
  if (typeof value !== 'object' || value === null) {
    return typeof value === 'function' || typeof value === 'symbol' ? structuredClone(value) : value;
  }
  const copy = copyNode(value, { nodes: MAX_NODES }, 0);
  return copy === NOT_PLAIN ? structuredClone(value) : (copy as T);
}

/**
 * A deep copy of `list.slice(from)` as a new array, equal to `structuredClone([...list].slice(from))`
 * (see {@link copyStoredValue}): a hole reads as `undefined`, as the spread makes it.
 *
 * @throws DOMException `DataCloneError` for a member `structuredClone` cannot copy.
 */
export function copyStoredItems(list: readonly unknown[], from = 0): unknown[] {
  const budget: Budget = { nodes: MAX_NODES };
  const copy: unknown[] = [];
  if (Array.isArray(list) && Object.getPrototypeOf(list) === Array.prototype) {
    const length = list.length;
    let index = from;
    for (; index < length; index++) {
      const inner = copyMember(list[index], budget, 0);
      if (inner === NOT_PLAIN) break;
      copy.push(inner);
    }
    if (index >= length) return copy;
  }
  return structuredClone([...list].slice(from));
}

function copyNode(value: object, budget: Budget, depth: number): unknown {
  if (depth > MAX_DEPTH || --budget.nodes < 0) return NOT_PLAIN;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return NOT_PLAIN;
    const length = value.length;
    const copy: unknown[] = [];
    for (let index = 0; index < length; index++) {
      const item: unknown = value[index];
      if (item === undefined && !(index in value)) return NOT_PLAIN; // a hole: structuredClone keeps it
      const inner = copyMember(item, budget, depth);
      if (inner === NOT_PLAIN) return NOT_PLAIN;
      copy.push(inner);
    }
    return copy;
  }
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return NOT_PLAIN;
  const record = value as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(record)) {
    if (key === '__proto__') return NOT_PLAIN; // assigning it would set the copy's prototype
    const inner = copyMember(record[key], budget, depth);
    if (inner === NOT_PLAIN) return NOT_PLAIN;
    copy[key] = inner;
  }
  return copy;
}

function copyMember(inner: unknown, budget: Budget, depth: number): unknown {
  if (typeof inner === 'object') return inner === null ? null : copyNode(inner, budget, depth + 1);
  if (typeof inner === 'function' || typeof inner === 'symbol') return NOT_PLAIN;
  return inner;
}
