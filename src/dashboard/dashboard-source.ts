import type { Clock } from '../ground/ports/clock.ts';
import type { FailureLog } from '../ground/ports/failure-log.ts';
import type { Stores } from '../ground/ports/stores.ts';
import type { Redactor } from '../core/redact.ts';
import type { ReplayOptions } from '../worker/replay-tool-failure.ts';
import { toStoredText } from '../stores/exact-text.ts';
import { fromJsonText } from '../stores/json-text.ts';

/**
 * When each conversation expires, in ms since the epoch, for the conversation references asked for
 * (a reference missing from the map: the conversation is gone or never existed). Read straight from
 * the backend's `conversations` table when it has one; see {@link backendConversationExpiry}.
 */
export type ConversationExpiryLookup = (conversationRefs: readonly string[]) => Promise<Map<string, number>>;

/** The configured bounds of each dead-letter queue (what the worker stops at). */
export interface DashboardBounds {
  /** `maxDeadLetterEntries` of the config. @defaultValue 10_000 (the worker's default) */
  maxEntries: number;
  /** `maxDeadLetterBytes` of the config, in bytes of stored JSON. @defaultValue 268_435_456 */
  maxBytes: number;
  /** `config` when the numbers come from the loaded config, `default` otherwise. */
  source: 'config' | 'default';
}

/**
 * Everything the dashboard reads and acts on. The CLI builds it from its flags (`--db`, `--store`,
 * `--queue`, `--config`); a program can build one around any `Stores` bundle.
 */
export interface DashboardSource {
  /** The stores (any backend: SQLite, PostgreSQL, memory, a bundle with Redis DLQs or breakers). */
  stores: Stores;
  /** A description of the stores for the page, without credentials (`sqlite:/abs/path.db`). */
  label: string;
  /**
   * The redactor every string goes through before it leaves the server (the config's `redact`):
   * every JSON body and every event is passed through `redactor.value` whole.
   */
  redactor: Redactor;
  /** The failure log beside the stores, when the backend keeps one (SQLite). None: the failure charts say so. */
  failureLog?: FailureLog | undefined;
  /** Runs per checkpoint status (what `toolrun stats` prints), when the backend can count them. */
  countRunsByStatus?: (() => Promise<Record<string, number>>) | undefined;
  /** Exact conversation expiry times; without it the expiry is estimated from the checkpoint's `updatedAt` + `conversationTtlMs`. */
  conversationExpiry?: ConversationExpiryLookup | undefined;
  /** The stores' conversation TTL in ms, for the estimate. @defaultValue 7 days (every backend's default) */
  conversationTtlMs?: number | undefined;
  /**
   * How replays run (the config's model, tools and policies, observed like the CLI's). Absent: the
   * dashboard cannot replay or drain (purge still works unless read-only).
   */
  replay?: ReplayOptions | undefined;
  /** Called after each replay job (e.g. to flush the failure-log appends). */
  afterReplays?: (() => Promise<void>) | undefined;
  /** The configured DLQ bounds. @defaultValue the worker's defaults */
  bounds?: DashboardBounds | undefined;
  /** The run's step bound (`maxSteps`), shown as "step k of N". @defaultValue 20 (the agent loop's default) */
  maxSteps?: number | undefined;
  /** Tool names whose shared breakers to show besides those seen in the DLQ and the failure log (the config's tools). */
  toolNames?: readonly string[] | undefined;
  /** The model's name: its breaker is `model:<name>`. */
  modelName?: string | undefined;
  /** @defaultValue the system clock */
  clock?: Clock | undefined;
}

/** The worker's default DLQ bounds. */
export const DEFAULT_DASHBOARD_BOUNDS: DashboardBounds = Object.freeze({ maxEntries: 10_000, maxBytes: 268_435_456, source: 'default' as const });

interface SqliteLike {
  database: { prepare(sql: string): { all(...params: unknown[]): unknown[] } };
}

interface PostgresLike {
  pool: { query<R>(sql: string, params: unknown[]): Promise<{ rows: R[] }> };
  schema: string;
}

function isSqliteStores(stores: unknown): stores is SqliteLike {
  const database = (stores as Partial<SqliteLike>).database;
  return typeof database === 'object' && database !== null && typeof database.prepare === 'function';
}

function isPostgresStores(stores: unknown): stores is PostgresLike {
  const candidate = stores as Partial<PostgresLike>;
  return typeof candidate.schema === 'string' && typeof candidate.pool?.query === 'function';
}

/**
 * The exact conversation expiry of the built-in SQLite and PostgreSQL bundles: one indexed query on
 * their `conversations` table (primary key `ref`) per page of rows. `undefined` for other backends
 * (memory, Redis, custom), whose `ConversationStore` port has no expiry read: the dashboard then
 * estimates it.
 */
export function backendConversationExpiry(stores: Stores): ConversationExpiryLookup | undefined {
  return backendColumnLookup(stores, { table: 'conversations', key: 'ref', column: 'expires_at_ms', parse: Number });
}

/** The recorded ledger values of the keys asked for (a key missing from the map has none). */
export type LedgerLookup = (keys: readonly string[]) => Promise<Map<string, unknown>>;

/**
 * The ledger reads of a list page in one indexed query (the `ledger` table's primary key `key`)
 * per 500 keys, for the built-in SQLite and PostgreSQL bundles, instead of one `ledger.get` per
 * key; `undefined` for other backends (the page then reads key by key through the port).
 */
export function backendLedgerLookup(stores: Stores): LedgerLookup | undefined {
  return backendColumnLookup(stores, { table: 'ledger', key: 'key', column: 'value', parse: (value) => fromJsonText(String(value)) });
}

/** Which column of which table a {@link backendColumnLookup} reads, by the table's primary key. */
interface ColumnRead<T> {
  table: 'conversations' | 'ledger';
  key: 'ref' | 'key';
  /** The column read (PostgreSQL returns it as text). */
  column: 'expires_at_ms' | 'value';
  parse: (stored: string | number) => T;
}

/**
 * Reads `read.column` of the keys asked for from the built-in SQLite or PostgreSQL bundle, in one
 * indexed query per 500 keys (a key missing from the map has no row); `undefined` for other backends.
 */
function backendColumnLookup<T>(stores: Stores, read: ColumnRead<T>): ((keys: readonly string[]) => Promise<Map<string, T>>) | undefined {
  const { table, key, column, parse } = read;
  type Row = Record<string, string | number>;
  let readRows: (stored: string[]) => Promise<Row[]>;
  if (isSqliteStores(stores)) {
    const { database } = stores;
    readRows = async (stored) =>
      database.prepare(`SELECT ${key}, ${column} FROM ${table} WHERE ${key} IN (${stored.map(() => '?').join(',')})`).all(...stored) as Row[];
  } else if (isPostgresStores(stores)) {
    const { pool, schema } = stores;
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) return undefined;
    readRows = async (stored) =>
      (await pool.query<Row>(`SELECT ${key}, ${column}::text AS ${column} FROM "${schema}".${table} WHERE ${key} = ANY($1::text[])`, [stored])).rows;
  } else return undefined;
  return async (keys) => {
    const result = new Map<string, T>();
    for (let start = 0; start < keys.length; start += 500) {
      const chunk = keys.slice(start, start + 500);
      const stored = chunk.map(toStoredText);
      const byStored = new Map((await readRows(stored)).map((row) => [row[key], row[column]]));
      chunk.forEach((asked, index) => {
        const value = byStored.get(stored[index]!);
        if (value !== undefined) result.set(asked, parse(value));
      });
    }
    return result;
  };
}
