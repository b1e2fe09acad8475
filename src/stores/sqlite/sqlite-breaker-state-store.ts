import type { Database } from 'better-sqlite3';
import type { Clock } from '../../ground/ports/clock.ts';
import type { BreakerStateStore } from '../../ground/ports/stores.ts';
import type { JsonValue } from '../../ground/ports/run-journal.ts';
import { toStoredText } from '../exact-text.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';

/**
 * A {@link BreakerStateStore} on the `breakers` table. `update` reads, calls `fn` once and writes
 * inside one IMMEDIATE transaction, which holds the file's write lock throughout: no other
 * connection or process interleaves, so concurrent updates lose nothing. `fn` must be synchronous
 * in effect (it is, by the port's signature) and should be quick: it runs under the lock.
 */
export function createSqliteBreakerStateStore(database: Database, options: { clock: Clock }): BreakerStateStore {
  const { clock } = options;
  const select = database.prepare('SELECT state FROM breakers WHERE key = ?');
  const upsert = database.prepare(
    `INSERT INTO breakers (key, state, updated_at_ms) VALUES (?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET state = excluded.state, updated_at_ms = excluded.updated_at_ms`,
  );
  const read = (key: string): JsonValue | undefined => {
    const row = select.get(key) as { state: string } | undefined;
    return row === undefined ? undefined : fromJsonText<JsonValue>(row.state);
  };
  const update = database.transaction((key: string, fn: (current: JsonValue | undefined) => JsonValue, nowMs: number) => {
    const previousText = (select.get(key) as { state: string } | undefined)?.state;
    const next = fn(previousText === undefined ? undefined : fromJsonText<JsonValue>(previousText));
    const nextText = toJsonText(next);
    upsert.run(key, nextText, nowMs);
    return {
      previous: previousText === undefined ? undefined : fromJsonText<JsonValue>(previousText),
      next: fromJsonText<JsonValue>(nextText),
    };
  });

  return {
    async get(key) {
      return read(toStoredText(key));
    },
    async update<T extends JsonValue>(key: string, fn: (current: T | undefined) => T) {
      return update.immediate(toStoredText(key), fn as (current: JsonValue | undefined) => JsonValue, clock.now()) as {
        previous: T | undefined;
        next: T;
      };
    },
  };
}
