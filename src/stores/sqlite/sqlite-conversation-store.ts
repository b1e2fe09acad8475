import type { Database } from 'better-sqlite3';
import type { SqliteGroupCommit } from './sqlite-group-commit.ts';
import type { Clock } from '../../ground/ports/clock.ts';
import type { ClaimStore, ConversationStore, IdempotencyLedger, RunStore, StepCommit, StepCommitStores } from '../../ground/ports/stores.ts';
import { toStoredText } from '../exact-text.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';
import { prepareSqliteLedgerInsert } from './sqlite-idempotency-ledger.ts';
import { prepareSqliteCheckpointWrite, toSqliteCheckpointRow, type SqliteCheckpointRow } from './sqlite-run-store.ts';

/** When and how much {@link createSqliteConversationStore} sweeps expired conversations. */
export interface SqliteConversationSweep {
  /** A sweep runs after the first write (`put` or `commitStep`) of the store and then after every this many. @defaultValue 100 */
  everyWrites: number;
  /** Conversations deleted by one sweep, at most (the oldest expired first). @defaultValue 500 */
  batchSize: number;
}

/** The default {@link SqliteConversationSweep}: at most 5 expired conversations deleted per write, in batches. */
export const DEFAULT_SQLITE_CONVERSATION_SWEEP: SqliteConversationSweep = { everyWrites: 100, batchSize: 500 };

/** Options of {@link createSqliteConversationStore}. */
export interface SqliteConversationStoreOptions {
  clock: Clock;
  /** Time to live of a conversation after its last write, in ms. */
  ttlMs: number;
  /** @defaultValue {@link DEFAULT_SQLITE_CONVERSATION_SWEEP} */
  sweep?: SqliteConversationSweep;
  /**
   * The run store and ledger of the same file, for `commitStep` (one transaction for the step's
   * messages, checkpoint and ledger rows), and its claim store, for a commit that releases a claim
   * too (`StepCommit.releaseClaim`). Without them the store has no `commitStep`.
   */
  steps?: { runs: RunStore; ledger: IdempotencyLedger; claims?: ClaimStore };
  /** Group commit of the connection: `commitStep` writes in its next group (one transaction for the steps of many runs) instead of a transaction of its own. */
  group?: SqliteGroupCommit;
  /** More housekeeping of the same file, run on the sweep's cadence in a transaction of its own; what it throws is ignored. */
  alsoSweep?: (nowMs: number) => unknown;
  /** Called after every write (`put` or `commitStep`) committed, outside its transaction; what it throws is ignored. */
  afterWrite?: () => unknown;
}

interface ChunkRow {
  end: number;
  expires_at_ms: number;
  messages: string;
}

/**
 * A {@link ConversationStore} on `conversation_messages (ref, start, end, expires_at_ms, messages)`:
 * append-only chunks, each the JSON array of the messages from index `start` to `end`, with the
 * conversation's expiry as of that write (the last chunk's is the conversation's). `put` replaces
 * the chunks with one at 0; `commitStep` appends one chunk holding only the step's new messages
 * and writes the checkpoint and the ledger rows in the same IMMEDIATE transaction: a step writes
 * one chunk row, whatever the conversation's length. `get` reads the chunks in one statement (one
 * snapshot).
 *
 * `conversations (ref, expires_at_ms)` keeps one row per conversation for the expiry sweep and
 * for inspection (the dashboard reads it). Its `expires_at_ms` is exact after `put` and a
 * replacing commit; an appending commit refreshes it only when it lags the new expiry by more than
 * `min(ttlMs / 100, 5 minutes)`, so a step rarely writes it (it never runs ahead of the real expiry).
 *
 * A conversation expires `ttlMs` after its last write by the injected clock; an expired one is
 * invisible to `get` at once and deleted later, off the hot path: after the first write and then every `sweep.everyWrites`
 * writes, one transaction of its own deletes at most `sweep.batchSize` expired conversations
 * (through the expiry index on `conversations`; a row whose conversation was written since only
 * has its expiry moved). A sweep that fails (the file stays locked past the busy timeout) is
 * skipped and tried again at the next one; it never fails the write that triggered it.
 */
