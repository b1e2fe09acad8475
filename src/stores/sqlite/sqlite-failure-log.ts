import type { Database } from 'better-sqlite3';
import { systemClock, type Clock } from '../../ground/ports/clock.ts';
import type { FailureLog, FailureLogRecord, ToolFailureLogRecord } from '../../ground/ports/failure-log.ts';
import { failureLogCursor } from '../failure-log-cursor.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';
import { openSqliteDatabase } from './open-sqlite-database.ts';

/**
 * A {@link FailureLog} on the `failure_log` table of a SQLite stores file (e.g. `createSqliteStores(…).database`,
 * whose schema migration creates the table). Each append is one INSERT, atomic across processes
 * sharing the file; ids give arrival order. `listPage` reads a range of the primary key
 * (`id > after`): a page costs the same at any depth; its cursor is the last row id of the page.
 * `findByTraceId` reads the expression index `failure_log_by_trace` (on `json_extract(record, '$.traceId')`).
 *
 * @throws the driver's error (`no such table: failure_log`) for a database that is not a migrated stores file.
 */
export function createSqliteFailureLog(database: Database): FailureLog {
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
      const after = failureLogCursor(pageOptions, 15);
      const rows = selectAfter.all(after === null ? 0 : Number(after), pageOptions.limit) as Array<{ id: number; record: string }>;
      const last = rows[rows.length - 1];
      return {
        records: rows.map((row) => fromJsonText<FailureLogRecord>(row.record)),
        next: last !== undefined ? String(last.id) : after,
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
