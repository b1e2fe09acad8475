import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createMemoryStores, createStoreJournal, ToolrunError, type RunQueue, type Stores } from '../index.ts';
import type { FailureLog } from '../observability/index.ts';
import { createSqliteFailureLog, createSqliteStores } from '../stores/sqlite/index.ts';
import { createPostgresFailureLog, createPostgresPool, createPostgresStores, type PostgresStores } from '../stores/postgres/index.ts';
import { usageError, type CliError } from './cli-error.ts';

/** The help of `--queue` on the commands that open the dead-letter queues from it (`dashboard`, `stats`). */
export const DEAD_LETTERS_QUEUE_URL_HELP =
  "run-queue URL when it is not the stores' own (sqlite:PATH, postgres://…, memory:), or redis://host:6379[?prefix=toolrun:] for dead-letter queues, breakers and claims in Redis (toolrun/redis)";

/** The default database file of the embedded backend, relative to the working directory. */
export const DEFAULT_DATABASE_PATH = '.toolrun/toolrun.db';

/** Stores opened from a URL, with what the CLI can say about them. */
export interface ResolvedStores {
  stores: Stores;
  /** A description for messages (`sqlite:/abs/path.db`), never holding credentials. */
  label: string;
  /** Runs per checkpoint status, when the backend can count them (the `RunStore` port cannot list). */
  countRunsByStatus?: () => Promise<Record<string, number>>;
  /**
   * Opens the failure log kept beside these stores (what `toolrun report` reads), when the
   * backend keeps one: the `failure_log` table in the same SQLite file or PostgreSQL schema
   * (part of each backend's baseline schema).
   */
  openFailureLog?: () => FailureLog;
  /**
   * Which of `ids` the run queue has ever held (waiting, leased or acked: an enqueue of such an id
   * is a no-op), when the backend can say; `undefined` for one that cannot (`memory:` starts empty).
   */
  findMessageIds?: (ids: readonly string[]) => Promise<Set<string>>;
}

/** A run queue opened from a `--queue` URL, and how to close it. */
export interface ResolvedQueue {
  queue: RunQueue;
  label: string;
  close(): Promise<void>;
  /** As {@link ResolvedStores.findMessageIds}, for this queue. */
  findMessageIds?: (ids: readonly string[]) => Promise<Set<string>>;
}

/** What the CLI knows when it opens a backend. */
export interface OpenBackendContext {
  /**
   * A missing database (SQLite file, PostgreSQL schema) is an error, not a new one: always for
   * read-only commands (`stats`, `dlq list`…), and for `worker` / `enqueue` unless `--init` or the
   * default `.toolrun/toolrun.db` (a mistyped `--db` would otherwise start an empty database).
   */
  mustExist: boolean;
  /** The same for a `--queue URL` of its own (never a default path). @defaultValue `mustExist` */
  queueMustExist?: boolean;
  /** What the NOT_FOUND message suggests. @defaultValue how to create one (enqueue or worker with --init) */
  missingHint?: string;
  /**
   * Whether a `--queue` URL of a backend without a run queue (`redis://`) may instead hold the
   * dead-letter queues, shared breakers and claims, over the bundle of `--store` (whose run queue
   * stays). For the commands that read and act on the DLQs (`dashboard`, `dlq`, `stats`); a
   * `worker` or `enqueue` needs a run queue there and refuses it. @defaultValue false
   */
  deadLettersFromQueue?: boolean;
  /** `--retain-completed-runs-ms` of `worker`: the SQLite bundle's `retainCompletedRunsMs`; refused for other backends. */
  retainCompletedRunsMs?: number;
}

/** The stores a `--queue` URL holds besides (or instead of) a run queue, laid over the bundle of `--store`. */
export interface ResolvedOverlay {
  stores: Pick<Stores, 'messageDlq' | 'toolDlq' | 'breakers' | 'claims'>;
  /** A description for messages, never holding credentials. */
  label: string;
  close(): Promise<void>;
}

