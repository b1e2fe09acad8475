import { describe, expect, it } from 'vitest';
import { defineTool } from '../core/define-tool.ts';
import { ToolError } from '../core/tool-error.ts';
import { createMemoryStores } from '../stores/memory/index.ts';
import { createAutoAdvancingClock } from '../testing/auto-advancing-clock.ts';
import { createScriptedModel } from '../testing/scripted-model.ts';
import type { ToolFailureEntry } from '../ground/dead-letter-entries.ts';
import { drainToolDlq } from './drain-tool-dlq.ts';
import { handleMessage } from './handle-message.ts';
import type { DeadLetterQueue } from '../ground/ports/stores.ts';

describe('drainToolDlq', () => {
  it('replays every entry, removes the completed ones, counts each outcome, and goes on past bad entries', async () => {
    const clock = createAutoAdvancingClock();
    const stores = createMemoryStores({ clock });
    let healthy = false;
    let bookings = 0;
    const book = defineTool({
      name: 'book',
      description: '',
      inputSchema: { type: 'object' },
      execute: () => {
        if (!healthy) throw new ToolError({ kind: 'server', status: 503 });
        bookings += 1;
        return { ok: true };
      },
    });
    const call = { toolCalls: [{ id: 'c', name: 'book', args: '{}' }], usage: { input: 10, output: 1 } };
    const options = { tools: [book], stores, runtimeOptions: { clock }, queues: { messageDlq: stores.messageDlq, toolDlq: stores.toolDlq } };
    for (const id of ['a', 'b', 'c']) {
      await handleMessage({ body: '{"input":"book"}', id }, { ...options, model: createScriptedModel([call, call]) });
    }
    expect(await stores.toolDlq.size()).toBe(3);
    // An entry whose run state is gone (expired) and one that is not an entry at all.
    const expired: ToolFailureEntry = { ...((await stores.toolDlq.list())[0]!.entry as ToolFailureEntry), runId: 'run_gone', conversationRef: 'conv_gone' };
    await stores.toolDlq.push(expired);
    await (stores.toolDlq as DeadLetterQueue<unknown>).push({ not: 'an entry' });

    healthy = true;
    const progress: string[] = [];
    const report = await drainToolDlq({
      ...options,
      model: createScriptedModel([{ text: 'booked', usage: { input: 1, output: 1 } }]),
      concurrency: 2,
      onProgress: ({ status }) => progress.push(status),
    });
    expect(report.total).toBe(5);
    expect(report.outcomes).toEqual({ completed: 3, expired: 1, invalid_entry: 1 });
    expect(report.removed).toBe(3);
    expect(progress).toHaveLength(5);
    expect(bookings).toBe(3);
    expect(await stores.toolDlq.size()).toBe(2);

    const again = await drainToolDlq({ ...options, model: createScriptedModel([{ text: 'booked', usage: { input: 1, output: 1 } }]) });
    expect(again.outcomes).toEqual({ expired: 1, invalid_entry: 1 });
    expect(bookings).toBe(3);
  });
});
