import type { Database } from 'better-sqlite3';
import type { SqliteGroupCommit } from './sqlite-group-commit.ts';
import type { Clock } from '../../ground/ports/clock.ts';
import type { QueueDelivery, RunQueue } from '../../ground/ports/stores.ts';
import { assertLeaseMs, checkReleaseOptions, enqueuedMessageId } from '../assert-lease-ms.ts';
import { fromStoredText, toStoredText } from '../exact-text.ts';

/** Ids a committed acknowledgement leaves for the queue's `ack`, at most (past it, all are forgotten: `ack` then reads). */
const MAX_COMMITTED_ACKS = 1_024;

/**
 * The acknowledgements of `queue_messages` rows, shared by the run queue and the run journal of
 * one connection: the journal acknowledges a run's message in the run's last transaction, and once
 * that transaction has committed, the queue's next `ack` of the message reads and writes nothing
 * (an acknowledged row is never acknowledged again: it stays so until the retention deletes it).
 */
export interface SqliteAcks {
  /**
   * In the caller's transaction: the row of `storedId` (as `toStoredText` writes it) acknowledged
   * at `nowMs`: its lease ends and its body is emptied; an acknowledged row is left as it is.
   */
  write(storedId: string, nowMs: number): void;
  /** The transaction that ran `write(storedId)` has committed. */
  committed(storedId: string): void;
  /** Whether a committed transaction acknowledged `storedId` since the last call for it (which forgets it). */
  takeCommitted(storedId: string): boolean;
}

/** The {@link SqliteAcks} of `database`. */
export function createSqliteAcks(database: Database): SqliteAcks {
  const acknowledge = database.prepare("UPDATE queue_messages SET acked_at_ms = ?, lease_until_ms = NULL, body = '' WHERE id = ? AND acked_at_ms IS NULL");
  const committed = new Set<string>();
  return {
    write(storedId, nowMs) {
      acknowledge.run(nowMs, storedId);
    },
    committed(storedId) {
      if (committed.size >= MAX_COMMITTED_ACKS) committed.clear();
      committed.add(storedId);
    },
    takeCommitted: (storedId) => committed.delete(storedId),
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
 * - `ack` and `release` only touch rows that are not acked; `ack` of a row acked already is a
 *   read, no write, and no statement at all when the run journal's last commit of its run, on the
 *   same connection, acknowledged it (`acks`).
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
export function createSqliteRunQueue(database: Database, options: { clock: Clock; acks: SqliteAcks; group?: SqliteGroupCommit }): RunQueue {
  const { clock, acks, group } = options;
  const insert = database.prepare('INSERT INTO queue_messages (id, body, enqueued_at_ms) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING');
  const selectReady = database.prepare(
    `SELECT seq, id, body, enqueued_at_ms, deliveries FROM queue_messages
     WHERE acked_at_ms IS NULL AND (lease_until_ms IS NULL OR lease_until_ms <= ?)
     ORDER BY seq LIMIT 1`,
  );
  const lease = database.prepare('UPDATE queue_messages SET lease_until_ms = ?, delayed = 0, deliveries = deliveries + 1 WHERE seq = ?');
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
      // acknowledged already by the run's last commit (`RunJournal.finish`) on this connection, or
      // found acknowledged: no write transaction (an acknowledged row is never acknowledged again,
      // so what that commit or this read saw stays true)
      if (acks.takeCommitted(stored) || pending.get(stored) === undefined) return;
      if (group !== undefined) await group.run(() => acks.write(stored, nowMs));
      else acks.write(stored, nowMs);
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