/** The hint of a missing database for read-only commands. */
const READ_ONLY_MISSING_HINT = 'check --db / --store / $TOOLRUN_DB; `toolrun enqueue --init` or `toolrun worker --init` creates a new one';

/**
 * A storage backend the CLI can open. To add one (e.g. `postgres://` state, a `redis://` BullMQ
 * queue), append an entry to {@link STORE_BACKENDS}: the schemes it answers to, and `openStores`
 * and/or `openQueue`.
 */
export interface StoreBackend {
  /** URL schemes with their colon: `'sqlite:'`. */
  schemes: readonly string[];
  /** Opens the whole `Stores` bundle (`--store`, `--db`). */
  openStores?(target: string, context: OpenBackendContext): Promise<ResolvedStores>;
  /** Opens only a run queue (`--queue`), used instead of the bundle's own. */
  openQueue?(target: string, context: OpenBackendContext): Promise<ResolvedQueue>;
  /**
   * Opens the dead-letter queues, breakers and claims a `--queue` URL holds, used instead of the
   * bundle's own (see {@link OpenBackendContext.deadLettersFromQueue}).
   */
  openOverlay?(target: string, context: OpenBackendContext): Promise<ResolvedOverlay>;
}

/**
 * `redis://[user:password@]host:6379[/db][?prefix=NAME]` → the URL for ioredis (without `prefix`),
 * the key prefix (default `toolrun:`, as `toolrun/redis` uses) and a label without the credentials.
 */
function redisTarget(target: string): { url: string; prefix: string; label: string } {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw usageError(`not a Redis URL: ${target.replace(/\/\/[^@/]*@/, '//***@')} (expected redis://host:6379?prefix=toolrun:)`);
  }
  const prefix = url.searchParams.get('prefix') ?? 'toolrun:';
  if (prefix.length === 0) throw usageError('?prefix= must not be empty (the default is toolrun:)');
  url.searchParams.delete('prefix');
  const label = `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname} (prefix ${prefix})`;
  return { url: url.toString(), prefix, label };
}

/**
 * Opens the Redis dead-letter queues, breaker state and claims of `toolrun/redis` at `target`, on one
 * client. Redis keeps no schema: a server that answers is the store (an empty one lists no entry).
 */
async function openRedisOverlay(target: string): Promise<ResolvedOverlay> {
  const { url, prefix, label } = redisTarget(target);
  const redisStores = await import('../stores/redis/index.ts');
  const { connectRedis } = await import('../stores/redis/redis-client.ts');
  let client: Awaited<ReturnType<typeof connectRedis>>['redis'];
  try {
    client = (await connectRedis({ url }, `the Redis store at ${label}`)).redis;
  } catch (error) {
    if (ToolrunError.is(error)) throw new ToolrunError(error.code, error.message.replace(url, label), { cause: error });
    throw error;
  }
  const [deadLetters, breakers, claims] = await Promise.all([
    redisStores.createRedisDeadLetterQueues({ redis: client, prefix }),
    redisStores.createRedisBreakerStateStore({ redis: client, prefix }),
    redisStores.createRedisClaimStore({ redis: client, prefix }),
  ]);
  return {
    stores: { messageDlq: deadLetters.messageDlq, toolDlq: deadLetters.toolDlq, breakers, claims },
    label,
    close: async () => {
      await client.quit().catch(() => undefined);
    },
  };
}

/** `sqlite:PATH`, `sqlite://PATH` and `sqlite:///abs/PATH` → PATH (a bare path is taken as is). */
function sqlitePath(target: string): string {
  const rest = target.replace(/^sqlite:/i, '');
  const path = rest.startsWith('//') ? rest.slice(2) : rest;
  if (path.length === 0) throw usageError('sqlite: needs a file path, e.g. sqlite:.toolrun/toolrun.db');
  return path;
}

