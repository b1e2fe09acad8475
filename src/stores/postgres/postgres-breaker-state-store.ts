import type { Clock } from '../../ground/ports/clock.ts';
import type { BreakerStateStore, JsonValue } from '../../ground/ports/stores.ts';
import { toStoredText } from '../exact-text.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';
import { breakerFingerprintSql, type BreakerFingerprintTracker } from './postgres-breaker-fingerprint.ts';
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
 * With `fingerprints`, `get` reuses the state it read earlier while no breaker has been written
 * since, as the latest-sent statement of these stores that read the table's fingerprint saw it, and
 * that statement was sent at most the tracker's `maxStalenessMs` ago (see
 * {@link BreakerFingerprintTracker}); else it reads the row, and the fingerprint with it. A
 * process's own `update` is seen by its next `get` at once; another process's, by the first `get`
 * after a statement of this process sent after it committed, or `maxStalenessMs` after it at the
 * latest. Reading the fingerprint takes no lock: writers of different keys never wait on each other.
 */
export function createPostgresBreakerStateStore(
  pool: PostgresPoolLike,
  options: { schema: string; clock: Clock; fingerprints?: BreakerFingerprintTracker },
): BreakerStateStore {
  const { clock, fingerprints } = options;
  const table = `${options.schema}.breakers`;
  const select = prepareStatement(`SELECT state FROM ${table} WHERE key = $1`);
  const selectReading = prepareStatement(`SELECT (SELECT state FROM ${table} WHERE key = $1) AS state, ${breakerFingerprintSql(table)} AS fingerprint`);
  const ensureRow = prepareStatement(`INSERT INTO ${table} (key, state, updated_at_ms) VALUES ($1, NULL, $2) ON CONFLICT (key) DO NOTHING`);
  const lock = prepareStatement(`SELECT state FROM ${table} WHERE key = $1 FOR UPDATE`);
  const write = prepareStatement(`UPDATE ${table} SET state = $2, updated_at_ms = $3 WHERE key = $1`);
  const parse = (text: string | null | undefined): JsonValue | undefined => (text === null || text === undefined ? undefined : fromJsonText<JsonValue>(text));
  /** The state text last read of each key (`null`: no record), with the fingerprint it was read at. */
  const kept = new Map<string, { state: string | null; fingerprint: string }>();
  return {
    async get(key) {
      const storedKey = toStoredText(key);
      if (fingerprints === undefined || !fingerprints.wanted(clock.now())) {
        kept.delete(storedKey);
        const { rows } = await pool.query<{ state: string | null }>({ ...select, values: [storedKey] });
        return parse(rows[0]?.state);
      }
      const known = kept.get(storedKey);
      // a fresh parse every time: the caller never shares a value with another
      if (known !== undefined && fingerprints.isFresh(known.fingerprint, clock.now())) return parse(known.state);
      const ticket = fingerprints.send(clock.now());
      const { rows } = await pool.query<{ state: string | null; fingerprint: string }>({ ...selectReading, values: [storedKey] });
      const state = rows[0]?.state ?? null;
      const seen = rows[0]?.fingerprint;
      fingerprints.observe(seen, ticket);
      if (kept.size >= MAX_KEPT_STATES) kept.clear();
      if (typeof seen === 'string') kept.set(storedKey, { state, fingerprint: seen });
      return parse(state);
    },
    async update<T extends JsonValue>(key: string, fn: (current: T | undefined) => T) {
      const storedKey = toStoredText(key);
      // this key's kept state is stale from now on, whatever the outcome
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
      // the statements sent before this commit may not see it: only those sent from now on count
      fingerprints?.invalidate();
      kept.delete(storedKey);
      return result;
    },
  };
}
