import type { Database, Statement } from 'better-sqlite3';
import type { Clock } from '../../ground/ports/clock.ts';
import type { DeadLetterQueue, DeadLetterRecord } from '../../ground/ports/stores.ts';
import { toStoredText } from '../exact-text.ts';
import { activeFilterFields, CAUSE_FILTER_COLUMNS, type DeadLetterCauseFields } from '../memory/memory-dead-letter-queue.ts';
import { causeCountOf, groupCountOf, type CauseCountRow, type GroupCountRow } from '../dead-letter-group-keys.ts';
import { fromJsonText, toJsonText } from '../json-text.ts';

interface DeadLetterRow {
  id: number;
  entry: string;
  added_at_ms: number;
}

/** Ids are the decimal text of a positive rowid; anything else names no entry. */
const ID_PATTERN = /^[1-9][0-9]{0,15}$/;

/**
 * A {@link DeadLetterQueue} on the `dead_letters` table, one `queue` name per DLQ (the bundle uses
 * `'message'` and `'tool'`). Ids are the AUTOINCREMENT rowid as a string: increasing, never
 * reused, so id order is insertion order. `pushOnce` keys are rows of `dead_letter_keys`, which
 * `remove` and `purge` leave alone. Every method is one statement, except `pushOnce`: one IMMEDIATE
 * transaction (the file's write lock: atomic across connections and processes). `bytes()` reads
 * `dead_letter_totals`, which triggers on `dead_letters` keep in the same transaction as every
 * insert and delete. Keys are stored with `toStoredText` (exact, `\u0000` included).
 *
 * `list` is one indexed statement: `after` is a range on the id (`id > after`, keyset), each
 * `filter` member an equality on a generated, indexed cause column (`cause_kind`, `cause_tool_name`,
 * …), so the first page, a deep page via `after` and a filtered page cost about the same on a
 * million entries; only `offset` still reads the entries it skips. `size()` reads the entry count
 * of `dead_letter_totals`, kept by the same triggers as the bytes. `countByCause()` reads
 * `dead_letter_cause_counts`, which triggers keep per combination of the cause columns;
 * `countByGroup()` reads `dead_letter_group_counts`, kept the same way per combination of the cause
 * and group columns (`cause_error_kind`, `cause_error_status`, `cause_field_path`,
 * `cause_field_problem`) with the sums of `tokens_input` and `tokens_output`.
 */
