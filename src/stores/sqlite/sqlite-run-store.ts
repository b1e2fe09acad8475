import type { Database } from 'better-sqlite3';
import type { RunCheckpoint, RunStore } from '../../ground/ports/stores.ts';
import { toStoredText } from '../exact-text.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';

/**
 * A {@link RunStore} on the `runs` table: the whole checkpoint as JSON, plus `message_id`,
 * `status` and `updated_at` columns for inspection (`toolrun stats`). `put` is one upsert.
 */
export function createSqliteRunStore(database: Database): RunStore {
  const upsert = database.prepare(
    `INSERT INTO runs (run_id, message_id, status, updated_at, checkpoint) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (run_id) DO UPDATE SET message_id = excluded.message_id, status = excluded.status,
       updated_at = excluded.updated_at, checkpoint = excluded.checkpoint`,
  );
  const select = database.prepare('SELECT checkpoint FROM runs WHERE run_id = ?');
  return {
    async get(runId) {
      const row = select.get(toStoredText(runId)) as { checkpoint: string } | undefined;
      return row === undefined ? undefined : fromJsonText<RunCheckpoint>(row.checkpoint);
    },
    async put(checkpoint) {
      upsert.run(
        toStoredText(checkpoint.runId),
        toStoredText(checkpoint.messageId),
        toStoredText(checkpoint.status),
        toStoredText(checkpoint.updatedAt),
        toJsonText(checkpoint),
      );
    },
  };
}
