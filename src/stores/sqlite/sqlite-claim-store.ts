import type { Database } from 'better-sqlite3';
import type { SqliteGroupCommit } from './sqlite-group-commit.ts';
import type { Clock } from '../../ground/ports/clock.ts';
import type { ClaimStore, ClaimWithCheckpoint, RunCheckpoint, RunStore } from '../../ground/ports/stores.ts';
import { claimLeaseMs } from '../assert-lease-ms.ts';
import { fromStoredText, toStoredText } from '../exact-text.ts';
import { fromJsonText } from '../json-text.ts';

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
 * `release` are one conditional statement each. Given the bundle's run store (`runs`),
 * `acquireWithCheckpoint` runs the acquisition and the read of the run's checkpoint in one
 * IMMEDIATE transaction.
 *
 * @throws ToolrunError `INVALID_OPTIONS` from `acquire`, `acquireWithCheckpoint` and `renew` for a
 * `leaseMs` that is not a positive, finite number up to 2^31 − 1.
 */
export function createSqliteClaimStore(database: Database, options: { clock: Clock; runs?: RunStore; group?: SqliteGroupCommit }): ClaimStore {
  const { clock, group } = options;
  const sweep = database.prepare(`DELETE FROM claims WHERE key IN (SELECT key FROM claims WHERE lease_until_ms <= ? LIMIT ${SWEEP_BATCH})`);
  const take = database.prepare(
    `INSERT INTO claims (key, holder, lease_until_ms) VALUES (@key, @holder, @until)
     ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, lease_until_ms = excluded.lease_until_ms
     WHERE claims.holder = excluded.holder OR claims.lease_until_ms <= @now`,
  );
  const extend = database.prepare('UPDATE claims SET lease_until_ms = @until WHERE key = @key AND holder = @holder AND lease_until_ms > @now');
  const remove = database.prepare('DELETE FROM claims WHERE key = ? AND holder = ? RETURNING lease_until_ms');
  const select = database.prepare('SELECT holder, lease_until_ms FROM claims WHERE key = ? AND lease_until_ms > ?');
  let sweptAtMs = Number.NEGATIVE_INFINITY;
  let batchFilled = false;
  const sweepingAcquire = database.transaction((key: string, holder: string, nowMs: number, leaseMs: number): boolean => {
    batchFilled = sweep.run(nowMs).changes >= SWEEP_BATCH;
    return take.run({ key, holder, until: nowMs + leaseMs, now: nowMs }).changes === 1;
  });
  /** Whether this acquisition sweeps first (and notes that it did). */
  const sweepsNow = (nowMs: number): boolean => {
    if (!batchFilled && nowMs - sweptAtMs < SWEEP_INTERVAL_MS) return false;
    sweptAtMs = nowMs;
    return true;
  };
  const selectCheckpoint = database.prepare('SELECT checkpoint FROM runs WHERE run_id = ?').pluck();
  const takeAndRead = (key: string, holder: string, nowMs: number, leaseMs: number, sweeping: boolean, runId: string): ClaimWithCheckpoint => {
    if (sweeping) batchFilled = sweep.run(nowMs).changes >= SWEEP_BATCH;
    if (take.run({ key, holder, until: nowMs + leaseMs, now: nowMs }).changes !== 1) return { acquired: false };
    const text = selectCheckpoint.get(runId) as string | undefined;
    return { acquired: true, checkpoint: text === undefined ? undefined : fromJsonText<RunCheckpoint>(text) };
  };
  const acquireAndRead = database.transaction(takeAndRead);
  const ownRuns = options.runs;
  const ownGet = ownRuns?.get;
  return {
    async acquire(key, holder, leaseMs) {
      const lease = claimLeaseMs(leaseMs, 'acquire');
      const nowMs = clock.now();
      if (sweepsNow(nowMs)) return sweepingAcquire.immediate(toStoredText(key), toStoredText(holder), nowMs, lease);
      return take.run({ key: toStoredText(key), holder: toStoredText(holder), until: nowMs + lease, now: nowMs }).changes === 1;
    },
    ...(ownRuns !== undefined
      ? {
          async acquireWithCheckpoint(key: string, holder: string, leaseMs: number, runs: RunStore, runId: string) {
            const lease = claimLeaseMs(leaseMs, 'acquire');
            if (runs !== ownRuns || runs.get !== ownGet) return undefined;
            const nowMs = clock.now();
            const args = [toStoredText(key), toStoredText(holder), nowMs, lease, sweepsNow(nowMs), toStoredText(runId)] as const;
            return group !== undefined ? group.run(() => takeAndRead(...args)) : acquireAndRead.immediate(...args);
          },
        }
      : {}),
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
