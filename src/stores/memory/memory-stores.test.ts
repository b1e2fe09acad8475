import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../../testing/fake-clock.ts';
import { describeStoresContract } from '../../testing/contract/index.ts';
import { createMemoryStores } from './memory-stores.ts';
import { createMemoryRunQueue } from './memory-run-queue.ts';

describeStoresContract('memory', async () => {
  const clock = createFakeClock();
  const stores = createMemoryStores({ clock });
  return { stores, clock, cleanup: () => stores.close() };
});

describeStoresContract('memory with a one-hour conversation TTL', async () => {
  const clock = createFakeClock();
  const conversationTtlMs = 60 * 60 * 1000;
  const stores = createMemoryStores({ clock, conversationTtlMs });
  return { stores, clock, conversationTtlMs, cleanup: () => stores.close() };
});

describe('memory run queue', () => {
  it('forgets the oldest acknowledged ids beyond its window, so they can be enqueued again', async () => {
    const clock = createFakeClock();
    const queue = createMemoryRunQueue({ clock, maxRememberedAckedIds: 2 });
    for (const id of ['a', 'b', 'c']) {
      await queue.enqueue({ id, body: id });
      await queue.reserve(1_000);
      await queue.ack(id);
    }
    await queue.enqueue({ id: 'c', body: 'again' });
    await queue.enqueue({ id: 'a', body: 'again' });
    expect(await queue.size()).toBe(1);
    expect((await queue.reserve(1_000))?.id).toBe('a');
  });
});
