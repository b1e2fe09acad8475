/**
 * The dead-letter group counts (`countByGroup`) the dashboard's cause groups read instead of
 * scanning a queue: on memory, SQLite and PostgreSQL they equal the grouping of the listed entries
 * (`deadLetterGroupFields`, with token sums) through pushes, keyed pushes, removes, purges and
 * writes by hand; a SQLite file counts the entries written into it by hand before it was opened;
 * and the dashboard's groups from the counts equal those of a scan.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { DeadLetterGroupCount, DeadLetterQueue } from '../src/ground/ports/stores.ts';
import {
  countMessageEntries,
  countToolEntries,
  matchesMessageFilter,
  matchesToolFilter,
  planMessageList,
  planToolList,
  readEntryGroups,
  toolGroupOf,
} from '../src/dashboard/dashboard-entries.ts';
import { createMemoryDeadLetterQueue, deadLetterGroupFields } from '../src/stores/memory/memory-dead-letter-queue.ts';
import { createPostgresStores } from '../src/stores/postgres/postgres-stores.ts';
import { migrateSqliteSchema } from '../src/stores/sqlite/sqlite-migrations.ts';
import { createSqliteStores } from '../src/stores/sqlite/sqlite-stores.ts';
import { createFakeClock } from '../src/testing/fake-clock.ts';
import { createTestPool, dropSchema, uniqueName } from './fixtures/distributed-services.ts';

/** Entries of every shape the counts must read alike: tools, models, runs, messages with fields, odd types, non-objects. */
const ENTRIES: unknown[] = [
  {
    kind: 'tool',
    runId: 'r1',
    toolName: 'book_flight',
    reason: 'circuit-open',
    lastError: { kind: 'server', status: 503 },
    tokensSpent: { input: 1200, output: 80 },
  },
  {
    kind: 'tool',
    runId: 'r2',
    toolName: 'book_flight',
    reason: 'circuit-open',
    lastError: { kind: 'server', status: 503 },
    tokensSpent: { input: 300, output: 20.5 },
  },
  { kind: 'tool', runId: 'r3', toolName: 'book_flight', reason: 'circuit-open', lastError: { kind: 'server', status: 500 }, tokensSpent: { input: '7' } },
  {
    kind: 'model',
    modelName: 'gpt-x',
    reason: 'model-retries-exhausted',
    lastError: { kind: 'rate_limit', status: 429, code: 'slow' },
    tokensSpent: { input: 5 },
  },
  { kind: 'run', runId: 'r4', reason: 'delivery-limit-exceeded', lastError: { kind: 'crash', status: null } },
  { toolName: 'search', reason: 'retry-budget-exhausted', lastError: { kind: 7, status: '503' } },
  { kind: 'message', rawBody: '{}', reason: { code: 'INVALID_MESSAGE', fields: [{ path: '/user/id', problem: 'missing' }] } },
  { kind: 'message', rawBody: '{}', reason: { code: 'INVALID_MESSAGE', fields: [{ path: '', problem: 'type' }, { path: '/b' }] } },
  { kind: 'message', rawBody: '{}', reason: { code: 'INVALID_MESSAGE', fields: [null] } },
  { kind: 'message', rawBody: '{', reason: { code: 'MALFORMED_JSON', fields: [] } },
  { kind: 'message', rawBody: '{', reason: { code: 'MALFORMED_JSON', fields: { 0: { path: '/x' } } } },
  { kind: 'tool', toolName: 'nul \u0000 tool', reason: 'circuit-open', lastError: { kind: 'é ✓', status: 502.5 } },
  'a string',
  null,
  [1, 2],
];

const sortedCounts = (counts: readonly DeadLetterGroupCount[]) => counts.map((count) => JSON.stringify(count)).sort();

