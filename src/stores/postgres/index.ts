/**
 * `toolrun/postgres`: every store and the run queue in one PostgreSQL schema (`pg`, an optional
 * peer dependency), shared by workers on many machines.
 *
 * @packageDocumentation
 */
export { createPostgresStores, type PostgresConnection, type PostgresStores, type PostgresStoresOptions } from './postgres-stores.ts';
export {
  createPostgresPool,
  type PostgresPoolClientLike,
  type PostgresPoolLike,
  type PostgresQueryable,
  type PostgresQueryConfig,
  type PostgresQueryResult,
} from './postgres-client.ts';
export type { PendingRunMessage, PostgresRunQueue } from './postgres-run-queue.ts';
export { createPostgresFailureLog, type PostgresFailureLogOptions } from './postgres-failure-log.ts';
export { SchemaVersionError } from '../schema-migrations.ts';
