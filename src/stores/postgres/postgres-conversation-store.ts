import type { Clock } from '../../ground/ports/clock.ts';
import type { ConversationStore } from '../../ground/ports/stores.ts';
import { toStoredText } from '../exact-text.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';
import { prepareStatement, type PostgresQueryable } from './postgres-client.ts';

/** Expired rows deleted by one sweep, at most (the sweep is hygiene; `get` already hides them). */
const SWEEP_BATCH = 100;
/** A store object sweeps at most once per this many ms of its clock. */
const SWEEP_INTERVAL_MS = 10_000;

/**
 * A {@link ConversationStore} on `<schema>.conversations`. A conversation expires `ttlMs` after its
 * last `put` by the injected clock; expired rows are invisible to `get`. `put` is one upsert; at
 * most once per 10 s (per store object) the same statement also deletes up to 100 expired rows,
 * skipping rows another transaction holds (`FOR UPDATE SKIP LOCKED`), so concurrent puts never wait
 * on or deadlock over the sweep.
 */
export function createPostgresConversationStore(pool: PostgresQueryable, options: { schema: string; clock: Clock; ttlMs: number }): ConversationStore {
  const { schema, clock, ttlMs } = options;
  const table = `${schema}.conversations`;
  const upsert = `
    INSERT INTO ${table} (ref, messages, expires_at_ms) VALUES ($1, $2, $3)
    ON CONFLICT (ref) DO UPDATE SET messages = excluded.messages, expires_at_ms = excluded.expires_at_ms`;
  const put = prepareStatement(upsert);
  const sweepAndPut = prepareStatement(`
    WITH swept AS (
      DELETE FROM ${table} WHERE ref IN (
        SELECT ref FROM ${table} WHERE expires_at_ms <= $4 AND ref <> $1 LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED
      )
    ) ${upsert}`);
  const select = prepareStatement(`SELECT messages FROM ${table} WHERE ref = $1 AND expires_at_ms > $2`);
  const remove = prepareStatement(`DELETE FROM ${table} WHERE ref = $1`);
  let sweptAtMs = Number.NEGATIVE_INFINITY;
  return {
    async put(conversationRef, messages) {
      const nowMs = clock.now();
      const values = [toStoredText(conversationRef), toJsonText(messages), Math.ceil(nowMs + ttlMs)];
      if (nowMs - sweptAtMs < SWEEP_INTERVAL_MS) {
        await pool.query({ ...put, values });
        return;
      }
      sweptAtMs = nowMs;
      await pool.query({ ...sweepAndPut, values: [...values, Math.floor(nowMs)] });
    },
    async get(conversationRef) {
      const { rows } = await pool.query<{ messages: string }>({ ...select, values: [toStoredText(conversationRef), Math.floor(clock.now())] });
      return rows[0] === undefined ? undefined : fromJsonText<unknown[]>(rows[0].messages);
    },
    async delete(conversationRef) {
      await pool.query({ ...remove, values: [toStoredText(conversationRef)] });
    },
  };
}
