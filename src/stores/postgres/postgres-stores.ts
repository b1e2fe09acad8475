/**
 * The PostgreSQL backend: every port of `core/ports/stores.ts` in one schema of one database,
 * shared by any number of worker processes on any number of machines.
 *
 * Schema: the baseline in `postgres-migrations.ts` (each table and function commented there),
 * brought up to date on start under an advisory lock; `schema_version (version, applied_at)`
 * records the versions applied. A step of a run (its new messages, checkpoint and call outcomes)
 * is one statement of the bundle's run journal (`journal`: the `commit_step` function; a run's last
 * step also releases its claim); a state the shared breakers read is reused for
 * `breakerMaxStalenessMs`.
 * JSON values are `text` columns holding `JSON.stringify` output, so they round-trip exactly
 * (`\u0000` and lone surrogates included: JSON escapes them; cast with `::jsonb` to query them,
 * which fails on a `\u0000`). Ids, keys and bodies are `text` holding `toStoredText` of the
 * string: the string itself, unless it holds `\u0000` (which `text` refuses) or a lone surrogate
 * (which the driver would turn into U+FFFD), then an escaped form that comes back exactly.
 *
 * Guarantees: every read-modify-write is one statement or one transaction, atomic across
 * connections, processes and machines. Values come back as a fresh parse, never shared with the
 * caller. TTLs and leases compare times of the injected clocks of the processes involved: keep the
 * machines' clocks in sync (NTP).
 *
 * Failures: once started, a statement that fails (server restarting, connection lost) rejects the
 * call with the driver's error; the pool opens new connections on the next call. The worker then
 * leaves the message to be delivered again (it is never acknowledged on a store error).
 *
 * The driver (`pg`, an optional peer dependency) is imported only under `src/stores/postgres/`,
 * and only when a connection string is given.
 */
import type { MessageFailureEntry, ResumableEntry } from '../../ground/dead-letter-entries.ts';
import { systemClock, type Clock } from '../../ground/ports/clock.ts';
import type { Stores } from '../../ground/ports/stores.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import { DEFAULT_CONVERSATION_TTL_MS } from '../default-conversation-ttl.ts';
import { createPostgresBreakerStateStore } from './postgres-breaker-state-store.ts';
import { createPostgresClaimStore } from './postgres-claim-store.ts';
import { createPostgresPool, quoteSchema, type PostgresPoolLike } from './postgres-client.ts';
import { createPostgresConversations } from './postgres-conversation-store.ts';
import { createPostgresDeadLetterQueue } from './postgres-dead-letter-queue.ts';
import { createPostgresIdempotencyLedger } from './postgres-idempotency-ledger.ts';
import { migratePostgresSchema } from './postgres-migrations.ts';
import { createPostgresRunQueue, type PostgresRunQueue } from './postgres-run-queue.ts';
import { createPostgresRunJournal } from './postgres-run-journal.ts';
import { createPostgresRunStore } from './postgres-run-store.ts';

/** Where the stores connect: a connection string (toolrun creates and owns the pool) or your pool. */
export type PostgresConnection =
  | {
      /** `postgres://user:password@host:5432/database`; `pg` is imported and a pool created. */
      connectionString: string;
      /** Connections of the pool toolrun creates. @defaultValue 10 (`pg`'s default) */
      maxConnections?: number;
      /** Errors of idle connections (a server restart); they are otherwise ignored. */
      onIdleError?: (error: Error) => void;
      pool?: never;
    }
  | {
      /**
       * A `pg.Pool` (or anything with its `query`/`connect`/`end`); `close()` leaves it open. Give it
       * an `'error'` listener: `pg` emits idle-connection errors on a server restart.
       */
      pool: PostgresPoolLike;
      connectionString?: never;
    };

/** Options of {@link createPostgresStores}. */
export type PostgresStoresOptions = PostgresConnection & {
  /**
   * The schema holding toolrun's tables (created when missing): one per deployment, or one per
   * test for isolation. A lower-case SQL identifier. @defaultValue `'toolrun'`
   */
  schema?: string;
  /** Source of time for TTLs, leases, claims and timestamps. @defaultValue `systemClock` */
  clock?: Clock;
  /** Time to live of a conversation after its last write (`put` or a step), in ms. @defaultValue 7 days */
  conversationTtlMs?: number;
  /**
   * How long a shared breaker's state, once read (or written by this process), may answer
   * `breakers.get` for its key again without a read of its own, in ms. A process's own breaker
   * writes are seen at once; another process's (or a change by hand), within this many ms. `0`
   * reads the state at every check.
   * @defaultValue 50
   */
  breakerMaxStalenessMs?: number;
};

