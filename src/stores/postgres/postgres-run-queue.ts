import type { Clock } from '../../ground/ports/clock.ts';
import type { QueueDelivery, RunQueue } from '../../ground/ports/stores.ts';
import { assertLeaseMs, checkReleaseOptions, enqueuedMessageId } from '../assert-lease-ms.ts';
import { fromStoredText, toStoredText } from '../exact-text.ts';
import { prepareStatement, type PostgresQueryable } from './postgres-client.ts';

/** A message not yet acknowledged, as {@link PostgresRunQueue.pending} lists it. */
export interface PendingRunMessage {
  id: string;
  body: string;
  /** Position in the queue (FIFO order); pass the last one as `afterSequence` to page on. */
  sequence: number;
  /** ISO-8601 time it was enqueued. */
  enqueuedAt: string;
}

/**
 * The PostgreSQL {@link RunQueue}, plus `pending()` so that it can also serve as the durable
 * record (outbox) of run requests delivered through another queue (`toolrun/bullmq`).
 */
export interface PostgresRunQueue extends RunQueue {
  /** Messages waiting or leased (not acked), oldest first: at most `limit` (default 1000) after `afterSequence`. */
  pending(options?: { limit?: number; afterSequence?: number }): Promise<PendingRunMessage[]>;
}

interface DeliveryRow {
  id: string;
  body: string;
  enqueued_at_ms: string;
  deliveries: number;
}

/**
 * A {@link PostgresRunQueue} on `<schema>.queue_messages`, shared safely by any number of
 * processes and machines.
 *
 * - `reserve` is one `UPDATE … WHERE seq = (SELECT … ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED)`:
 *   it takes the oldest message that is neither acked nor under a live lease, skipping rows another
 *   consumer is taking at that instant, and sets its lease and `deliveries + 1`. Two consumers
 *   never reserve one message under one lease, and none waits for another.
 * - Leases compare `lease_until_ms` with the injected clock of each process: keep the machines'
 *   clocks in sync (NTP), well within the lease.
 * - `enqueue` is `INSERT … ON CONFLICT (id) DO NOTHING`; acked rows are kept (body emptied), so an
 *   id that was ever enqueued stays deduplicated.
 * - `release(id, { delayMs, countDelivery, deliveries })` is one `UPDATE`: `lease_until_ms` becomes
 *   `now + delayMs` with `delayed = true` (or NULL without a delay, as before), and `countDelivery:
 *   false` takes one off `deliveries` when the row was leased (not waiting, not delayed).
 * - `extendLease` is one `UPDATE … WHERE id = $1 AND deliveries = $2 AND acked_at_ms IS NULL AND
 *   NOT delayed AND lease_until_ms > now`: it renews only the live lease of that very delivery.
 * - Times are whole milliseconds (lease and delay ends rounded up), as `bigint` columns need.
 * - Ids and bodies are stored with `toStoredText`: a body holding `\u0000` (which `text` cannot
 *   hold) or a lone surrogate is stored escaped and comes back exactly.
 *
 * @throws ToolrunError `INVALID_OPTIONS` from `reserve` and `extendLease` for a non-positive or
 * non-finite `leaseMs`, and from `release` for an invalid `delayMs` (see `ReleaseOptions`).
 */
