import type { RunStore } from '../../ground/ports/stores.ts';
import type { RunCheckpoint } from '../../ground/ports/run-journal.ts';
import { toStoredText } from '../exact-text.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';
import { prepareStatement, type PostgresQueryable } from './postgres-client.ts';

/**
 * The `runs` row of a checkpoint: `[run_id, message_id, status, updated_at, checkpoint]`, as the run
 * store's upsert and the conversation store's step commit write it. Throws a `TypeError` for a
 * checkpoint `JSON.stringify` cannot serialise.
 */
export function toPostgresCheckpointRow(checkpoint: RunCheckpoint): [string, string, string, string, string] {
  const { runId, messageId, status, updatedAt } = checkpoint;
  return [toStoredText(runId), toStoredText(messageId), toStoredText(status), toStoredText(updatedAt), toJsonText(checkpoint)];
}

/**
 * A {@link RunStore} on `<schema>.runs`: the whole checkpoint as JSON text, plus `message_id`,
 * `status` and `updated_at` columns for inspection (`SELECT status, count(*) … GROUP BY status`).
 * `put` is one upsert. The columns hold `toStoredText` of the checkpoint's strings, so a message id
 * holding `\u0000` (which `text` cannot hold) is stored escaped instead of failing every put.
 */
export function createPostgresRunStore(pool: PostgresQueryable, options: { schema: string }): RunStore {
  const table = `${options.schema}.runs`;
  const upsert = prepareStatement(`
    INSERT INTO ${table} (run_id, message_id, status, updated_at, checkpoint) VALUES ($1, $2, $3, $4, $5)
    ON CONFLICT (run_id) DO UPDATE SET message_id = excluded.message_id, status = excluded.status,
      updated_at = excluded.updated_at, checkpoint = excluded.checkpoint`);
  const select = prepareStatement(`SELECT checkpoint FROM ${table} WHERE run_id = $1`);
  return {
    async get(runId) {
      const { rows } = await pool.query<{ checkpoint: string }>({ ...select, values: [toStoredText(runId)] });
      return rows[0] === undefined ? undefined : fromJsonText<RunCheckpoint>(rows[0].checkpoint);
    },
    async put(checkpoint) {
      await pool.query({ ...upsert, values: toPostgresCheckpointRow(checkpoint) });
    },
  };
}
