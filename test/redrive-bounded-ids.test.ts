/**
 * A redrive of a message-DLQ entry id over 1,024 UTF-8 bytes (no entry has one) on every backend:
 * not found, with nothing claimed, enqueued or removed — not the driver's key-size error, which
 * PostgreSQL gave when the redrive's claim key held the whole id.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { Stores } from '../src/ground/ports/stores.ts';
import { createMemoryStores } from '../src/stores/memory/index.ts';
import { createPostgresStores } from '../src/stores/postgres/index.ts';
import { createSqliteStores } from '../src/stores/sqlite/index.ts';
import { redriveMessageEntry } from '../src/dashboard/dashboard-redrive.ts';
import { redriveClaimKey, redriveMessageId } from '../src/worker/redrive-message.ts';
import { createToolrun } from '../src/worker/create-toolrun.ts';
import { dropSchema, POSTGRES_URL, uniqueName } from './fixtures/distributed-services.ts';

const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

const BACKENDS: [string, () => Promise<Stores>][] = [
  ['memory', async () => createMemoryStores()],
  ['sqlite', async () => createSqliteStores({ path: ':memory:' })],
  [
    'postgres',
    async () => {
      const schema = uniqueName('redrive_ids');
      const stores = await createPostgresStores({ connectionString: POSTGRES_URL, schema, maxConnections: 2 });
      closers.push(async () => {
        await dropSchema(stores.pool as Parameters<typeof dropSchema>[0], schema);
        await stores.close();
      });
      return stores;
    },
  ],
];

describe.each(BACKENDS)('a redrive of an entry id over 1,024 UTF-8 bytes on %s', (_backend, open) => {
  it('is not found; nothing is claimed, enqueued or removed', async () => {
    const stores = await open();
    await stores.messageDlq.push({ messageId: 'm1', rawBody: '{"input":"hi"}' } as never);
    for (const id of [randomBytes(1_500).toString('hex'), `${'é'.repeat(512)}x`]) {
      await expect(redriveMessageEntry(stores, id, undefined)).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
      expect(await stores.claims.get(redriveClaimKey(id))).toBeUndefined();
    }
    expect(redriveClaimKey('42')).toBe('dlq:message:42');
    expect(redriveClaimKey('x'.repeat(1_025))).toMatch(/^dlq:message:sha256:[0-9a-f]{64}$/);
    expect(await stores.queue.size()).toBe(0);
    expect(await stores.messageDlq.size()).toBe(1);
  });
});

describe('a message id at the bound, dead-lettered then redriven', () => {
  it('is kept whole in the entry; the redrive id stays within the bound, the same on a repeat', async () => {
    const stores = createMemoryStores();
    const toolrun = createToolrun({ model: async () => ({ text: 'done', usage: { input: 1, output: 1 } }), tools: [], stores });
    const atBound = 'é'.repeat(512);
    expect((await toolrun.handleMessage({ id: atBound, body: '{"input": ' })).status).toBe('rejected');
    const [record] = await stores.messageDlq.list();
    expect((record!.entry as { messageId?: string }).messageId).toBe(atBound);
    const redriven = await redriveMessageEntry(stores, record!.id, '{"input":"hi"}');
    expect(redriven.messageId).toMatch(new RegExp(`^sha256:[0-9a-f]{64}\\.redrive-${record!.id}$`));
    expect(redriveMessageId(record!.id, atBound)).toBe(redriven.messageId);
    expect((await stores.queue.reserve(1_000))?.id).toBe(redriven.messageId);
    expect(redriveMessageId('7', 'order-1')).toBe('order-1.redrive-7');
  });
});
