import { describe, expect, it } from 'vitest';
import type { DeadLetterCauseCount, DeadLetterQueue, Stores } from '../../ground/ports/stores.ts';
import { deadLetterCauseFields } from '../../stores/memory/memory-dead-letter-queue.ts';
import { useStoresHarness, type MakeStores } from './stores-contract-harness.ts';

const ONE_MINUTE_MS = 60_000;

/** An entry shaped like a tool-DLQ entry, with the awkward values JSON stores get wrong. */
function toolFailureEntry(index: number) {
  return {
    runId: `run_${index}`,
    stepIndex: index,
    toolName: 'book_flight',
    toolArgs: { user: '***', seats: [1, 2], note: 'Grüße "quoted" \\ back\nslash \u2028 東京 🚀', empty: {} },
    attempts: 3,
    lastError: { kind: 'environment', status: index % 2 === 0 ? 503 : null, message: 'upstream unavailable' },
    conversationRef: `conv_${index}`,
    tokensSpent: { input: 1234, output: 0 },
    numbers: [0, -0.5, 0.1, 1e-7, 1e21, -9007199254740991],
    flags: [true, false, null],
    firstSeenAt: '2026-01-01T00:00:00.000Z',
    originalMessageId: `message_${index}`,
  };
}

/** What `DeadLetterQueue.bytes()` counts for an entry: the UTF-8 length of its JSON text. */
function jsonBytes(entry: unknown): number {
  return new TextEncoder().encode(JSON.stringify(entry)).length;
}

/**
 * Contract of `DeadLetterQueue` for one of the two queues of a `Stores` bundle, `pushOnce`
 * included: one entry per key, atomic for concurrent callers, keys kept after their entry was
 * removed or purged, keys per queue; `bytes()` as the exact UTF-8 size of the stored entries' JSON.
 */
