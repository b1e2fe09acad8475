import type { IdempotencyLedger, JsonValue } from '../../ground/ports/stores.ts';

/**
 * An in-memory {@link IdempotencyLedger}. `putIfAbsent` is atomic (it never yields between the
 * check and the write), so of concurrent callers for one key exactly one stores. Values are
 * deep-copied on the way in and out. Unbounded: forgetting an outcome would repeat a side effect.
 */
export function createMemoryIdempotencyLedger(): IdempotencyLedger {
  const outcomes = new Map<string, JsonValue>();
  return {
    async get(key) {
      return outcomes.has(key) ? structuredClone(outcomes.get(key)) : undefined;
    },
    async putIfAbsent(key, value) {
      if (outcomes.has(key)) return { stored: false, value: structuredClone(outcomes.get(key) as JsonValue) };
      outcomes.set(key, structuredClone(value));
      return { stored: true, value: structuredClone(value) };
    },
    async delete(key) {
      outcomes.delete(key);
    },
  };
}
