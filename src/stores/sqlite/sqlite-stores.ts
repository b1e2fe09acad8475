/**
 * The embedded default backend: every port of `core/ports/stores.ts` on ONE SQLite file
 * (better-sqlite3 v12), shared by the worker, the CLI and any number of processes on one machine.
 *
 * Connection: `busy_timeout` (default 5 s, so processes wait for each other's locks instead of
 * failing), `journal_mode = WAL` (readers never block the writer), `synchronous = NORMAL` by
 * default. With WAL, NORMAL loses no committed transaction when a process crashes (SIGKILL
 * included: the WAL is in the OS page cache); only a power loss or OS crash may roll back the last
 * commits, and then the queue redelivers (at-least-once) while the ledger may forget the very last
 * outcomes. Choose `synchronous: 'full'` (an fsync per commit, several times slower on writes) when
 * side effects must survive power loss too. WAL checkpoints (the copy of committed pages into the
 * file, and its fsyncs) run on a worker thread with a connection of its own once the bundle has
 * written 64 steps (`backgroundCheckpoint`), so a commit does not wait for one.
 *
 * Schema (see `sqlite-migrations.ts`; `schema_version (version, applied_at)` records the applied
 * versions, applied in one IMMEDIATE transaction on open):
 * - `conversations (ref PK, expires_at_ms)` and `conversation_messages (ref, start, end,
 *   expires_at_ms, messages JSON)`: append-only chunks of each conversation (a rowid table with a
 *   `(ref, start)` index, so a seek never reads a large chunk), TTL by the injected clock, expired
 *   conversations deleted in bounded batches every `conversationSweep.everyWrites` writes.
 * - `runs (run_id PK, message_id, status, updated_at, checkpoint JSON)`.
 * - `ledger (key PK, value JSON, recorded_at_ms)`: first writer wins (`ON CONFLICT DO NOTHING`).
 * - `breakers (key PK, state JSON, updated_at_ms)`: read-modify-write in IMMEDIATE transactions.
 * - `dead_letters (id AUTOINCREMENT, queue 'message'|'tool', entry JSON, added_at_ms)`,
 *   `dead_letter_keys (queue, key, entry_id)` for `pushOnce` (kept when entries go), and
 *   `dead_letter_totals (queue PK, bytes)`, kept by triggers, for `bytes()`.
 * - `queue_messages (seq AUTOINCREMENT, id UNIQUE, body, enqueued_at_ms, deliveries,
 *   lease_until_ms, acked_at_ms, delayed)`: FIFO by `seq`, leases and release delays by the clock.
 * - `claims (key PK, holder, lease_until_ms)`: the `ClaimStore`.
 * - partial indexes of completed runs and of acknowledged messages by time, for the retention
 *   sweep of `retainCompletedRunsMs`.
 *
 * One transaction per step: the bundle's run journal (`journal`) writes a step's new messages,
 * its checkpoint and its call outcomes (and, for a run's last step, ends its claim) in one
 * IMMEDIATE transaction, and opens a run (its claim, checkpoint and conversation) in another; a
 * process killed at any point leaves the whole step or none of it.
 *
 * Group commit (`groupCommit`, on by default): the worker's writes — the journal's opens and
 * steps, `queue.reserve` and `ack` — asked for in the same turn of the
 * event loop share one IMMEDIATE transaction, and each call resolves only once it has committed:
 * a worker running many runs at once (`concurrency`) pays for one commit per turn instead of one
 * per write. Each write is still all or nothing (one that fails is taken out and the rest
 * committed without it), and a process killed at any point leaves every write of the group or
 * none. At a low load (one write per turn) each write commits at once in its own transaction, as
 * without grouping (one in 33 waits for the end of its turn, to see whether others join it).
 *
 * Guarantees: every read-modify-write (`breakers.update`, `ledger.putIfAbsent`, `queue.reserve`,
 * `conversations.put`, the journal's opens and steps, the DLQs' `pushOnce`, `claims.acquire`) runs in an
 * IMMEDIATE transaction, i.e. under the file's write lock, so it is atomic across connections and
 * processes; every other write is one statement. Values are JSON text: what comes back is a fresh
 * parse, never shared with the caller. Ids, keys and bodies are stored with `toStoredText`, so
 * every string (`\u0000` and lone surrogates included) comes back exactly and two different keys
 * never meet.
 * Leases and TTLs compare the clocks of the processes involved: keep them in sync (one machine).
 *
 * The driver is imported only under `src/stores/sqlite/`; the core never imports it.
 */
