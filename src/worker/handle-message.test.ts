import { describe, expect, it } from 'vitest';
import { defineTool } from '../core/define-tool.ts';
import { ToolError } from '../core/tool-error.ts';
import { createMemoryStores } from '../stores/memory/index.ts';
import { createAutoAdvancingClock } from '../testing/auto-advancing-clock.ts';
import { createScriptedModel } from '../testing/scripted-model.ts';
import type { ToolFailureEntry } from '../ground/dead-letter-entries.ts';
import { handleMessage } from './handle-message.ts';
import { recordDeliveryError } from './delivery-errors.ts';
import { createStoreJournal } from '../stores/store-journal.ts';
import { createRedactor } from '../core/redact.ts';
import type { WorkerEvent } from './worker-events.ts';
import type { DeadLetterQueue, Stores } from '../ground/ports/stores.ts';

const down = defineTool({
  name: 'book',
  description: '',
  inputSchema: { type: 'object' },
  execute: () => {
    throw new ToolError({ kind: 'server', status: 503 });
  },
});
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
    const options = {
      model: createScriptedModel([call('a'), call('b')]),
      tools: [down],
      stores,
      queues: { messageDlq: [], toolDlq },
      runtimeOptions: { clock },
    };
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

  it('with DLQs that push by key, a malformed message handled twice is dead-lettered once, and the second time says so', async () => {
    const stores = createMemoryStores();
    const events: WorkerEvent[] = [];
    const model = createScriptedModel([]);
    const options = {
      model,
      tools: [down],
      stores,
      queues: { messageDlq: stores.messageDlq, toolDlq: stores.toolDlq },
      onEvent: (event: WorkerEvent) => events.push(event),
    };
    const first = await handleMessage({ body: '{not json', id: 'm-bad' }, options);
    const second = await handleMessage({ body: '{not json', id: 'm-bad' }, options);
    expect(first).toMatchObject({ status: 'rejected', messageId: 'm-bad', alreadyFinished: false });
    expect(second).toMatchObject({ status: 'rejected', messageId: 'm-bad', alreadyFinished: true });
    expect((await stores.messageDlq.list()).map((record) => record.entry.messageId)).toEqual(['m-bad']);
    expect(await (stores.messageDlq as DeadLetterQueue<unknown>).pushOnce('message:m-bad', 'probe')).toMatchObject({ added: false });
    expect(events.filter((event) => event.type === 'dead-letter-add')).toHaveLength(1);
    // a message without an id cannot be keyed: each delivery is its own entry
    await handleMessage({ body: '{not json' }, options);
    await handleMessage({ body: '{not json' }, options);
    expect(await stores.messageDlq.size()).toBe(3);
    expect(model.calls).toBe(0);
  });

  it('a crash right after a keyed tool-DLQ push (before anything else is recorded) leaves one entry after the redelivery', async () => {
    const stores = createMemoryStores();
    const clock = createAutoAdvancingClock();
    const events: WorkerEvent[] = [];
    let crash = true;
    const keys: string[] = [];
    const toolDlq = {
      push: stores.toolDlq.push.bind(stores.toolDlq),
      async pushOnce(key: string, entry: unknown) {
        keys.push(key);
        const result = await (stores.toolDlq as DeadLetterQueue<unknown>).pushOnce(key, entry);
        if (crash) throw new Error('process died');
        return result;
      },
    };
    const options = {
      model: createScriptedModel([call('a'), call('b')]),
      tools: [down],
      stores,
      queues: { messageDlq: stores.messageDlq, toolDlq },
      runtimeOptions: { clock },
      onEvent: (event: WorkerEvent) => events.push(event),
    };
    const message = { body: '{"input":"book it"}', id: 'm-keyed' };
    await expect(handleMessage(message, options)).rejects.toThrow('process died');
    crash = false;
    const redelivered = await handleMessage(message, options);
    expect(redelivered).toMatchObject({ status: 'tool_failed', alreadyFinished: true });
    expect(redelivered).not.toHaveProperty('toolFailure');
    const entries = await stores.toolDlq.list();
    expect(entries.map((record) => record.entry)).toEqual([expect.objectContaining({ runId: 'run_m-keyed', originalMessageId: 'm-keyed', attempts: 3 })]);
    const stepIndex = (entries[0]!.entry as ToolFailureEntry).stepIndex;
    expect(keys).toEqual([`tool:run_m-keyed:${stepIndex}`, `tool:run_m-keyed:${stepIndex}`]);
    expect(events.filter((event) => event.type === 'dead-letter-add')).toHaveLength(0);
    // a keyed sink needs no ledger marker
    expect(await stores.ledger.get(`run_m-keyed:dead-lettered:${stepIndex}`)).toBeUndefined();
  });

  it('an invalid body names the field problems in the message-DLQ entry', async () => {
    const messageDlq: unknown[] = [];
    const model = createScriptedModel([{ text: 'x', usage: { input: 1, output: 1 } }]);
    const result = await handleMessage(
      { body: '{"input": 5}', id: 'm-2' },
      { model, tools: [down], stores: createMemoryStores(), queues: { messageDlq, toolDlq: [] } },
    );
    expect(result.status).toBe('rejected');
    expect(messageDlq).toEqual([
      expect.objectContaining({ kind: 'message', rawBody: '{"input": 5}', reason: expect.objectContaining({ code: 'INVALID_MESSAGE' }) }),
    ]);
    expect(model.calls).toBe(0);
  });
});

