import type { BreakerStateStore, JsonValue } from '../ground/ports/stores.ts';

/**
 * An in-memory {@link BreakerStateStore} for one process (tests, and the memory stores).
 *
 * `update` is atomic: it reads, applies `fn` once and writes synchronously, before its promise is
 * created, so no other caller can interleave. Values are copied on the way in and out (JSON
 * round-trip), so a caller mutating what it got back cannot change the stored record.
 */
export function createMemoryBreakerStateStore(): BreakerStateStore {
  const records = new Map<string, string>();
  const read = (key: string): JsonValue | undefined => {
    const text = records.get(key);
    return text === undefined ? undefined : (JSON.parse(text) as JsonValue);
  };
  return {
    get(key) {
      return Promise.resolve(read(key));
    },
    update<T extends JsonValue>(key: string, fn: (current: T | undefined) => T) {
      try {
        const previous = read(key) as T | undefined;
        const next = fn(read(key) as T | undefined);
        const text = JSON.stringify(next);
        records.set(key, text);
        return Promise.resolve({ previous, next: JSON.parse(text) as T });
      } catch (error) {
        return Promise.reject(error as Error);
      }
    },
  };
}
