import type { Database } from 'better-sqlite3';
import type { Clock } from '../../ground/ports/clock.ts';
import type { IdempotencyLedger } from '../../ground/ports/stores.ts';
import type { JsonValue } from '../../ground/ports/run-journal.ts';
import { toStoredText } from '../exact-text.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';

/**
 * The insert of one ledger row unless its key has one (`ON CONFLICT DO NOTHING`; one statement, for
 * callers' transactions): `key` as `toStoredText` writes it, `valueText` JSON text, `nowMs` epoch ms.
 * Returns whether it stored the row.
 */
export function prepareSqliteLedgerInsert(database: Database): (key: string, valueText: string, nowMs: number) => boolean {
  const insert = database.prepare('INSERT INTO ledger (key, value, recorded_at_ms) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING');
  return (key, valueText, nowMs) => insert.run(key, valueText, nowMs).changes === 1;
}

/**
 * An {@link IdempotencyLedger} on the `ledger` table. `putIfAbsent` is `INSERT … ON CONFLICT DO
 * NOTHING` then, when nothing was inserted, a `SELECT` of the winner, in one IMMEDIATE transaction:
 * of any number of callers across processes sharing the file, exactly one stores.
 */
export function createSqliteIdempotencyLedger(database: Database, options: { clock: Clock }): IdempotencyLedger {
  const { clock } = options;
  const insert = prepareSqliteLedgerInsert(database);
  const select = database.prepare('SELECT value FROM ledger WHERE key = ?');
  const remove = database.prepare('DELETE FROM ledger WHERE key = ?');
  const read = (key: string): JsonValue | undefined => {
    const row = select.get(key) as { value: string } | undefined;
    return row === undefined ? undefined : fromJsonText<JsonValue>(row.value);
  };
  const putIfAbsent = database.transaction((key: string, valueText: string, nowMs: number) => {
    if (insert(key, valueText, nowMs)) return { stored: true, value: fromJsonText<JsonValue>(valueText) };
    return { stored: false, value: read(key) as JsonValue };
  });

  return {
    async get(key) {
      return read(toStoredText(key));
    },
    async putIfAbsent(key, value) {
      return putIfAbsent.immediate(toStoredText(key), toJsonText(value), clock.now());
    },
    async delete(key) {
      remove.run(toStoredText(key));
    },
  };
}
