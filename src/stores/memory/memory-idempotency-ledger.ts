import type { IdempotencyLedger, JsonValue } from '../../ground/ports/stores.ts';
import { copyStoredValue } from './copy-stored-value.ts';

/** The ledgers made by {@link createMemoryIdempotencyLedger}, each with its record-unless-present of a value already copied. */
const outcomeWriters = new WeakMap<IdempotencyLedger, (key: string, copied: JsonValue) => void>();

/**
 * The write of `ledger` (made by {@link createMemoryIdempotencyLedger}) that records a value the
 * caller has already deep-copied and will not touch again unless the key has one, as
 * `putIfAbsent` would (without its answer); `undefined` for any other ledger. For the memory
 * conversation store's `commitStep`, which copies every value of a step before it writes any.
 */
export function memoryLedgerWriter(ledger: IdempotencyLedger): ((key: string, copied: JsonValue) => void) | undefined {
  return outcomeWriters.get(ledger);
}

/**
 * An in-memory {@link IdempotencyLedger}. `putIfAbsent` is atomic (it never yields between the
 * check and the write), so of concurrent callers for one key exactly one stores. Values are
 * deep-copied on the way in and out (`structuredClone`'s copy, see {@link copyStoredValue}; a value
 * it rejects is rejected with its `DataCloneError`, storing nothing). Unbounded: forgetting an
 * outcome would repeat a side effect.
 */
export function createMemoryIdempotencyLedger(): IdempotencyLedger {
  const outcomes = new Map<string, JsonValue>();
  const ledger: IdempotencyLedger = {
    async get(key) {
      return outcomes.has(key) ? copyStoredValue(outcomes.get(key)) : undefined;
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
  outcomeWriters.set(ledger, (key, copied) => {
    if (!outcomes.has(key)) outcomes.set(key, copied);
  });
  return ledger;
}