/** The default {@link PostgresStoresOptions.breakerMaxStalenessMs}, in ms. */
const DEFAULT_BREAKER_MAX_STALENESS_MS = 50;

/** The PostgreSQL {@link Stores}, with the pool for inspection and the richer run queue type. */
export interface PostgresStores extends Stores {
  /** The pool the stores query; ended by `close()` when toolrun created it. */
  readonly pool: PostgresPoolLike;
  /** The schema name. */
  readonly schema: string;
  readonly queue: PostgresRunQueue;
}

/**
 * Connects to PostgreSQL, migrates `options.schema` to the current version (safe when several
 * processes start at once) and returns the whole {@link Stores} bundle on it. Call `close()` when
 * done; it is idempotent.
 *
 * @throws ToolrunError `INVALID_OPTIONS` when neither or both of `connectionString` and `pool` are
 * given, the schema name is not a lower-case identifier, or `breakerMaxStalenessMs` is not a
 * finite number ≥ 0; `STORE_UNAVAILABLE` (driver error as
 * `cause`) when `pg` is missing, the server cannot be reached or refuses the migration, or the
 * schema was written by a newer toolrun.
 */
export async function createPostgresStores(options: PostgresStoresOptions): Promise<PostgresStores> {
  const clock = options.clock ?? systemClock;
  const schemaName = options.schema ?? 'toolrun';
  const schema = quoteSchema(schemaName);
  if ((options.connectionString === undefined) === (options.pool === undefined)) {
    throw new ToolrunError('INVALID_OPTIONS', 'createPostgresStores needs exactly one of `connectionString` and `pool`');
  }
  const breakerMaxStalenessMs = options.breakerMaxStalenessMs ?? DEFAULT_BREAKER_MAX_STALENESS_MS;
  if (typeof breakerMaxStalenessMs !== 'number' || !Number.isFinite(breakerMaxStalenessMs) || breakerMaxStalenessMs < 0) {
    throw new ToolrunError('INVALID_OPTIONS', `breakerMaxStalenessMs must be a finite number of ms ≥ 0, got ${String(breakerMaxStalenessMs)}`);
  }
  const ownsPool = options.pool === undefined;
  const pool =
    options.pool ??
    (await createPostgresPool(options.connectionString!, {
      ...(options.maxConnections !== undefined ? { maxConnections: options.maxConnections } : {}),
      ...(options.onIdleError !== undefined ? { onIdleError: options.onIdleError } : {}),
    }));
  try {
    await migratePostgresSchema(pool, schemaName, clock.now());
  } catch (error) {
    if (ownsPool) await pool.end().catch(() => undefined);
    if (ToolrunError.is(error)) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new ToolrunError('STORE_UNAVAILABLE', `cannot open the PostgreSQL store (schema ${schemaName}): ${reason}`, { cause: error });
  }
  let closed = false;
  const runs = createPostgresRunStore(pool, { schema });
  const ledger = createPostgresIdempotencyLedger(pool, { schema, clock });
  const claims = createPostgresClaimStore(pool, { schema, clock });
  // background sweeps of expired conversations, awaited by close() before it ends the pool
  const background = new Set<Promise<void>>();
  const conversations = createPostgresConversations(pool, {
    schema,
    clock,
    ttlMs: options.conversationTtlMs ?? DEFAULT_CONVERSATION_TTL_MS,
    onBackground: (work) => {
      background.add(work);
      void work.then(() => background.delete(work));
    },
  });
  return {
    pool,
    schema: schemaName,
    conversations: conversations.store,
    runs,
    ledger,
    journal: createPostgresRunJournal(pool, { schema, clock, conversations, runs, ledger, claims }),
    breakers: createPostgresBreakerStateStore(pool, { schema, clock, maxStalenessMs: breakerMaxStalenessMs }),
    messageDlq: createPostgresDeadLetterQueue<MessageFailureEntry>(pool, { schema, clock, queue: 'message' }),
    toolDlq: createPostgresDeadLetterQueue<ResumableEntry>(pool, { schema, clock, queue: 'tool' }),
    queue: createPostgresRunQueue(pool, { schema, clock }),
    claims,
    close: async () => {
      if (closed) return;
      closed = true;
      await Promise.all(background);
      if (ownsPool) await pool.end();
    },
  };
}