import type { MessageFailureEntry, ResumableEntry } from '../../ground/dead-letter-entries.ts';
import { resolve } from 'node:path';
import type { Database } from 'better-sqlite3';
import { systemClock, type Clock } from '../../ground/ports/clock.ts';
import type { Stores } from '../../ground/ports/stores.ts';
import { DEFAULT_CONVERSATION_TTL_MS } from '../default-conversation-ttl.ts';
import { openSqliteDatabase } from './open-sqlite-database.ts';
import { startSqliteBackgroundCheckpoint, type SqliteBackgroundCheckpoint } from './sqlite-background-checkpoint.ts';
import { createSqliteBreakerStateStore } from './sqlite-breaker-state-store.ts';
import { createSqliteClaimStore } from './sqlite-claim-store.ts';
import { createSqliteGroupCommit } from './sqlite-group-commit.ts';
import { createSqliteConversations, DEFAULT_SQLITE_CONVERSATION_SWEEP, type SqliteConversationSweep } from './sqlite-conversation-store.ts';
import { createSqliteRunJournal } from './sqlite-run-journal.ts';
import { createSqliteRetentionSweep } from './sqlite-retention.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import { createSqliteDeadLetterQueue } from './sqlite-dead-letter-queue.ts';
import { createSqliteIdempotencyLedger } from './sqlite-idempotency-ledger.ts';
import { createSqliteRunQueue, prepareSqliteAck } from './sqlite-run-queue.ts';
import { createSqliteRunStore } from './sqlite-run-store.ts';

/** Conversation writes (steps) of a bundle after which its background checkpoint starts. */
const BACKGROUND_CHECKPOINT_AFTER_WRITES = 64;

/** Options of {@link createSqliteStores}. */
export interface SqliteStoresOptions {
  /** The database file (created with its folder when missing) or `':memory:'` (one connection only). */
  path: string;
  /** Source of time for TTLs, leases, claims and timestamps. @defaultValue `systemClock` */
  clock?: Clock;
  /** Time to live of a conversation after its last `put`, in ms. @defaultValue 7 days */
  conversationTtlMs?: number;
  /** How long a statement waits for another process's lock before failing, in ms. @defaultValue 5000 */
  busyTimeoutMs?: number;
  /** The `synchronous` pragma; see the module comment. @defaultValue `'normal'` */
  synchronous?: 'normal' | 'full';
  /**
   * How expired conversations are deleted: after every `everyWrites` conversation writes, at most
   * `batchSize` of them in a transaction of its own (never inside a step's commit).
   * @defaultValue `{ everyWrites: 100, batchSize: 500 }`
   */
  conversationSweep?: SqliteConversationSweep;
  /**
   * How long a completed run is remembered, in ms: its checkpoint, its ledger rows and its
   * acknowledged message are deleted this long after it completed (on the conversation sweep's
   * cadence, at most `conversationSweep.batchSize` runs and as many messages per sweep), so the file
   * stays bounded under a steady load. Runs that ended any other way are kept (their dead-letter
   * entries resume from them). The price: a message enqueued again with the id of a run deleted
   * this way runs again — keep it longer than any duplicate of a message can arrive.
   * @defaultValue forever (nothing is deleted)
   */
  retainCompletedRunsMs?: number;
  /**
   * Whether WAL checkpoints (copying committed pages into the database file and syncing it, the
   * only fsyncs of `synchronous: 'normal'`) run on a worker thread with a connection of its own,
   * so that no commit waits for one. `false`: SQLite's automatic checkpoint, inside the commit that
   * brings the WAL to 1,000 pages. The thread starts once the bundle has written 64 conversation
   * steps (a process that writes little never pays for starting one); `close()` stops it. Ignored
   * for `':memory:'` and `file:` URIs.
   * @defaultValue `true`
   */
  backgroundCheckpoint?: boolean;
  /**
   * Whether the worker's writes (the journal's opens and steps, `queue.reserve` and `ack`) asked
   * for in one turn of the event loop share one transaction
   * (see the module comment). `false`: each commits in its own transaction inside the call.
   * @defaultValue `true`
   */
  groupCommit?: boolean;
}

/** The SQLite {@link Stores}, with the open connection for inspection and benchmarks. */
export interface SqliteStores extends Stores {
  /** The better-sqlite3 connection the stores use; closed by `close()`. */
  readonly database: Database;
  /** The path the stores were opened with. */
  readonly path: string;
}

