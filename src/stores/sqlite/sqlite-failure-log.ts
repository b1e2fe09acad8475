import type { Database } from 'better-sqlite3';
import { systemClock, type Clock } from '../../ground/ports/clock.ts';
import type { FailureLog, FailureLogPageOptions, FailureLogRecord, ToolFailureLogRecord } from '../../ground/ports/failure-log.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';
import { openSqliteDatabase } from './open-sqlite-database.ts';

/**
 * The `failure_log` table. Created with `IF NOT EXISTS` when a failure log is opened on a
 * database, so a file of schema version 1 gains it without a migration (and a later migration
 * may take this statement over unchanged).
 */
export const SQLITE_FAILURE_LOG_SCHEMA = `
  CREATE TABLE IF NOT EXISTS failure_log (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,  -- arrival order, never reused
    kind      TEXT NOT NULL,                      -- 'tool-failure' | 'recovery' | 'breaker-open'
    tool_name TEXT NOT NULL,
    run_id    TEXT,
    at        TEXT NOT NULL,                      -- ISO-8601, from the record
    record    TEXT NOT NULL                       -- JSON FailureLogRecord
  );
  CREATE INDEX IF NOT EXISTS failure_log_by_tool ON failure_log (tool_name, id);
  CREATE INDEX IF NOT EXISTS failure_log_by_trace ON failure_log (json_extract(record, '$.traceId'));
`;

/**
 * The row id a failure-log cursor holds (`FailureLog.listPage`): decimal digits, `null` for none.
 *
 * @throws ToolrunError `INVALID_OPTIONS` for a `limit` that is not an integer ≥ 1 or an `after` that is not one.
 */
function pageBounds(options: FailureLogPageOptions): { limit: number; afterId: number } {
  if (!Number.isInteger(options.limit) || options.limit < 1) {
    throw new ToolrunError('INVALID_OPTIONS', `listPage needs a limit that is an integer ≥ 1, received ${String(options.limit)}`);
  }
  const after = options.after ?? null;
  if (after !== null && (typeof after !== 'string' || !/^\d{1,15}$/.test(after))) {
    throw new ToolrunError('INVALID_OPTIONS', `listPage: ${JSON.stringify(after)} is not a cursor of this failure log (pass the next of an earlier page)`);
  }
  return { limit: options.limit, afterId: after === null ? 0 : Number(after) };
}

/**
 * A {@link FailureLog} on the `failure_log` table of a SQLite stores file (e.g. `createSqliteStores(…).database`).
 * Each append is one INSERT, atomic across processes sharing the file; ids give arrival order.
 * `listPage` reads a range of the primary key (`id > after`): a page costs the same at any depth;
 * its cursor is the last row id of the page. `findByTraceId` reads the expression index
 * `failure_log_by_trace` (on `json_extract(record, '$.traceId')`, created with the table, or added
 * to an older file when the log is opened).
 */
export function createSqliteFailureLog(database: Database): FailureLog {
  database.exec(SQLITE_FAILURE_LOG_SCHEMA);
  const insert = database.prepare('INSERT INTO failure_log (kind, tool_name, run_id, at, record) VALUES (?, ?, ?, ?, ?)');
  const selectPage = database.prepare('SELECT record FROM failure_log ORDER BY id LIMIT ? OFFSET ?');
  const selectAfter = database.prepare('SELECT id, record FROM failure_log WHERE id > ? ORDER BY id LIMIT ?');
  const count = database.prepare('SELECT COUNT(*) AS count FROM failure_log');
  // the expression of the index failure_log_by_trace, exactly (else SQLite scans the table); newest first
  const selectByTrace = database.prepare(
    "SELECT record FROM failure_log WHERE json_extract(record, '$.traceId') = ? AND kind = 'tool-failure' ORDER BY id DESC LIMIT 1",
  );
  return {
    async append(record) {
      insert.run(record.kind, record.toolName, record.runId, record.at, toJsonText(record));
    },
    async list(listOptions) {
      const rows = selectPage.all(listOptions?.limit ?? -1, Math.max(0, listOptions?.offset ?? 0)) as Array<{ record: string }>;
      return rows.map((row) => fromJsonText<FailureLogRecord>(row.record));
    },
    async listPage(pageOptions) {
      const { limit, afterId } = pageBounds(pageOptions);
      const rows = selectAfter.all(afterId, limit) as Array<{ id: number; record: string }>;
      const last = rows[rows.length - 1];
      return {
        records: rows.map((row) => fromJsonText<FailureLogRecord>(row.record)),
        next: last !== undefined ? String(last.id) : (pageOptions.after ?? null),
      };
    },
    async findByTraceId(traceId) {
      const row = selectByTrace.get(String(traceId)) as { record: string } | undefined;
      return row === undefined ? undefined : fromJsonText<ToolFailureLogRecord>(row.record);
    },
    async size() {
      return (count.get() as { count: number }).count;
    },
  };
}

/**
 * Opens the SQLite stores file at `path` (creating and migrating it when needed, like
 * `createSqliteStores`) and returns its failure log with a `close()`.
 *
 * @throws ToolrunError `STORE_UNAVAILABLE` when the file cannot be opened (see `createSqliteStores`).
 */
export function openSqliteFailureLog(options: { path: string; clock?: Clock; busyTimeoutMs?: number }): FailureLog & { close(): void } {
  const database = openSqliteDatabase({
    path: options.path,
    busyTimeoutMs: options.busyTimeoutMs ?? 5_000,
    synchronous: 'normal',
    nowMs: (options.clock ?? systemClock).now(),
  });
  return {
    ...createSqliteFailureLog(database),
    close: () => {
      if (database.open) database.close();
    },
  };
}
