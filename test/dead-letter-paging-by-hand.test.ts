/**
 * The SQLite dead-letter queues' cause columns, entry count and cause counts are computed from the
 * entry, so entries inserted into the file by hand (or by an older toolrun) before it is opened are
 * found by `filter`, paged by `after`, and counted by `size()` and `countByCause()`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { DeadLetterQueue } from '../src/ground/ports/stores.ts';
import { migrateSqliteSchema } from '../src/stores/sqlite/sqlite-migrations.ts';
import { createSqliteStores } from '../src/stores/sqlite/sqlite-stores.ts';
import { createFakeClock } from '../src/testing/fake-clock.ts';

/** Entries as an older toolrun wrote them: tool, model, run, one without a kind, one holding \u0000 and a lone surrogate. */
const OLD_TOOL_ENTRIES: unknown[] = [
  { kind: 'tool', runId: 'run_1', toolName: 'book_flight', reason: 'retry-budget-exhausted', lastError: { kind: 'server', status: 503, message: 'down' } },
  {
    kind: 'model',
    runId: 'run_2',
    modelName: 'gpt-x',
    reason: 'model-retries-exhausted',
    lastError: { kind: 'rate_limit', status: 429, message: 'slow', code: 'rate_limited' },
  },
  { kind: 'run', runId: 'run_3', reason: 'delivery-limit-exceeded', lastError: { kind: 'crash', status: null, message: '' } },
  { runId: 'run_4', toolName: 'book_flight', reason: 'circuit-open' },
  { kind: 'tool', runId: 'run_5', toolName: 'search_flights', reason: 'circuit-open', toolArgs: { note: 'nul \u0000 and lone \ud800' } },
];
const OLD_MESSAGE_ENTRY = { kind: 'message', rawBody: '{', reason: { code: 'MALFORMED_JSON', detail: 'not JSON' }, receivedAt: '2026-01-01T00:00:00.000Z' };

async function expectFoundByFilters(toolDlq: DeadLetterQueue<unknown>, messageDlq: DeadLetterQueue<unknown>, ids: string[]) {
  const positions = async (listOptions: Parameters<DeadLetterQueue<unknown>['list']>[0]) =>
    (await toolDlq.list(listOptions)).map((record) => ids.indexOf(record.id));
  expect(await toolDlq.size()).toBe(OLD_TOOL_ENTRIES.length);
  expect(await messageDlq.size()).toBe(1);
  expect(await positions({ filter: { toolName: 'book_flight' } })).toEqual([0, 3]);
  expect(await positions({ filter: { kind: 'tool' } })).toEqual([0, 3, 4]);
  expect(await positions({ filter: { reason: 'circuit-open' } })).toEqual([3, 4]);
  expect(await positions({ filter: { code: 'rate_limited' } })).toEqual([1]);
  expect(await positions({ filter: { modelName: 'gpt-x' } })).toEqual([1]);
  expect(await positions({ filter: { kind: 'run' } })).toEqual([2]);
  expect(await positions({ after: ids[1]!, limit: 2 })).toEqual([2, 3]);
  // the cause counts start from the entries already there
  const counts = (await toolDlq.countByCause?.()) ?? [];
  expect(counts.reduce((sum, count) => sum + count.entries, 0)).toBe(OLD_TOOL_ENTRIES.length);
  expect(counts.filter((count) => count.toolName === 'book_flight').map(({ kind, reason, entries }) => ({ kind, reason, entries }))).toEqual(
    expect.arrayContaining([
      { kind: 'tool', reason: 'retry-budget-exhausted', entries: 1 },
      { kind: 'tool', reason: 'circuit-open', entries: 1 },
    ]),
  );
  expect(counts.find((count) => count.modelName === 'gpt-x')).toMatchObject({ kind: 'model', code: 'rate_limited', entries: 1 });
  expect((await messageDlq.list({ filter: { code: 'MALFORMED_JSON' } })).map((record) => record.entry)).toEqual([OLD_MESSAGE_ENTRY]);
  // new pushes are counted and found next to the ones written by hand
  await toolDlq.push({ kind: 'tool', toolName: 'book_flight', reason: 'circuit-open' });
  expect(await toolDlq.size()).toBe(OLD_TOOL_ENTRIES.length + 1);
  expect((await positions({ filter: { toolName: 'book_flight', reason: 'circuit-open' } })).length).toBe(2);
  expect(await toolDlq.remove(ids[0]!)).toBe(true);
  expect(await toolDlq.size()).toBe(OLD_TOOL_ENTRIES.length);
  expect(await toolDlq.purge()).toBe(OLD_TOOL_ENTRIES.length);
  expect(await toolDlq.size()).toBe(0);
  expect(await messageDlq.size()).toBe(1);
}

describe('SQLite dead letters inserted by hand', () => {
  const directory = mkdtempSync(join(tmpdir(), 'toolrun-dlq-migration-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it('finds, pages and counts the entries written before the file was opened', async () => {
    const path = join(directory, 'by-hand.db');
    const clock = createFakeClock();
    const old = new BetterSqlite3(path);
    migrateSqliteSchema(old, clock.now());
    const insert = old.prepare('INSERT INTO dead_letters (queue, entry, added_at_ms) VALUES (?, ?, ?)');
    const ids = OLD_TOOL_ENTRIES.map((entry) => String(insert.run('tool', JSON.stringify(entry), clock.now()).lastInsertRowid));
    insert.run('message', JSON.stringify(OLD_MESSAGE_ENTRY), clock.now());
    old.close();
    const stores = createSqliteStores({ path, clock });
    try {
      await expectFoundByFilters(stores.toolDlq as DeadLetterQueue<unknown>, stores.messageDlq as DeadLetterQueue<unknown>, ids);
    } finally {
      await stores.close();
    }
  });
});
