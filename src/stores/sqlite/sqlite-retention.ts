import type { Database } from 'better-sqlite3';
import { deliveryErrorKey } from '../../ground/ports/run-journal.ts';
import { fromStoredText, toStoredText } from '../exact-text.ts';

/** What follows `<runId>:` in a ledger key of that run: a tool call (`<step>:<call>`) or a dead-letter marker. */
const RUN_KEY_REST = /^(?:\d+:\d+|dead-lettered:(?:[a-z]+:)?\d+)$/;

/** Options of {@link createSqliteRetentionSweep}. Durations in milliseconds. */
export interface SqliteRetentionOptions {
  /** How long a completed run's checkpoint, ledger rows and acknowledged message are kept after it completed / was acknowledged. */
  retainCompletedRunsMs: number;
  /** Runs (and, separately, acknowledged messages) deleted by one sweep, at most, oldest first. */
  batchSize: number;
}

/**
 * The retention sweep of a SQLite store bundle: one IMMEDIATE transaction that deletes, oldest
 * first and at most `batchSize` of each,
 * - the checkpoints of runs that completed (`status = 'completed'`) more than
 *   `retainCompletedRunsMs` ago, with every ledger row of the run (keys `<runId>:…`: its tool
 *   calls' outcomes and dead-letter markers) and the last delivery error of its message;
 * - the rows of messages acknowledged more than `retainCompletedRunsMs` ago (their bodies are
 *   already emptied by the ack).
 *
 * A run that ended any other way (failed, cancelled, past its limits) is kept whatever its age:
 * its dead-letter entry resumes from it. What the sweep deletes is what recognises a duplicate:
 * after it, a message with the same id, enqueued again, is a new message and its run runs again.
 * Returns how many rows it deleted. Throws what the driver throws (a lock held past the busy
 * timeout): the caller skips that sweep.
 */
export function createSqliteRetentionSweep(database: Database, options: SqliteRetentionOptions): (nowMs: number) => number {
  const { retainCompletedRunsMs, batchSize } = options;
  // INDEXED BY: without statistics the planner would walk every run of the status, then sort
  const selectCompleted = database.prepare(
    "SELECT run_id, message_id FROM runs INDEXED BY runs_completed_by_time WHERE status = 'completed' AND updated_at < ? ORDER BY updated_at LIMIT ?",
  );
  const deleteRun = database.prepare('DELETE FROM runs WHERE run_id = ?');
  const selectLedgerRange = database.prepare('SELECT key FROM ledger WHERE key >= ? AND key < ?').pluck();
  const deleteLedgerKey = database.prepare('DELETE FROM ledger WHERE key = ?');
  const deleteAcked = database.prepare(
    'DELETE FROM queue_messages WHERE seq IN (SELECT seq FROM queue_messages INDEXED BY queue_messages_acked_by_time WHERE acked_at_ms IS NOT NULL AND acked_at_ms < ? ORDER BY acked_at_ms LIMIT ?)',
  );
  /** The stored keys of one run's ledger rows, `<runId>:…`, as a key range (stored text compares byte by byte). */
  const ledgerRange = (runId: string): [string, string] => {
    const low = toStoredText(`${runId}:`);
    // a key stored escaped is a marker followed by its JSON string, unterminated here: `"<runId>:`…
    const prefix = low.endsWith(':') ? low : low.slice(0, -1);
    return [prefix, `${prefix.slice(0, -1)};`];
  };
  const sweep = database.transaction((nowMs: number) => {
    const cutoff = nowMs - retainCompletedRunsMs;
    let deleted = 0;
    const cutoffText = new Date(Math.max(0, cutoff)).toISOString();
    for (const row of selectCompleted.all(cutoffText, batchSize) as { run_id: string; message_id: string }[]) {
      const runId = fromStoredText(row.run_id);
      // the range also holds the keys of runs whose id starts with `<runId>:`: only this run's shapes go
      for (const key of selectLedgerRange.all(...ledgerRange(runId)) as string[]) {
        if (RUN_KEY_REST.test(fromStoredText(key).slice(runId.length + 1))) deleted += deleteLedgerKey.run(key).changes;
      }
      const messageId = fromStoredText(row.message_id);
      if (messageId !== '') deleted += deleteLedgerKey.run(toStoredText(deliveryErrorKey(messageId))).changes;
      deleted += deleteRun.run(row.run_id).changes;
    }
    deleted += deleteAcked.run(cutoff, batchSize).changes;
    return deleted;
  });
  return (nowMs) => sweep.immediate(nowMs);
}