/** The group counts a queue should report: its listed entries grouped by their group fields, tokens summed. */
async function expectedCounts(queue: DeadLetterQueue<unknown>): Promise<string[]> {
  const groups = new Map<string, DeadLetterGroupCount>();
  for (const record of await queue.list()) {
    const { tokensInput, tokensOutput, ...fields } = deadLetterGroupFields(record.entry);
    const key = JSON.stringify(fields);
    const group = groups.get(key) ?? { ...fields, entries: 0, tokensInput: 0, tokensOutput: 0 };
    group.entries += 1;
    group.tokensInput += tokensInput;
    group.tokensOutput += tokensOutput;
    groups.set(key, group);
  }
  return sortedCounts([...groups.values()]);
}

async function expectCounted(queue: DeadLetterQueue<unknown>): Promise<void> {
  expect(sortedCounts(await queue.countByGroup!())).toEqual(await expectedCounts(queue));
}

/** Pushes, keyed pushes, removes and a purge, checking the counts after each kind of write. */
async function exerciseCounts(queue: DeadLetterQueue<unknown>, other: DeadLetterQueue<unknown>): Promise<void> {
  expect(await queue.countByGroup!()).toEqual([]);
  const ids: string[] = [];
  for (const entry of ENTRIES) ids.push(await queue.push(entry));
  expect((await queue.pushOnce('tool:r1:1', ENTRIES[0])).added).toBe(true);
  expect((await queue.pushOnce('tool:r1:1', ENTRIES[3])).added).toBe(false);
  await other.push(ENTRIES[0]);
  await expectCounted(queue);
  expect((await queue.countByGroup!()).find((count) => count.toolName === 'book_flight' && count.errorStatus === 503)).toEqual({
    kind: 'tool',
    toolName: 'book_flight',
    modelName: null,
    reason: 'circuit-open',
    code: null,
    errorKind: 'server',
    errorStatus: 503,
    fieldPath: null,
    fieldProblem: null,
    entries: 3,
    tokensInput: 2700,
    tokensOutput: 180.5,
  });
  expect((await queue.countByGroup!()).filter((count) => count.code === 'INVALID_MESSAGE').map((count) => [count.fieldPath, count.fieldProblem])).toEqual(
    expect.arrayContaining([
      ['/user/id', 'missing'],
      ['', 'type'],
      ['', null],
    ]),
  );
  await queue.remove(ids[0]!);
  await queue.remove(ids[0]!);
  await queue.remove(ids[3]!);
  await expectCounted(queue);
  expect((await queue.countByGroup!()).some((count) => count.modelName === 'gpt-x')).toBe(false);
  await queue.purge();
  expect(await queue.countByGroup!()).toEqual([]);
  expect((await other.countByGroup!()).map((count) => count.entries)).toEqual([1]);
  await queue.push(ENTRIES[1]);
  await expectCounted(queue);
}

