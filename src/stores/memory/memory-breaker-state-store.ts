import type { BreakerStateStore } from '../../ground/ports/stores.ts';
import type { JsonValue } from '../../ground/ports/run-journal.ts';
import { copyStoredValue } from './copy-stored-value.ts';

/**
 * An in-memory {@link BreakerStateStore}. `update` runs `fn` once, synchronously between the read
 * and the write, so no other update interleaves; `fn` receives a copy, and the stored and returned
 * records are copies, so no caller can change the stored state afterwards.
 */
export function createMemoryBreakerStateStore(): BreakerStateStore {
  const states = new Map<string, JsonValue>();
  return {
    async get(key) {
      return copyStoredValue(states.get(key));
    },
    async update<T extends JsonValue>(key: string, fn: (current: T | undefined) => T) {
      const previous = copyStoredValue(states.get(key)) as T | undefined;
      const next = fn(copyStoredValue(previous));
      states.set(key, copyStoredValue(next));
      return { previous, next: copyStoredValue(next) };
    },
  };
}