/** The SQLite file a `--store`/`--db` value names, or `undefined` when it names another backend. */
export function sqlitePathOf(url: string): string | undefined {
  const scheme = schemeOf(url);
  return scheme === undefined || scheme === 'sqlite:' ? sqlitePath(url) : undefined;
}

/** The NOT_FOUND error of a missing SQLite file. */
export function missingDatabaseError(path: string, hint: string = READ_ONLY_MISSING_HINT): CliError {
  return usageError(`no toolrun database at ${path} (${hint})`, 'NOT_FOUND');
}

/** The usage error of a `--db` naming a file that is not a SQLite database. */
function notADatabaseError(path: string): CliError {
  return usageError(`${path} is not a toolrun database (not a SQLite file): check --db / $TOOLRUN_DB`, 'BAD_INPUT');
}

/**
 * Refuses (exit code 2) a directory, or a file that is not a SQLite database: one whose first 16
 * bytes are not SQLite's header. A missing or empty file passes (SQLite makes it a new database);
 * an unreadable one is left to the opener's own error.
 */
export function checkSqliteFile(path: string): void {
  if (path === ':memory:' || path.startsWith('file:') || !existsSync(path)) return;
  if (statSync(path).isDirectory()) {
    throw usageError(`${path} is a directory, not a toolrun database: --db takes the SQLite file (e.g. ${join(path, 'toolrun.db')})`, 'BAD_INPUT');
  }
  let read = 0;
  const header = Buffer.alloc(16);
  try {
    const descriptor = openSync(path, 'r');
    try {
      read = readSync(descriptor, header, 0, 16, 0);
    } finally {
      closeSync(descriptor);
    }
  } catch {
    return;
  }
  // a SQLite database file is at least one page (512 bytes) and starts with this header
  if (read > 0 && (read < 16 || header.toString('latin1') !== 'SQLite format 3\u0000')) throw notADatabaseError(path);
}

function openSqlite(target: string, context: OpenBackendContext) {
  const path = sqlitePath(target);
  if (context.mustExist && path !== ':memory:' && !existsSync(path)) throw missingDatabaseError(path, context.missingHint);
  checkSqliteFile(path);
  let stores: ReturnType<typeof createSqliteStores>;
  try {
    stores = createSqliteStores({ path, ...(context.retainCompletedRunsMs !== undefined ? { retainCompletedRunsMs: context.retainCompletedRunsMs } : {}) });
  } catch (error) {
    // a file that is not a SQLite database (a mistyped --db naming some other file) is the user's mistake
    if (ToolrunError.is(error) && (error.cause as { code?: unknown } | undefined)?.code === 'SQLITE_NOTADB') {
      throw notADatabaseError(path);
    }
    throw error;
  }
  const selectIds = stores.database.prepare('SELECT id FROM queue_messages WHERE id IN (SELECT value FROM json_each(?))');
  const findMessageIds = async (ids: readonly string[]) => new Set((selectIds.all(JSON.stringify(ids)) as Array<{ id: string }>).map((row) => row.id));
  return { stores, label: `sqlite:${path === ':memory:' ? path : resolve(path)}`, findMessageIds };
}

/**
 * `postgres://user:password@host:5432/database?schema=NAME` → the connection string for `pg`
 * (without `schema`), the schema (default `toolrun`) and a label without the credentials.
 */
function postgresTarget(target: string): { connectionString: string; schema: string; label: string } {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw usageError(`not a PostgreSQL URL: ${target.replace(/\/\/[^@/]*@/, '//***@')} (expected postgres://user@host:5432/database?schema=toolrun)`);
  }
  const schema = url.searchParams.get('schema') ?? 'toolrun';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw usageError(`?schema= must be a lower-case SQL identifier, received ${JSON.stringify(schema)}`);
  url.searchParams.delete('schema');
  const label = `${url.protocol}//${url.host}${url.pathname} (schema ${schema})`;
  return { connectionString: url.toString(), schema, label };
}

