import type { Database } from 'better-sqlite3';
import type { RunStore } from '../../ground/ports/stores.ts';
import type { RunCheckpoint } from '../../ground/ports/run-journal.ts';
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

/**
 * The write of one checkpoint row into `runs` (callers may run it inside their transaction; alone
 * it is two single-statement writes, each atomic, and ends as one upsert would). The usual write,
 * a checkpoint of the status the run already has, is an `UPDATE … WHERE run_id = ? AND status = ?`
 * that sets neither `run_id` nor `status`: SQLite then leaves both indexes on them
 * (`runs_by_status`, the run id's own) unwritten, and a run that is not completed has no entry in
 * `runs_completed_by_time`, so it dirties the row's page only: one WAL page less per step than an
 * upsert, which assigns the status and so rewrites its index entry. When it changes no row (a new
 * run, or the status changed), the full upsert follows. A caller that knows the update would change
 * no row (`upsert: true`: no row for the run yet, or another status than the one it last wrote)
 * goes straight to the upsert: one statement instead of two, the same row in the end.
 */
export function prepareSqliteCheckpointWrite(database: Database): (row: SqliteCheckpointRow, upsert?: boolean) => void {
  const update = database.prepare('UPDATE runs SET message_id = ?, updated_at = ?, checkpoint = ? WHERE run_id = ? AND status = ?');
  const upsert = database.prepare(
    `INSERT INTO runs (run_id, message_id, status, updated_at, checkpoint) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (run_id) DO UPDATE SET message_id = excluded.message_id, status = excluded.status,
       updated_at = excluded.updated_at, checkpoint = excluded.checkpoint`,
  );
  return (row, upsertAtOnce = false) => {
    const [runId, messageId, status, updatedAt, checkpoint] = row;
    if (upsertAtOnce || update.run(messageId, updatedAt, checkpoint, runId, status).changes === 0) upsert.run(...row);
  };
}

/**
 * A {@link RunStore} on the `runs` table: the whole checkpoint as JSON, plus `message_id`,
 * `status` and `updated_at` columns for inspection (`toolrun stats`). `put` is the write of
 * {@link prepareSqliteCheckpointWrite}: an update of the row when the status is unchanged, else an upsert.
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
