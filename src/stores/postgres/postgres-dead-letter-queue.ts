import type { Clock } from '../../ground/ports/clock.ts';
import type { DeadLetterQueue, DeadLetterRecord } from '../../ground/ports/stores.ts';
import { fromStoredText, toStoredText } from '../exact-text.ts';
import { activeFilterFields, CAUSE_FILTER_COLUMNS, deadLetterGroupFields, type DeadLetterCauseFields } from '../memory/memory-dead-letter-queue.ts';
import { causeCountOf, groupCountOf, type CauseCountRow, type GroupCountRow } from '../dead-letter-group-keys.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';
import { prepareStatement, type PostgresQueryable } from './postgres-client.ts';

interface DeadLetterRow {
  id: string;
  entry: string;
  added_at_ms: string;
}

/** Ids are the decimal text of a positive `bigint`; anything else names no entry. */
const ID_PATTERN = /^[1-9][0-9]{0,17}$/;

/** The cause and group columns (schema versions 3 and 5) an insert writes, in the order of {@link causeValues}. */
const CAUSE_COLUMNS =
  'cause_kind, cause_tool_name, cause_model_name, cause_reason, cause_code, cause_error_kind, cause_error_status, cause_field_path, cause_field_problem, tokens_input, tokens_output';

/** The cause and group columns' values of an entry, in the order of {@link CAUSE_COLUMNS}. */
function causeValues(entry: unknown): Array<string | number | null> {
  const fields = deadLetterGroupFields(entry);
  const texts = [fields.kind, fields.toolName, fields.modelName, fields.reason, fields.code, fields.errorKind].map((value) =>
    value === null ? null : toStoredText(value),
  );
  const status = fields.errorStatus === null ? null : String(fields.errorStatus);
  const field = [fields.fieldPath, fields.fieldProblem].map((value) => (value === null ? null : toStoredText(value)));
  return [...texts, status, ...field, fields.tokensInput, fields.tokensOutput];
}

/**
 * A {@link DeadLetterQueue} on `<schema>.dead_letters`, one `queue` name per DLQ (the bundle
 * uses `'message'` and `'tool'`). Ids come from one sequence: increasing, never reused, so id order
 * is insertion order. `addedAt` is the injected clock's time. `pushOnce` keys are rows of
 * `<schema>.dead_letter_keys`, which `remove` and `purge` leave alone. Every method is one statement
 * except a `pushOnce` that finds its key taken (a second statement reads the first entry's id).
 * `bytes()` reads `<schema>.dead_letter_totals`, which triggers keep in the same statement as every
 * insert, update and delete of `dead_letters` (each row's `entry_bytes` is measured by the server).
 * Keys are stored with `toStoredText`, so a key holding `\u0000` works and comes back exact.
 *
 * Every insert also writes the entry's cause fields (`cause_kind`, `cause_tool_name`, …, see
 * `DeadLetterFilter`) into indexed columns, so `list` is one indexed statement: `after` a range on
 * the id (keyset), each `filter` member an equality on its column. `size()` reads the entry count
 * of `dead_letter_totals`, kept by the same triggers as the bytes, and `countByCause()` the rows of
 * `dead_letter_cause_counts`, kept by those triggers per combination of the cause columns (cause
 * values as `toStoredText` wrote them, read back exact). Inserts also write the group columns
 * (`cause_error_kind`, `cause_error_status`, `cause_field_path`, `cause_field_problem`,
 * `tokens_input`, `tokens_output`; see `DeadLetterGroupCount`), and `countByGroup()` reads
 * `dead_letter_group_counts`, kept by triggers of their own per combination of the cause and group
 * columns with the token sums. A row inserted by hand without
 * the cause columns is listed, but no filter finds it.
 */
