import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import { migrateSqliteSchema } from './sqlite-migrations.ts';

/** How the database is opened. */
export interface OpenSqliteDatabaseOptions {
  /** A file path (its folder is created when missing) or `':memory:'`. */
  path: string;
  /** How long a statement waits for another connection's lock before failing, in ms. */
  busyTimeoutMs: number;
  /** The `synchronous` pragma. */
  synchronous: 'normal' | 'full';
  /** Epoch ms, recorded with applied migrations. */
  nowMs: number;
}

/**
 * Opens (creating when needed) the SQLite file, sets `busy_timeout`, WAL journal mode and the
 * `synchronous` level, and runs the migrations.
 *
 * @throws ToolrunError `STORE_UNAVAILABLE`, with the driver's error as `cause`, when the file cannot
 * be opened, is not a database, is locked past the busy timeout, or has a newer schema.
 */
export function openSqliteDatabase(options: OpenSqliteDatabaseOptions): Database {
  const { path } = options;
  let database: Database | undefined;
  try {
    if (path !== ':memory:' && !path.startsWith('file:')) mkdirSync(dirname(resolve(path)), { recursive: true });
    database = new BetterSqlite3(path, { timeout: options.busyTimeoutMs });
    database.pragma(`busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs))}`);
    database.pragma('journal_mode = WAL');
    database.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    migrateSqliteSchema(database, options.nowMs);
    return database;
  } catch (error) {
    if (database?.open) database.close();
    if (ToolrunError.is(error)) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new ToolrunError('STORE_UNAVAILABLE', `cannot open the SQLite store at ${path}: ${reason}`, { cause: error });
  }
}
