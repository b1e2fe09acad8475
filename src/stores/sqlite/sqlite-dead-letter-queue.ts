import type { Database } from 'better-sqlite3';
import type { Clock } from '../../ground/ports/clock.ts';
import type { DeadLetterQueue, DeadLetterRecord } from '../../ground/ports/stores.ts';
import { toStoredText } from '../exact-text.ts';
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
 */
export function createSqliteDeadLetterQueue<T>(database: Database, options: { clock: Clock; queue: string }): DeadLetterQueue<T> {
  const { clock, queue } = options;
  const insert = database.prepare('INSERT INTO dead_letters (queue, entry, added_at_ms) VALUES (?, ?, ?)');
  const selectOne = database.prepare('SELECT id, entry, added_at_ms FROM dead_letters WHERE queue = ? AND id = ?');
  const selectPage = database.prepare('SELECT id, entry, added_at_ms FROM dead_letters WHERE queue = ? ORDER BY id LIMIT ? OFFSET ?');
  const deleteOne = database.prepare('DELETE FROM dead_letters WHERE queue = ? AND id = ?');
  const count = database.prepare('SELECT COUNT(*) AS count FROM dead_letters WHERE queue = ?');
  const deleteAll = database.prepare('DELETE FROM dead_letters WHERE queue = ?');
  const totalBytes = database.prepare('SELECT bytes FROM dead_letter_totals WHERE queue = ?');
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
      const limit = listOptions?.limit ?? -1;
      const offset = Math.max(0, listOptions?.offset ?? 0);
      return (selectPage.all(queue, limit, offset) as DeadLetterRow[]).map(toRecord);
    },
    async remove(id) {
      if (!ID_PATTERN.test(id)) return false;
      return deleteOne.run(queue, Number(id)).changes > 0;
    },
    async size() {
      return (count.get(queue) as { count: number }).count;
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
  };
}
