import { afterAll, describe, expect, it } from 'vitest';
import { enqueueRun } from '../queues/bullmq/enqueue-run.ts';
import type { RunQueue } from '../ground/ports/stores.ts';
import { createMemoryStores } from './memory/index.ts';
import { createPostgresStores } from './postgres/index.ts';
import { createSqliteStores } from './sqlite/index.ts';
import { dropSchema, POSTGRES_URL, uniqueName } from '../../test/fixtures/distributed-services.ts';

const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

const BAD: [string, unknown][] = [
  ['a body that is an object', { body: { input: 'hi' } }],
  ['a body that is a number', { body: 42 }],
  ['no body', { id: 'm1' }],
  ['an id that is a number', { body: '{"input":"hi"}', id: 7 }],
  ['no message', undefined],
];

describe.each([
  ['memory', async () => createMemoryStores().queue],
  ['sqlite', async () => createSqliteStores({ path: ':memory:' }).queue],
  [
    'postgres',
    async () => {
      const schema = uniqueName('enqueue_body');
      const stores = await createPostgresStores({ connectionString: POSTGRES_URL, schema, maxConnections: 2 });
      closers.push(async () => {
        await dropSchema(stores.pool as Parameters<typeof dropSchema>[0], schema);
        await stores.close();
      });
      return stores.queue;
    },
  ],
])('queue.enqueue on %s', (_backend, open) => {
  it.each(BAD)('%s: a toolrun INVALID_INPUT error, nothing enqueued', async (_name, message) => {
    const queue: RunQueue = await open();
    await expect(queue.enqueue(message as never)).rejects.toMatchObject({ name: 'ToolrunError', code: 'INVALID_INPUT' });
    expect(await queue.size()).toBe(0);
  });
});

describe('enqueueRun (BullMQ)', () => {
  it('a body that is not a string: INVALID_INPUT before Redis is asked', async () => {
    const added: unknown[] = [];
    const queue = { add: async (...args: unknown[]) => added.push(args) } as unknown as Parameters<typeof enqueueRun>[0];
    await expect(enqueueRun(queue, { input: 'hi' } as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect(added).toEqual([]);
  });
});