export function describeDeadLetterQueueContract(makeStores: MakeStores, which: 'messageDlq' | 'toolDlq'): void {
  describe(`DeadLetterQueue (${which})`, () => {
    const harness = useStoresHarness(makeStores);
    const dlq = (): DeadLetterQueue<unknown> => harness().stores[which];
    const otherDlq = (): DeadLetterQueue<unknown> => harness().stores[which === 'messageDlq' ? 'toolDlq' : 'messageDlq'];

    it('starts empty', async () => {
      expect(await dlq().size()).toBe(0);
      expect(await dlq().list()).toEqual([]);
      expect(await dlq().oldest()).toBeUndefined();
    });

    it('round-trips an entry exactly, with a string id and the clock time it was added', async () => {
      const { clock } = harness();
      const addedAt = new Date(clock.now()).toISOString();
      const id = await dlq().push(toolFailureEntry(1));
      expect(typeof id).toBe('string');
      expect(id.length).toBeGreaterThan(0);
      expect(await dlq().get(id)).toEqual({ id, addedAt, entry: toolFailureEntry(1) });
      expect(await dlq().size()).toBe(1);
    });

    it('round-trips plain strings, numbers and null as entries', async () => {
      for (const entry of ['{not json', '', 0, 12.5, null, false, [[]]]) {
        const id = await dlq().push(entry);
        expect((await dlq().get(id))?.entry).toEqual(entry);
      }
    });

    it('lists oldest first, with limit and offset', async () => {
      const { clock } = harness();
      const ids: string[] = [];
      for (let index = 0; index < 5; index++) {
        ids.push(await dlq().push(toolFailureEntry(index)));
        await clock.advance(ONE_MINUTE_MS);
      }
      expect(new Set(ids).size).toBe(5);
      const all = await dlq().list();
      expect(all.map((record) => record.id)).toEqual(ids);
      expect(all.map((record) => record.entry)).toEqual([0, 1, 2, 3, 4].map(toolFailureEntry));
      const addedAt = all.map((record) => Date.parse(record.addedAt));
      expect(addedAt).toEqual([...addedAt].sort((left, right) => left - right));
      expect(addedAt[4]! - addedAt[0]!).toBe(4 * ONE_MINUTE_MS);
      expect((await dlq().list({ limit: 2 })).map((record) => record.id)).toEqual(ids.slice(0, 2));
      expect((await dlq().list({ offset: 3 })).map((record) => record.id)).toEqual(ids.slice(3));
      expect((await dlq().list({ limit: 2, offset: 1 })).map((record) => record.id)).toEqual(ids.slice(1, 3));
      expect(await dlq().list({ limit: 2, offset: 10 })).toEqual([]);
    });

    it('lists in id order past nine entries (ids compare as numbers, not text)', async () => {
      const ids: string[] = [];
      for (let index = 0; index < 12; index++) ids.push(await dlq().push(index));
      for (let index = 0; index < 3; index++) await otherDlq().push(`other ${index}`);
      for (let index = 12; index < 24; index++) ids.push((await dlq().pushOnce(`key:${index}`, index)).id);
      expect((await dlq().list()).map((record) => record.entry)).toEqual(Array.from({ length: 24 }, (_, index) => index));
      expect((await dlq().list()).map((record) => record.id)).toEqual(ids);
      expect((await dlq().list({ offset: 9, limit: 3 })).map((record) => record.entry)).toEqual([9, 10, 11]);
      for (const id of ids.slice(0, 9)) await dlq().remove(id);
      expect((await dlq().oldest())?.entry).toBe(9);
    });

    it('reports the oldest entry, which moves on when it is removed', async () => {
      const { clock } = harness();
      const firstAddedAt = new Date(clock.now()).toISOString();
      const first = await dlq().push(toolFailureEntry(1));
      await clock.advance(ONE_MINUTE_MS);
      const second = await dlq().push(toolFailureEntry(2));
      expect(await dlq().oldest()).toEqual({ id: first, addedAt: firstAddedAt, entry: toolFailureEntry(1) });
      await dlq().remove(first);
      expect((await dlq().oldest())?.id).toBe(second);
    });

    it('removes by id, once', async () => {
      const first = await dlq().push(toolFailureEntry(1));
      const second = await dlq().push(toolFailureEntry(2));
      expect(await dlq().remove(first)).toBe(true);
      expect(await dlq().remove(first)).toBe(false);
      expect(await dlq().remove('no-such-id')).toBe(false);
      expect(await dlq().get(first)).toBeUndefined();
      expect(await dlq().get('no-such-id')).toBeUndefined();
      expect(await dlq().size()).toBe(1);
      expect((await dlq().list()).map((record) => record.id)).toEqual([second]);
    });

    it('never reuses the id of a removed entry', async () => {
      const first = await dlq().push(toolFailureEntry(1));
      await dlq().remove(first);
      const second = await dlq().push(toolFailureEntry(2));
      expect(second).not.toBe(first);
      expect(await dlq().get(first)).toBeUndefined();
    });

    it('purges every entry and returns how many it removed', async () => {
      for (let index = 0; index < 3; index++) await dlq().push(toolFailureEntry(index));
      expect(await dlq().purge()).toBe(3);
      expect(await dlq().size()).toBe(0);
      expect(await dlq().oldest()).toBeUndefined();
      expect(await dlq().purge()).toBe(0);
    });

    it('keeps the two dead-letter queues of a bundle apart', async () => {
      await dlq().push(toolFailureEntry(1));
      expect(await otherDlq().size()).toBe(0);
      await otherDlq().push('other');
      expect(await dlq().purge()).toBe(1);
      expect(await otherDlq().size()).toBe(1);
    });

    it('stores large entries whole', async () => {
      const conversationLike = Array.from({ length: 1_000 }, (_, index) => ({ role: 'user', content: `message ${index} ${'x'.repeat(200)}` }));
      const entry = { ...toolFailureEntry(1), blob: 'é'.repeat(1_000_000), conversationLike };
      const id = await dlq().push(entry);
      expect((await dlq().get(id))?.entry).toEqual(entry);
    });

    it('does not let callers mutate a stored entry', async () => {
      const entry = toolFailureEntry(1);
      const id = await dlq().push(entry);
      entry.toolArgs.seats.push(99);
      const read = (await dlq().get(id))!.entry as ReturnType<typeof toolFailureEntry>;
      read.tokensSpent.input = -1;
      expect((await dlq().get(id))?.entry).toEqual(toolFailureEntry(1));
    });

    it('hands out distinct ids to concurrent pushes and loses none', async () => {
      const ids = await Promise.all(Array.from({ length: 30 }, (_, index) => dlq().push(toolFailureEntry(index))));
      expect(new Set(ids).size).toBe(30);
      expect(await dlq().size()).toBe(30);
    });

    it('pushOnce stores an entry once per key: the same key again returns the first id and adds nothing', async () => {
      const { clock } = harness();
      const addedAt = new Date(clock.now()).toISOString();
      const first = await dlq().pushOnce('message:m1', toolFailureEntry(1));
      expect(first.added).toBe(true);
      expect(typeof first.id).toBe('string');
      expect(first.id.length).toBeGreaterThan(0);
      await clock.advance(ONE_MINUTE_MS);
      expect(await dlq().pushOnce('message:m1', toolFailureEntry(2))).toEqual({ id: first.id, added: false });
      expect(await dlq().pushOnce('message:m1', toolFailureEntry(3))).toEqual({ id: first.id, added: false });
      expect(await dlq().size()).toBe(1);
      expect(await dlq().list()).toEqual([{ id: first.id, addedAt, entry: toolFailureEntry(1) }]);
    });

    it('pushOnce with different keys stores each, in insertion order with plain pushes, which claim no key', async () => {
      const first = await dlq().pushOnce('tool:run_1:1', toolFailureEntry(1));
      const plain = await dlq().push(toolFailureEntry(2));
      const second = await dlq().pushOnce('tool:run_1:2', toolFailureEntry(3));
      const third = await dlq().pushOnce(plain, toolFailureEntry(4));
      expect([first.added, second.added, third.added]).toEqual([true, true, true]);
      expect(new Set([first.id, plain, second.id, third.id]).size).toBe(4);
      const all = await dlq().list();
      expect(all.map((record) => record.id)).toEqual([first.id, plain, second.id, third.id]);
      expect(all.map((record) => record.entry)).toEqual([1, 2, 3, 4].map(toolFailureEntry));
    });

    it('of concurrent pushOnce calls with one key exactly one adds, and every caller gets its id', async () => {
      const results = await Promise.all(Array.from({ length: 20 }, (_, index) => dlq().pushOnce('message:m1', toolFailureEntry(index))));
      const winners = results.filter((result) => result.added);
      expect(winners).toHaveLength(1);
      expect(results.map((result) => result.id)).toEqual(results.map(() => winners[0]!.id));
      expect(await dlq().size()).toBe(1);
      expect((await dlq().get(winners[0]!.id))?.entry).toEqual(toolFailureEntry(results.indexOf(winners[0]!)));
    });

    it('pushOnce still deduplicates the key of an entry that was removed or purged (it was handled)', async () => {
      const removed = await dlq().pushOnce('tool:run_1:3', toolFailureEntry(1));
      const purged = await dlq().pushOnce('tool:run_2:3', toolFailureEntry(2));
      expect(await dlq().remove(removed.id)).toBe(true);
      expect(await dlq().pushOnce('tool:run_1:3', toolFailureEntry(1))).toEqual({ id: removed.id, added: false });
      expect(await dlq().purge()).toBe(1);
      expect(await dlq().pushOnce('tool:run_2:3', toolFailureEntry(2))).toEqual({ id: purged.id, added: false });
      expect(await dlq().size()).toBe(0);
      expect(await dlq().get(removed.id)).toBeUndefined();
      // a new key after all that gets a new id
      const fresh = await dlq().pushOnce('tool:run_3:3', toolFailureEntry(3));
      expect(fresh.added).toBe(true);
      expect([removed.id, purged.id]).not.toContain(fresh.id);
    });

    it("counts no bytes when empty, and the UTF-8 bytes of each stored entry's JSON after pushes", async () => {
      expect(await dlq().bytes()).toBe(0);
      const entries: unknown[] = [toolFailureEntry(1), 'é', '東京 🚀', { nested: ['x', null, 1.5] }, 0];
      for (const entry of entries) await dlq().push(entry);
      // 'é' is 2 bytes, '東' 3, '🚀' 4: bytes, not UTF-16 code units
      expect(jsonBytes('東京 🚀')).toBe(2 + 3 + 3 + 1 + 4);
      expect(await dlq().bytes()).toBe(entries.reduce<number>((sum, entry) => sum + jsonBytes(entry), 0));
    });

    it('takes removed and purged entries out of bytes(), adds nothing for a duplicate pushOnce, and keeps the queues apart', async () => {
      const kept = await dlq().push(toolFailureEntry(1));
      const removed = await dlq().push(toolFailureEntry(2));
      const keyed = await dlq().pushOnce('tool:run_3:3', toolFailureEntry(3));
      expect(keyed.added).toBe(true);
      const total = jsonBytes(toolFailureEntry(1)) + jsonBytes(toolFailureEntry(2)) + jsonBytes(toolFailureEntry(3));
      expect(await dlq().bytes()).toBe(total);
      expect((await dlq().pushOnce('tool:run_3:3', { much: 'x'.repeat(10_000) })).added).toBe(false);
      expect(await dlq().bytes()).toBe(total);
      expect(await dlq().remove(removed)).toBe(true);
      expect(await dlq().remove(removed)).toBe(false);
      expect(await dlq().remove('no-such-id')).toBe(false);
      expect(await dlq().bytes()).toBe(total - jsonBytes(toolFailureEntry(2)));
      await otherDlq().push('other queue');
      expect(await otherDlq().bytes()).toBe(jsonBytes('other queue'));
      expect(await dlq().purge()).toBe(2);
      expect(await dlq().bytes()).toBe(0);
      expect(await otherDlq().bytes()).toBe(jsonBytes('other queue'));
      await dlq().push('after purge');
      expect(await dlq().bytes()).toBe(jsonBytes('after purge'));
      expect(await dlq().get(kept)).toBeUndefined();
    });

    it('counts the bytes of concurrent pushes and of a large entry exactly', async () => {
      const entries = Array.from({ length: 30 }, (_, index) => toolFailureEntry(index));
      await Promise.all(entries.map((entry) => dlq().push(entry)));
      const pushed = entries.reduce((sum, entry) => sum + jsonBytes(entry), 0);
      expect(await dlq().bytes()).toBe(pushed);
      const large = { blob: 'é'.repeat(500_000) };
      const id = await dlq().push(large);
      expect(await dlq().bytes()).toBe(pushed + 1_000_000 + jsonBytes({ blob: '' }));
      await dlq().remove(id);
      expect(await dlq().bytes()).toBe(pushed);
    });

    it('pages with after (the last id of the previous page): every entry exactly once, oldest first', async () => {
      const ids: string[] = [];
      for (let index = 0; index < 23; index++) ids.push(await dlq().push(index));
      await otherDlq().push('other');
      const seen: string[] = [];
      let after: string | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const page = await dlq().list({ limit: 5, ...(after !== undefined ? { after } : {}) });
        if (page.length === 0) break;
        seen.push(...page.map((record) => record.id));
        after = page[page.length - 1]!.id;
      }
      expect(seen).toEqual(ids);
      expect((await dlq().list({ after: ids[9]!, limit: 3 })).map((record) => record.entry)).toEqual([10, 11, 12]);
      expect((await dlq().list({ after: ids[9]!, offset: 2, limit: 2 })).map((record) => record.entry)).toEqual([12, 13]);
      expect((await dlq().list({ after: ids[9]! })).map((record) => record.entry)).toEqual(Array.from({ length: 13 }, (_, index) => 10 + index));
      expect(await dlq().list({ after: ids[22]! })).toEqual([]);
      expect(await dlq().list({ after: 'no-such-id' })).toEqual([]);
    });

    it('pages with after stay stable when entries are pushed and removed between pages', async () => {
      const ids: string[] = [];
      for (let index = 0; index < 10; index++) ids.push(await dlq().push(index));
      const first = await dlq().list({ limit: 4 });
      expect(first.map((record) => record.entry)).toEqual([0, 1, 2, 3]);
      // between pages: the last record of the page and entries on both sides of it go, new ones come
      await dlq().remove(ids[3]!);
      await dlq().remove(ids[1]!);
      await dlq().remove(ids[5]!);
      const pushed = await dlq().push(10);
      const second = await dlq().list({ limit: 4, after: first[3]!.id });
      expect(second.map((record) => record.entry)).toEqual([4, 6, 7, 8]);
      await dlq().push(11);
      const third = await dlq().list({ limit: 4, after: second[3]!.id });
      expect(third.map((record) => record.entry)).toEqual([9, 10, 11]);
      expect(third[1]!.id).toBe(pushed);
      expect(await dlq().list({ limit: 4, after: third[2]!.id })).toEqual([]);
    });

    it('filters by the cause fields (kind, toolName, modelName, reason, code), with limit, offset and after', async () => {
      const tool = (index: number, toolName: string, reason: string) => ({ ...toolFailureEntry(index), kind: 'tool', toolName, reason });
      const entries: unknown[] = [
        tool(0, 'book_flight', 'retry-budget-exhausted'),
        {
          kind: 'model',
          modelName: 'gpt-x',
          reason: 'model-retries-exhausted',
          lastError: { kind: 'rate_limit', status: 429, message: 'slow down', code: 'rate_limited' },
        },
        tool(2, 'search_flights', 'circuit-open'),
        { kind: 'message', rawBody: '{', reason: { code: 'MALFORMED_JSON', detail: 'not JSON' }, receivedAt: '2026-01-01T00:00:00.000Z' },
        tool(4, 'book_flight', 'circuit-open'),
        { kind: 'run', reason: 'delivery-limit-exceeded', deliveries: 5, lastError: { kind: 'crash', status: null, message: 'stopped' } },
        // an entry of an older toolrun without a kind: a tool failure by its toolName
        { toolName: 'book_flight', reason: 'retry-budget-exhausted', lastError: { kind: 'server', status: 503, message: 'down' } },
        tool(7, 'book_flight', 'retry-budget-exhausted'),
        'a string entry',
        ['an', 'array', { kind: 'tool' }],
        { kind: 7, toolName: 'book_flight' },
        null,
      ];
      const ids: string[] = [];
      for (const entry of entries) ids.push(await dlq().push(entry));
      await otherDlq().push(tool(99, 'book_flight', 'retry-budget-exhausted'));
      const matching = async (options: Parameters<DeadLetterQueue<unknown>['list']>[0]) => (await dlq().list(options)).map((record) => ids.indexOf(record.id));
      expect(await matching({ filter: { toolName: 'book_flight' } })).toEqual([0, 4, 6, 7, 10]);
      expect(await matching({ filter: { kind: 'tool' } })).toEqual([0, 2, 4, 6, 7]);
      expect(await matching({ filter: { kind: 'tool', toolName: 'book_flight', reason: 'retry-budget-exhausted' } })).toEqual([0, 6, 7]);
      expect(await matching({ filter: { kind: 'model' } })).toEqual([1]);
      expect(await matching({ filter: { modelName: 'gpt-x' } })).toEqual([1]);
      expect(await matching({ filter: { kind: 'run' } })).toEqual([5]);
      expect(await matching({ filter: { kind: 'message' } })).toEqual([3]);
      expect(await matching({ filter: { reason: 'circuit-open' } })).toEqual([2, 4]);
      expect(await matching({ filter: { code: 'MALFORMED_JSON' } })).toEqual([3]);
      expect(await matching({ filter: { code: 'rate_limited' } })).toEqual([1]);
      expect(await matching({ filter: { toolName: 'BOOK_FLIGHT' } })).toEqual([]);
      expect(await matching({ filter: { toolName: 'book_flight', kind: undefined } })).toEqual([0, 4, 6, 7, 10]);
      expect(await matching({ filter: {} })).toEqual(entries.map((_, index) => index));
      expect(await matching({ filter: { toolName: 'book_flight' }, limit: 2 })).toEqual([0, 4]);
      expect(await matching({ filter: { toolName: 'book_flight' }, limit: 2, offset: 2 })).toEqual([6, 7]);
      expect(await matching({ filter: { toolName: 'book_flight' }, after: ids[4]!, limit: 2 })).toEqual([6, 7]);
      expect(await matching({ filter: { toolName: 'book_flight' }, after: ids[7]! })).toEqual([10]);
      // a filtered page read by pages of after covers every match exactly once
      const seen: number[] = [];
      let after: string | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const page = await dlq().list({ filter: { kind: 'tool' }, limit: 2, ...(after !== undefined ? { after } : {}) });
        if (page.length === 0) break;
        seen.push(...page.map((record) => ids.indexOf(record.id)));
        after = page[page.length - 1]!.id;
        if (pages === 0) await dlq().remove(ids[4]!);
      }
      expect(seen).toEqual([0, 2, 6, 7]);
      // a removed entry leaves the filtered list; the entries come back whole
      expect((await dlq().list({ filter: { modelName: 'gpt-x' } }))[0]?.entry).toEqual(entries[1]);
      await dlq().remove(ids[1]!);
      expect(await matching({ filter: { modelName: 'gpt-x' } })).toEqual([]);
    });

    it('counts size() through pushes, duplicate pushOnce calls, removes and purges', async () => {
      for (let index = 0; index < 7; index++) await dlq().push(index);
      const keyed = await dlq().pushOnce('tool:run_1:1', 'keyed');
      expect((await dlq().pushOnce('tool:run_1:1', 'again')).added).toBe(false);
      await otherDlq().push('other');
      expect(await dlq().size()).toBe(8);
      expect(await dlq().remove(keyed.id)).toBe(true);
      expect(await dlq().remove(keyed.id)).toBe(false);
      expect(await dlq().size()).toBe(7);
      expect(await dlq().purge()).toBe(7);
      expect(await dlq().size()).toBe(0);
      expect(await otherDlq().size()).toBe(1);
      await dlq().push('after purge');
      expect(await dlq().size()).toBe(1);
    });

    it('countByCause, when the backend has it, counts the stored entries per cause through pushes, removes and purges', async (context) => {
      const counted = dlq();
      if (counted.countByCause === undefined) return context.skip();
      const sorted = (counts: DeadLetterCauseCount[]) => counts.map((count) => JSON.stringify(count)).sort();
      /** What the counts should be: the cause fields of every listed entry, grouped. */
      const expected = async () => {
        const groups = new Map<string, DeadLetterCauseCount>();
        for (const record of await counted.list()) {
          const fields = deadLetterCauseFields(record.entry);
          const key = JSON.stringify(fields);
          const group = groups.get(key) ?? { ...fields, entries: 0 };
          group.entries += 1;
          groups.set(key, group);
        }
        return sorted([...groups.values()]);
      };
      expect(await counted.countByCause()).toEqual([]);
      const entries: unknown[] = [
        { kind: 'tool', toolName: 'book_flight', reason: 'circuit-open', lastError: { kind: 'server', status: 503, message: '' } },
        { kind: 'tool', toolName: 'book_flight', reason: 'circuit-open', lastError: { kind: 'server', status: 500, message: '' } },
        { kind: 'model', modelName: 'gpt-x', reason: 'model-retries-exhausted', lastError: { kind: 'rate_limit', status: 429, message: '', code: 'slow' } },
        { kind: 'message', rawBody: '{', reason: { code: 'MALFORMED_JSON', detail: '' } },
        { toolName: 'search', reason: 'retry-budget-exhausted' },
        'a string',
        null,
      ];
      const ids: string[] = [];
      for (const entry of entries) ids.push(await counted.push(entry));
      expect((await counted.pushOnce('tool:run_1:1', entries[0])).added).toBe(true);
      expect((await counted.pushOnce('tool:run_1:1', entries[2])).added).toBe(false);
      await otherDlq().push(entries[0]);
      expect(sorted(await counted.countByCause())).toEqual(await expected());
      expect((await counted.countByCause()).find((count) => count.toolName === 'book_flight')).toEqual({
        kind: 'tool',
        toolName: 'book_flight',
        modelName: null,
        reason: 'circuit-open',
        code: null,
        entries: 3,
      });
      await counted.remove(ids[2]!);
      await counted.remove(ids[0]!);
      await counted.remove(ids[0]!);
      expect(sorted(await counted.countByCause())).toEqual(await expected());
      expect((await counted.countByCause()).some((count) => count.modelName === 'gpt-x')).toBe(false);
      await counted.purge();
      expect(await counted.countByCause()).toEqual([]);
      await counted.push(entries[4]);
      expect(sorted(await counted.countByCause())).toEqual(await expected());
    });

    it('keeps the pushOnce keys of the two dead-letter queues of a bundle apart', async () => {
      const mine = await dlq().pushOnce('message:m1', 'mine');
      const other = await otherDlq().pushOnce('message:m1', 'other');
      expect([mine.added, other.added]).toEqual([true, true]);
      expect((await dlq().list()).map((record) => record.entry)).toEqual(['mine']);
      expect((await otherDlq().list()).map((record) => record.entry)).toEqual(['other']);
    });
  });
}

/** Both dead-letter queues of a bundle. */
export function describeDeadLetterQueuesContract(makeStores: MakeStores): void {
  const queues: (keyof Pick<Stores, 'messageDlq' | 'toolDlq'>)[] = ['messageDlq', 'toolDlq'];
  for (const which of queues) describeDeadLetterQueueContract(makeStores, which);
}
