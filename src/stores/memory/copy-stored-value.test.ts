import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../../testing/fake-clock.ts';
import type { RunCheckpoint } from '../../ground/ports/run-journal.ts';
import { copyStoredItems, copyStoredValue } from './copy-stored-value.ts';
import { createMemoryStores } from './memory-stores.ts';

/** Every object and array reachable from `value`. */
function objectsOf(value: unknown, found = new Set<object>()): Set<object> {
  if (typeof value === 'object' && value !== null && !found.has(value)) {
    found.add(value);
    for (const key of Reflect.ownKeys(value)) objectsOf((value as Record<PropertyKey, unknown>)[key], found);
  }
  return found;
}

const anything = fc.anything({
  withNullPrototype: true,
  withBigInt: true,
  withSparseArray: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withTypedArray: true,
  withObjectString: true,
});

describe('copyStoredValue', () => {
  it('copies as structuredClone does, sharing no object with the value', () => {
    fc.assert(
      fc.property(anything, (value) => {
        const copy = copyStoredValue(value);
        expect(copy).toStrictEqual(structuredClone(value));
        const originals = objectsOf(value);
        for (const object of objectsOf(copy)) expect(originals.has(object)).toBe(false);
      }),
      { numRuns: 2_000, seed: 7 },
    );
  });

  it('keeps -0, NaN, undefined members and holes; gives null-prototype objects Object.prototype', () => {
    const sparse: unknown[] = [1];
    sparse[2] = 3;
    const bare = Object.assign(Object.create(null) as object, { a: 1 });
    const copy = copyStoredValue({ zero: -0, nan: Number.NaN, missing: undefined, sparse, bare, big: 1n });
    expect(Object.is(copy.zero, -0)).toBe(true);
    expect(copy.nan).toBeNaN();
    expect(Object.hasOwn(copy, 'missing')).toBe(true);
    expect(1 in copy.sparse).toBe(false);
    expect(copy.sparse).toHaveLength(3);
    expect(Object.getPrototypeOf(copy.bare)).toBe(Object.prototype);
    expect(copy.big).toBe(1n);
  });

  it("copies an own __proto__ key as a key, not as the copy's prototype", () => {
    const value = JSON.parse('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
    const copy = copyStoredValue(value);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.hasOwn(copy, '__proto__')).toBe(true);
    expect((copy as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('copies deep nesting and cycles as structuredClone does', () => {
    let deep: unknown = 'bottom';
    for (let level = 0; level < 1_000; level++) deep = [deep];
    expect(copyStoredValue(deep)).toStrictEqual(deep);
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const copy = copyStoredValue(cyclic);
    expect(copy.self).toBe(copy);
    expect(copy).not.toBe(cyclic);
  });

  it('rejects what structuredClone rejects, with its error', () => {
    const rejected: unknown[] = [() => 1, Symbol('s'), { nested: [{ fn: () => 1 }] }, [Symbol('s')], { weak: new WeakMap() }];
    for (const value of rejected) {
      let expected: unknown;
      try {
        structuredClone(value);
      } catch (error) {
        expected = error;
      }
      expect(expected).toBeInstanceOf(DOMException);
      expect(() => copyStoredValue(value)).toThrow(expected as Error);
      expect(() => copyStoredValue(value)).toThrow(expect.objectContaining({ name: 'DataCloneError' }));
    }
  });
});

describe('copyStoredItems', () => {
  it('copies list.slice(from), a hole reading as undefined', () => {
    const list: unknown[] = [{ a: 1 }, [2]];
    list[3] = 'four';
    expect(copyStoredItems(list)).toStrictEqual(structuredClone([...list]));
    expect(copyStoredItems(list, 1)).toStrictEqual([[2], undefined, 'four']);
    expect(copyStoredItems(list, 9)).toStrictEqual([]);
    expect(copyStoredItems([new Date(0), { b: 2 }], 0)).toStrictEqual([new Date(0), { b: 2 }]);
    expect(() => copyStoredItems([{ fn: () => 1 }])).toThrow(expect.objectContaining({ name: 'DataCloneError' }));
  });
});

describe('memory stores: values that cannot be stored', () => {
  const checkpoint = (data: Record<string, unknown>): RunCheckpoint =>
    ({
      runId: 'run_a',
      messageId: 'm_a',
      status: 'running',
      stepIndex: 0,
      conversationRef: 'conv_a',
      tokensSpent: { input: 0, output: 0 },
      toolAttempts: {},
      data,
      updatedAt: '2026-01-01T00:00:00.000Z',
    }) as RunCheckpoint;

  it('are rejected with DataCloneError by every write, and a journal commit then leaves the checkpoint where it was', async () => {
    const stores = createMemoryStores({ clock: createFakeClock() });
    const dataCloneError = expect.objectContaining({ name: 'DataCloneError' });
    await expect(stores.conversations.put('conv_a', [{ fn: () => 1 }])).rejects.toThrow(dataCloneError);
    await expect(stores.runs.put(checkpoint({ fn: () => 1 }))).rejects.toThrow(dataCloneError);
    await expect(stores.ledger.putIfAbsent('k', { symbol: Symbol('s') } as never)).rejects.toThrow(dataCloneError);
    await expect(stores.breakers.update('b', () => ({ fn: () => 1 }) as never)).rejects.toThrow(dataCloneError);
    expect(await stores.conversations.get('conv_a')).toBeUndefined();
    expect(await stores.runs.get('run_a')).toBeUndefined();
    expect(await stores.ledger.get('k')).toBeUndefined();
    expect(await stores.breakers.get('b')).toBeUndefined();

    const step = {
      conversationRef: 'conv_a',
      messages: [{ n: 1 }],
      storedCount: 0,
      checkpoint: checkpoint({}),
      calls: [{ stepIndex: 0, callIndex: 0, outcome: 1 }],
    };
    for (const bad of [
      { ...step, messages: [{ n: 1 }, { fn: () => 1 }] },
      { ...step, checkpoint: checkpoint({ fn: () => 1 }) },
      { ...step, calls: [...step.calls, { stepIndex: 0, callIndex: 1, outcome: { s: Symbol('s') } as never }] },
    ]) {
      // the memory journal writes store by store (nothing survives a crash of the process anyway):
      // what it could write stays, the checkpoint, written last, never moves past what was written
      await expect(stores.journal.commit(bad)).rejects.toThrow(dataCloneError);
      expect(await stores.runs.get('run_a')).toBeUndefined();
    }
    expect(await stores.ledger.get('run_a:0:1')).toBeUndefined();
    await stores.journal.commit(step);
    expect(await stores.ledger.get('run_a:0:0')).toBe(1);
    expect(await stores.conversations.get('conv_a')).toEqual([{ n: 1 }]);
    expect((await stores.runs.get('run_a'))?.stepIndex).toBe(0);
  });

  it('a journal commit keeps stored state apart from the values it was given and the ones read back', async () => {
    const stores = createMemoryStores({ clock: createFakeClock() });
    const messages = [{ role: 'user', content: { text: 'hi' } }];
    const value = { status: 'ok', items: [1] };
    const given = checkpoint({ nested: { n: 1 } });
    await stores.journal.commit({
      conversationRef: 'conv_a',
      messages,
      storedCount: 0,
      checkpoint: given,
      calls: [{ stepIndex: 0, callIndex: 0, outcome: value }],
    });
    messages[0]!.content.text = 'changed';
    value.items.push(2);
    (given.data!.nested as { n: number }).n = 2;
    const read = await stores.runs.get('run_a');
    (read!.data!.nested as { n: number }).n = 3;
    const outcome = (await stores.ledger.get('run_a:0:0')) as { items: number[] };
    outcome.items.push(3);
    expect(await stores.conversations.get('conv_a')).toEqual([{ role: 'user', content: { text: 'hi' } }]);
    expect((await stores.runs.get('run_a'))!.data).toEqual({ nested: { n: 1 } });
    expect(await stores.ledger.get('run_a:0:0')).toEqual({ status: 'ok', items: [1] });
  });
});