export function createPostgresDeadLetterQueue<T>(pool: PostgresQueryable, options: { schema: string; clock: Clock; queue: string }): DeadLetterQueue<T> {
  const { schema, clock, queue } = options;
  const table = `${schema}.dead_letters`;
  const keys = `${schema}.dead_letter_keys`;
  const columns = 'id::text AS id, entry, added_at_ms::text AS added_at_ms';
  const toRecord = (row: DeadLetterRow): DeadLetterRecord<T> => ({
    id: row.id,
    addedAt: new Date(Number(row.added_at_ms)).toISOString(),
    entry: fromJsonText<T>(row.entry),
  });
  const statements = {
    push: prepareStatement(
      `INSERT INTO ${table} (queue, entry, added_at_ms, ${CAUSE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id::text AS id`,
    ),
    keyedId: prepareStatement(`SELECT entry_id::text AS id FROM ${keys} WHERE queue = $1 AND key = $2`),
    get: prepareStatement(`SELECT ${columns} FROM ${table} WHERE queue = $1 AND id = $2`),
    // ORDER BY the column, not the `id::text` output of the same name (which sorts '10' before '9')
    list: prepareStatement(`SELECT ${columns} FROM ${table} WHERE queue = $1 ORDER BY ${table}.id LIMIT $2 OFFSET $3`),
    remove: prepareStatement(`DELETE FROM ${table} WHERE queue = $1 AND id = $2`),
    size: prepareStatement(`SELECT entries::text AS count FROM ${schema}.dead_letter_totals WHERE queue = $1`),
    purge: prepareStatement(`DELETE FROM ${table} WHERE queue = $1`),
    bytes: prepareStatement(`SELECT bytes::text AS bytes FROM ${schema}.dead_letter_totals WHERE queue = $1`),
    causeCounts: prepareStatement(
      `SELECT kind, tool_name, model_name, reason, code, entries::text AS entries FROM ${schema}.dead_letter_cause_counts WHERE queue = $1 AND entries > 0`,
    ),
    groupCounts: prepareStatement(
      `SELECT kind, tool_name, model_name, reason, code, error_kind, error_status, field_path, field_problem, entries::text AS entries, tokens_input, tokens_output
       FROM ${schema}.dead_letter_group_counts WHERE queue = $1 AND entries > 0`,
    ),
  };
  const pushOnceStatement = prepareStatement(`
    WITH new_id AS (SELECT nextval('${schema}.dead_letter_ids') AS id),
    claimed AS (
      INSERT INTO ${keys} (queue, key, entry_id) SELECT $1, $2, id FROM new_id
      ON CONFLICT (queue, key) DO NOTHING RETURNING entry_id
    )
    INSERT INTO ${table} (id, queue, entry, added_at_ms, ${CAUSE_COLUMNS})
    SELECT entry_id, $1, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15 FROM claimed
    RETURNING id::text AS id`);
  /** One statement per combination of filter members (at most 32), named when first used. */
  const pageStatements = new Map<string, ReturnType<typeof prepareStatement>>();
  const pageStatement = (fields: ReadonlyArray<keyof DeadLetterCauseFields>) => {
    const key = fields.join(',');
    let statement = pageStatements.get(key);
    if (statement === undefined) {
      const where = ['queue = $1', `${table}.id > $2`, ...fields.map((field, index) => `${CAUSE_FILTER_COLUMNS[field]} = $${index + 3}`)].join(' AND ');
      const next = fields.length + 3;
      statement = prepareStatement(`SELECT ${columns} FROM ${table} WHERE ${where} ORDER BY ${table}.id LIMIT $${next} OFFSET $${next + 1}`);
      pageStatements.set(key, statement);
    }
    return statement;
  };

  return {
    async push(entry) {
      const { rows } = await pool.query<{ id: string }>({ ...statements.push, values: [queue, toJsonText(entry), clock.now(), ...causeValues(entry)] });
      return rows[0]!.id;
    },
    async pushOnce(key, entry) {
      const { rows } = await pool.query<{ id: string }>({
        ...pushOnceStatement,
        values: [queue, toStoredText(key), toJsonText(entry), clock.now(), ...causeValues(entry)],
      });
      if (rows[0] !== undefined) return { id: rows[0].id, added: true };
      const existing = await pool.query<{ id: string }>({ ...statements.keyedId, values: [queue, toStoredText(key)] });
      return { id: existing.rows[0]!.id, added: false };
    },
    async get(id) {
      if (!ID_PATTERN.test(id)) return undefined;
      const { rows } = await pool.query<DeadLetterRow>({ ...statements.get, values: [queue, id] });
      return rows[0] === undefined ? undefined : toRecord(rows[0]);
    },
    async list(listOptions) {
      const limit = listOptions?.limit === undefined || listOptions.limit < 0 ? null : Math.floor(listOptions.limit);
      const offset = Math.max(0, Math.floor(listOptions?.offset ?? 0));
      const after = listOptions?.after;
      const active = activeFilterFields(listOptions?.filter);
      if (after === undefined && active.length === 0) {
        const { rows } = await pool.query<DeadLetterRow>({ ...statements.list, values: [queue, limit, offset] });
        return rows.map(toRecord);
      }
      if (after !== undefined && !ID_PATTERN.test(after)) return [];
      const statement = pageStatement(active.map(([field]) => field));
      const values = [queue, after ?? '0', ...active.map(([, value]) => toStoredText(value)), limit, offset];
      const { rows } = await pool.query<DeadLetterRow>({ ...statement, values });
      return rows.map(toRecord);
    },
    async remove(id) {
      if (!ID_PATTERN.test(id)) return false;
      const { rowCount } = await pool.query({ ...statements.remove, values: [queue, id] });
      return (rowCount ?? 0) > 0;
    },
    async size() {
      const { rows } = await pool.query<{ count: string }>({ ...statements.size, values: [queue] });
      return rows[0] === undefined ? 0 : Number(rows[0].count);
    },
    async bytes() {
      const { rows } = await pool.query<{ bytes: string }>({ ...statements.bytes, values: [queue] });
      return rows[0] === undefined ? 0 : Number(rows[0].bytes);
    },
    async oldest() {
      const { rows } = await pool.query<DeadLetterRow>({ ...statements.list, values: [queue, 1, 0] });
      return rows[0] === undefined ? undefined : toRecord(rows[0]);
    },
    async purge() {
      const { rowCount } = await pool.query({ ...statements.purge, values: [queue] });
      return rowCount ?? 0;
    },
    async countByGroup() {
      const { rows } = await pool.query<GroupCountRow>({ ...statements.groupCounts, values: [queue] });
      return rows.map((row) => groupCountOf(row, fromStoredText));
    },
    async countByCause() {
      const { rows } = await pool.query<CauseCountRow>({ ...statements.causeCounts, values: [queue] });
      return rows.map((row) => causeCountOf(row, fromStoredText));
    },
  };
}