/**
 * Opens (creating and migrating when needed) the SQLite file at `options.path` and returns the
 * whole {@link Stores} bundle on it. Call `close()` when done; it is idempotent. Several bundles,
 * in one process or many, may share a file.
 *
 * A failing statement later (e.g. a lock held past `busyTimeoutMs`, a full disk) rejects the call
 * with the driver's `SqliteError`.
 *
 * @throws ToolrunError `INVALID_OPTIONS` for a `retainCompletedRunsMs` that is not a finite number ≥ 0.
 * @throws ToolrunError `STORE_UNAVAILABLE` (driver error as `cause`) when the file cannot be
 * opened or created, is not a SQLite database, stays locked past the busy timeout while opening,
 * or was written by a newer schema version.
 */
export function createSqliteStores(options: SqliteStoresOptions): SqliteStores {
  const clock = options.clock ?? systemClock;
  // checked before the file is opened: a bad option creates no database
  const retainMs = options.retainCompletedRunsMs;
  if (retainMs !== undefined && !(typeof retainMs === 'number' && Number.isFinite(retainMs) && retainMs >= 0)) {
    throw new ToolrunError('INVALID_OPTIONS', `retainCompletedRunsMs must be a finite number of ms ≥ 0, received ${String(retainMs)}`);
  }
  const database = openSqliteDatabase({
    path: options.path,
    busyTimeoutMs: options.busyTimeoutMs ?? 5_000,
    synchronous: options.synchronous ?? 'normal',
    nowMs: clock.now(),
  });
  const path = options.path;
  // started lazily: a thread costs tens of ms to start, which a short-lived process (one CLI
  // command, a test) that writes little would pay for nothing
  let background: SqliteBackgroundCheckpoint | undefined;
  let conversationWrites = 0;
  // set by close(): a write committed by close() itself (a group waiting for its turn) then starts no thread
  let closing = false;
  const backgroundPossible = options.backgroundCheckpoint !== false && path !== ':memory:' && path !== '' && !path.startsWith('file:');
  // resolved now: the thread opens the same file even if the process changes its working directory
  const absolutePath = backgroundPossible ? resolve(path) : path;
  const afterWrite = backgroundPossible
    ? () => {
        if (++conversationWrites !== BACKGROUND_CHECKPOINT_AFTER_WRITES || closing || !database.open) return;
        background = startSqliteBackgroundCheckpoint(database, { path: absolutePath, busyTimeoutMs: options.busyTimeoutMs ?? 5_000 });
      }
    : undefined;
  const runs = createSqliteRunStore(database);
  const ledger = createSqliteIdempotencyLedger(database, { clock });
  const group = options.groupCommit === false ? undefined : createSqliteGroupCommit(database, { clock });
  const { store: claims, take: takeClaim } = createSqliteClaimStore(database, { clock });
  const conversations = createSqliteConversations(database, {
    clock,
    ttlMs: options.conversationTtlMs ?? DEFAULT_CONVERSATION_TTL_MS,
    ...(options.conversationSweep !== undefined ? { sweep: options.conversationSweep } : {}),
    ...(afterWrite !== undefined ? { afterWrite } : {}),
    ...(retainMs !== undefined
      ? {
          alsoSweep: createSqliteRetentionSweep(database, {
            retainCompletedRunsMs: retainMs,
            batchSize: Math.max(1, Math.trunc(options.conversationSweep?.batchSize ?? DEFAULT_SQLITE_CONVERSATION_SWEEP.batchSize)),
          }),
        }
      : {}),
  });
  return {
    database,
    path: options.path,
    conversations: conversations.store,
    journal: createSqliteRunJournal(database, { clock, conversations, ledger, claims, takeClaim, group, acknowledge: prepareSqliteAck(database) }),
    runs,
    ledger,
    breakers: createSqliteBreakerStateStore(database, { clock }),
    messageDlq: createSqliteDeadLetterQueue<MessageFailureEntry>(database, { clock, queue: 'message' }),
    toolDlq: createSqliteDeadLetterQueue<ResumableEntry>(database, { clock, queue: 'tool' }),
    queue: createSqliteRunQueue(database, { clock, ...(group !== undefined ? { group } : {}) }),
    claims,
    close: async () => {
      closing = true;
      // what was asked for before close() is committed, not dropped
      if (database.open) group?.flush();
      await background?.stop();
      if (database.open) database.close();
    },
  };
}
