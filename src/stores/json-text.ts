/**
 * The JSON text a value is stored as. `undefined` (which `JSON.stringify` cannot represent) is
 * stored as `null`; like any JSON store, non-JSON values (functions, `NaN`, `Date` objects) come
 * back as JSON would give them.
 */
export function toJsonText(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}

/** Parses text written by {@link toJsonText}. */
export function fromJsonText<T>(text: string): T {
  return JSON.parse(text) as T;
}