/**
 * Opens the PostgreSQL stores at `target` (migrating the schema when needed). For read-only
 * commands a schema that toolrun never created is an error, not a new schema.
 */
async function openPostgres(target: string, context: OpenBackendContext): Promise<{ stores: PostgresStores; label: string }> {
  const { connectionString, schema, label } = postgresTarget(target);
  const pool = await createPostgresPool(connectionString, { maxConnections: 4 });
  try {
    if (context.mustExist) {
      const { rows } = await pool.query<{ found: string | null }>('SELECT to_regclass($1)::text AS found', [`"${schema}".schema_version`]);
      if (rows[0]?.found === null || rows[0]?.found === undefined) {
        throw usageError(`no toolrun schema "${schema}" at ${label} (${context.missingHint ?? `${READ_ONLY_MISSING_HINT}; or add ?schema=NAME`})`, 'NOT_FOUND');
      }
    }
    const stores = await createPostgresStores({ pool, schema });
    return {
      stores: {
        ...stores,
        close: async () => {
          await stores.close();
          await pool.end();
        },
      },
      label,
    };
  } catch (error) {
    await pool.end().catch(() => undefined);
    if (ToolrunError.is(error)) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new ToolrunError('STORE_UNAVAILABLE', `cannot open the PostgreSQL store at ${label}: ${reason}`, { cause: error });
  }
}

function postgresMessageIds(stores: PostgresStores): (ids: readonly string[]) => Promise<Set<string>> {
  return async (ids) => {
    const { rows } = await stores.pool.query<{ id: string }>(`SELECT id FROM "${stores.schema}".queue_messages WHERE id = ANY($1::text[])`, [[...ids]]);
    return new Set(rows.map((row) => row.id));
  };
}

/** The backends this CLI can open, looked up by scheme. */
export const STORE_BACKENDS: StoreBackend[] = [
  {
    schemes: ['sqlite:'],
    async openStores(target, context) {
      const { stores, label, findMessageIds } = openSqlite(target, context);
      const countStatement = stores.database.prepare('SELECT status, COUNT(*) AS count FROM runs GROUP BY status ORDER BY status');
      return {
        stores,
        label,
        countRunsByStatus: async () =>
          Object.fromEntries((countStatement.all() as Array<{ status: string; count: number }>).map((row) => [row.status, row.count])),
        openFailureLog: () => createSqliteFailureLog(stores.database),
        findMessageIds,
      };
    },
    async openQueue(target, context) {
      const { stores, label, findMessageIds } = openSqlite(target, context);
      return { queue: stores.queue, label, close: () => stores.close(), findMessageIds };
    },
  },
  {
    schemes: ['memory:'],
    async openStores() {
      return { stores: createMemoryStores(), label: 'memory: (nothing is kept after this command)' };
    },
    async openQueue() {
      const stores = createMemoryStores();
      return { queue: stores.queue, label: 'memory:', close: () => stores.close() };
    },
  },
  {
    // toolrun/postgres: every store and the run queue (FOR UPDATE SKIP LOCKED) in one schema;
    // workers on many machines share it. `?schema=NAME` picks the schema (default `toolrun`).
    schemes: ['postgres:', 'postgresql:'],
    async openStores(target, context) {
      const { stores, label } = await openPostgres(target, context);
      const runs = `"${stores.schema}".runs`;
      return {
        stores,
        label,
        findMessageIds: postgresMessageIds(stores),
        openFailureLog: () => createPostgresFailureLog(stores.pool, { schema: stores.schema }),
        countRunsByStatus: async () => {
          const { rows } = await stores.pool.query<{ status: string; count: string }>(
            `SELECT status, COUNT(*)::text AS count FROM ${runs} GROUP BY status ORDER BY status`,
          );
          return Object.fromEntries(rows.map((row) => [row.status, Number(row.count)]));
        },
      };
    },
    async openQueue(target, context) {
      const { stores, label } = await openPostgres(target, context);
      return { queue: stores.queue, label, close: () => stores.close(), findMessageIds: postgresMessageIds(stores) };
    },
  },
  {
    // toolrun/redis: the two dead-letter queues, the shared breakers and the claims in Redis, over
    // a bundle whose run queue stays where --store says (a BullMQ queue has its own worker).
    schemes: ['redis:', 'rediss:'],
    async openOverlay(target) {
      return openRedisOverlay(target);
    },
  },
];

