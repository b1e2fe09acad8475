import type { FailureLog, FailureLogRecord, ToolFailureLogRecord } from '../../ground/ports/failure-log.ts';
import { toStoredText } from '../exact-text.ts';
import { failureLogCursor } from '../failure-log-cursor.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';
import { prepareStatement, quoteSchema, type PostgresQueryable } from './postgres-client.ts';

/** Options of {@link createPostgresFailureLog}. */
export interface PostgresFailureLogOptions {
  /**
   * The schema of the stores (unquoted, a lower-case SQL identifier), migrated by
   * `createPostgresStores` (its baseline creates `failure_log`).
   * @defaultValue `'toolrun'`
   */
  schema?: string;
}

/**
 * The expression of the index `failure_log_by_trace` (in the PostgreSQL baseline), exactly, so that the
 * planner uses it: the md5 of the record's top-level `"traceId"` member as JSON text (quotes and
 * escapes included; a string holds no unescaped `"`, so the first `"traceId":"` is the key).
 */
const TRACE_KEY = `md5(substring(record from '"traceId":("(?:[^"\\\\]|\\\\.)*")'))`;

/**
 * A {@link FailureLog} on `<schema>.failure_log` (created by the PostgreSQL schema's baseline): what
 * `toolrun report --store postgres://…` and the dashboard read, written by workers on any number of
 * machines. Each append is one INSERT (its own transaction); ids come from a sequence and
 * `list`/`listPage` read in id order (two appends racing on two connections may commit in the
 * other order, so a reader following the log as it grows can pass over a record committed just
 * after its page was read). `listPage` reads a range of the
 * primary key (`id > after`), so a page costs the same at any depth; its cursor is the page's last
 * id. `findByTraceId` reads the partial expression index `failure_log_by_trace` (the md5 of the
 * record's `traceId` member as JSON text), newest first. Records are stored as JSON text (they come back exactly); `kind`, `tool_name`, `run_id` and
 * `at` are copied into columns for SQL (`GROUP BY tool_name`), as `toStoredText` writes them.
 *
 * The schema must already be migrated: open it with `createPostgresStores({ pool, schema })`
 * first and pass `stores.pool` here.
 *
 * @throws ToolrunError `INVALID_OPTIONS` when `schema` is not a lower-case identifier.
 */
export function createPostgresFailureLog(pool: PostgresQueryable, options: PostgresFailureLogOptions = {}): FailureLog {
  const table = `${quoteSchema(options.schema ?? 'toolrun')}.failure_log`;
  const insert = prepareStatement(`INSERT INTO ${table} (kind, tool_name, run_id, at, record) VALUES ($1, $2, $3, $4, $5)`);
  const selectPage = prepareStatement(`SELECT record FROM ${table} ORDER BY id LIMIT $1 OFFSET $2`);
  const selectAfter = prepareStatement(`SELECT id::text AS cursor, record FROM ${table} WHERE id > $1::bigint ORDER BY id LIMIT $2`);
  const count = prepareStatement(`SELECT COUNT(*)::text AS count FROM ${table}`);
  // newest first; the rows' records are checked again (an md5 match is not proof)
  const selectByTrace = prepareStatement(`SELECT record FROM ${table} WHERE kind = 'tool-failure' AND ${TRACE_KEY} = md5($1) ORDER BY id DESC LIMIT 20`);
  return {
    async append(record) {
      await pool.query({
        ...insert,
        values: [
          toStoredText(String(record.kind)),
          toStoredText(String(record.toolName)),
          record.runId === null ? null : toStoredText(String(record.runId)),
          toStoredText(String(record.at)),
          toJsonText(record),
        ],
      });
    },
    async list(listOptions) {
      const limit = listOptions?.limit === undefined ? null : Math.max(0, listOptions.limit);
      const { rows } = await pool.query<{ record: string }>({ ...selectPage, values: [limit, Math.max(0, listOptions?.offset ?? 0)] });
      return rows.map((row) => fromJsonText<FailureLogRecord>(row.record));
    },
    async listPage(pageOptions) {
      const after = failureLogCursor(pageOptions, 18);
      const { rows } = await pool.query<{ cursor: string; record: string }>({ ...selectAfter, values: [after ?? '0', pageOptions.limit] });
      const last = rows[rows.length - 1];
      return {
        records: rows.map((row) => fromJsonText<FailureLogRecord>(row.record)),
        next: last !== undefined ? last.cursor : after,
      };
    },
    async findByTraceId(traceId) {
      const { rows } = await pool.query<{ record: string }>({ ...selectByTrace, values: [JSON.stringify(String(traceId))] });
      for (const row of rows) {
        const record = fromJsonText<FailureLogRecord>(row.record);
        if (record.kind === 'tool-failure' && record.traceId === traceId) return record as ToolFailureLogRecord;
      }
      return undefined;
    },
    async size() {
      const { rows } = await pool.query<{ count: string }>(count);
      return Number(rows[0]?.count ?? 0);
    },
  };
}
