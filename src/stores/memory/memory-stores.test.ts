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

  it('remembers exactly the last acknowledged ids of its window, however many were acknowledged', async () => {
    const clock = createFakeClock();
    const queue = createMemoryRunQueue({ clock, maxRememberedAckedIds: 3 });
    const ids = Array.from({ length: 10 }, (_, index) => `a${index}`);
    for (const id of ids) {
      await queue.enqueue({ id, body: id });
      await queue.reserve(1_000);
      await queue.ack(id);
    }
    for (const id of ids) await queue.enqueue({ id, body: 'again' });
    const delivered: string[] = [];
    for (let delivery = await queue.reserve(1_000); delivery !== undefined; delivery = await queue.reserve(1_000)) delivered.push(delivery.id);
    expect(delivered).toEqual(ids.slice(0, 7));
  });

  it('keeps delivery order and leases through acknowledgements out of order (and the compactions they cause)', async () => {
    const clock = createFakeClock();
    const queue = createMemoryRunQueue({ clock });
    const ids = Array.from({ length: 300 }, (_, index) => `m${index}`);
    for (const id of ids) await queue.enqueue({ id, body: id });
    const reserved: string[] = [];
    for (let index = 0; index < 300; index++) reserved.push((await queue.reserve(60_000))!.id);
    expect(reserved).toEqual(ids);
    // acknowledge every other one, newest first: the oldest stay leased in front
    const acked = new Set(ids.filter((_, index) => index % 2 === 1).reverse());
    for (const id of acked) await queue.ack(id);
    for (const id of acked) expect(await queue.enqueue({ id, body: 'again' })).toBe(id);
    const later = Array.from({ length: 100 }, (_, index) => `n${index}`);
    for (const id of later) await queue.enqueue({ id, body: id });
    expect(await queue.size()).toBe(250);
    // the next reservations take the waiting ones in order, behind the leased ones
    expect((await queue.reserve(60_000))!.id).toBe('n0');
    const leased = ids.filter((id) => !acked.has(id));
    for (const id of leased) await queue.release(id);
    const order: string[] = [];
    for (let delivery = await queue.reserve(60_000); delivery !== undefined; delivery = await queue.reserve(60_000)) order.push(delivery.id);
    expect(order).toEqual([...leased, ...later.slice(1)]);
    await clock.advance(60_000);
    const expired: string[] = [];
    for (let delivery = await queue.reserve(1_000); delivery !== undefined; delivery = await queue.reserve(1_000)) {
      expired.push(delivery.id);
      await queue.ack(delivery.id);
    }
    expect(expired).toEqual([...leased, ...later]);
    expect(await queue.size()).toBe(0);
    await queue.enqueue({ id: 'late', body: 'late' });
    expect(await queue.reserve(1_000)).toMatchObject({ id: 'late', deliveries: 1 });
  });
});
