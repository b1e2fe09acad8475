/**
 * The routing contract of SPEC.md §2.1, written against the public API with both DLQs as plain arrays.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryStores, defineTool, handleMessage, replayToolFailure, ToolError, type MessageFailureEntry, type ToolFailureEntry } from '../src/index.ts';
import { createAutoAdvancingClock } from '../src/testing/auto-advancing-clock.ts';
import { createScriptedModel } from '../src/testing/scripted-model.ts';

const CUSTOMER_EMAIL = 'mia.li3818@example.com';
const CUSTOMER_CARD = '4111111111111111';

function bookingTool(behaviour: () => unknown) {
  let calls = 0;
  const tool = defineTool({
    name: 'book_flight',
    description: 'Books a flight for a customer',
    inputSchema: {
      type: 'object',
      properties: { flight: { type: 'string' }, email: { type: 'string' }, card_number: { type: 'string' } },
      required: ['flight'],
    },
    sensitive: ['card_number'],
    execute: async () => {
      calls += 1;
      return behaviour();
    },
  });
  return { tool, calls: () => calls };
}

const callBooking = (id: string) => ({
  toolCalls: [{ id, name: 'book_flight', args: JSON.stringify({ flight: 'HAT001', email: CUSTOMER_EMAIL, card_number: CUSTOMER_CARD }) }],
  usage: { input: 120, output: 20 },
});

describe('routing contract (SPEC.md §2.1)', () => {
  it('1. a malformed message goes to the message DLQ once, the model is never called', async () => {
    const messageDlq: MessageFailureEntry[] = [];
    const toolDlq: ToolFailureEntry[] = [];
    const model = createScriptedModel([{ text: 'hi', usage: { input: 1, output: 1 } }]);
    const result = await handleMessage(
      { body: '{not json', id: 'm-1' },
      { model, tools: [bookingTool(() => 'ok').tool], queues: { messageDlq, toolDlq }, stores: createMemoryStores() },
    );
    expect(result.status).toBe('rejected');
    expect(messageDlq).toHaveLength(1);
    expect(messageDlq[0]).toMatchObject({ kind: 'message', rawBody: '{not json', messageId: 'm-1', reason: { code: 'MALFORMED_JSON' } });
    expect(typeof messageDlq[0]!.receivedAt).toBe('string');
    expect(toolDlq).toHaveLength(0);
    expect(model.calls).toBe(0);
  });

  it('2. a tool that fails once with 503 then succeeds: called twice, run completes, both DLQs empty', async () => {
    const messageDlq: MessageFailureEntry[] = [];
    const toolDlq: ToolFailureEntry[] = [];
    let failures = 0;
    const { tool, calls } = bookingTool(() => {
      if (failures++ === 0) throw new ToolError({ kind: 'server', status: 503, message: 'Service Unavailable' });
      return { confirmation: 'ABC123' };
    });
    const model = createScriptedModel([callBooking('c1'), { text: 'Booked: ABC123', usage: { input: 150, output: 10 } }]);
    const result = await handleMessage(
      { body: JSON.stringify({ input: 'Book HAT001 for me' }), id: 'm-2' },
      {
        model,
        tools: [tool],
        queues: { messageDlq, toolDlq },
        toolRetryBudget: 2,
        stores: createMemoryStores(),
        runtimeOptions: { clock: createAutoAdvancingClock() },
      },
    );
    expect(calls()).toBe(2);
    expect(result.status).toBe('completed');
    expect(messageDlq).toHaveLength(0);
    expect(toolDlq).toHaveLength(0);
  });

  it('3. a tool that always fails with 503: one tool-DLQ entry with resumable state and no PII; run tool_failed', async () => {
    const messageDlq: MessageFailureEntry[] = [];
    const toolDlq: ToolFailureEntry[] = [];
    const { tool } = bookingTool(() => {
      throw new ToolError({ kind: 'server', status: 503, message: `upstream 503 while booking for ${CUSTOMER_EMAIL}` });
    });
    const model = createScriptedModel([callBooking('c1'), callBooking('c2'), callBooking('c3')]);
    const result = await handleMessage(
      { body: JSON.stringify({ input: `Book HAT001, my e-mail is ${CUSTOMER_EMAIL}` }), id: 'm-3' },
      {
        model,
        tools: [tool],
        queues: { messageDlq, toolDlq },
        toolRetryBudget: 2,
        stores: createMemoryStores(),
        runtimeOptions: { clock: createAutoAdvancingClock() },
      },
    );
    expect(result.status).toBe('tool_failed');
    expect(messageDlq).toHaveLength(0);
    expect(toolDlq).toHaveLength(1);
    const entry = toolDlq[0]!;
    expect(entry.toolName).toBe('book_flight');
    expect(entry.attempts).toBe(3);
    expect(entry.stepIndex).toBeGreaterThan(0);
    expect(entry.conversationRef.startsWith('conv_')).toBe(true);
    expect(entry.tokensSpent.input).toBeGreaterThan(0);
    expect(entry.originalMessageId).toBe('m-3');
    expect(entry.lastError).toMatchObject({ kind: 'server', status: 503 });
    expect(Number.isNaN(Date.parse(entry.firstSeenAt))).toBe(false);
    const serialized = JSON.stringify(entry);
    expect(serialized).not.toContain(CUSTOMER_EMAIL);
    expect(serialized).not.toContain(CUSTOMER_CARD);
  });
});

describe('replay (SPEC.md §2.1)', () => {
  async function failedRun(options: { conversationTtlMs?: number } = {}) {
    const clock = createAutoAdvancingClock();
    const stores = createMemoryStores({ clock, ...(options.conversationTtlMs !== undefined ? { conversationTtlMs: options.conversationTtlMs } : {}) });
    const toolDlq: ToolFailureEntry[] = [];
    let healthy = false;
    let sideEffects = 0;
    const { tool, calls } = bookingTool(() => {
      if (!healthy) throw new ToolError({ kind: 'server', status: 503 });
      sideEffects += 1;
      return { confirmation: 'ABC123' };
    });
    const failingModel = createScriptedModel([callBooking('c1'), callBooking('c2')]);
    await handleMessage(
      { body: JSON.stringify({ input: 'Book HAT001' }), id: 'm-replay' },
      { model: failingModel, tools: [tool], queues: { messageDlq: [], toolDlq }, toolRetryBudget: 2, stores, runtimeOptions: { clock } },
    );
    expect(toolDlq).toHaveLength(1);
    return { stores, clock, toolDlq, tool, calls, heal: () => (healthy = true), sideEffects: () => sideEffects, failingModelCalls: failingModel.calls };
  }

  it('resuming with a working tool calls the model only for the remaining steps', async () => {
    const run = await failedRun();
    run.heal();
    const model = createScriptedModel([{ text: 'Booked: ABC123', usage: { input: 200, output: 8 } }]);
    const result = await replayToolFailure(run.toolDlq[0]!, { model, tools: [run.tool], stores: run.stores, runtimeOptions: { clock: run.clock } });
    expect(result.status).toBe('completed');
    expect(model.calls).toBe(1);
    expect(run.sideEffects()).toBe(1);
    // The model saw the re-executed call's success, not the failure.
    const lastTool = model.requests[0]!.messages.filter((message) => message.role === 'tool').at(-1)!;
    expect(JSON.parse(lastTool.content!)).toMatchObject({ status: 'success', data: { confirmation: 'ABC123' } });
  });

  it('replaying the same entry twice performs each side effect once', async () => {
    const run = await failedRun();
    run.heal();
    const model = createScriptedModel([{ text: 'Booked', usage: { input: 1, output: 1 } }]);
    const first = await replayToolFailure(run.toolDlq[0]!, { model, tools: [run.tool], stores: run.stores, runtimeOptions: { clock: run.clock } });
    const second = await replayToolFailure(run.toolDlq[0]!, { model, tools: [run.tool], stores: run.stores, runtimeOptions: { clock: run.clock } });
    expect(first.status).toBe('completed');
    expect(second.status).toBe('already_completed');
    expect(run.sideEffects()).toBe(1);
    expect(model.calls).toBe(1);
  });

  it('an entry whose conversation expired ends with status expired, without throwing', async () => {
    const run = await failedRun({ conversationTtlMs: 60_000 });
    run.heal();
    await run.clock.sleep(120_000);
    const model = createScriptedModel([{ text: 'Booked', usage: { input: 1, output: 1 } }]);
    const result = await replayToolFailure(run.toolDlq[0]!, { model, tools: [run.tool], stores: run.stores, runtimeOptions: { clock: run.clock } });
    expect(result.status).toBe('expired');
    expect(model.calls).toBe(0);
    expect(run.sideEffects()).toBe(0);
  });

  it('the durable DLQ counts entries and they carry firstSeenAt', async () => {
    const run = await failedRun();
    await run.stores.toolDlq.push(run.toolDlq[0]!);
    expect(await run.stores.toolDlq.size()).toBe(1);
    const oldest = await run.stores.toolDlq.oldest();
    expect((oldest?.entry as ToolFailureEntry).firstSeenAt).toBe(run.toolDlq[0]!.firstSeenAt);
  });
});
