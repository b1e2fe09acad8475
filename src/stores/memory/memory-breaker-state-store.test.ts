import { describe, expect, it } from 'vitest';
import { createMemoryBreakerStateStore } from './memory-breaker-state-store.ts';

describe('createMemoryBreakerStateStore', () => {
  it('returns undefined for an absent key, then previous and next of each update', async () => {
    const store = createMemoryBreakerStateStore();
    expect(await store.get('k')).toBeUndefined();
    expect(await store.update<{ n: number }>('k', (current) => ({ n: (current?.n ?? 0) + 1 }))).toEqual({ previous: undefined, next: { n: 1 } });
    expect(await store.update<{ n: number }>('k', (current) => ({ n: (current?.n ?? 0) + 1 }))).toEqual({ previous: { n: 1 }, next: { n: 2 } });
    expect(await store.get('k')).toEqual({ n: 2 });
  });

  it('is atomic: 1,000 concurrent increments all count', async () => {
    const store = createMemoryBreakerStateStore();
    await Promise.all(Array.from({ length: 1000 }, () => store.update<number>('k', (current) => (current ?? 0) + 1)));
    expect(await store.get('k')).toBe(1000);
  });

  it('copies values in and out', async () => {
    const store = createMemoryBreakerStateStore();
    const value = { list: [1] };
    await store.update('k', () => value);
    value.list.push(2);
    const read = (await store.get('k')) as { list: number[] };
    read.list.push(3);
    expect(await store.get('k')).toEqual({ list: [1] });
  });

  it('rejects (and stores nothing) when fn throws', async () => {
    const store = createMemoryBreakerStateStore();
    await expect(
      store.update('k', () => {
        throw new Error('bug');
      }),
    ).rejects.toThrow('bug');
    expect(await store.get('k')).toBeUndefined();
  });
});
