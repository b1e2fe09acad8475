import type { Database } from 'better-sqlite3';
import type { SqliteGroupCommit } from './sqlite-group-commit.ts';
import type { Clock } from '../../ground/ports/clock.ts';
import type { QueueDelivery, RunQueue } from '../../ground/ports/stores.ts';
import { assertLeaseMs, checkReleaseOptions, enqueuedMessageId } from '../assert-lease-ms.ts';
import { fromStoredText, toStoredText } from '../exact-text.ts';

/**
 * The acknowledgement of a `queue_messages` row by id (as `toStoredText` writes it) at `nowMs`,
 * for the caller's transaction: the row's lease ends and its body is emptied; an acknowledged row
 * is left as it is.
 */
export function prepareSqliteAck(database: Database): (storedId: string, nowMs: number) => void {
  const acknowledge = database.prepare("UPDATE queue_messages SET acked_at_ms = ?, lease_until_ms = NULL, body = '' WHERE id = ? AND acked_at_ms IS NULL");
  return (storedId, nowMs) => {
    acknowledge.run(nowMs, storedId);
  };
}

interface ReadyRow {
  seq: number;
  id: string;
  body: string;
  enqueued_at_ms: number;
  deliveries: number;
}

/**
 * A {@link RunQueue} on the `queue_messages` table, shared safely by every process that opens the
 * file.
 *
 * - `reserve` selects the lowest `seq` that is not acked and not under a live lease
 *   (`lease_until_ms IS NULL OR lease_until_ms <= now`), then sets the lease and `deliveries + 1`,
 *   in one IMMEDIATE transaction: it holds the write lock from the read to the write, so two
 *   processes never reserve the same message under one lease.
 * - `enqueue` is `INSERT … ON CONFLICT (id) DO NOTHING`; acked rows are kept (body emptied), so an
 *   id that was ever enqueued stays deduplicated.
 * - `ack` and `release` only touch rows that are not acked; `ack` of a row acked already (by the
 *   run journal's last commit of its run) is a read, no write.
 * - `release(id, { delayMs, countDelivery, deliveries })` is one `UPDATE`: `lease_until_ms` becomes
 *   `now + delayMs` with `delayed = 1` (or NULL without a delay, as before), and `countDelivery:
 *   false` takes one off `deliveries` when the row was leased (not waiting, not delayed).
 * - `extendLease` is one `UPDATE … WHERE id = ? AND deliveries = ? AND acked_at_ms IS NULL AND
 *   delayed = 0 AND lease_until_ms > now`: it renews only the live lease of that very delivery.
 * - Ids and bodies are stored with `toStoredText`, so they come back exactly (`\u0000` and lone
 *   surrogates included).
 *
 * @throws ToolrunError `INVALID_OPTIONS` from `reserve` and `extendLease` for a non-positive or
 * non-finite `leaseMs`, and from `release` for an invalid `delayMs` (see `ReleaseOptions`).
 */
export function createSqliteRunQueue(database: Database, options: { clock: Clock; group?: SqliteGroupCommit }): RunQueue {
  const { clock, group } = options;
  const insert = database.prepare('INSERT INTO queue_messages (id, body, enqueued_at_ms) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING');
  const selectReady = database.prepare(
    `SELECT seq, id, body, enqueued_at_ms, deliveries FROM queue_messages
     WHERE acked_at_ms IS NULL AND (lease_until_ms IS NULL OR lease_until_ms <= ?)
     ORDER BY seq LIMIT 1`,
  );
  const lease = database.prepare('UPDATE queue_messages SET lease_until_ms = ?, delayed = 0, deliveries = deliveries + 1 WHERE seq = ?');
  const acknowledge = prepareSqliteAck(database);
  const pending = database.prepare('SELECT 1 FROM queue_messages WHERE id = ? AND acked_at_ms IS NULL').pluck();
  const giveBack = database.prepare(
    `UPDATE queue_messages SET
       deliveries = CASE WHEN @uncount = 1 AND lease_until_ms IS NOT NULL AND delayed = 0 AND deliveries > 0 THEN deliveries - 1 ELSE deliveries END,
       lease_until_ms = @until,
       delayed = @delayed
     WHERE id = @id AND acked_at_ms IS NULL AND (@deliveries IS NULL OR deliveries = @deliveries)`,
  );
  const renew = database.prepare(
    'UPDATE queue_messages SET lease_until_ms = ? WHERE id = ? AND deliveries = ? AND acked_at_ms IS NULL AND delayed = 0 AND lease_until_ms > ?',
  );
  const countPending = database.prepare('SELECT COUNT(*) AS count FROM queue_messages WHERE acked_at_ms IS NULL');

  const reserveNext = (nowMs: number, leaseMs: number): QueueDelivery | undefined => {
    const row = selectReady.get(nowMs) as ReadyRow | undefined;
    if (row === undefined) return undefined;
    lease.run(nowMs + leaseMs, row.seq);
    return {
      id: fromStoredText(row.id),
      body: fromStoredText(row.body),
      deliveries: row.deliveries + 1,
      enqueuedAt: new Date(row.enqueued_at_ms).toISOString(),
    };
  };
  const reserve = database.transaction(reserveNext);

  return {
    async enqueue(message) {
      const id = enqueuedMessageId(message);
      insert.run(toStoredText(id), toStoredText(message.body), clock.now());
      return id;
    },
    async reserve(leaseMs) {
      assertLeaseMs(leaseMs);
      const nowMs = clock.now();
      return group !== undefined ? group.run(() => reserveNext(nowMs, leaseMs)) : reserve.immediate(nowMs, leaseMs);
    },
    async ack(id) {
      const nowMs = clock.now();
      const stored = toStoredText(id);
      // acknowledged already (by the run's last commit, `RunJournal.finish`): no write transaction
      // (an acknowledged row is never acknowledged again, so what this read sees stays true)
      if (pending.get(stored) === undefined) return;
      if (group !== undefined) await group.run(() => acknowledge(stored, nowMs));
      else acknowledge(stored, nowMs);
    },
    async release(id, releaseOptions) {
      const { delayMs, countDelivery, deliveries } = checkReleaseOptions(releaseOptions);
      giveBack.run({
        id: toStoredText(id),
        uncount: countDelivery ? 0 : 1,
        until: delayMs > 0 ? clock.now() + delayMs : null,
        delayed: delayMs > 0 ? 1 : 0,
        deliveries: deliveries ?? null,
      });
    },
    async extendLease(id, deliveries, leaseMs) {
      assertLeaseMs(leaseMs, 'extendLease');
      const nowMs = clock.now();
      return renew.run(nowMs + leaseMs, toStoredText(id), deliveries, nowMs).changes === 1;
    },
    async size() {
      return (countPending.get() as { count: number }).count;
    },
  };
}
