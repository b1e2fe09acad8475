import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { Stores } from '../../ground/ports/stores.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import {
  describeBreakerStateStoreContract,
  describeClaimStoreContract,
  describeDeadLetterQueuesContract,
  describeExactValuesContract,
  describeRunJournalContract,
  type MakeStores,
} from '../../testing/contract/index.ts';
import { createFakeClock } from '../../testing/fake-clock.ts';
import { createStoreJournal } from '../store-journal.ts';
import { createMemoryStores } from '../memory/index.ts';
import { createTestRedis, deleteRedisKeys, REDIS_URL, uniqueName } from '../../../test/fixtures/distributed-services.ts';
import { createRedisBreakerStateStore } from './redis-breaker-state-store.ts';
import { createRedisClaimStore } from './redis-claim-store.ts';
import { createRedisDeadLetterQueues } from './redis-dead-letter-queues.ts';
import type { DeadLetterQueue } from '../../ground/ports/stores.ts';

const admin = createTestRedis();
afterAll(() => admin.quit());

/** Memory stores with the breakers, both DLQs and the claims in Redis under a prefix of their own. */
const makeRedisStores: MakeStores = async () => {
  const clock = createFakeClock();
  const prefix = uniqueName('toolrun-test:');
  const breakers = await createRedisBreakerStateStore({ redis: admin, prefix });
  const deadLetters = await createRedisDeadLetterQueues({ url: REDIS_URL, prefix, clock });
  const claims = await createRedisClaimStore({ redis: admin, prefix });
  const parts = { ...createMemoryStores({ clock }), breakers, messageDlq: deadLetters.messageDlq, toolDlq: deadLetters.toolDlq, claims };
  // the run journal over these stores: its claims in Redis
  const stores: Stores = { ...parts, journal: createStoreJournal(parts) };
  return {
    stores,
    clock,
    cleanup: async () => {
      await deadLetters.close();
      await deleteRedisKeys(admin, prefix);
    },
  };
};

describe('Stores contract: redis (breakers, dead-letter queues and claims)', () => {
  describeBreakerStateStoreContract(makeRedisStores);
  describeDeadLetterQueuesContract(makeRedisStores);
  describeClaimStoreContract(makeRedisStores, { clock: 'server' });
  describeRunJournalContract(makeRedisStores, { clock: 'server' });
  describeExactValuesContract(makeRedisStores);
});

describe('Redis breaker state store', () => {
  it('loses no update when several clients (as several processes would) race on one key', async () => {
    const prefix = uniqueName('toolrun-test:');
    const clients = Array.from({ length: 4 }, () => new Redis(REDIS_URL));
    try {
      const stores = await Promise.all(clients.map((redis) => createRedisBreakerStateStore({ redis, prefix })));
      const increment = (current: number | undefined) => (current ?? 0) + 1;
      let calls = 0;
      const counting = (current: number | undefined) => {
        calls += 1;
        return increment(current);
      };
      const results = await Promise.all(Array.from({ length: 200 }, (_, index) => stores[index % 4]!.update<number>('tool', counting)));
      expect(await stores[0]!.get('tool')).toBe(200);
      expect(results.map((result) => result.next).sort((left, right) => left - right)).toEqual(Array.from({ length: 200 }, (_, index) => index + 1));
      for (const result of results) expect(result.next).toBe((result.previous ?? 0) + 1);
      // the clients really raced: some rounds were lost and fn ran again
      console.info(`[redis breaker] 200 updates from 4 clients called fn ${calls} times`);
      expect(calls).toBeGreaterThanOrEqual(200);
    } finally {
      await deleteRedisKeys(admin, prefix);
      await Promise.all(clients.map((redis) => redis.quit()));
    }
  });

  it('gives up with STORE_CONFLICT when another writer changes the key every round', async () => {
    const prefix = uniqueName('toolrun-test:');
    const store = await createRedisBreakerStateStore({ redis: admin, prefix, maxConflicts: 3 });
    let round = 0;
    const error = await store
      .update<number>('tool', (current) => {
        round += 1;
        // a writer elsewhere changes the record between our read and our compare-and-set
        void admin.set(`${prefix}breaker:{tool}`, String(1000 + round));
        return (current ?? 0) + 1;
      })
      .catch((caught: unknown) => caught);
    expect(ToolrunError.is(error) && error.code).toBe('STORE_CONFLICT');
    expect(round).toBe(4);
    await deleteRedisKeys(admin, prefix);
  });

  it('throws STORE_UNAVAILABLE with the cause when Redis does not answer, and INVALID_OPTIONS without a connection', async () => {
    const error = await createRedisBreakerStateStore({ url: 'redis://127.0.0.1:1' }).catch((caught: unknown) => caught);
    expect(ToolrunError.is(error) && error.code).toBe('STORE_UNAVAILABLE');
    expect((error as ToolrunError).cause).toBeInstanceOf(Error);
    const invalid = await createRedisBreakerStateStore({} as never).catch((caught: unknown) => caught);
    expect(ToolrunError.is(invalid) && invalid.code).toBe('INVALID_OPTIONS');
  });
});

