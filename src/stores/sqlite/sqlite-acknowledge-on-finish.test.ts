import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../core/define-tool.ts';
import { ToolError } from '../../core/tool-error.ts';
import { handleMessage } from '../../worker/handle-message.ts';
import { createAutoAdvancingClock } from '../../testing/auto-advancing-clock.ts';
import { createScriptedModel } from '../../testing/scripted-model.ts';
import { createSqliteStores } from './sqlite-stores.ts';

const directory = mkdtempSync(join(tmpdir(), 'toolrun-sqlite-ack-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let fileCounter = 0;
const freshStores = () => createSqliteStores({ path: join(directory, `ack-${++fileCounter}.db`) });

const usage = { input: 10, output: 1 };
const lookup = defineTool({
  name: 'lookup',
  description: 'Looks an id up',
  inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  execute: async (args) => ({ id: args.id, status: 'ok' }),
});
const down = defineTool({
  name: 'book',
  description: 'Always down',
  inputSchema: { type: 'object' },
  execute: () => {
    throw new ToolError({ kind: 'server', status: 503 });
  },
});

describe('SQLite: a run that ends acknowledges its queue message in its last commit', () => {
  it('acknowledges a completed run with its last step, and a later ack changes nothing', async () => {
    const stores = freshStores();
    try {
      await stores.queue.enqueue({ id: 'm1', body: '{"input":"go"}' });
      const delivery = (await stores.queue.reserve(60_000))!;
      const model = createScriptedModel([
        { toolCalls: [{ id: 'c0', name: 'lookup', args: '{"id":"a"}' }], usage },
        { text: 'done', usage },
      ]);
      const result = await handleMessage(
        { id: delivery.id, body: delivery.body, deliveries: delivery.deliveries },
        { model, tools: [lookup], stores, acknowledgeOnFinish: true },
      );
      expect(result.status).toBe('completed');
      const row = stores.database.prepare('SELECT acked_at_ms, body FROM queue_messages WHERE id = ?').get('m1') as {
        acked_at_ms: number | null;
        body: string;
      };
      expect(row.acked_at_ms).not.toBeNull();
      expect(row.body).toBe('');
      expect(await stores.queue.size()).toBe(0);
      expect(await stores.queue.reserve(60_000)).toBeUndefined();
      await stores.queue.ack('m1');
      expect(stores.database.prepare('SELECT acked_at_ms FROM queue_messages WHERE id = ?').pluck().get('m1')).toBe(row.acked_at_ms);
      // the run's claim ended in the same commit
      expect(await stores.claims.get('run:run_m1')).toBeUndefined();
    } finally {
      await stores.close();
    }
  });

  it("leaves a failed run's message to the caller (acknowledged after its dead-letter entry), and never acknowledges unasked", async () => {
    const stores = freshStores();
    try {
      await stores.queue.enqueue({ id: 'failing', body: '{"input":"book it"}' });
      await stores.queue.enqueue({ id: 'unasked', body: '{"input":"go"}' });
      const call = { toolCalls: [{ id: 'c', name: 'book', args: '{}' }], usage };
      const failing = (await stores.queue.reserve(60_000))!;
      const failed = await handleMessage(
        { id: failing.id, body: failing.body, deliveries: failing.deliveries },
        { model: createScriptedModel([call, call]), tools: [down], stores, acknowledgeOnFinish: true, runtimeOptions: { clock: createAutoAdvancingClock() } },
      );
      expect(failed.status).toBe('tool_failed');
      expect(await stores.toolDlq.size()).toBe(1);
      const unasked = (await stores.queue.reserve(60_000))!;
      const completed = await handleMessage(
        { id: unasked.id, body: unasked.body, deliveries: unasked.deliveries },
        { model: createScriptedModel([{ text: 'done', usage }]), tools: [lookup], stores },
      );
      expect(completed.status).toBe('completed');
      const acked = stores.database.prepare('SELECT id FROM queue_messages WHERE acked_at_ms IS NOT NULL').pluck().all();
      expect(acked).toEqual([]);
      expect(await stores.queue.size()).toBe(2);
    } finally {
      await stores.close();
    }
  });
});
