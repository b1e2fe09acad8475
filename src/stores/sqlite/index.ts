/**
 * `toolrun/sqlite`: the embedded default backend — every store and the run queue on one SQLite
 * file (better-sqlite3, WAL), shared by the processes of one machine, and the failure log that
 * `toolrun report` reads on the same file.
 *
 * @packageDocumentation
 */
export { createSqliteStores, type SqliteStores, type SqliteStoresOptions } from './sqlite-stores.ts';
export { createSqliteFailureLog, openSqliteFailureLog } from './sqlite-failure-log.ts';
export { SchemaVersionError } from '../schema-migrations.ts';
