import type { Database } from 'better-sqlite3';
import type { Clock } from '../../ground/ports/clock.ts';
import type { ClaimStore } from '../../ground/ports/stores.ts';
import { claimLeaseMs } from '../assert-lease-ms.ts';
import { fromStoredText, toStoredText } from '../exact-text.ts';

/** Ended claims deleted by one `acquire`, at most. */
const SWEEP_BATCH = 100;

/**
 * A {@link ClaimStore} on the `claims` table, by the injected clock. `acquire` is one upsert whose
 * update only applies when the row is the caller's own or has ended
 * (`ON CONFLICT (key) DO UPDATE … WHERE holder = excluded.holder OR lease_until_ms <= now`), run in
 * an IMMEDIATE transaction that first deletes up to 100 ended claims through the
 * `claims_by_lease_end` index: atomic across every connection and process sharing the file, and
 * ended claims do not pile up. `renew` and `release` are one conditional statement each.
 *
 * @throws ToolrunError `INVALID_OPTIONS` from `acquire` and `renew` for a `leaseMs` that is not a
 * positive, finite number up to 2^31 − 1.
 */
export function createSqliteClaimStore(database: Database, options: { clock: Clock }): ClaimStore {
  const { clock } = options;
  const sweep = database.prepare(`DELETE FROM claims WHERE key IN (SELECT key FROM claims WHERE lease_until_ms <= ? LIMIT ${SWEEP_BATCH})`);
  const take = database.prepare(
    `INSERT INTO claims (key, holder, lease_until_ms) VALUES (@key, @holder, @until)
     ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, lease_until_ms = excluded.lease_until_ms
     WHERE claims.holder = excluded.holder OR claims.lease_until_ms <= @now`,
  );
  const extend = database.prepare('UPDATE claims SET lease_until_ms = @until WHERE key = @key AND holder = @holder AND lease_until_ms > @now');
  const remove = database.prepare('DELETE FROM claims WHERE key = ? AND holder = ? RETURNING lease_until_ms');
  const select = database.prepare('SELECT holder, lease_until_ms FROM claims WHERE key = ? AND lease_until_ms > ?');
  const acquire = database.transaction((key: string, holder: string, nowMs: number, leaseMs: number): boolean => {
    sweep.run(nowMs);
    return take.run({ key, holder, until: nowMs + leaseMs, now: nowMs }).changes === 1;
  });
  return {
    async acquire(key, holder, leaseMs) {
      const lease = claimLeaseMs(leaseMs, 'acquire');
      return acquire.immediate(toStoredText(key), toStoredText(holder), clock.now(), lease);
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
}