describe('countByGroup', () => {
  it('memory: equals the grouping of the listed entries through pushes, keyed pushes, removes and purges', async () => {
    const clock = createFakeClock();
    await exerciseCounts(createMemoryDeadLetterQueue<unknown>({ clock }), createMemoryDeadLetterQueue<unknown>({ clock }));
  });

  it('SQLite: equals the grouping of the listed entries, by the store and by hand', async () => {
    const stores = createSqliteStores({ path: ':memory:', clock: createFakeClock() });
    try {
      await exerciseCounts(stores.toolDlq as DeadLetterQueue<unknown>, stores.messageDlq as DeadLetterQueue<unknown>);
      const id = await stores.toolDlq.push(ENTRIES[0] as never);
      stores.database.prepare('UPDATE dead_letters SET entry = ? WHERE id = ?').run(JSON.stringify(ENTRIES[6]), Number(id));
      await expectCounted(stores.toolDlq as DeadLetterQueue<unknown>);
      stores.database.prepare("DELETE FROM dead_letters WHERE queue = 'tool'").run();
      expect(await stores.toolDlq.countByGroup!()).toEqual([]);
    } finally {
      await stores.close();
    }
  });

  it('SQLite: the generated columns read any entry as deadLetterGroupFields does', async () => {
    const stores = createSqliteStores({ path: ':memory:', clock: createFakeClock() });
    const queue = stores.toolDlq as DeadLetterQueue<unknown>;
    const value = fc.oneof(fc.constantFrom(null, '', '/a', 'x', 0, 503, 2.5, -1, true), fc.array(fc.constantFrom(1, 'p')), fc.object({ maxDepth: 1 }));
    const entry = fc.record(
      {
        kind: fc.constantFrom('tool', 'model', 'message', 3, undefined),
        toolName: fc.constantFrom('t', 4, undefined),
        modelName: fc.constantFrom('m', undefined),
        reason: fc.oneof(
          fc.constantFrom('circuit-open', 5),
          fc.record(
            { code: value, fields: fc.oneof(value, fc.array(fc.oneof(value, fc.record({ path: value, problem: value }, { requiredKeys: [] })))) },
            { requiredKeys: [] },
          ),
        ),
        lastError: fc.oneof(value, fc.record({ kind: value, status: value, code: value }, { requiredKeys: [] })),
        tokensSpent: fc.oneof(value, fc.record({ input: value, output: value }, { requiredKeys: [] })),
      },
      { requiredKeys: [] },
    );
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.oneof(entry, value), { maxLength: 12 }), async (entries) => {
          await queue.purge();
          for (const item of entries) await queue.push(item);
          await expectCounted(queue);
        }),
        { numRuns: 150 },
      );
    } finally {
      await stores.close();
    }
  });

  it('PostgreSQL: equals the grouping of the listed entries, \\u0000 and lone surrogates included (SQLite reads a lone surrogate as U+FFFD)', async () => {
    const pool = createTestPool({ max: 4 });
    const schema = uniqueName('toolrun_dash_');
    try {
      const stores = await createPostgresStores({ pool, schema, clock: createFakeClock() });
      try {
        await exerciseCounts(stores.toolDlq as DeadLetterQueue<unknown>, stores.messageDlq as DeadLetterQueue<unknown>);
        await stores.toolDlq.push({ kind: 'tool', toolName: 'lone \ud800', reason: 'r \udc00', lastError: { kind: 'k \ud800\u0000' } } as never);
        await expectCounted(stores.toolDlq as DeadLetterQueue<unknown>);
      } finally {
        await stores.close();
      }
    } finally {
      await dropSchema(pool, schema);
      await pool.end();
    }
  });
});

/** Tool entries written by hand, with the spent tokens the groups must sum. */
const OLD_ENTRIES = ENTRIES.slice(0, 6);

describe('the group counts of entries written by hand', () => {
  const directory = mkdtempSync(join(tmpdir(), 'toolrun-dash-groups-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it('SQLite: counts the entries already in the file when it is opened, then keeps counting', async () => {
    const path = join(directory, 'by-hand.db');
    const clock = createFakeClock();
    const old = new BetterSqlite3(path);
    migrateSqliteSchema(old, clock.now());
    const insert = old.prepare('INSERT INTO dead_letters (queue, entry, added_at_ms) VALUES (?, ?, ?)');
    const ids = OLD_ENTRIES.map((entry) => String(insert.run('tool', JSON.stringify(entry), clock.now()).lastInsertRowid));
    insert.run('message', JSON.stringify(ENTRIES[6]), clock.now());
    old.close();
    const stores = createSqliteStores({ path, clock });
    try {
      const toolDlq = stores.toolDlq as DeadLetterQueue<unknown>;
      await expectCounted(toolDlq);
      expect((await toolDlq.countByGroup!()).reduce((sum, count) => sum + count.tokensInput, 0)).toBe(1505);
      await expectCounted(stores.messageDlq as DeadLetterQueue<unknown>);
      await toolDlq.push(ENTRIES[0]);
      await toolDlq.remove(ids[1]!);
      await expectCounted(toolDlq);
    } finally {
      await stores.close();
    }
  });
});

