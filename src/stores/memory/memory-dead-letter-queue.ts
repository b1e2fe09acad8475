import type { Clock } from '../../ground/ports/clock.ts';
import type { DeadLetterQueue, DeadLetterRecord } from '../../ground/ports/stores.ts';
import { utf8ByteLength } from '../exact-text.ts';
import { toJsonText } from '../json-text.ts';

/**
 * An in-memory {@link DeadLetterQueue}. Ids are increasing decimal strings (`'1'`, `'2'`, …), never
 * reused, so id order is insertion order; `addedAt` comes from the injected clock. Entries are
 * deep-copied on the way in and out. It never drops an entry (the worker enforces `maxEntries`).
 * `pushOnce` keys live in a map that `remove` and `purge` leave alone (see the port). Every method
 * runs without an `await` in between, so calls never interleave inside one process. `bytes()` is
 * a running total of each stored entry's UTF-8 JSON length, measured once on the way in.
 *
 * `push` and `pushOnce` reject with a `TypeError` for an entry `JSON.stringify` cannot serialise
 * (as every durable backend does), storing nothing.
 */
export function createMemoryDeadLetterQueue<T>(options: { clock: Clock }): DeadLetterQueue<T> {
  const { clock } = options;
  const records = new Map<string, DeadLetterRecord<T>>();
  /** id → UTF-8 bytes of the entry's JSON. */
  const sizes = new Map<string, number>();
  let totalBytes = 0;
  /** pushOnce key → id of the entry first pushed with it. */
  const keys = new Map<string, string>();
  let lastId = 0;

  const copy = (record: DeadLetterRecord<T>): DeadLetterRecord<T> => structuredClone(record);
  const store = (entry: T): string => {
    const bytes = utf8ByteLength(toJsonText(entry));
    const stored = structuredClone(entry);
    lastId += 1;
    const id = String(lastId);
    records.set(id, { id, addedAt: new Date(clock.now()).toISOString(), entry: stored });
    sizes.set(id, bytes);
    totalBytes += bytes;
    return id;
  };

  return {
    async push(entry) {
      return store(entry);
    },
    async pushOnce(key, entry) {
      const existing = keys.get(key);
      if (existing !== undefined) return { id: existing, added: false };
      const id = store(entry);
      keys.set(key, id);
      return { id, added: true };
    },
    async get(id) {
      const record = records.get(id);
      return record === undefined ? undefined : copy(record);
    },
    async list(listOptions) {
      const offset = Math.max(0, listOptions?.offset ?? 0);
      const limit = listOptions?.limit ?? Number.POSITIVE_INFINITY;
      const page: DeadLetterRecord<T>[] = [];
      let index = 0;
      for (const record of records.values()) {
        if (page.length >= limit) break;
        if (index++ >= offset) page.push(copy(record));
      }
      return page;
    },
    async remove(id) {
      if (!records.delete(id)) return false;
      totalBytes -= sizes.get(id) ?? 0;
      sizes.delete(id);
      return true;
    },
    async size() {
      return records.size;
    },
    async bytes() {
      return totalBytes;
    },
    async oldest() {
      const first = records.values().next();
      return first.done ? undefined : copy(first.value);
    },
    async purge() {
      const count = records.size;
      records.clear();
      sizes.clear();
      totalBytes = 0;
      return count;
    },
  };
}
