/**
 * `toolrun/postgres`: every store and the run queue in one PostgreSQL schema (`pg`, an optional
 * peer dependency), shared by workers on many machines. Schema and guarantees: see
 * `postgres-stores.ts`; deployment: docs/distributed-notes.md.
 */
export { createPostgresStores, type PostgresConnection, type PostgresStores, type PostgresStoresOptions } from './postgres-stores.ts';
export { createPostgresPool, type PostgresPoolLike, type PostgresPoolClientLike, type PostgresQueryable, type PostgresQueryResult } from './postgres-client.ts';
export { POSTGRES_SCHEMA_VERSION } from './postgres-migrations.ts';
export type { PendingRunMessage, PostgresRunQueue } from './postgres-run-queue.ts';
export { DEFAULT_CONVERSATION_TTL_MS } from '../default-conversation-ttl.ts';
