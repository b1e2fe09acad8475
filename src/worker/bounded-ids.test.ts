import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { defineTool } from '../core/define-tool.ts';
import type { QueueDelivery, RunQueue, Stores } from '../ground/ports/stores.ts';
import { enqueueRun } from '../queues/bullmq/enqueue-run.ts';
import { createMemoryStores } from '../stores/memory/index.ts';
import { createPostgresStores } from '../stores/postgres/index.ts';
import { createSqliteStores } from '../stores/sqlite/index.ts';
import { createScriptedModel } from '../testing/scripted-model.ts';
import { dropSchema, POSTGRES_URL, uniqueName } from '../../test/fixtures/distributed-services.ts';
import { createToolrun } from './create-toolrun.ts';

const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

/** About 1 MB of hex: not compressible much, as a real id would not be. */
const HUGE_ID = randomBytes(500_000).toString('hex');
/** 1,024 UTF-8 bytes in 512 characters: at the bound. */
const AT_BOUND = 'é'.repeat(512);
/** One byte over the bound. */
const OVER_BOUND = `${AT_BOUND}x`;

const BACKENDS: [string, () => Promise<Stores>][] = [
  ['memory', async () => createMemoryStores()],
  ['sqlite', async () => createSqliteStores({ path: ':memory:' })],
  [
    'postgres',
    async () => {
      const schema = uniqueName('bounded_ids');
      const stores = await createPostgresStores({ connectionString: POSTGRES_URL, schema, maxConnections: 2 });
      closers.push(async () => {
        await dropSchema(stores.pool as Parameters<typeof dropSchema>[0], schema);
        await stores.close();
      });
      return stores;
    },
  ],
];

const echo = defineTool({ name: 'echo', description: '', inputSchema: { type: 'object' }, execute: () => ({ ok: true }) });
const turns = () =>
  createScriptedModel([
    { toolCalls: [{ id: 'c1', name: 'echo', args: '{}' }], usage: { input: 1, output: 1 } },
    { text: 'done', usage: { input: 1, output: 1 } },
  ]);

describe.each(BACKENDS)('identifiers over 1,024 UTF-8 bytes on %s', (_backend, open) => {
  it('queue.enqueue: INVALID_INPUT naming the bound, nothing enqueued; an id at the bound is taken', async () => {
    const { queue } = await open();
    for (const id of [HUGE_ID, OVER_BOUND]) {
      const rejected = queue.enqueue({ body: '{"input":"hi"}', id });
      await expect(rejected).rejects.toMatchObject({ name: 'ToolrunError', code: 'INVALID_INPUT' });
      await expect(rejected).rejects.toThrow(/1024 UTF-8 bytes/);
    }
    expect(await queue.size()).toBe(0);
    expect(await queue.enqueue({ body: '{"input":"hi"}', id: AT_BOUND })).toBe(AT_BOUND);
    expect((await queue.reserve(1_000))?.id).toBe(AT_BOUND);
  });

  it('handleMessage: a message whose id is over the bound goes to the message DLQ once, the model never called', async () => {
    const stores = await open();
    const model = turns();
    const toolrun = createToolrun({ model, tools: [echo], stores });
    const message = { id: HUGE_ID, body: '{"input":"hi"}' };
    const first = await toolrun.handleMessage(message);
    const second = await toolrun.handleMessage(message);
    expect(first).toMatchObject({ status: 'rejected', runId: null, alreadyFinished: false, reason: { code: 'INVALID_MESSAGE' } });
    expect(first.status === 'rejected' && first.reason.detail).toMatch(/message id is over 1024 UTF-8 bytes/);
    expect(second).toMatchObject({ status: 'rejected', alreadyFinished: true });
    expect(await stores.messageDlq.size()).toBe(1);
    const [record] = await stores.messageDlq.list();
    expect(record?.entry.rawBody).toBe('{"input":"hi"}');
    expect(Buffer.byteLength(record?.entry.messageId ?? '')).toBeLessThanOrEqual(1024);
    expect(model.calls).toBe(0);
  });

  it('handleMessage: two messages with distinct ids over the bound and one head are two entries, not one', async () => {
    const stores = await open();
    const toolrun = createToolrun({ model: turns(), tools: [echo], stores });
    await toolrun.handleMessage({ id: `${HUGE_ID}a`, body: '{not json' });
    await toolrun.handleMessage({ id: `${HUGE_ID}b`, body: '{not json' });
    expect(await stores.messageDlq.size()).toBe(2);
  });

  it('handleMessage: a message id at the bound runs (its run id, claim and ledger keys fit every backend)', async () => {
    const stores = await open();
    const id = randomBytes(512).toString('hex');
    const toolrun = createToolrun({ model: turns(), tools: [echo], stores });
    expect(await toolrun.handleMessage({ id, body: '{"input":"hi"}' })).toMatchObject({ status: 'completed', runId: `run_${id}` });
  });

  it('a worker given a message whose id is over the bound dead-letters it once and acknowledges it, no loop', async () => {
    const stores = await open();
    const model = turns();
    const queue = singleMessageQueue({ id: HUGE_ID, body: '{"input":"hi"}' });
    const toolrun = createToolrun({ model, tools: [echo], stores: { ...stores, queue } });
    const worker = toolrun.createWorker({ pollIntervalMs: 1, redeliveryBackoff: { baseMs: 0, maxMs: 1 } });
    const done = worker.runUntilEmpty();
    const looping = new Promise<'looping'>((resolve) => queue.onReserve(() => queue.reservations() > 10 && resolve('looping')));
    const outcome = await Promise.race([done.then(() => 'done' as const), looping]);
    worker.stop();
    await done.catch(() => undefined);
    expect(outcome).toBe('done');
    expect(queue.reservations()).toBe(1);
    expect(queue.acked()).toBe(true);
    expect(await stores.messageDlq.size()).toBe(1);
    expect(model.calls).toBe(0);
  });
});

describe('enqueueRun (BullMQ)', () => {
  it('an id over the bound: INVALID_INPUT before the outbox or Redis is asked', async () => {
    const added: unknown[] = [];
    const queue = { add: async (...args: unknown[]) => added.push(args) } as unknown as Parameters<typeof enqueueRun>[0];
    const outbox = { enqueue: async (message: { body: string; id: string }) => (added.push(message), message.id) };
    await expect(enqueueRun(queue, '{"input":"hi"}', OVER_BOUND, { outbox })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect(added).toEqual([]);
  });
});

/** A run queue holding one message whatever its id (as a queue filled before the bound existed could). */
function singleMessageQueue(message: { id: string; body: string }): RunQueue & { reservations(): number; acked(): boolean; onReserve(f: () => void): void } {
  let deliveries = 0;
  let leased = false;
  let acked = false;
  let listener = () => {};
  return {
    enqueue: async () => message.id,
    async reserve(): Promise<QueueDelivery | undefined> {
      if (acked || leased) return undefined;
      leased = true;
      deliveries += 1;
      listener();
      return { id: message.id, body: message.body, deliveries, enqueuedAt: new Date(0).toISOString() };
    },
    async ack() {
      acked = true;
      leased = false;
    },
    async release() {
      leased = false;
    },
    extendLease: async () => !acked,
    size: async () => (acked ? 0 : 1),
    reservations: () => deliveries,
    acked: () => acked,
    onReserve: (f) => (listener = f),
  };
}