/** What to tell a user whose URL names a backend this CLI does not have. */
const MISSING_BACKEND_HINTS: Readonly<Record<string, string>> = {
  'redis:':
    'a BullMQ (Redis) queue is consumed by createBullMqWorker from toolrun/bullmq, not through --queue (BullMQ has its own worker); use --queue postgres://… for a run queue several machines share (docs/distributed-notes.md); dashboard, dlq and stats read Redis dead-letter queues with --queue redis://…',
  'rediss:':
    'a BullMQ (Redis) queue is consumed by createBullMqWorker from toolrun/bullmq, not through --queue (BullMQ has its own worker); use --queue postgres://… for a run queue several machines share (docs/distributed-notes.md); dashboard, dlq and stats read Redis dead-letter queues with --queue redis://…',
};

/** The scheme of a URL (`'sqlite:'`), or `undefined` for a bare file path. One letter is a drive, not a scheme. */
function schemeOf(url: string): string | undefined {
  const match = /^([A-Za-z][A-Za-z0-9+.-]+):/.exec(url);
  return match ? `${match[1]!.toLowerCase()}:` : undefined;
}

function findBackend(url: string, capability: 'openStores' | 'openQueue', flag: string): StoreBackend {
  const scheme = schemeOf(url) ?? 'sqlite:';
  const backend = STORE_BACKENDS.find((candidate) => candidate.schemes.includes(scheme) && candidate[capability] !== undefined);
  if (backend) return backend;
  const supported = STORE_BACKENDS.filter((candidate) => candidate[capability] !== undefined).flatMap((candidate) => candidate.schemes);
  const hint = MISSING_BACKEND_HINTS[scheme] ?? 'install a toolrun backend that provides it';
  throw usageError(
    `unsupported backend "${scheme}" for ${flag}: install/enable it first — ${hint}; this CLI opens ${supported.map((value) => (value === 'sqlite:' ? 'sqlite:PATH' : value)).join(' and ')}`,
    'UNSUPPORTED_BACKEND',
  );
}

/** Where the stores come from, as the user said it. */
export interface StoreLocation {
  /** `--store URL`. */
  store?: string | undefined;
  /** `--queue URL`: the run queue, when it is not the bundle's own. */
  queue?: string | undefined;
  /** `--db FILE` (same as `--store sqlite:FILE`). */
  db?: string | undefined;
  /** The environment (`TOOLRUN_DB`). */
  env: NodeJS.ProcessEnv;
}

/** Whether `location` names no database at all, so the default `.toolrun/toolrun.db` is used. */
export function usesDefaultDatabase(location: StoreLocation): boolean {
  return location.store === undefined && location.db === undefined && (location.env.TOOLRUN_DB === undefined || location.env.TOOLRUN_DB === '');
}

/**
 * The open context of a command that writes (`worker`, `enqueue`): the database is created only
 * at the default path or with `--init`; a `--db`, `--store` or `$TOOLRUN_DB` that names nothing is
 * an error (a typo would otherwise start an empty database, and a worker on it wait forever).
 */
export function writerContext(location: StoreLocation, init: boolean | undefined): OpenBackendContext {
  return {
    mustExist: init !== true && !usesDefaultDatabase(location),
    queueMustExist: init !== true,
    missingHint: 'check the path; pass --init to create a new database there',
  };
}

