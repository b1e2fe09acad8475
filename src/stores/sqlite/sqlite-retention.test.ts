import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../core/define-tool.ts';
import { ToolError } from '../../core/tool-error.ts';
import { createFakeClock } from '../../testing/fake-clock.ts';
import { createWorker } from '../../worker/create-worker.ts';
import type { HandleMessageResult } from '../../worker/handle-message-options.ts';
import { migrateSqliteSchema, SQLITE_SCHEMA_VERSION } from './sqlite-migrations.ts';
import { createSqliteStores, type SqliteStores } from './sqlite-stores.ts';

const directory = mkdtempSync(join(tmpdir(), 'toolrun-sqlite-retention-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let fileCounter = 0;
const freshPath = () => join(directory, `retention-${++fileCounter}.db`);

const RETAIN_MS = 60_000;
const lookup = defineTool({ name: 'lookup', description: '', inputSchema: { type: 'object' }, idempotent: true, execute: async () => ({ ok: true }) });
const charge = defineTool({
  name: 'charge',
  description: '',
  inputSchema: { type: 'object' },
  execute: () => {
    throw new ToolError({ kind: 'auth', status: 401, message: 'API key rejected' });
  },
});

/** Runs every queued message: a body naming `charge` fails (tool_failed), any other completes after one `lookup`. */
async function drainQueue(stores: SqliteStores, clock: ReturnType<typeof createFakeClock>): Promise<HandleMessageResult[]> {
  const results: HandleMessageResult[] = [];
  const worker = createWorker({
    stores,
    clock,
    tools: [lookup, charge],
    sharedBreaker: false,
    model: async (request) => {
      const first = request.messages.find((message) => message.role === 'user');
      const name = String(first?.content).includes('charge') ? 'charge' : 'lookup';
      return request.stepIndex === 0
        ? { toolCalls: [{ id: 'c1', name, args: '{}' }], usage: { input: 1, output: 1 } }
        : { text: 'done', usage: { input: 1, output: 1 } };
    },
    onResult: (result) => results.push(result),
  });
  await worker.runUntilEmpty();
  return results;
}

const column = (stores: SqliteStores, sql: string) => stores.database.prepare(sql).pluck().all();

describe('SQLite retention of completed runs (retainCompletedRunsMs)', () => {
  it("deletes a completed run's checkpoint, ledger rows and acknowledged message once it is older than the retention, and nothing else", async () => {
    const clock = createFakeClock();
    const stores = createSqliteStores({ path: freshPath(), clock, retainCompletedRunsMs: RETAIN_MS, conversationSweep: { everyWrites: 1, batchSize: 500 } });
    try {
      // run_a completes; run_a:1 (an id that extends it) fails and is dead-lettered
      await stores.queue.enqueue({ id: 'a', body: JSON.stringify({ input: 'look it up' }) });
      await stores.queue.enqueue({ id: 'a:1', body: JSON.stringify({ input: 'charge the card' }) });
      expect((await drainQueue(stores, clock)).map((result) => result.status)).toEqual(['completed', 'tool_failed']);
      expect(column(stores, 'SELECT key FROM ledger ORDER BY key')).toEqual(['run_a:0:0', 'run_a:1:0:0']);

      // within the retention a sweep (every write here) deletes nothing
      await clock.advance(RETAIN_MS / 2);
      await stores.queue.enqueue({ id: 'b', body: JSON.stringify({ input: 'look it up' }) });
      expect((await drainQueue(stores, clock)).map((result) => result.status)).toEqual(['completed']);
      expect(column(stores, 'SELECT run_id FROM runs ORDER BY run_id')).toEqual(['run_a', 'run_a:1', 'run_b']);

      // past it: run_a goes with its ledger row and its message; the failed run and its rows stay
      await clock.advance(RETAIN_MS / 2 + 1);
      await stores.queue.enqueue({ id: 'c', body: JSON.stringify({ input: 'look it up' }) });
      await drainQueue(stores, clock);
      expect(column(stores, 'SELECT run_id FROM runs ORDER BY run_id')).toEqual(['run_a:1', 'run_b', 'run_c']);
      expect(column(stores, 'SELECT key FROM ledger ORDER BY key')).toEqual(['run_a:1:0:0', 'run_b:0:0', 'run_c:0:0']);
      // acknowledged messages older than the retention go, whatever their run's end (the run decides a duplicate)
      expect(column(stores, 'SELECT id FROM queue_messages ORDER BY id')).toEqual(['b', 'c']);
      expect(await stores.toolDlq.size()).toBe(1);

      // a duplicate of the failed run's message is still recognised: no second entry, no second call
      await stores.queue.enqueue({ id: 'a:1', body: JSON.stringify({ input: 'charge the card' }) });
      expect(await drainQueue(stores, clock)).toEqual([expect.objectContaining({ status: 'tool_failed', alreadyFinished: true })]);
      expect(await stores.toolDlq.size()).toBe(1);
      // the price, as documented: the completed run's id is free again, and a message with it runs again
      await stores.queue.enqueue({ id: 'a', body: JSON.stringify({ input: 'look it up' }) });
      expect(await drainQueue(stores, clock)).toEqual([expect.objectContaining({ status: 'completed', alreadyFinished: false })]);
    } finally {
      await stores.close();
    }
  });

  it('without the option nothing is deleted, however old', async () => {
    const clock = createFakeClock();
    const stores = createSqliteStores({ path: freshPath(), clock, conversationSweep: { everyWrites: 1, batchSize: 500 } });
    try {
      await stores.queue.enqueue({ id: 'a', body: JSON.stringify({ input: 'look it up' }) });
      await drainQueue(stores, clock);
      await clock.advance(365 * 24 * 3_600_000);
      await stores.queue.enqueue({ id: 'b', body: JSON.stringify({ input: 'look it up' }) });
      await drainQueue(stores, clock);
      expect(column(stores, 'SELECT run_id FROM runs ORDER BY run_id')).toEqual(['run_a', 'run_b']);
      expect(column(stores, 'SELECT id FROM queue_messages ORDER BY id')).toEqual(['a', 'b']);
    } finally {
      await stores.close();
    }
  });

  it('refuses a retention that is not a finite number of ms ≥ 0', () => {
    for (const value of [-1, Number.NaN, Number.POSITIVE_INFINITY, '60000' as unknown as number]) {
      const path = freshPath();
      expect(() => createSqliteStores({ path, retainCompletedRunsMs: value })).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('retainCompletedRunsMs') }),
      );
      expect(existsSync(path)).toBe(false); // refused before the file is created
    }
  });

  it('sweeps rows written by hand through the two retention indexes', async () => {
    const path = freshPath();
    const clock = createFakeClock();
    const old = new BetterSqlite3(path);
    migrateSqliteSchema(old, clock.now());
    const checkpoint = (runId: string, status: string) =>
      JSON.stringify({
        runId,
        messageId: runId.slice(4),
        status,
        stepIndex: 1,
        conversationRef: 'c',
        tokensSpent: { input: 0, output: 0 },
        toolAttempts: {},
        data: {},
        updatedAt: new Date(clock.now()).toISOString(),
      });
    const insertRun = old.prepare('INSERT INTO runs (run_id, message_id, status, updated_at, checkpoint) VALUES (?, ?, ?, ?, ?)');
    insertRun.run('run_old', 'old', 'completed', new Date(clock.now()).toISOString(), checkpoint('run_old', 'completed'));
    insertRun.run('run_failed', 'failed', 'tool_failed', new Date(clock.now()).toISOString(), checkpoint('run_failed', 'tool_failed'));
    old.prepare('INSERT INTO ledger (key, value, recorded_at_ms) VALUES (?, ?, ?)').run('run_old:0:0', '{}', clock.now());
    old.prepare("INSERT INTO queue_messages (id, body, enqueued_at_ms, acked_at_ms) VALUES ('old', '', ?, ?)").run(clock.now(), clock.now());
    old.close();

    await clock.advance(RETAIN_MS + 1);
    const stores = createSqliteStores({ path, clock, retainCompletedRunsMs: RETAIN_MS, conversationSweep: { everyWrites: 1, batchSize: 500 } });
    try {
      expect((stores.database.prepare('SELECT MAX(version) AS version FROM schema_version').get() as { version: number }).version).toBe(SQLITE_SCHEMA_VERSION);
      const plan = (sql: string) => JSON.stringify(stores.database.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(new Date(clock.now()).toISOString(), 10));
      expect(
        plan("SELECT run_id, message_id FROM runs INDEXED BY runs_completed_by_time WHERE status = 'completed' AND updated_at < ? ORDER BY updated_at LIMIT ?"),
      ).toContain('SEARCH runs USING INDEX runs_completed_by_time');
      expect(
        plan(
          'SELECT seq FROM queue_messages INDEXED BY queue_messages_acked_by_time WHERE acked_at_ms IS NOT NULL AND acked_at_ms < ? ORDER BY acked_at_ms LIMIT ?',
        ),
      ).toMatch(/SEARCH queue_messages USING (COVERING )?INDEX queue_messages_acked_by_time/);
      await stores.conversations.put('conv_new', [{ role: 'user', content: 'hi' }]); // a write: the sweep runs
      expect(column(stores, 'SELECT run_id FROM runs')).toEqual(['run_failed']);
      expect(column(stores, 'SELECT key FROM ledger')).toEqual([]);
      expect(column(stores, 'SELECT id FROM queue_messages')).toEqual([]);
    } finally {
      await stores.close();
    }
  });
});
