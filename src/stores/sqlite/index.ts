/**
 * `toolrun/sqlite`: the embedded default backend, every store and the run queue on one SQLite
 * file (better-sqlite3, WAL). Schema and guarantees: see `sqlite-stores.ts`.
 */
export { createSqliteStores, type SqliteStores, type SqliteStoresOptions } from './sqlite-stores.ts';
export { SQLITE_SCHEMA_VERSION } from './sqlite-migrations.ts';
export { DEFAULT_CONVERSATION_TTL_MS } from '../default-conversation-ttl.ts';
export { createSqliteFailureLog, openSqliteFailureLog, SQLITE_FAILURE_LOG_SCHEMA } from './sqlite-failure-log.ts';
