import type { Database } from 'better-sqlite3';
import type { Clock } from '../../ground/ports/clock.ts';
import type { ConversationStore } from '../../ground/ports/stores.ts';
import { toStoredText } from '../exact-text.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';

/** When and how much {@link createSqliteConversationStore} sweeps expired conversations. */
export interface SqliteConversationSweep {
  /** A sweep runs after the first write (`put` or a step)  of the store and then after every this many. @defaultValue 100 */
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
  /** More housekeeping of the same file, run on the sweep's cadence in a transaction of its own; what it throws is ignored. */
  alsoSweep?: (nowMs: number) => unknown;
  /** Called after every write (`put` or a step) committed, outside its transaction; what it throws is ignored. */
  afterWrite?: () => unknown;
}

/** A step's messages as {@link SqliteConversations.writeStep} writes them, serialised before the write lock is taken. */
export interface SqliteStepMessages {
  /** The whole conversation after the step (only its first `total` count: it may grow before a grouped write runs). */
  messages: readonly unknown[];
  storedCount: number;
  total: number;
  /** `messages.slice(storedCount, total)` as JSON text; `undefined` when `storedCount` cannot be appended to. */
  appendedText: string | undefined;
}

/** The conversation store of a file, with what the file's run journal writes and reads inside its own transactions. */
export interface SqliteConversations {
  store: ConversationStore;
  /** The conversation as stored (`undefined`: missing or expired at `nowMs`); `ref` as `toStoredText` writes it. */
  read(ref: string, nowMs: number): unknown[] | undefined;
  /** Writes a step's messages inside the caller's transaction; `ref` as `toStoredText` writes it. */
  writeStep(ref: string, step: SqliteStepMessages, nowMs: number): void;
  /** Housekeeping after a committed write, outside its transaction (the sweep's cadence). */
  afterWrite(nowMs: number): void;
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
 * the chunks with one at 0; a step of the file's run journal appends one chunk holding only the
 * step's new messages (in the journal's transaction): a step writes one chunk row, whatever the
 * conversation's length. `get` reads the chunks in one statement (one
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
export function createSqliteConversations(database: Database, options: SqliteConversationStoreOptions): SqliteConversations {
  const { clock, ttlMs } = options;
  const sweepOptions = options.sweep ?? DEFAULT_SQLITE_CONVERSATION_SWEEP;
  const everyWrites = Math.max(1, Math.trunc(sweepOptions.everyWrites));
  const batchSize = Math.max(1, Math.trunc(sweepOptions.batchSize));
  const refreshLagMs = Math.min(ttlMs / 100, 300_000);

  const selectChunks = database.prepare('SELECT end, expires_at_ms, messages FROM conversation_messages WHERE ref = ? ORDER BY start');
  const selectLast = database.prepare('SELECT end, expires_at_ms FROM conversation_messages WHERE ref = ? ORDER BY start DESC LIMIT 1');
  // a step's one read: the last chunk and the row's expiry (NULL without a row) in one statement
  const selectLastAndHead = database.prepare(
    `SELECT end, expires_at_ms, (SELECT expires_at_ms FROM conversations WHERE conversations.ref = conversation_messages.ref) AS head_expires_at_ms
     FROM conversation_messages WHERE ref = ? ORDER BY start DESC LIMIT 1`,
  );
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

  /** The conversation written as one chunk at 0, for a reference without chunks. */
  const create = (ref: string, messagesText: string, count: number, nowMs: number) => {
    insertChunk.run(ref, 0, count, nowMs + ttlMs, messagesText);
    upsertHead.run(ref, nowMs + ttlMs);
  };
  const replace = (ref: string, messagesText: string, count: number, nowMs: number) => {
    deleteChunks.run(ref);
    create(ref, messagesText, count, nowMs);
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

  const read = (ref: string, nowMs: number): unknown[] | undefined => {
    const rows = selectChunks.all(ref) as ChunkRow[];
    const last = rows[rows.length - 1];
    if (last === undefined || last.expires_at_ms <= nowMs) return undefined;
    if (rows.length === 1) return fromJsonText<unknown[]>(last.messages);
    const messages: unknown[] = [];
    for (const row of rows) for (const message of fromJsonText<unknown[]>(row.messages)) messages.push(message);
    return messages;
  };
  const store: ConversationStore = {
    async put(conversationRef, messages) {
      const nowMs = clock.now();
      put.immediate(toStoredText(conversationRef), toJsonText(messages), messages.length, nowMs);
      afterWrite(nowMs);
    },
    async get(conversationRef) {
      return read(toStoredText(conversationRef), clock.now());
    },
    async delete(conversationRef) {
      remove.immediate(toStoredText(conversationRef));
    },
  };

  /** Writes a step's messages inside the caller's transaction: its new messages appended when the stored conversation has `storedCount` of them, else all of them in its place. */
  const writeStep = (ref: string, step: SqliteStepMessages, nowMs: number) => {
    const { messages, storedCount, total, appendedText } = step;
    const last = selectLastAndHead.get(ref) as (Omit<ChunkRow, 'messages'> & { head_expires_at_ms: number | null }) | undefined;
    const expiresAtMs = nowMs + ttlMs;
    if (appendedText !== undefined && last !== undefined && last.expires_at_ms > nowMs && last.end === storedCount) {
      // a step without new messages writes an empty chunk at the end (its next chunk replaces it), restarting the TTL all the same
      insertChunk.run(ref, storedCount, total, expiresAtMs, appendedText);
      if (last.head_expires_at_ms === null || last.head_expires_at_ms < expiresAtMs - refreshLagMs) upsertHead.run(ref, expiresAtMs);
    } else {
      // without a chunk (the read just said so) there is nothing to delete
      // from 0 the appended text is the whole conversation already: it is not serialised twice
      const wholeText =
        storedCount === 0 && appendedText !== undefined ? appendedText : toJsonText(messages.length === total ? messages : messages.slice(0, total));
      (last === undefined ? create : replace)(ref, wholeText, total, nowMs);
    }
  };
  return { store, read, writeStep, afterWrite };
}