export function createSqliteConversationStore(database: Database, options: SqliteConversationStoreOptions): ConversationStore {
  const { clock, ttlMs } = options;
  const sweepOptions = options.sweep ?? DEFAULT_SQLITE_CONVERSATION_SWEEP;
  const everyWrites = Math.max(1, Math.trunc(sweepOptions.everyWrites));
  const batchSize = Math.max(1, Math.trunc(sweepOptions.batchSize));
  const refreshLagMs = Math.min(ttlMs / 100, 300_000);

  const selectChunks = database.prepare('SELECT end, expires_at_ms, messages FROM conversation_messages WHERE ref = ? ORDER BY start');
  const selectLast = database.prepare('SELECT end, expires_at_ms FROM conversation_messages WHERE ref = ? ORDER BY start DESC LIMIT 1');
  const selectHead = database.prepare('SELECT expires_at_ms FROM conversations WHERE ref = ?');
  const upsertHead = database.prepare(
    'INSERT INTO conversations (ref, expires_at_ms) VALUES (?, ?) ON CONFLICT (ref) DO UPDATE SET expires_at_ms = excluded.expires_at_ms',
  );
  const insertChunk = database.prepare(
    `INSERT INTO conversation_messages (ref, start, end, expires_at_ms, messages) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (ref, start) DO UPDATE SET end = excluded.end, expires_at_ms = excluded.expires_at_ms, messages = excluded.messages`,
  );
  const deleteChunks = database.prepare('DELETE FROM conversation_messages WHERE ref = ?');
  const deleteHead = database.prepare('DELETE FROM conversations WHERE ref = ?');
  const selectExpired = database.prepare('SELECT ref FROM conversations WHERE expires_at_ms <= ? ORDER BY expires_at_ms LIMIT ?');

  const replace = (ref: string, messagesText: string, count: number, nowMs: number) => {
    deleteChunks.run(ref);
    insertChunk.run(ref, 0, count, nowMs + ttlMs, messagesText);
    upsertHead.run(ref, nowMs + ttlMs);
  };
  const put = database.transaction(replace);
  const remove = database.transaction((ref: string) => {
    deleteChunks.run(ref);
    deleteHead.run(ref);
  });
  const sweep = database.transaction((nowMs: number) => {
    for (const { ref } of selectExpired.all(nowMs, batchSize) as { ref: string }[]) {
      const last = selectLast.get(ref) as Omit<ChunkRow, 'messages'> | undefined;
      if (last !== undefined && last.expires_at_ms > nowMs) {
        upsertHead.run(ref, last.expires_at_ms); // written since: only the row lagged
      } else {
        deleteChunks.run(ref);
        deleteHead.run(ref);
      }
    }
  });
  let writes = 0;
  const onWrite = options.afterWrite;
  const afterWrite = (nowMs: number) => {
    writes += 1;
    if (onWrite !== undefined) {
      try {
        onWrite();
      } catch {
        // housekeeping only
      }
    }
    // the first write of a process sweeps too: a short-lived worker (one CLI run) still cleans up
    if ((writes - 1) % everyWrites !== 0) return;
    try {
      sweep.immediate(nowMs);
    } catch {
      // housekeeping only: expired rows are already invisible; the next sweep tries again
    }
    try {
      options.alsoSweep?.(nowMs);
    } catch {
      // the same: tried again at the next sweep
    }
  };

  const store: ConversationStore = {
    async put(conversationRef, messages) {
      const nowMs = clock.now();
      put.immediate(toStoredText(conversationRef), toJsonText(messages), messages.length, nowMs);
      afterWrite(nowMs);
    },
    async get(conversationRef) {
      const rows = selectChunks.all(toStoredText(conversationRef)) as ChunkRow[];
      const last = rows[rows.length - 1];
      if (last === undefined || last.expires_at_ms <= clock.now()) return undefined;
      if (rows.length === 1) return fromJsonText<unknown[]>(last.messages);
      const messages: unknown[] = [];
      for (const row of rows) for (const message of fromJsonText<unknown[]>(row.messages)) messages.push(message);
      return messages;
    },
    async delete(conversationRef) {
      remove.immediate(toStoredText(conversationRef));
    },
  };

  if (options.steps !== undefined) {
    const { runs, ledger, claims } = options.steps;
    const ownPut = store.put;
    const ownRunsPut = runs.put;
    const ownLedgerPut = ledger.putIfAbsent;
    const ownRelease = claims?.release;
    const writeCheckpoint = prepareSqliteCheckpointWrite(database);
    const insertLedger = prepareSqliteLedgerInsert(database);
    const deleteClaim = database.prepare('DELETE FROM claims WHERE key = ? AND holder = ?');
    // `messages`, `storedCount` and `total` as they were when commitStep was called (a grouped write runs later in the turn)
    const writeStep = (
      ref: string,
      messages: readonly unknown[],
      storedCount: number,
      total: number,
      appendedText: string | undefined,
      ledgerRows: [string, string][],
      checkpointRow: SqliteCheckpointRow,
      nowMs: number,
      claim: [string, string] | undefined,
    ) => {
      const last = selectLast.get(ref) as Omit<ChunkRow, 'messages'> | undefined;
      const expiresAtMs = nowMs + ttlMs;
      if (appendedText !== undefined && last !== undefined && last.expires_at_ms > nowMs && last.end === storedCount) {
        // a step without new messages writes an empty chunk at the end (its next chunk replaces it), restarting the TTL all the same
        insertChunk.run(ref, storedCount, total, expiresAtMs, appendedText);
        const head = selectHead.get(ref) as { expires_at_ms: number } | undefined;
        if (head === undefined || head.expires_at_ms < expiresAtMs - refreshLagMs) upsertHead.run(ref, expiresAtMs);
      } else {
        replace(ref, toJsonText(messages.length === total ? messages : messages.slice(0, total)), total, nowMs);
      }
      for (const [key, valueText] of ledgerRows) insertLedger(key, valueText, nowMs);
      writeCheckpoint(checkpointRow);
      if (claim !== undefined) deleteClaim.run(claim[0], claim[1]);
    };
    const commit = database.transaction(writeStep);
    const group = options.group;
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
      // serialised before taking the write lock: a large step does not hold it longer
      const storedCount = step.storedCount;
      const appendable = Number.isInteger(storedCount) && storedCount >= 0 && storedCount <= step.messages.length;
      const appendedText = appendable ? toJsonText(step.messages.slice(storedCount)) : undefined;
      const ledgerRows = step.ledger.map((row): [string, string] => [toStoredText(row.key), toJsonText(row.value)]);
      const checkpointRow = toSqliteCheckpointRow(step.checkpoint);
      const nowMs = clock.now();
      const claim: [string, string] | undefined = release !== undefined ? [toStoredText(release.key), toStoredText(release.holder)] : undefined;
      const ref = toStoredText(step.conversationRef);
      const messages = step.messages;
      const total = messages.length;
      if (group !== undefined) await group.run(() => writeStep(ref, messages, storedCount, total, appendedText, ledgerRows, checkpointRow, nowMs, claim));
      else commit.immediate(ref, messages, storedCount, total, appendedText, ledgerRows, checkpointRow, nowMs, claim);
      afterWrite(nowMs);
      return true;
    };
  }
  return store;
}
