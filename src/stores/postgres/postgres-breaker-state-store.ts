import type { Clock } from '../../ground/ports/clock.ts';
import type { BreakerStateStore } from '../../ground/ports/stores.ts';
import type { JsonValue } from '../../ground/ports/run-journal.ts';
import { toStoredText } from '../exact-text.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';
import { inTransaction, prepareStatement, type PostgresPoolLike } from './postgres-client.ts';

/** The most breaker states kept for reuse; past it the kept ones are dropped (breaker keys are tool and model names: a few). */
const MAX_KEPT_STATES = 10_000;

/**
 * A {@link BreakerStateStore} on `<schema>.breakers`. `update` runs in one transaction: it makes
 * sure the key's row exists (`INSERT … ON CONFLICT DO NOTHING`, with a NULL state meaning "no
 * record"), locks it with `SELECT … FOR UPDATE`, calls `fn` once and writes the result. Every other
 * updater of that key, in any process, waits on the row lock: no update is lost, and the shared
 * breaker's transitions (one opening, one probe) happen once. `fn` runs while the lock is held:
 * keep it quick (it is pure and synchronous by the port's contract).
 *
 * `get` answers from the state of the key it read last when that read was at most `maxStalenessMs`
 * ago by the clock, else it reads the row (one statement on `breakers` alone). An `update` forgets
 * the key's state, so the process's next `get` reads the row: its own write, and any committed
 * after it, are seen at once; another process's write otherwise within `maxStalenessMs`. `0`
 * reads the row at every `get`.
 */
export function createPostgresBreakerStateStore(pool: PostgresPoolLike, options: { schema: string; clock: Clock; maxStalenessMs: number }): BreakerStateStore {
  const { clock, maxStalenessMs } = options;
  const table = `${options.schema}.breakers`;
  const select = prepareStatement(`SELECT state FROM ${table} WHERE key = $1`);
  const ensureRow = prepareStatement(`INSERT INTO ${table} (key, state, updated_at_ms) VALUES ($1, NULL, $2) ON CONFLICT (key) DO NOTHING`);
  const lock = prepareStatement(`SELECT state FROM ${table} WHERE key = $1 FOR UPDATE`);
  const write = prepareStatement(`UPDATE ${table} SET state = $2, updated_at_ms = $3 WHERE key = $1`);
  const parse = (text: string | null | undefined): JsonValue | undefined => (text === null || text === undefined ? undefined : fromJsonText<JsonValue>(text));
  /** The state text last read or written of each key (`null`: no record), with when (the clock's ms). */
  const kept = new Map<string, { state: string | null; atMs: number }>();
  /** Bumped by every `update`: a read sent before one is not kept (it may predate the write). */
  let writes = 0;
  const keep = (key: string, state: string | null, atMs: number) => {
    if (maxStalenessMs <= 0) return;
    if (kept.size >= MAX_KEPT_STATES) kept.clear();
    kept.set(key, { state, atMs });
  };
  return {
    async get(key) {
      const storedKey = toStoredText(key);
      const nowMs = clock.now();
      const known = kept.get(storedKey);
      // a fresh parse every time: the caller never shares a value with another
      if (known !== undefined && nowMs >= known.atMs && nowMs - known.atMs <= maxStalenessMs) return parse(known.state);
      const writesBefore = writes;
      const { rows } = await pool.query<{ state: string | null }>({ ...select, values: [storedKey] });
      const state = rows[0]?.state ?? null;
      if (writes === writesBefore) keep(storedKey, state, nowMs);
      return parse(state);
    },
    async update<T extends JsonValue>(key: string, fn: (current: T | undefined) => T) {
      const storedKey = toStoredText(key);
      writes += 1;
      kept.delete(storedKey);
      const result = await inTransaction(pool, async (client) => {
        const nowMs = Math.floor(clock.now());
        await client.query({ ...ensureRow, values: [storedKey, nowMs] });
        const { rows } = await client.query<{ state: string | null }>({ ...lock, values: [storedKey] });
        const previousText = rows[0]?.state;
        const nextText = toJsonText(fn(parse(previousText) as T | undefined));
        await client.query({ ...write, values: [storedKey, nextText, nowMs] });
        return { previous: parse(previousText) as T | undefined, next: fromJsonText<T>(nextText) };
      });
      // this process's own write is seen at once: the next `get` reads the row, so it also sees a
      // write another process committed after this one (keeping `nextText` would hide it)
      writes += 1;
      return result;
    },
  };
}
