import { afterAll, describe, expect, it } from 'vitest';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import { resolveStores } from '../../cli/resolve-stores.ts';
import { createTestPool, dropSchema, POSTGRES_URL, uniqueName } from '../../../test/fixtures/distributed-services.ts';

const admin = createTestPool({ max: 2 });
afterAll(() => admin.end());

async function rejection(promise: Promise<unknown>): Promise<ToolrunError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!ToolrunError.is(error)) throw new Error(`expected a ToolrunError, got ${String(error)}`);
  return error;
}

describe('the CLI opens postgres:// URLs', () => {
  it('opens the stores in the schema named by ?schema=, counts runs by status, and can serve as --queue', async () => {
    const schema = uniqueName('toolrun_test_');
    const url = `${POSTGRES_URL}?schema=${schema}`;
    try {
      const writer = await resolveStores({ store: url, env: {} }, { mustExist: false });
      expect(writer.label).toBe(`${new URL(POSTGRES_URL).protocol}//${new URL(POSTGRES_URL).host}/test (schema ${schema})`);
      await writer.stores.queue.enqueue({ id: 'm1', body: '{"input":"hello"}' });
      await writer.stores.runs.put({
        runId: 'run_m1',
        messageId: 'm1',
        status: 'completed',
        stepIndex: 1,
        conversationRef: 'conv_1',
        tokensSpent: { input: 1, output: 1 },
        toolAttempts: {},
        updatedAt: '2026-01-01T00:00:00.000Z',
      });
      await writer.stores.close();

      const reader = await resolveStores({ store: url, queue: url.replace('postgres:', 'postgresql:'), env: {} }, { mustExist: true });
      expect(await reader.countRunsByStatus?.()).toEqual({ completed: 1 });
      expect(await reader.stores.queue.size()).toBe(1);
      await reader.stores.close();
    } finally {
      await dropSchema(admin, schema);
    }
  });

  it('refuses a schema toolrun never created for read-only commands, and keeps credentials out of messages', async () => {
    const missing = uniqueName('toolrun_test_');
    const error = await rejection(resolveStores({ store: `${POSTGRES_URL}?schema=${missing}`, env: {} }, { mustExist: true }));
    expect(error.code).toBe('NOT_FOUND');
    expect((await admin.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [missing])).rows).toEqual([]);

    expect((await rejection(resolveStores({ store: `${POSTGRES_URL}?schema=Bad-Name`, env: {} }, { mustExist: false }))).code).toBe('USAGE');

    const unreachable = await rejection(resolveStores({ store: 'postgres://toolrun:s3cret@127.0.0.1:1/toolrun', env: {} }, { mustExist: true }));
    expect(unreachable.code).toBe('STORE_UNAVAILABLE');
    expect(unreachable.message).not.toContain('s3cret');
    expect(unreachable.message).toContain('127.0.0.1:1/toolrun');
  });
});
