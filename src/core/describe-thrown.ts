/**
 * Reading a thrown value without trusting it: a tool may throw anything (a symbol, `undefined`, a
 * null-prototype object whose `cause` getter throws, a Proxy that throws on every trap, a revoked
 * Proxy, an error whose `message` getter throws). Every read here is guarded, so describing a
 * failure never becomes a failure of its own.
 */

/** How many `cause` links are followed. */
const MAX_CAUSES = 5;
/** Bound of each text read from a thrown value, in characters (the developer record is not the envelope, but a 1 MB message need not be copied five times). */
const MAX_TEXT_CHARS = 16_384;

/** `String(value)`, or the type's name when even that throws (a revoked Proxy, an object whose `toString` throws). */
export function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return `[${typeof value}]`;
  }
}

/** `value[key]` when `value` is an object or function and reading it does not throw; else `undefined`. */
export function safeGet(value: unknown, key: string): unknown {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

function bounded(text: string): string {
  return text.length > MAX_TEXT_CHARS ? `${text.slice(0, MAX_TEXT_CHARS)}…` : text;
}

function stringAt(value: unknown, key: string): string | undefined {
  const found = safeGet(value, key);
  return typeof found === 'string' ? bounded(found) : undefined;
}

/** One line for a thrown value: `Name: message` for an error-like value, else its string form. */
export function describeOne(value: unknown): string {
  const message = stringAt(value, 'message');
  if (message !== undefined) {
    const name = stringAt(value, 'name');
    return name !== undefined && name !== '' ? `${name}: ${message}` : message;
  }
  return bounded(safeString(value));
}

/** The message of a thrown value (its `message` when it has a string one, else its string form), bounded. */
export function messageOf(value: unknown): string {
  return stringAt(value, 'message') ?? bounded(safeString(value));
}

/**
 * What the developer record keeps of a thrown value: its `name` and `stack` when they are strings,
 * and the `cause` chain (at most 5 links, outermost first, each as `Name: message`). Never throws.
 */
export function describeThrown(thrown: unknown): { name?: string; stack?: string; causes: string[] } {
  const causes: string[] = [];
  let current = safeGet(thrown, 'cause');
  while (current !== undefined && causes.length < MAX_CAUSES) {
    causes.push(describeOne(current));
    current = safeGet(current, 'cause');
  }
  const name = stringAt(thrown, 'name');
  const stack = stringAt(thrown, 'stack');
  return { causes, ...(name !== undefined ? { name } : {}), ...(stack !== undefined ? { stack } : {}) };
}