describe('Redis claim store', () => {
  it('grants a claim to exactly one of many clients, and lets Redis expire it by its own clock', async () => {
    const prefix = uniqueName('toolrun-test:');
    const clients = Array.from({ length: 4 }, () => new Redis(REDIS_URL));
    try {
      const stores = await Promise.all(clients.map((redis) => createRedisClaimStore({ redis, prefix })));
      const results = await Promise.all(Array.from({ length: 40 }, (_, index) => stores[index % 4]!.acquire('run:race', `holder-${index}`, 60_000)));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect((await stores[3]!.get('run:race'))?.holder).toBe(`holder-${results.indexOf(true)}`);
      // the claim is a key with an expiry: nothing is left once it ends
      expect(await stores[0]!.acquire('run:short', 'crashed', 300)).toBe(true);
      const pttl = await admin.pttl(`${prefix}claim:{run:short}`);
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(300);
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(await admin.exists(`${prefix}claim:{run:short}`)).toBe(0);
    } finally {
      await deleteRedisKeys(admin, prefix);
      await Promise.all(clients.map((redis) => redis.quit()));
    }
  });

  it('throws STORE_UNAVAILABLE when Redis does not answer, and INVALID_OPTIONS without a connection', async () => {
    const error = await createRedisClaimStore({ url: 'redis://127.0.0.1:1' }).catch((caught: unknown) => caught);
    expect(ToolrunError.is(error) && error.code).toBe('STORE_UNAVAILABLE');
    const invalid = await createRedisClaimStore({} as never).catch((caught: unknown) => caught);
    expect(ToolrunError.is(invalid) && invalid.code).toBe('INVALID_OPTIONS');
  });
});

describe('Redis dead-letter queues', () => {
  it('count the bytes of entries written before the byte total existed', async () => {
    const prefix = uniqueName('toolrun-test:');
    const queues = await createRedisDeadLetterQueues({ redis: admin, prefix });
    try {
      const entries = [{ a: 'é' }, '東京 🚀', { runId: 'run_1', text: 'x'.repeat(1_000) }];
      const ids = [];
      for (const entry of entries) ids.push(await (queues.toolDlq as DeadLetterQueue<unknown>).push(entry));
      // as a queue written by an earlier toolrun: no byte total yet
      await admin.del(`${prefix}{dlq:tool}:bytes`);
      const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');
      const total = entries.reduce<number>((sum, entry) => sum + jsonBytes(entry), 0);
      expect(await queues.toolDlq.bytes()).toBe(total);
      await queues.toolDlq.remove(ids[0]!);
      await (queues.toolDlq as DeadLetterQueue<unknown>).push('more');
      expect(await queues.toolDlq.bytes()).toBe(total - jsonBytes(entries[0]) + jsonBytes('more'));
      expect(await queues.messageDlq.bytes()).toBe(0);
    } finally {
      await queues.close();
      await deleteRedisKeys(admin, prefix);
    }
  });

  it('push once per key across clients, keep the key after removal, and keep the queues apart', async () => {
    const prefix = uniqueName('toolrun-test:');
    const clock = createFakeClock();
    const first = await createRedisDeadLetterQueues({ url: REDIS_URL, prefix, clock });
    const second = await createRedisDeadLetterQueues({ url: REDIS_URL, prefix, clock });
    try {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, index) =>
          ((index % 2 === 0 ? first : second).messageDlq as DeadLetterQueue<unknown>).pushOnce('message:m1', { writer: index }),
        ),
      );
      expect(results.filter((result) => result.added)).toHaveLength(1);
      expect(new Set(results.map((result) => result.id)).size).toBe(1);
      expect(await second.messageDlq.size()).toBe(1);
      expect((await (first.toolDlq as DeadLetterQueue<unknown>).pushOnce('message:m1', 'tool queue')).added).toBe(true);
      expect(await first.messageDlq.remove(results[0]!.id)).toBe(true);
      expect(await (second.messageDlq as DeadLetterQueue<unknown>).pushOnce('message:m1', 'late')).toEqual({ id: results[0]!.id, added: false });
      expect(await second.messageDlq.size()).toBe(0);
      // a purge keeps the ids increasing
      const before = await (first.messageDlq as DeadLetterQueue<unknown>).push('a');
      await first.messageDlq.purge();
      expect(Number(await (first.messageDlq as DeadLetterQueue<unknown>).push('b'))).toBeGreaterThan(Number(before));
    } finally {
      await first.close();
      await second.close();
      await deleteRedisKeys(admin, prefix);
    }
  });
});
