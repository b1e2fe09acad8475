import type { Clock } from '../../ground/ports/clock.ts';
import type { BreakerStateStore, JsonValue } from '../../ground/ports/stores.ts';
import { toStoredText } from '../exact-text.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';
import { inTransaction, prepareStatement, type PostgresPoolLike } from './postgres-client.ts';

/**
 * A {@link BreakerStateStore} on `<schema>.breakers`. `update` runs in one transaction: it makes
 * sure the key's row exists (`INSERT … ON CONFLICT DO NOTHING`, with a NULL state meaning "no
 * record"), locks it with `SELECT … FOR UPDATE`, calls `fn` once and writes the result. Every other
 * updater of that key, in any process, waits on the row lock: no update is lost, and the shared
 * breaker's transitions (one opening, one probe) happen once. `fn` runs while the lock is held:
 * keep it quick (it is pure and synchronous by the port's contract).
 */
export function createPostgresBreakerStateStore(pool: PostgresPoolLike, options: { schema: string; clock: Clock }): BreakerStateStore {
  const { clock } = options;
  const table = `${options.schema}.breakers`;
  const select = prepareStatement(`SELECT state FROM ${table} WHERE key = $1`);
  const ensureRow = prepareStatement(`INSERT INTO ${table} (key, state, updated_at_ms) VALUES ($1, NULL, $2) ON CONFLICT (key) DO NOTHING`);
  const lock = prepareStatement(`SELECT state FROM ${table} WHERE key = $1 FOR UPDATE`);
  const write = prepareStatement(`UPDATE ${table} SET state = $2, updated_at_ms = $3 WHERE key = $1`);
  const parse = (text: string | null | undefined): JsonValue | undefined => (text === null || text === undefined ? undefined : fromJsonText<JsonValue>(text));
  return {
    async get(key) {
      const { rows } = await pool.query<{ state: string | null }>({ ...select, values: [toStoredText(key)] });
      return parse(rows[0]?.state);
    },
    async update<T extends JsonValue>(key: string, fn: (current: T | undefined) => T) {
      const storedKey = toStoredText(key);
      return inTransaction(pool, async (client) => {
        const nowMs = Math.floor(clock.now());
        await client.query({ ...ensureRow, values: [storedKey, nowMs] });
        const { rows } = await client.query<{ state: string | null }>({ ...lock, values: [storedKey] });
        const previousText = rows[0]?.state;
        const nextText = toJsonText(fn(parse(previousText) as T | undefined));
        await client.query({ ...write, values: [storedKey, nextText, nowMs] });
        return { previous: parse(previousText) as T | undefined, next: fromJsonText<T>(nextText) };
      });
    },
  };
}
