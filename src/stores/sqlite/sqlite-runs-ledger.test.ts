import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunCheckpoint } from '../../ground/ports/run-journal.ts';
import { createFakeClock } from '../../testing/fake-clock.ts';
import { toStoredText } from '../exact-text.ts';
import { migrateSqliteSchema, SQLITE_SCHEMA_VERSION } from './sqlite-migrations.ts';
import { createSqliteRunStore } from './sqlite-run-store.ts';
import { createSqliteStores } from './sqlite-stores.ts';

const directory = mkdtempSync(join(tmpdir(), 'toolrun-sqlite-runs-ledger-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let fileCounter = 0;
const freshPath = () => join(directory, `runs-ledger-${++fileCounter}.db`);

const RETAIN_MS = 60_000;
const checkpoint = (runId: string, status: RunCheckpoint['status'], stepIndex: number, updatedAt: string): RunCheckpoint => ({
  runId,
  messageId: runId.slice(4),
  status,
  stepIndex,
  conversationRef: `conv_${runId}`,
  tokensSpent: { input: stepIndex, output: 1 },
  toolAttempts: { lookup: stepIndex },
  data: {},
  updatedAt,
});

describe('SQLite runs and ledger: files of schema version 9, and checkpoint writes that leave the status index alone', () => {
  it('opens a file written by schema version 9 with its ledger and runs byte for byte; the stores and the retention sweep work on them', async () => {
    const path = freshPath();
    const clock = createFakeClock();
    const old = new BetterSqlite3(path);
    migrateSqliteSchema(old, clock.now());
    const at = new Date(clock.now()).toISOString();
    // text as an older toolrun (or a hand) wrote it: not what JSON.stringify gives back, kept as is
    const oddJson = '{ "status" : "success", "result" : "nul \\u0000 and a lone \\ud800 surrogate", "n" : 1e21 }';
    const large = JSON.stringify({ status: 'success', result: 'x'.repeat(20_000) });
    const ledgerRows: [string, string, number][] = [
      ['run_old:0:0', '{"status":"success","result":{"ok":true}}', clock.now() - 5],
      ['run_old:1:0', large, clock.now() - 4],
      ['run_old:dead-lettered:tool:1', '"2026-01-01T00:00:00.000Z"', clock.now() - 3],
      ['run_old:x', '"not one of the run\'s key shapes: kept"', clock.now() - 3],
      ['run_failed:0:0', oddJson, clock.now() - 2],
      ['message:old:last-delivery-error', '{"message":"boom"}', clock.now() - 1],
      // a key stored escaped (it holds \u0000): a marker followed by its JSON string
      [toStoredText('run_\u0000nul:0:0'), '{}', clock.now()],
      ['é:ü', '[]', clock.now()],
    ];
    const insertLedger = old.prepare('INSERT INTO ledger (key, value, recorded_at_ms) VALUES (?, ?, ?)');
    for (const row of ledgerRows) insertLedger.run(...row);
    const runRows: [string, string, string, string, string][] = [
      ['run_old', 'old', 'completed', at, JSON.stringify(checkpoint('run_old', 'completed', 2, at))],
      ['run_failed', 'failed', 'tool_failed', at, JSON.stringify(checkpoint('run_failed', 'tool_failed', 1, at))],
      ['run_running', 'running', 'running', at, `{ "runId" : "run_running", "data" : { "pad" : "${'p'.repeat(8_000)}" } }`],
    ];
    const insertRun = old.prepare('INSERT INTO runs (run_id, message_id, status, updated_at, checkpoint) VALUES (?, ?, ?, ?, ?)');
    for (const row of runRows) insertRun.run(...row);
    const hexOf = (database: BetterSqlite3.Database) => ({
      ledger: database.prepare('SELECT hex(key), hex(value), recorded_at_ms, typeof(key), typeof(value) FROM ledger ORDER BY key').raw().all(),
      runs: database
        .prepare('SELECT hex(run_id), hex(message_id), hex(status), hex(updated_at), hex(checkpoint), typeof(checkpoint) FROM runs ORDER BY run_id')
        .raw()
        .all(),
    });
    const before = hexOf(old);
    old.close();

    await clock.advance(RETAIN_MS + 1);
    const stores = createSqliteStores({ path, clock, retainCompletedRunsMs: RETAIN_MS, conversationSweep: { everyWrites: 1, batchSize: 500 } });
    try {
      const { database } = stores;
      expect((database.prepare('SELECT MAX(version) AS version FROM schema_version').get() as { version: number }).version).toBe(SQLITE_SCHEMA_VERSION);
      const sqlOf = (name: string) => (database.prepare('SELECT sql FROM sqlite_master WHERE name = ?').get(name) as { sql: string } | undefined)?.sql;
      // rowid tables: a ledger value (a tool's outcome) and a checkpoint can be KBs, and in a WITHOUT
      // ROWID table a row over ~1 KB spills into overflow pages that every seek comparing against
      // it reads and every rewrite writes (measured: more WAL pages per step, reads 2-4x slower)
      expect(sqlOf('ledger')).not.toMatch(/WITHOUT ROWID/i);
      expect(sqlOf('runs')).not.toMatch(/WITHOUT ROWID/i);
      expect(sqlOf('runs_by_status')).toMatch(/ON runs \(status\)/);
      expect(sqlOf('runs_completed_by_time')).toMatch(/ON runs \(updated_at\) WHERE status = 'completed'/);
      expect(database.pragma('integrity_check', { simple: true })).toBe('ok');

      // every row as it was, byte for byte
      expect(hexOf(database)).toEqual(before);
      expect(await stores.ledger.get('run_failed:0:0')).toEqual(JSON.parse(oddJson));
      expect(await stores.ledger.get('run_\u0000nul:0:0')).toEqual({});
      expect(await stores.ledger.get('é:ü')).toEqual([]);
      expect(await stores.ledger.putIfAbsent('run_old:1:0', { status: 'success', result: 'other' })).toEqual({ stored: false, value: JSON.parse(large) });
      expect(await stores.ledger.putIfAbsent('run_new:0:0', { status: 'success', result: 1 })).toEqual({
        stored: true,
        value: { status: 'success', result: 1 },
      });
      expect(await stores.runs.get('run_failed')).toEqual(checkpoint('run_failed', 'tool_failed', 1, at));
      expect((await stores.runs.get('run_running'))?.data).toEqual({ pad: 'p'.repeat(8_000) });

      // a write: the sweep runs, and deletes the old completed run, its ledger rows and its message's error only
      await stores.conversations.put('conv_new', [{ role: 'user', content: 'hi' }]);
      expect(database.prepare('SELECT run_id FROM runs ORDER BY run_id').pluck().all()).toEqual(['run_failed', 'run_running']);
      expect(database.prepare('SELECT key FROM ledger ORDER BY key').pluck().all()).toEqual([
        toStoredText('run_\u0000nul:0:0'),
        'run_failed:0:0',
        'run_new:0:0',
        'run_old:x',
        'é:ü',
      ]);
      expect(database.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      await stores.close();
    }
  });

  it('a checkpoint of the same status rewrites the run row only, and the run store returns the last checkpoint whatever the status did', async () => {
    const path = freshPath();
    const clock = createFakeClock();
    const database = new BetterSqlite3(path);
    try {
      database.pragma('journal_mode = WAL');
      migrateSqliteSchema(database, clock.now());
      database.pragma('wal_autocheckpoint = 0');
      const runs = createSqliteRunStore(database);
      const walPages = async (write: () => Promise<void>) => {
        database.pragma('wal_checkpoint(TRUNCATE)');
        await write();
        return (statSync(`${path}-wal`).size - 32) / (4096 + 24);
      };
      // the update goes by the run id's own index, never by the status index
      const plan = JSON.stringify(
        database
          .prepare('EXPLAIN QUERY PLAN UPDATE runs SET message_id = ?, updated_at = ?, checkpoint = ? WHERE run_id = ? AND status = ?')
          .all('m', 'u', 'c', 'r', 's'),
      );
      expect(plan).toMatch(/USING INDEX sqlite_autoindex_runs_1 \(run_id=\?\)/);
      for (let index = 0; index < 20; index++) {
        await runs.put(checkpoint(`run_${index}`, index % 2 === 0 ? 'running' : 'completed', 0, new Date(clock.now()).toISOString()));
      }

      // same status: the table's page only (the status index and the completed runs' index are not written)
      let last = checkpoint('run_4', 'running', 1, new Date(clock.now() + 1).toISOString());
      expect(await walPages(() => runs.put(last))).toBe(1);
      expect(await runs.get('run_4')).toEqual(last);
      // a new status: the row and the status index (and, completed, the completed runs' index)
      last = checkpoint('run_4', 'completed', 2, new Date(clock.now() + 2).toISOString());
      expect(await walPages(() => runs.put(last))).toBe(3);
      expect(await runs.get('run_4')).toEqual(last);
      last = { ...checkpoint('run_4', 'completed', 3, new Date(clock.now() + 3).toISOString()), messageId: 'another' };
      await runs.put(last);
      expect(await runs.get('run_4')).toEqual(last);
      last = checkpoint('run_4', 'running', 4, new Date(clock.now() + 4).toISOString());
      await runs.put(last);
      expect(await runs.get('run_4')).toEqual(last);
      // a run never written: inserted
      const fresh = checkpoint('run_fresh', 'running', 0, new Date(clock.now()).toISOString());
      await runs.put(fresh);
      expect(await runs.get('run_fresh')).toEqual(fresh);

      // the columns and both indexes agree with the checkpoints
      expect(database.prepare("SELECT run_id FROM runs INDEXED BY runs_by_status WHERE status = 'running' ORDER BY run_id").pluck().all()).toEqual([
        'run_0',
        'run_10',
        'run_12',
        'run_14',
        'run_16',
        'run_18',
        'run_2',
        'run_4',
        'run_6',
        'run_8',
        'run_fresh',
      ]);
      expect(database.prepare("SELECT run_id FROM runs INDEXED BY runs_completed_by_time WHERE status = 'completed' ORDER BY run_id").pluck().all()).toEqual([
        'run_1',
        'run_11',
        'run_13',
        'run_15',
        'run_17',
        'run_19',
        'run_3',
        'run_5',
        'run_7',
        'run_9',
      ]);
      expect(database.prepare("SELECT message_id, status, updated_at FROM runs WHERE run_id = 'run_4'").raw().get()).toEqual(['4', 'running', last.updatedAt]);
      expect(database.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      database.close();
    }
  });
});
