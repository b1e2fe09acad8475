import type { Clock } from '../../ground/ports/clock.ts';
import type { IdempotencyLedger } from '../../ground/ports/stores.ts';
import type { JsonValue } from '../../ground/ports/run-journal.ts';
import { toStoredText } from '../exact-text.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';
import { prepareStatement, type PostgresQueryable } from './postgres-client.ts';

/**
 * An {@link IdempotencyLedger} on `<schema>.ledger`. `putIfAbsent` is `INSERT … ON CONFLICT DO
 * NOTHING RETURNING`; when nothing was inserted, a second statement reads the winner (a new
 * statement, so under READ COMMITTED it sees the row the conflicting insert committed). Of any
 * number of callers, in any number of processes, exactly one stores. Should the winner's row be
 * deleted between the two statements, the insert is tried again.
 */
export function createPostgresIdempotencyLedger(pool: PostgresQueryable, options: { schema: string; clock: Clock }): IdempotencyLedger {
  const { clock } = options;
  const table = `${options.schema}.ledger`;
  const select = prepareStatement(`SELECT value FROM ${table} WHERE key = $1`);
  const insert = prepareStatement(`INSERT INTO ${table} (key, value, recorded_at_ms) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING RETURNING key`);
  const remove = prepareStatement(`DELETE FROM ${table} WHERE key = $1`);
  const read = async (key: string): Promise<JsonValue | undefined> => {
    const { rows } = await pool.query<{ value: string }>({ ...select, values: [toStoredText(key)] });
    return rows[0] === undefined ? undefined : fromJsonText<JsonValue>(rows[0].value);
  };
  return {
    get: read,
    async putIfAbsent(key, value) {
      const valueText = toJsonText(value);
      for (;;) {
        const inserted = await pool.query({ ...insert, values: [toStoredText(key), valueText, Math.floor(clock.now())] });
        if (inserted.rows.length === 1) return { stored: true, value: fromJsonText<JsonValue>(valueText) };
        const winner = await read(key);
        if (winner !== undefined) return { stored: false, value: winner };
      }
    },
    async delete(key) {
      await pool.query({ ...remove, values: [toStoredText(key)] });
    },
  };
}