export function createPostgresRunQueue(pool: PostgresQueryable, options: { schema: string; clock: Clock }): PostgresRunQueue {
  const { clock } = options;
  const table = `${options.schema}.queue_messages`;
  // ORDER BY names the column: a bare `seq` would be the `seq::text` output, which sorts '10' before '9'
  const statements = {
    enqueue: prepareStatement(`INSERT INTO ${table} (id, body, enqueued_at_ms) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`),
    ack: prepareStatement(`UPDATE ${table} SET acked_at_ms = $2, lease_until_ms = NULL, body = '' WHERE id = $1 AND acked_at_ms IS NULL`),
    release: prepareStatement(`UPDATE ${table} SET
         deliveries = CASE WHEN $2::boolean AND lease_until_ms IS NOT NULL AND NOT delayed AND deliveries > 0 THEN deliveries - 1 ELSE deliveries END,
         lease_until_ms = $3::bigint, delayed = $4::boolean
         WHERE id = $1 AND acked_at_ms IS NULL AND ($5::integer IS NULL OR deliveries = $5::integer)`),
    extendLease: prepareStatement(`UPDATE ${table} SET lease_until_ms = $4
         WHERE id = $1 AND deliveries = $2 AND acked_at_ms IS NULL AND NOT delayed AND lease_until_ms > $3`),
    size: prepareStatement(`SELECT COUNT(*)::text AS count FROM ${table} WHERE acked_at_ms IS NULL`),
    pending: prepareStatement(`SELECT id, body, seq::text AS seq, enqueued_at_ms::text AS enqueued_at_ms FROM ${table}
         WHERE acked_at_ms IS NULL AND seq > $1 ORDER BY ${table}.seq LIMIT $2`),
  };
  const reserveStatement = prepareStatement(`
    UPDATE ${table} SET lease_until_ms = $2, delayed = false, deliveries = deliveries + 1
    WHERE seq = (
      SELECT seq FROM ${table}
      WHERE acked_at_ms IS NULL AND (lease_until_ms IS NULL OR lease_until_ms <= $1)
      ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED
    )
    RETURNING id, body, enqueued_at_ms::text AS enqueued_at_ms, deliveries`);

  return {
    async enqueue(message) {
      const id = enqueuedMessageId(message);
      await pool.query({ ...statements.enqueue, values: [toStoredText(id), toStoredText(message.body), Math.floor(clock.now())] });
      return id;
    },
    async reserve(leaseMs): Promise<QueueDelivery | undefined> {
      assertLeaseMs(leaseMs);
      const nowMs = Math.floor(clock.now());
      const { rows } = await pool.query<DeliveryRow>({ ...reserveStatement, values: [nowMs, Math.ceil(nowMs + leaseMs)] });
      const row = rows[0];
      if (row === undefined) return undefined;
      return {
        id: fromStoredText(row.id),
        body: fromStoredText(row.body),
        deliveries: row.deliveries,
        enqueuedAt: new Date(Number(row.enqueued_at_ms)).toISOString(),
      };
    },
    async ack(id) {
      await pool.query({ ...statements.ack, values: [toStoredText(id), Math.floor(clock.now())] });
    },
    async release(id, releaseOptions) {
      const { delayMs, countDelivery, deliveries } = checkReleaseOptions(releaseOptions);
      const until = delayMs > 0 ? Math.floor(clock.now()) + delayMs : null;
      await pool.query({ ...statements.release, values: [toStoredText(id), !countDelivery, until, delayMs > 0, deliveries ?? null] });
    },
    async extendLease(id, deliveries, leaseMs) {
      assertLeaseMs(leaseMs, 'extendLease');
      const nowMs = Math.floor(clock.now());
      const result = await pool.query({ ...statements.extendLease, values: [toStoredText(id), deliveries, nowMs, Math.ceil(nowMs + leaseMs)] });
      return result.rowCount === 1;
    },
    async size() {
      const { rows } = await pool.query<{ count: string }>(statements.size);
      return Number(rows[0]!.count);
    },
    async pending(pendingOptions) {
      const limit = Math.max(1, Math.floor(pendingOptions?.limit ?? 1000));
      const { rows } = await pool.query<{ id: string; body: string; seq: string; enqueued_at_ms: string }>({
        ...statements.pending,
        values: [pendingOptions?.afterSequence ?? 0, limit],
      });
      return rows.map((row) => ({
        id: fromStoredText(row.id),
        body: fromStoredText(row.body),
        sequence: Number(row.seq),
        enqueuedAt: new Date(Number(row.enqueued_at_ms)).toISOString(),
      }));
    },
  };
}
