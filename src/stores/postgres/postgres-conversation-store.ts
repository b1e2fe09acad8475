import type { Clock } from '../../ground/ports/clock.ts';
import type { ConversationStore } from '../../ground/ports/stores.ts';
import { toStoredText } from '../exact-text.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';
import { prepareStatement, type PostgresQueryable } from './postgres-client.ts';

/** When and how much {@link createPostgresConversationStore} sweeps expired conversations. */
export interface PostgresConversationSweep {
  /** A store object starts a sweep at most once per this many ms of its clock, after a write. @defaultValue 10_000 */
  intervalMs: number;
  /** Expired conversations handled by one sweep transaction, at most (the oldest expired first); a full batch is followed by another. @defaultValue 500 */
  batchSize: number;
}

/** The default {@link PostgresConversationSweep}. */
export const DEFAULT_POSTGRES_CONVERSATION_SWEEP: PostgresConversationSweep = { intervalMs: 10_000, batchSize: 500 };

/** Options of {@link createPostgresConversationStore}. */
export interface PostgresConversationStoreOptions {
  /** The quoted schema name. */
  schema: string;
  clock: Clock;
  /** Time to live of a conversation after its last write, in ms. */
  ttlMs: number;
  /** @defaultValue {@link DEFAULT_POSTGRES_CONVERSATION_SWEEP} */
  sweep?: PostgresConversationSweep;
  /** Told of each background sweep as it starts (its promise never rejects), so the pool's owner can wait for it before ending the pool. */
  onBackground?: (work: Promise<void>) => void;
}

/** The conversation store of a schema, with what the schema's run journal needs to write a step of it. */
export interface PostgresConversations {
  store: ConversationStore;
  /** The epoch ms at which a conversation written at `nowMs` expires. */
  expiryOf(nowMs: number): number;
  /** How far an appending write lets the `conversations` row's expiry lag, in ms. */
  refreshLagMs: number;
  /** Housekeeping after a committed write (starts a background sweep when one is due). */
  afterWrite(nowMs: number): void;
}

interface ChunkRow {
  expires_at_ms: string | number;
  messages: string;
}

/**
 * A {@link ConversationStore} on `<schema>.conversation_messages (ref, start_index, end_index,
 * expires_at_ms, messages)`: append-only chunks, each the JSON array of the messages from
 * `start_index` to `end_index`, with the conversation's expiry as of that write (the last chunk's
 * is the conversation's). `put` replaces the chunks with one at 0; a step of the schema's run
 * journal appends one chunk holding only the step's new messages (`commit_step`), so a step writes
 * one chunk row whatever the conversation's length. `get` reads the chunks in one
 * statement (one snapshot).
 *
 * `<schema>.conversations (ref, expires_at_ms)` keeps one row per conversation, locked by every
 * writer of the conversation before it touches the chunks; the sweep and the dashboard read its
 * expiry, exact after `put` and a replacing commit, refreshed by an appending commit only when it
 * lags the new expiry by more than `min(ttlMs / 100, 5 minutes)` (it never runs ahead of the real
 * expiry). When the stored conversation is not the one the step extends (missing, expired,
 * another length), the commit writes nothing and is sent again with the whole conversation.
 *
 * A conversation expires `ttlMs` after its last write by the injected clock; an expired one is
 * invisible to `get` at once and deleted later, off the hot path: at most once per
 * `sweep.intervalMs` of the clock, after a write, the store starts (without awaiting it) a sweep
 * in its own transactions, each deleting at most `sweep.batchSize` expired conversations and
 * skipping rows another transaction holds (`FOR UPDATE SKIP LOCKED`); a row whose conversation
 * was written since only has its expiry moved. A sweep that fails is dropped (the next one tries
 * again); it never fails a write.
 */
export function createPostgresConversations(pool: PostgresQueryable, options: PostgresConversationStoreOptions): PostgresConversations {
  const { schema, clock, ttlMs } = options;
  const sweepOptions = options.sweep ?? DEFAULT_POSTGRES_CONVERSATION_SWEEP;
  const batchSize = Math.max(1, Math.trunc(sweepOptions.batchSize));
  const refreshLagMs = Math.floor(Math.min(ttlMs / 100, 300_000));
  const expiryOf = (nowMs: number) => Math.ceil(nowMs + ttlMs);

  const replace = prepareStatement(`SELECT ${schema}.conversation_replace($1, $2, $3, $4)`);
  const select = prepareStatement(`SELECT expires_at_ms, messages FROM ${schema}.conversation_messages WHERE ref = $1 ORDER BY start_index`);
  const remove = prepareStatement(`SELECT ${schema}.conversation_delete($1)`);
  const sweepStatement = prepareStatement(`SELECT ${schema}.sweep_conversations($1, $2) AS handled`);

  let sweptAtMs = Number.NEGATIVE_INFINITY;
  let sweeping = false;
  const sweep = async (nowMs: number) => {
    try {
      for (;;) {
        const { rows } = await pool.query<{ handled: number }>({ ...sweepStatement, values: [Math.floor(nowMs), batchSize] });
        if ((rows[0]?.handled ?? 0) < batchSize) return;
      }
    } catch {
      // housekeeping only: expired rows are already invisible; the next sweep tries again
    } finally {
      sweeping = false;
    }
  };
  const afterWrite = (nowMs: number) => {
    if (sweeping || nowMs - sweptAtMs < sweepOptions.intervalMs) return;
    sweptAtMs = nowMs;
    sweeping = true;
    const work = sweep(nowMs);
    options.onBackground?.(work);
  };

  const store: ConversationStore = {
    async put(conversationRef, messages) {
      const nowMs = clock.now();
      await pool.query({ ...replace, values: [toStoredText(conversationRef), toJsonText(messages), messages.length, expiryOf(nowMs)] });
      afterWrite(nowMs);
    },
    async get(conversationRef) {
      const { rows } = await pool.query<ChunkRow>({ ...select, values: [toStoredText(conversationRef)] });
      const last = rows[rows.length - 1];
      if (last === undefined || Number(last.expires_at_ms) <= clock.now()) return undefined;
      if (rows.length === 1) return fromJsonText<unknown[]>(last.messages);
      const messages: unknown[] = [];
      for (const row of rows) for (const message of fromJsonText<unknown[]>(row.messages)) messages.push(message);
      return messages;
    },
    async delete(conversationRef) {
      await pool.query({ ...remove, values: [toStoredText(conversationRef)] });
    },
  };

  return { store, expiryOf, refreshLagMs, afterWrite };
}
