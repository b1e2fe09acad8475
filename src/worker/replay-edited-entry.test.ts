import { describe, expect, it } from 'vitest';
import { defineTool } from '../core/define-tool.ts';
import { ToolError } from '../core/tool-error.ts';
import type { ResumableEntry } from '../ground/dead-letter-entries.ts';
import { createMemoryStores } from '../stores/memory/index.ts';
import { createAutoAdvancingClock } from '../testing/auto-advancing-clock.ts';
import { createScriptedModel } from '../testing/scripted-model.ts';
import { createToolrun } from './create-toolrun.ts';
import { replayDeadLetter } from './replay-dead-letter.ts';

describe('replaying an entry edited to name another run’s conversation', () => {
  it('does nothing to that conversation (nor to its own run): invalid_entry, the entry stays', async () => {
    const clock = createAutoAdvancingClock();
    const stores = createMemoryStores({ clock });
    let healthy = false;
    let bookings = 0;
    const book = defineTool({
      name: 'book',
      description: 'Books',
      inputSchema: { type: 'object' },
      execute: () => {
        if (!healthy) throw new ToolError({ kind: 'server', status: 503 });
        bookings += 1;
        return { booked: true };
      },
    });
    const call = { toolCalls: [{ id: 'c1', name: 'book', args: '{}' }], usage: { input: 10, output: 1 } };
    const options = { tools: [book], stores, runtimeOptions: { clock }, queues: { messageDlq: stores.messageDlq, toolDlq: stores.toolDlq } };
    for (const id of ['m1', 'm2'])
      await createToolrun({ ...options, model: createScriptedModel([call, call]) }).handleMessage({ body: '{"input":"book"}', id });
    const records = await stores.toolDlq.list();
    const mine = records.find((record) => record.entry.runId === 'run_m1')!;
    const other = records.find((record) => record.entry.runId === 'run_m2')!;
    const otherConversation = await stores.conversations.get(other.entry.conversationRef);
    const mineConversation = await stores.conversations.get(mine.entry.conversationRef);
    expect(otherConversation).toBeDefined();

    healthy = true;
    const edited = { ...mine, entry: { ...mine.entry, conversationRef: other.entry.conversationRef } as ResumableEntry };
    const result = await replayDeadLetter(edited, { ...options, model: createScriptedModel([{ text: 'booked', usage: { input: 1, output: 1 } }]) });
    expect(result).toMatchObject({ status: 'invalid_entry', removed: false });
    expect(await stores.conversations.get(other.entry.conversationRef)).toEqual(otherConversation);
    expect(await stores.conversations.get(mine.entry.conversationRef)).toEqual(mineConversation);
    expect((await stores.runs.get('run_m1'))?.status).toBe('tool_failed');
    expect(bookings).toBe(0);
    expect(await stores.toolDlq.size()).toBe(2);
  });
});
