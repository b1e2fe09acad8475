import type { Database } from 'better-sqlite3';
import type { RunCheckpoint, RunStore } from '../../ground/ports/stores.ts';
import { toStoredText } from '../exact-text.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';

/** A checkpoint as the `runs` table stores it: run id, message id, status, updated at, checkpoint JSON. */
export type SqliteCheckpointRow = [string, string, string, string, string];

/** The row of `checkpoint` (serialised here, so a value `JSON.stringify` rejects throws before any write). */
export function toSqliteCheckpointRow(checkpoint: RunCheckpoint): SqliteCheckpointRow {
  return [
    toStoredText(checkpoint.runId),
    toStoredText(checkpoint.messageId),
    toStoredText(checkpoint.status),
    toStoredText(checkpoint.updatedAt),
    toJsonText(checkpoint),
  ];
}

/** The upsert of one checkpoint row into `runs` (one statement; callers may run it inside their transaction). */
export function prepareSqliteCheckpointWrite(database: Database): (row: SqliteCheckpointRow) => void {
  const upsert = database.prepare(
    `INSERT INTO runs (run_id, message_id, status, updated_at, checkpoint) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (run_id) DO UPDATE SET message_id = excluded.message_id, status = excluded.status,
       updated_at = excluded.updated_at, checkpoint = excluded.checkpoint`,
  );
  return (row) => {
    upsert.run(...row);
  };
}

/**
 * A {@link RunStore} on the `runs` table: the whole checkpoint as JSON, plus `message_id`,
 * `status` and `updated_at` columns for inspection (`toolrun stats`). `put` is one upsert.
 */
export function createSqliteRunStore(database: Database): RunStore {
  const write = prepareSqliteCheckpointWrite(database);
  const select = database.prepare('SELECT checkpoint FROM runs WHERE run_id = ?');
  return {
    async get(runId) {
      const row = select.get(toStoredText(runId)) as { checkpoint: string } | undefined;
      return row === undefined ? undefined : fromJsonText<RunCheckpoint>(row.checkpoint);
    },
    async put(checkpoint) {
      write(toSqliteCheckpointRow(checkpoint));
    },
  };
}