export function createSqliteDeadLetterQueue<T>(database: Database, options: { clock: Clock; queue: string }): DeadLetterQueue<T> {
  const { clock, queue } = options;
  const insert = database.prepare('INSERT INTO dead_letters (queue, entry, added_at_ms) VALUES (?, ?, ?)');
  const selectOne = database.prepare('SELECT id, entry, added_at_ms FROM dead_letters WHERE queue = ? AND id = ?');
  const selectPage = database.prepare('SELECT id, entry, added_at_ms FROM dead_letters WHERE queue = ? ORDER BY id LIMIT ? OFFSET ?');
  /** One statement per combination of filter members (at most 32), prepared when first used. */
  const pageStatements = new Map<string, Statement>();
  const pageStatement = (fields: ReadonlyArray<keyof DeadLetterCauseFields>): Statement => {
    const key = fields.join(',');
    let statement = pageStatements.get(key);
    if (statement === undefined) {
      const where = ['queue = ?', 'id > ?', ...fields.map((field) => `${CAUSE_FILTER_COLUMNS[field]} = ?`)].join(' AND ');
      statement = database.prepare(`SELECT id, entry, added_at_ms FROM dead_letters WHERE ${where} ORDER BY id LIMIT ? OFFSET ?`);
      pageStatements.set(key, statement);
    }
    return statement;
  };
  const deleteOne = database.prepare('DELETE FROM dead_letters WHERE queue = ? AND id = ?');
  const count = database.prepare('SELECT entries AS count FROM dead_letter_totals WHERE queue = ?');
  const deleteAll = database.prepare('DELETE FROM dead_letters WHERE queue = ?');
  const totalBytes = database.prepare('SELECT bytes FROM dead_letter_totals WHERE queue = ?');
  const causeCounts = database.prepare(
    'SELECT kind, tool_name, model_name, reason, code, entries FROM dead_letter_cause_counts WHERE queue = ? AND entries > 0',
  );
  const groupCounts = database.prepare(
    `SELECT kind, tool_name, model_name, reason, code, error_kind, error_status, field_path, field_problem, entries, tokens_input, tokens_output
     FROM dead_letter_group_counts WHERE queue = ? AND entries > 0`,
  );
  const selectKey = database.prepare('SELECT entry_id FROM dead_letter_keys WHERE queue = ? AND key = ?');
  const insertKey = database.prepare('INSERT INTO dead_letter_keys (queue, key, entry_id) VALUES (?, ?, ?)');
  const pushOnce = database.transaction((key: string, entryText: string, nowMs: number): { id: string; added: boolean } => {
    const existing = selectKey.get(queue, key) as { entry_id: number } | undefined;
    if (existing !== undefined) return { id: String(existing.entry_id), added: false };
    const id = insert.run(queue, entryText, nowMs).lastInsertRowid;
    insertKey.run(queue, key, id);
    return { id: String(id), added: true };
  });

  const toRecord = (row: DeadLetterRow): DeadLetterRecord<T> => ({
    id: String(row.id),
    addedAt: new Date(row.added_at_ms).toISOString(),
    entry: fromJsonText<T>(row.entry),
  });

  return {
    async push(entry) {
      return String(insert.run(queue, toJsonText(entry), clock.now()).lastInsertRowid);
    },
    async pushOnce(key, entry) {
      // serialised before taking the write lock: a large entry does not hold it longer
      return pushOnce.immediate(toStoredText(key), toJsonText(entry), clock.now());
    },
    async get(id) {
      if (!ID_PATTERN.test(id)) return undefined;
      const row = selectOne.get(queue, Number(id)) as DeadLetterRow | undefined;
      return row === undefined ? undefined : toRecord(row);
    },
    async list(listOptions) {
      const limit = listOptions?.limit === undefined || listOptions.limit < 0 ? -1 : Math.floor(listOptions.limit);
      const offset = Math.max(0, Math.floor(listOptions?.offset ?? 0));
      const after = listOptions?.after;
      const active = activeFilterFields(listOptions?.filter);
      if (after === undefined && active.length === 0) return (selectPage.all(queue, limit, offset) as DeadLetterRow[]).map(toRecord);
      if (after !== undefined && !ID_PATTERN.test(after)) return [];
      const statement = pageStatement(active.map(([field]) => field));
      const rows = statement.all(queue, after === undefined ? 0 : Number(after), ...active.map(([, value]) => value), limit, offset) as DeadLetterRow[];
      return rows.map(toRecord);
    },
    async remove(id) {
      if (!ID_PATTERN.test(id)) return false;
      return deleteOne.run(queue, Number(id)).changes > 0;
    },
    async size() {
      return (count.get(queue) as { count: number } | undefined)?.count ?? 0;
    },
    async bytes() {
      return (totalBytes.get(queue) as { bytes: number } | undefined)?.bytes ?? 0;
    },
    async oldest() {
      const row = selectPage.get(queue, 1, 0) as DeadLetterRow | undefined;
      return row === undefined ? undefined : toRecord(row);
    },
    async purge() {
      return deleteAll.run(queue).changes;
    },
    async countByGroup() {
      return (groupCounts.all(queue) as GroupCountRow[]).map((row) => groupCountOf(row, (text) => text));
    },
    async countByCause() {
      return (causeCounts.all(queue) as CauseCountRow[]).map((row) => causeCountOf(row, (text) => text));
    },
  };
}
