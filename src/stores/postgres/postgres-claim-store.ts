import type { Clock } from '../../ground/ports/clock.ts';
import type { ClaimStore } from '../../ground/ports/stores.ts';
import { claimLeaseMs } from '../assert-lease-ms.ts';
import { fromStoredText, toStoredText } from '../exact-text.ts';
import { prepareStatement, type PostgresQueryable } from './postgres-client.ts';

/** Ended claims deleted by one sweeping `acquire`, at most. */
const SWEEP_BATCH = 100;

/** A store object's `acquire` sweeps ended claims at most once per this many ms of its clock. */
const SWEEP_INTERVAL_MS = 1_000;

/**
 * A {@link ClaimStore} on `<schema>.claims`, by the injected clock of each process (as the run
 * queue's leases: keep the machines' clocks in sync). `acquire` is one statement: an
 * `INSERT … ON CONFLICT (key) DO UPDATE … WHERE holder = excluded.holder OR lease_until_ms <= now`,
 * which PostgreSQL runs atomically (a conflicting row is locked and the condition checked on its
 * latest version), so of any number of callers on any number of machines exactly one takes a free
 * key. At most once per second of the clock (per store object), the same statement also deletes up
 * to 100 ended claims of other keys (left by holders that died), oldest lease first through the
 * `claims_by_lease_end` index, skipping rows another transaction holds (`FOR UPDATE SKIP LOCKED`);
 * the other acquisitions are the upsert alone (the sweep is housekeeping: an ended claim is free
 * whether or not its row is still there).
 * `renew` and `release` are one conditional statement each. Keys and holders are stored with
 * `toStoredText` (`\u0000` included).
 *
 * `release` commits asynchronously (`synchronous_commit = off` for its own transaction): it is
 * visible to every other connection as soon as it returns, but does not wait for its WAL record to
 * reach the disk (PostgreSQL writes it within `3 × wal_writer_delay`, and any later synchronous
 * commit on the server writes it first). Only a crash of the PostgreSQL server itself (not of a
 * connection or a worker) in that window can undo a release, and then the claim is held until its
 * lease ends — exactly as when its holder is killed before releasing, which every claimant already
 * handles (a `busy` run, tried again later). Acquisitions and renewals commit synchronously: a
 * claim is durable before its holder acts on it. Give the store a pool: on a connection inside an
 * open transaction, `release` would make that whole transaction commit asynchronously.
 *
 * @throws ToolrunError `INVALID_OPTIONS` from `acquire` and `renew` for a
 * `leaseMs` that is not a positive, finite number up to 2^31 − 1.
 */
export function createPostgresClaimStore(pool: PostgresQueryable, options: { schema: string; clock: Clock }): ClaimStore {
  const { clock } = options;
  const table = `${options.schema}.claims`;
  const upsert = `
    INSERT INTO ${table} AS claims (key, holder, lease_until_ms) VALUES ($1, $2, $3)
    ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, lease_until_ms = excluded.lease_until_ms
    WHERE claims.holder = excluded.holder OR claims.lease_until_ms <= $4
    RETURNING key`;
  const acquireStatement = prepareStatement(upsert);
  // ORDER BY keeps the generic plan on the index (a sequential scan would read every dead row of released claims)
  const sweepingAcquireStatement = prepareStatement(`
    WITH swept AS (
      DELETE FROM ${table} WHERE key IN (
        SELECT key FROM ${table} WHERE lease_until_ms <= $4 AND key <> $1 ORDER BY lease_until_ms LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED
      )
    )${upsert}`);
  let sweptAtMs = Number.NEGATIVE_INFINITY;
  const renewStatement = prepareStatement(`UPDATE ${table} SET lease_until_ms = $3 WHERE key = $1 AND holder = $2 AND lease_until_ms > $4`);
  // the one-time filter runs set_config before the scan, so the statement's transaction commits
  // without waiting for the WAL flush (see the release paragraph above)
  const releaseStatement = prepareStatement(
    `DELETE FROM ${table} WHERE key = $1 AND holder = $2 AND (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL
     RETURNING lease_until_ms::text AS lease_until_ms`,
  );
  const getStatement = prepareStatement(`SELECT holder, lease_until_ms::text AS lease_until_ms FROM ${table} WHERE key = $1 AND lease_until_ms > $2`);
  /** Whether this acquisition sweeps (and notes that it did). */
  const sweepsNow = (nowMs: number): boolean => {
    if (nowMs - sweptAtMs < SWEEP_INTERVAL_MS) return false;
    sweptAtMs = nowMs;
    return true;
  };
  return {
    async acquire(key, holder, leaseMs) {
      const lease = claimLeaseMs(leaseMs, 'acquire');
      const nowMs = Math.floor(clock.now());
      const statement = sweepsNow(nowMs) ? sweepingAcquireStatement : acquireStatement;
      const { rows } = await pool.query({ ...statement, values: [toStoredText(key), toStoredText(holder), nowMs + lease, nowMs] });
      return rows.length === 1;
    },
    async renew(key, holder, leaseMs) {
      const lease = claimLeaseMs(leaseMs, 'renew');
      const nowMs = Math.floor(clock.now());
      const { rowCount } = await pool.query({ ...renewStatement, values: [toStoredText(key), toStoredText(holder), nowMs + lease, nowMs] });
      return rowCount === 1;
    },
    async release(key, holder) {
      const { rows } = await pool.query<{ lease_until_ms: string }>({ ...releaseStatement, values: [toStoredText(key), toStoredText(holder)] });
      return rows[0] !== undefined && Number(rows[0].lease_until_ms) > clock.now();
    },
    async get(key) {
      const { rows } = await pool.query<{ holder: string; lease_until_ms: string }>({ ...getStatement, values: [toStoredText(key), Math.floor(clock.now())] });
      const row = rows[0];
      return row === undefined ? undefined : { holder: fromStoredText(row.holder), leaseUntil: new Date(Number(row.lease_until_ms)).toISOString() };
    },
  };
}
