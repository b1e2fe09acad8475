import { describe, expect, it } from 'vitest';
import { defineTool } from '../core/define-tool.ts';
import { ToolError } from '../core/tool-error.ts';
import { createMemoryStores } from '../stores/memory/index.ts';
import { createAutoAdvancingClock } from '../testing/auto-advancing-clock.ts';
import { createScriptedModel } from '../testing/scripted-model.ts';
import type { ToolFailureEntry } from './dead-letter-entries.ts';
import { handleMessage } from './handle-message.ts';

const down = defineTool({ name: 'book', description: '', inputSchema: { type: 'object' }, execute: () => { throw new ToolError({ kind: 'server', status: 503 }); } });
const call = (id: string) => ({ toolCalls: [{ id, name: 'book', args: '{}' }], usage: { input: 10, output: 1 } });

describe('handleMessage', () => {
  it('a crash between the run ending tool_failed and the DLQ push loses nothing: the redelivery pushes the entry once', async () => {
    const stores = createMemoryStores();
    const clock = createAutoAdvancingClock();
    const entries: ToolFailureEntry[] = [];
    let crash = true;
    const toolDlq = {
      push(entry: ToolFailureEntry) {
        if (crash) throw new Error('process died');
        entries.push(entry);
      },
    };
    const options = { model: createScriptedModel([call('a'), call('b')]), tools: [down], stores, queues: { messageDlq: [], toolDlq }, runtimeOptions: { clock } };
    const message = { body: '{"input":"book it"}', id: 'm-crash' };
    await expect(handleMessage(message, options)).rejects.toThrow('process died');
    expect(entries).toHaveLength(0);
    crash = false;
    const redelivered = await handleMessage(message, options);
    expect(redelivered).toMatchObject({ status: 'tool_failed', alreadyFinished: true });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ runId: 'run_m-crash', toolName: 'book', attempts: 3, originalMessageId: 'm-crash' });
    const again = await handleMessage(message, options);
    expect(again.status).toBe('tool_failed');
    expect(entries).toHaveLength(1);
  });

  it('a redelivered message of a completed run does nothing again', async () => {
    const stores = createMemoryStores();
    const model = createScriptedModel([{ text: 'hello', usage: { input: 1, output: 1 } }]);
    const options = { model, tools: [down], stores, queues: { messageDlq: [], toolDlq: [] } };
    const first = await handleMessage({ body: '{"input":"hi"}', id: 'm-1' }, options);
    const second = await handleMessage({ body: '{"input":"hi"}', id: 'm-1' }, options);
    expect(first).toMatchObject({ status: 'completed', text: 'hello', alreadyFinished: false });
    expect(second).toMatchObject({ status: 'completed', text: 'hello', alreadyFinished: true });
    expect(model.calls).toBe(1);
  });

  it('an invalid body names the field problems in the message-DLQ entry', async () => {
    const messageDlq: unknown[] = [];
    const model = createScriptedModel([{ text: 'x', usage: { input: 1, output: 1 } }]);
    const result = await handleMessage({ body: '{"input": 5}', id: 'm-2' }, { model, tools: [down], stores: createMemoryStores(), queues: { messageDlq, toolDlq: [] } });
    expect(result.status).toBe('rejected');
    expect(messageDlq).toEqual([expect.objectContaining({ kind: 'message', rawBody: '{"input": 5}', reason: expect.objectContaining({ code: 'INVALID_MESSAGE' }) })]);
    expect(model.calls).toBe(0);
  });
});