describe('handleMessage without queues', () => {
  it('dead-letters into the stores’ own DLQs (a bad body, a failing model), never a TypeError', async () => {
    const stores = createMemoryStores();
    const echo = defineTool({ name: 'echo', description: 'Echoes', inputSchema: { type: 'object' }, execute: () => ({ ok: true }) });
    const rejected = await handleMessage({ id: 'bad', body: '{not json' }, { model: createScriptedModel([]), tools: [echo], stores });
    expect(rejected).toMatchObject({ status: 'rejected' });
    expect((await stores.messageDlq.list()).map(({ entry }) => entry.messageId)).toEqual(['bad']);
    const failing = async () => {
      throw Object.assign(new Error('invalid api key'), { status: 401 });
    };
    const failed = await handleMessage({ id: 'm', body: '{"input":"hi"}' }, { model: failing, tools: [echo], stores, modelPolicy: { maxAttempts: 1 } });
    expect(failed.status).toBe('model_failed');
    expect((await stores.toolDlq.list()).map(({ entry }) => entry.kind)).toEqual(['model']);
  });
});

describe('recordDeliveryError', () => {
  it('keeps the record when the same failure repeats, so a crash while recording cannot lose it; a new failure replaces it', async () => {
    const stores = createMemoryStores();
    const redactor = createRedactor();
    const key = 'message:m:last-delivery-error';
    await recordDeliveryError(stores.journal, 'm', new Error('unsupported Unicode escape sequence'), redactor);
    expect(await stores.ledger.get(key)).toBe('Error: unsupported Unicode escape sequence');
    // a process that dies between a delete and the put that follows: the delete goes through, the rest never runs
    let deletes = 0;
    const dying: Stores = {
      ...stores,
      ledger: {
        get: (k) => stores.ledger.get(k),
        putIfAbsent: (k, v) => stores.ledger.putIfAbsent(k, v),
        delete: async (k) => {
          deletes += 1;
          await stores.ledger.delete(k);
          throw new Error('process died');
        },
      },
    };
    // its journal over its own stores
    dying.journal = createStoreJournal(dying);
    await recordDeliveryError(dying.journal, 'm', new Error('unsupported Unicode escape sequence'), redactor);
    expect(deletes).toBe(0);
    expect(await stores.ledger.get(key)).toBe('Error: unsupported Unicode escape sequence');
    await recordDeliveryError(stores.journal, 'm', new Error('connection reset'), redactor);
    expect(await stores.ledger.get(key)).toBe('Error: connection reset');
  });
});