describe("the dashboard's groups from the counts", () => {
  it('equal the groups of a scan of the same entries, and count filtered lists without reading them', async () => {
    const stores = createSqliteStores({ path: ':memory:', clock: createFakeClock() });
    try {
      const toolDlq = stores.toolDlq as DeadLetterQueue<unknown>;
      const messageDlq = stores.messageDlq as DeadLetterQueue<unknown>;
      for (const entry of ENTRIES) {
        await toolDlq.push(entry);
        await messageDlq.push(entry);
      }
      const withoutCounts = (queue: DeadLetterQueue<unknown>): DeadLetterQueue<unknown> => {
        const { countByGroup: _counts, ...rest } = queue;
        return rest;
      };
      const counted = await readEntryGroups({ toolDlq, messageDlq }, '2026-01-01T00:00:00.000Z');
      const scanned = await readEntryGroups({ toolDlq: withoutCounts(toolDlq), messageDlq: withoutCounts(messageDlq) }, '2026-01-01T00:00:00.000Z');
      expect(counted.source).toEqual({ tool: 'counts', message: 'counts' });
      expect(counted.scanned).toEqual({ tool: 0, message: 0 });
      expect(scanned.source).toEqual({ tool: 'scan', message: 'scan' });
      expect(scanned.scanned).toEqual({ tool: ENTRIES.length, message: ENTRIES.length });
      expect(counted.tool).toEqual(scanned.tool);
      expect(counted.message).toEqual(scanned.message);
      expect(counted.tool.find((group) => group.tool === 'book_flight')).toEqual({
        group: 'circuit-open · server 503 · book_flight',
        count: 2,
        tool: 'book_flight',
        cause: 'circuit-open · server 503',
        tokens: { input: 1500, output: 100.5 },
      });
      expect(counted.message.map((group) => group.group)).toEqual(expect.arrayContaining(['INVALID_MESSAGE · /user/id missing', 'INVALID_MESSAGE · / type']));
      const records = await toolDlq.list();
      for (const filter of [
        { group: toolGroupOf(ENTRIES[0]) },
        { tool: 'book_flight' },
        { kind: 'run' as const },
        { reason: 'circuit-open', tool: 'search' },
      ]) {
        expect(await countToolEntries(toolDlq, filter)).toBe(records.filter((record) => matchesToolFilter(record, filter)).length);
      }
      expect(await countToolEntries(toolDlq, { text: 'book' })).toBeUndefined();
      expect(await countToolEntries(withoutCounts(toolDlq), { tool: 'book_flight' })).toBeUndefined();
      expect(await countMessageEntries(messageDlq, { group: 'INVALID_MESSAGE · /user/id missing' })).toBe(1);
      expect(await planMessageList(messageDlq, { group: 'INVALID_MESSAGE · /user/id missing' })).toEqual({
        storeFilter: { code: 'INVALID_MESSAGE' },
        total: 1,
      });
      expect(await planMessageList(messageDlq, { group: 'unknown' })).toEqual({
        storeFilter: {},
        total: (await messageDlq.list()).filter((record) => matchesMessageFilter(record, { group: 'unknown' })).length,
      });
      expect(await planMessageList(withoutCounts(messageDlq), { group: 'MALFORMED_JSON' })).toEqual({ storeFilter: {} });
      // the store gets the most selective member only: circuit-open has 4 entries, book_flight 3
      expect(await planToolList(toolDlq, { group: 'circuit-open · server 503 · book_flight' })).toEqual({ storeFilter: { toolName: 'book_flight' }, total: 2 });
      expect(await planToolList(toolDlq, { reason: 'circuit-open', tool: 'search', text: 'x' })).toEqual({ storeFilter: { toolName: 'search' } });
      expect(await planToolList(withoutCounts(toolDlq), { reason: 'circuit-open', tool: 'search' })).toEqual({
        storeFilter: { reason: 'circuit-open', toolName: 'search' },
      });
    } finally {
      await stores.close();
    }
  });
});
