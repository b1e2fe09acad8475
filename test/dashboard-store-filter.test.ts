/**
 * The dashboard's lists ask the store for the entries of an indexed filter and page by `after`:
 * `storeFilterOf` never drops an entry the dashboard's own filter keeps, and `readEntryPage` /
 * `scanQueue` return what a full scan would, on SQLite and on a queue whose `list` ignores `after`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DeadLetterQueue, DeadLetterRecord } from '../src/ground/ports/stores.ts';
import { matchesToolFilter, readEntryPage, scanQueue, storeFilterOf, toolGroupOf, type ToolEntryFilter } from '../src/dashboard/dashboard-entries.ts';
import { createMemoryDeadLetterQueue, matchesDeadLetterFilter } from '../src/stores/memory/memory-dead-letter-queue.ts';
import { createSqliteStores } from '../src/stores/sqlite/sqlite-stores.ts';
import { createFakeClock } from '../src/testing/fake-clock.ts';

const names = ['book_flight', 'run', 'model:gpt', '?', 'a · b', 'search'];
const entryArbitrary = fc.record(
  {
    kind: fc.constantFrom('tool', 'model', 'run', 'other', undefined),
    toolName: fc.constantFrom(...names, undefined),
    modelName: fc.constantFrom('gpt', 'claude', undefined),
    reason: fc.constantFrom('circuit-open', 'retry-budget-exhausted', '?', 'x · y', undefined),
    lastError: fc.record({ kind: fc.constantFrom('server', 'auth', 'a · b'), status: fc.constantFrom(503, null) }),
  },
  { requiredKeys: [] },
);
const filterArbitrary = fc.record(
  {
    tool: fc.constantFrom(...names, 'model:claude', undefined),
    reason: fc.constantFrom('circuit-open', 'x · y', '?', undefined),
    kind: fc.constantFrom('tool', 'model', 'run', 'unknown', undefined),
  },
  { requiredKeys: [] },
);

function record(id: number, entry: unknown): DeadLetterRecord<unknown> {
  return { id: String(id), addedAt: '2026-01-01T00:00:00.000Z', entry };
}

const CAUSES = [
  { toolName: 'book_flight', reason: 'circuit-open' },
  { toolName: 'search', reason: 'retry-budget-exhausted' },
  { toolName: 'book_flight', reason: 'retry-budget-exhausted' },
];

/** A queue of 300 entries of three causes, one removed; `ignoreAfter`: a custom queue from before `after`. */
async function filledQueue(ignoreAfter: boolean): Promise<{ queue: DeadLetterQueue<unknown>; close: () => Promise<void> }> {
  const stores = ignoreAfter ? undefined : createSqliteStores({ path: ':memory:', clock: createFakeClock() });
  const base = (stores?.toolDlq as DeadLetterQueue<unknown> | undefined) ?? createMemoryDeadLetterQueue<unknown>({ clock: createFakeClock() });
  for (let index = 0; index < 300; index += 1) {
    const cause = CAUSES[index % 3]!;
    await base.push({ kind: 'tool', runId: `run_${index}`, ...cause, lastError: { kind: 'server', status: 503, message: `m${index}` } });
  }
  await base.remove('5');
  const queue: DeadLetterQueue<unknown> = ignoreAfter
    ? { ...base, list: (options) => base.list({ ...(options?.limit !== undefined ? { limit: options.limit } : {}), offset: options?.offset ?? 0 }) }
    : base;
  return { queue, close: async () => stores?.close() };
}

describe('storeFilterOf', () => {
  it('keeps every entry the dashboard filter keeps (tools, groups, reasons and kinds named like one another)', () => {
    fc.assert(
      fc.property(entryArbitrary, filterArbitrary, fc.boolean(), (entry, filter, byGroup) => {
        const dashboardFilter: ToolEntryFilter = byGroup ? { group: toolGroupOf(entry), kind: filter.kind } : filter;
        if (matchesToolFilter(record(1, entry), dashboardFilter)) expect(matchesDeadLetterFilter(entry, storeFilterOf(dashboardFilter))).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('hands the store what it can: a tool, a reason, a kind, the reason and tool of a group', () => {
    expect(storeFilterOf({ tool: 'book_flight', reason: 'circuit-open', kind: 'tool' })).toEqual({
      toolName: 'book_flight',
      reason: 'circuit-open',
      kind: 'tool',
    });
    expect(storeFilterOf({ group: 'circuit-open · server 503 · book_flight' })).toEqual({ reason: 'circuit-open', toolName: 'book_flight' });
    expect(storeFilterOf({ tool: 'model:gpt', kind: 'unknown', text: 'book' })).toEqual({});
    expect(storeFilterOf({ group: 'a · b · c · d' })).toEqual({});
  });
});

describe('readEntryPage and scanQueue in keyset pages', () => {
  for (const ignoreAfter of [false, true]) {
    const label = ignoreAfter ? 'a queue whose list ignores after' : 'SQLite';
    it(`return the pages a full scan would (${label})`, async () => {
      const { queue, close } = await filledQueue(ignoreAfter);
      try {
        const all: DeadLetterRecord<unknown>[] = [];
        expect(await scanQueue(queue, (item) => void all.push(item))).toBe(299);
        expect(new Set(all.map((item) => item.id)).size).toBe(299);
        const filter: ToolEntryFilter = { tool: 'book_flight', reason: 'retry-budget-exhausted' };
        const expected = all.filter((item) => matchesToolFilter(item, filter));
        expect(expected).toHaveLength(100);
        const matches = (item: DeadLetterRecord<unknown>) => matchesToolFilter(item, filter);
        const first = await readEntryPage(queue, { limit: 30, offset: 0, matches, storeFilter: storeFilterOf(filter) });
        expect(first).toMatchObject({ totalExact: false, hasMore: true });
        expect(first.records.map((item) => item.id)).toEqual(expected.slice(0, 30).map((item) => item.id));
        const last = await readEntryPage(queue, { limit: 30, offset: 90, matches, storeFilter: storeFilterOf(filter) });
        expect(last).toMatchObject({ total: 100, totalExact: true, hasMore: false });
        expect(last.records.map((item) => item.id)).toEqual(expected.slice(90).map((item) => item.id));
        if (!ignoreAfter) {
          // the store is asked for the tool's entries only: a page reads about the page
          expect(first.scanned).toBeLessThanOrEqual(64);
          const next = await readEntryPage(queue, { limit: 30, offset: 0, after: first.records[29]!.id, matches, storeFilter: storeFilterOf(filter) });
          expect(next.records.map((item) => item.id)).toEqual(expected.slice(30, 60).map((item) => item.id));
          const unfiltered = await readEntryPage(queue, { limit: 50, offset: 0, after: all[248]!.id });
          expect(unfiltered).toMatchObject({ total: 299, hasMore: false });
          expect(unfiltered.records.map((item) => item.id)).toEqual(all.slice(249).map((item) => item.id));
        }
      } finally {
        await close();
      }
    });
  }
});
