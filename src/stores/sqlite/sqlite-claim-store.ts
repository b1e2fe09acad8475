import type { Database } from 'better-sqlite3';
import type { Clock } from '../../ground/ports/clock.ts';
import type { ClaimStore } from '../../ground/ports/stores.ts';
import { claimLeaseMs } from '../assert-lease-ms.ts';
import { fromStoredText, toStoredText } from '../exact-text.ts';

/**
 * Takes `key` for `holder` until `nowMs + leaseMs` unless another holder has an unexpired claim
 * (sweeping ended claims first when a sweep is due), inside the caller's transaction; key and
 * holder as `toStoredText` writes them. Returns whether the claim was taken.
 */
export type SqliteClaimTake = (key: string, holder: string, nowMs: number, leaseMs: number) => boolean;

/** Ended claims deleted by one sweeping `acquire`, at most. */
const SWEEP_BATCH = 100;

/** A store object's `acquire` sweeps ended claims at most once per this many ms of its clock (unless its last sweep filled a batch). */
const SWEEP_INTERVAL_MS = 1_000;

/**
 * A {@link ClaimStore} on the `claims` table, by the injected clock. `acquire` is one upsert whose
 * update only applies when the row is the caller's own or has ended
 * (`ON CONFLICT (key) DO UPDATE … WHERE holder = excluded.holder OR lease_until_ms <= now`): one
 * statement, atomic across every connection and process sharing the file. At most once per second
 * of the clock (per store object), and again at once while a sweep still finds a full batch, the
 * upsert runs in an IMMEDIATE transaction that first deletes up to 100 ended claims of holders that
 * died, through the `claims_by_lease_end` index, so ended claims do not pile up (the sweep is
 * housekeeping: an ended claim is free whether or not its row is still there). `renew` and
 * `release` are one conditional statement each. `take` is the acquisition (with its sweep when one
 * is due) for the file's run journal, inside the journal's transaction.
 *
 * @throws ToolrunError `INVALID_OPTIONS` from `acquire` and `renew` for a `leaseMs` that is not a
 * positive, finite number up to 2^31 − 1.
 */
export function createSqliteClaimStore(database: Database, options: { clock: Clock }): { store: ClaimStore; take: SqliteClaimTake } {
  const { clock } = options;
  const sweep = database.prepare(`DELETE FROM claims WHERE key IN (SELECT key FROM claims WHERE lease_until_ms <= ? LIMIT ${SWEEP_BATCH})`);
  const takeOne = database.prepare(
    `INSERT INTO claims (key, holder, lease_until_ms) VALUES (@key, @holder, @until)
     ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, lease_until_ms = excluded.lease_until_ms
     WHERE claims.holder = excluded.holder OR claims.lease_until_ms <= @now`,
  );
  const extend = database.prepare('UPDATE claims SET lease_until_ms = @until WHERE key = @key AND holder = @holder AND lease_until_ms > @now');
  const remove = database.prepare('DELETE FROM claims WHERE key = ? AND holder = ? RETURNING lease_until_ms');
  const select = database.prepare('SELECT holder, lease_until_ms FROM claims WHERE key = ? AND lease_until_ms > ?');
  let sweptAtMs = Number.NEGATIVE_INFINITY;
  let batchFilled = false;
  /** Whether an acquisition now sweeps first. */
  const sweepDue = (nowMs: number): boolean => batchFilled || nowMs - sweptAtMs >= SWEEP_INTERVAL_MS;
  const take: SqliteClaimTake = (key, holder, nowMs, leaseMs) => {
    if (sweepDue(nowMs)) {
      sweptAtMs = nowMs;
      batchFilled = sweep.run(nowMs).changes >= SWEEP_BATCH;
    }
    return takeOne.run({ key, holder, until: nowMs + leaseMs, now: nowMs }).changes === 1;
  };
  const takeInTransaction = database.transaction(take);
  const store: ClaimStore = {
    async acquire(key, holder, leaseMs) {
      const lease = claimLeaseMs(leaseMs, 'acquire');
      const nowMs = clock.now();
      // alone the upsert is one statement; with a sweep, both in one transaction
      return (sweepDue(nowMs) ? takeInTransaction.immediate : take)(toStoredText(key), toStoredText(holder), nowMs, lease);
    },
    async renew(key, holder, leaseMs) {
      const lease = claimLeaseMs(leaseMs, 'renew');
      const nowMs = clock.now();
      return extend.run({ key: toStoredText(key), holder: toStoredText(holder), until: nowMs + lease, now: nowMs }).changes === 1;
    },
    async release(key, holder) {
      const row = remove.get(toStoredText(key), toStoredText(holder)) as { lease_until_ms: number } | undefined;
      return row !== undefined && row.lease_until_ms > clock.now();
    },
    async get(key) {
      const row = select.get(toStoredText(key), clock.now()) as { holder: string; lease_until_ms: number } | undefined;
      return row === undefined ? undefined : { holder: fromStoredText(row.holder), leaseUntil: new Date(row.lease_until_ms).toISOString() };
    },
  };
  return { store, take };
}
