import type { Clock } from '../../ground/ports/clock.ts';
import type { ClaimStore, ConversationStore, IdempotencyLedger, RunStore, StepCommit, StepCommitStores } from '../../ground/ports/stores.ts';
import { toStoredText } from '../exact-text.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';
import { breakerFingerprintSql, type BreakerFingerprintTracker } from './postgres-breaker-fingerprint.ts';
import { prepareStatement, toNumber, type PostgresQueryable } from './postgres-client.ts';
import { toPostgresCheckpointRow } from './postgres-run-store.ts';

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
  /**
   * The run store and ledger of the same schema, for `commitStep` (one statement, so one
   * transaction, for the step's messages, checkpoint and ledger rows), and its claim store, for a
   * commit that releases a claim too (`StepCommit.releaseClaim`). Without them the store has no
   * `commitStep`.
   */
  steps?: { runs: RunStore; ledger: IdempotencyLedger; claims?: ClaimStore };
  /** Told of each background sweep as it starts (its promise never rejects), so the pool's owner can wait for it before ending the pool. */
  onBackground?: (work: Promise<void>) => void;
  /** Told of the breakers' fingerprint each step commit reads (in the same statement), for the breaker store of the same schema. */
  breakerFingerprints?: BreakerFingerprintTracker;
}

interface ChunkRow {
  expires_at_ms: string | number;
  messages: string;
}

/**
 * A {@link ConversationStore} on `<schema>.conversation_messages (ref, start_index, end_index,
 * expires_at_ms, messages)`: append-only chunks, each the JSON array of the messages from
 * `start_index` to `end_index`, with the conversation's expiry as of that write (the last chunk's
 * is the conversation's). `put` replaces the chunks with one at 0; `commitStep` appends one chunk
 * holding only the step's new messages and writes the ledger rows and the checkpoint in the same
 * statement (`commit_step`, a function of the schema: one round trip, one transaction), so a step
 * writes one chunk row whatever the conversation's length, and a connection lost or a process
 * killed at any point leaves the whole step or none of it. `get` reads the chunks in one
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
export function createPostgresConversationStore(pool: PostgresQueryable, options: PostgresConversationStoreOptions): ConversationStore {
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
      if (last === undefined || toNumber(last.expires_at_ms) <= clock.now()) return undefined;
      if (rows.length === 1) return fromJsonText<unknown[]>(last.messages);
      const messages: unknown[] = [];
      for (const row of rows) for (const message of fromJsonText<unknown[]>(row.messages)) messages.push(message);
      return messages;
    },
    async delete(conversationRef) {
      await pool.query({ ...remove, values: [toStoredText(conversationRef)] });
    },
  };

  if (options.steps !== undefined) {
    const { runs, ledger, claims } = options.steps;
    const ownPut = store.put;
    const ownRunsPut = runs.put;
    const ownLedgerPut = ledger.putIfAbsent;
    const ownRelease = claims?.release;
    const fingerprints = options.breakerFingerprints;
    // the breakers' fingerprint at the statement's snapshot, for the breaker store
    const fingerprintColumn = `, ${breakerFingerprintSql(`${schema}.breakers`)} AS fingerprint`;
    const commitText = (columns: string) =>
      `SELECT ${schema}.commit_step($1, $2, $3, $4, $5, $6, $7, $8, $9::text[], $10::text[], $11, $12, $13, $14, $15) AS committed${columns}`;
    // a run's last step, which ends its claim too (schema version 10)
    const commitReleasingText = (columns: string) =>
      `SELECT ${schema}.commit_step($1, $2, $3, $4, $5, $6, $7, $8, $9::text[], $10::text[], $11, $12, $13, $14, $15, $16, $17) AS committed${columns}`;
    const commit = prepareStatement(commitText(''));
    const commitReleasing = prepareStatement(commitReleasingText(''));
    // the same, with the breakers' fingerprint at the statement's snapshot, for the breaker store
    const commitReading = prepareStatement(commitText(fingerprintColumn));
    const commitReleasingReading = prepareStatement(commitReleasingText(fingerprintColumn));
    store.commitStep = async (step: StepCommit, stores: StepCommitStores) => {
      const own =
        stores.conversations === store &&
        store.put === ownPut &&
        stores.runs === runs &&
        runs.put === ownRunsPut &&
        stores.ledger === ledger &&
        ledger.putIfAbsent === ownLedgerPut;
      if (!own) return false;
      const release = step.releaseClaim;
      if (release !== undefined && (claims === undefined || stores.claims !== claims || claims.release !== ownRelease)) return false;
      const claim = release !== undefined ? [toStoredText(release.key), toStoredText(release.holder)] : [];
      const ticket = fingerprints?.wanted(clock.now()) === true ? fingerprints.send(clock.now()) : undefined;
      const statement =
        release !== undefined ? (ticket !== undefined ? commitReleasingReading : commitReleasing) : ticket !== undefined ? commitReading : commit;
      const { storedCount, messages } = step;
      // storedCount 0 is a replacement too (what is appended is the whole conversation)
      const appendable = Number.isInteger(storedCount) && storedCount > 0 && storedCount <= messages.length;
      const ref = toStoredText(step.conversationRef);
      const text = toJsonText(appendable ? messages.slice(storedCount) : messages);
      const ledgerKeys = step.ledger.map((row) => toStoredText(row.key));
      const ledgerValues = step.ledger.map((row) => toJsonText(row.value));
      const checkpointRow = toPostgresCheckpointRow(step.checkpoint);
      const nowMs = clock.now();
      const values = (whole: boolean, messagesText: string) => [
        ref,
        whole ? 0 : storedCount,
        messages.length,
        messagesText,
        whole,
        Math.floor(nowMs),
        expiryOf(nowMs),
        refreshLagMs,
        ledgerKeys,
        ledgerValues,
        ...checkpointRow,
        ...claim,
      ];
      const { rows } = await pool.query<{ committed: boolean; fingerprint?: string }>({ ...statement, values: values(!appendable, text) });
      if (ticket !== undefined) fingerprints?.observe(rows[0]?.fingerprint, ticket);
      // not the conversation the step extends (expired, swept, replaced meanwhile): nothing was written; the whole of it
      if (rows[0]?.committed !== true) await pool.query({ ...statement, values: values(true, toJsonText(messages)) });
      afterWrite(nowMs);
      return true;
    };
  }
  return store;
}
