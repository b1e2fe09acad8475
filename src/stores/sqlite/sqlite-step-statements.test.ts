/**
 * What a SQLite step commit reads and writes: the checkpoint row is right whichever way the
 * journal's remembered status points (two bundles on one file changing a run's status under each
 * other), and a step's conversation head refresh still follows the head's expiry read together with
 * the last chunk.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunCheckpoint } from '../../ground/ports/run-journal.ts';
import { createFakeClock } from '../../testing/fake-clock.ts';
import { createSqliteStores } from './sqlite-stores.ts';

const directory = mkdtempSync(join(tmpdir(), 'toolrun-sqlite-step-statements-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let fileCounter = 0;
const freshPath = () => join(directory, `steps-${++fileCounter}.db`);

const checkpoint = (status: RunCheckpoint['status'], stepIndex: number): RunCheckpoint => ({
  runId: 'run_1',
  messageId: 'm1',
  status,
  stepIndex,
  conversationRef: 'conv_1',
  tokensSpent: { input: stepIndex, output: 0 },
  toolAttempts: {},
  updatedAt: new Date(1_000 + stepIndex).toISOString(),
});

describe('SQLite step commits', () => {
  it('leave the checkpoint last committed, whichever bundle changed the status before', async () => {
    const path = freshPath();
    const clock = createFakeClock(1_000_000);
    const first = createSqliteStores({ path, clock, groupCommit: false });
    const second = createSqliteStores({ path, clock, groupCommit: false });
    const row = () => first.database.prepare('SELECT status, checkpoint FROM runs WHERE run_id = ?').get('run_1') as { status: string; checkpoint: string };
    const byStatus = () => first.database.prepare('SELECT status, COUNT(*) AS count FROM runs INDEXED BY runs_by_status GROUP BY status').all();
    try {
      const messages: unknown[] = [{ role: 'user', content: 'go' }];
      const step = (status: RunCheckpoint['status'], stepIndex: number, storedCount: number) => ({
        conversationRef: 'conv_1',
        messages,
        storedCount,
        checkpoint: checkpoint(status, stepIndex),
        calls: [],
      });
      await first.journal.commit(step('running', 0, 0));
      await first.journal.commit(step('running', 1, 1));
      // another bundle changes the status: the first still remembers 'running'
      await second.journal.commit(step('max_steps', 2, 1));
      expect(row().status).toBe('max_steps');
      await first.journal.commit(step('running', 3, 1));
      expect(row().status).toBe('running');
      expect(JSON.parse(row().checkpoint)).toEqual(checkpoint('running', 3));
      // the first now remembers 'running' but the row says 'completed': the update finds nothing, the upsert follows
      await second.journal.commit(step('completed', 4, 1));
      await first.journal.commit(step('running', 5, 1));
      expect(JSON.parse(row().checkpoint)).toEqual(checkpoint('running', 5));
      // and a status change it remembers goes straight to the upsert
      await first.journal.commit(step('cancelled', 6, 1));
      expect(JSON.parse(row().checkpoint)).toEqual(checkpoint('cancelled', 6));
      expect(byStatus()).toEqual([{ status: 'cancelled', count: 1 }]);
      expect(await second.runs.get('run_1')).toEqual(checkpoint('cancelled', 6));
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('refresh the conversation row only once its expiry lags, from the read of the last chunk', async () => {
    const clock = createFakeClock(1_000_000);
    const ttlMs = 100_000; // refreshed when it lags by more than 1,000 ms
    const stores = createSqliteStores({ path: freshPath(), clock, conversationTtlMs: ttlMs, groupCommit: false });
    const headExpiry = () => stores.database.prepare('SELECT expires_at_ms FROM conversations WHERE ref = ?').pluck().get('conv_1');
    try {
      const messages: unknown[] = [{ role: 'user', content: 'go' }];
      await stores.journal.commit({ conversationRef: 'conv_1', messages, storedCount: 0, checkpoint: checkpoint('running', 0), calls: [] });
      expect(headExpiry()).toBe(1_000_000 + ttlMs);
      clock.advance(500);
      messages.push({ role: 'assistant', content: 'a' });
      await stores.journal.commit({ conversationRef: 'conv_1', messages, storedCount: 1, checkpoint: checkpoint('running', 1), calls: [] });
      expect(headExpiry()).toBe(1_000_000 + ttlMs);
      clock.advance(1_000);
      messages.push({ role: 'assistant', content: 'b' });
      await stores.journal.commit({ conversationRef: 'conv_1', messages, storedCount: 2, checkpoint: checkpoint('running', 2), calls: [] });
      expect(headExpiry()).toBe(1_001_500 + ttlMs);
      // the row deleted by hand: the next step writes it again
      stores.database.prepare('DELETE FROM conversations WHERE ref = ?').run('conv_1');
      messages.push({ role: 'assistant', content: 'c' });
      await stores.journal.commit({ conversationRef: 'conv_1', messages, storedCount: 3, checkpoint: checkpoint('running', 3), calls: [] });
      expect(headExpiry()).toBe(1_001_500 + ttlMs);
      expect(await stores.conversations.get('conv_1')).toEqual(messages);
    } finally {
      await stores.close();
    }
  });
});