/**
 * Opens the stores a command works on. The store URL is `--store`, else `sqlite:` + (`--db`, else
 * `TOOLRUN_DB`, else {@link DEFAULT_DATABASE_PATH}). With `--queue URL`, the run queue comes from
 * that backend instead of the bundle, and `close()` closes both; with `--queue redis://…` and
 * {@link OpenBackendContext.deadLettersFromQueue}, the two DLQs, the breakers and the claims come
 * from Redis (`?prefix=NAME`, default `toolrun:`) and the run queue stays the bundle's.
 *
 * @throws ToolrunError `USAGE` when `--store` and `--db` are both given; `UNSUPPORTED_BACKEND`
 * for a scheme no backend answers to, or `retainCompletedRunsMs` for a store that is not SQLite; `NOT_FOUND` when `mustExist` and the SQLite file is missing;
 * `STORE_UNAVAILABLE` from the backend when it cannot be opened.
 */
export async function resolveStores(location: StoreLocation, context: OpenBackendContext): Promise<ResolvedStores> {
  if (location.store !== undefined && location.db !== undefined) throw usageError('pass either --store URL or --db FILE, not both');
  const envPath = location.env.TOOLRUN_DB !== undefined && location.env.TOOLRUN_DB !== '' ? location.env.TOOLRUN_DB : undefined;
  const storeUrl = location.store ?? `sqlite:${location.db ?? envPath ?? DEFAULT_DATABASE_PATH}`;
  const separateQueue = location.queue !== undefined && location.queue !== storeUrl;
  const overlayBackend =
    separateQueue && context.deadLettersFromQueue === true
      ? STORE_BACKENDS.find(
          (candidate) =>
            candidate.schemes.includes(schemeOf(location.queue!) ?? 'sqlite:') && candidate.openOverlay !== undefined && candidate.openQueue === undefined,
        )
      : undefined;
  const queueBackend = separateQueue && overlayBackend === undefined ? findBackend(location.queue!, 'openQueue', '--queue') : undefined;
  const storeBackend = findBackend(storeUrl, 'openStores', location.store !== undefined ? '--store' : '--db');
  if (context.retainCompletedRunsMs !== undefined && !storeBackend.schemes.includes('sqlite:')) {
    throw usageError(
      `--retain-completed-runs-ms is supported on a SQLite store (--db FILE) only, not ${schemeOf(storeUrl) ?? storeUrl}`,
      'UNSUPPORTED_BACKEND',
    );
  }
  const resolved = await storeBackend.openStores!(storeUrl, context);
  if (overlayBackend) {
    let overlay: ResolvedOverlay;
    try {
      overlay = await overlayBackend.openOverlay!(location.queue!, context);
    } catch (error) {
      await resolved.stores.close();
      throw error;
    }
    const parts = {
      ...resolved.stores,
      ...overlay.stores,
      close: async () => {
        await Promise.allSettled([resolved.stores.close(), overlay.close()]);
      },
    };
    // runs are claimed in the overlay: the journal writes the stores one by one, with its claims
    const stores: Stores = { ...parts, journal: createStoreJournal(parts) };
    return { ...resolved, stores, label: `${resolved.label} (dead letters, breakers and claims on ${overlay.label})` };
  }
  if (!queueBackend) return resolved;
  let queue: ResolvedQueue;
  try {
    queue = await queueBackend.openQueue!(location.queue!, { ...context, mustExist: context.queueMustExist ?? context.mustExist });
  } catch (error) {
    await resolved.stores.close();
    throw error;
  }
  const stores: Stores = {
    ...resolved.stores,
    queue: queue.queue,
    close: async () => {
      await Promise.allSettled([resolved.stores.close(), queue.close()]);
    },
  };
  const { findMessageIds: _storesOwn, ...rest } = resolved;
  return { ...rest, stores, label: `${resolved.label} (queue ${queue.label})`, ...(queue.findMessageIds ? { findMessageIds: queue.findMessageIds } : {}) };
}
