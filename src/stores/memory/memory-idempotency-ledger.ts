import type { IdempotencyLedger } from '../../ground/ports/stores.ts';
import type { JsonValue } from '../../ground/ports/run-journal.ts';
import { copyStoredValue } from './copy-stored-value.ts';

/**
 * An in-memory {@link IdempotencyLedger}. `putIfAbsent` is atomic (it never yields between the
 * check and the write), so of concurrent callers for one key exactly one stores. Values are
 * deep-copied on the way in and out (`structuredClone`'s copy, see {@link copyStoredValue}; a value
 * it rejects is rejected with its `DataCloneError`, storing nothing). Unbounded: forgetting an
 * outcome would repeat a side effect.
 */
export function createMemoryIdempotencyLedger(): IdempotencyLedger {
  const outcomes = new Map<string, JsonValue>();
  return {
    async get(key) {
      return copyStoredValue(outcomes.get(key));
    },
    async putIfAbsent(key, value) {
      if (outcomes.has(key)) return { stored: false, value: copyStoredValue(outcomes.get(key) as JsonValue) };
      const stored = copyStoredValue(value);
      outcomes.set(key, stored);
      return { stored: true, value: copyStoredValue(stored) };
    },
    async delete(key) {
      outcomes.delete(key);
    },
  };
}
