/**
 * `toolrunMiddleware(runtime, { deadLetter })` and `replayLangChainDeadLetter` in LangChain v1's
 * real `createAgent` loop (LangChain's own `fakeModel()`), with and without LangGraph's
 * `MemorySaver`, on toolrun's memory stores: what is dead-lettered, what stays in-band, where the
 * conversation lives, and a replay from the failed step that calls the model for the remaining
 * steps only and applies the write once.
 */
import { AIMessage, createAgent, fakeModel, HumanMessage, ToolMessage, type BaseMessage } from 'langchain';
import { MemorySaver } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { langchainContinuation, replayLangChainDeadLetter, toolrunMiddleware } from '../../src/adapters/langchain/index.ts';
import { createToolRuntime } from '../../src/core/create-tool-runtime.ts';
import { defineTool } from '../../src/core/define-tool.ts';
import { ToolError } from '../../src/core/tool-error.ts';
import type { ToolFailureEntry } from '../../src/ground/dead-letter-entries.ts';
import { ToolrunError } from '../../src/ground/toolrun-error.ts';
import { createMemoryBreakerStateStore } from '../../src/stores/memory/memory-breaker-state-store.ts';
import { createSharedBreaker, type SharedBreakerEvent } from '../../src/policies/shared-breaker.ts';
import { createMemoryStores } from '../../src/stores/memory/index.ts';
import { createAutoAdvancingClock } from '../../src/testing/auto-advancing-clock.ts';
import { drainToolDlq } from '../../src/worker/drain-tool-dlq.ts';
import { FAST_RETRY, writeRuntime } from './fixtures/save-order-runtime.ts';

/** A model turn with the usage a provider reports (the fake model reports none). */
const withUsage = (message: AIMessage) => Object.assign(message, { usage_metadata: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } });

/** LangChain's fake model answering `turns` in order (then "done"), each turn with usage metadata. */
function scripted(turns: ReadonlyArray<{ call?: string; args?: Record<string, unknown>; text?: string }>) {
  const model = fakeModel();
  let index = 0;
  const answer = () => {
    const turn = turns[index++] ?? { text: 'done' };
    return turn.call
      ? withUsage(
          new AIMessage({
            content: '',
            tool_calls: [{ type: 'tool_call', id: turn.call, name: 'save_order', args: turn.args ?? { order: 'O-1', card: '4111111111111111' } }],
          }),
        )
      : withUsage(new AIMessage(turn.text ?? ''));
  };
  for (let count = 0; count < 12; count++) model.respond(answer);
  return { model, calls: () => model.calls.length };
}

/** A write tool whose upstream answers `failWith` until fixed, counting the writes applied. */
const unavailable = () => new ToolError({ kind: 'server', status: 503, message: 'Service Unavailable' });
const ask = (text = 'save O-1') => ({ messages: [new HumanMessage(text)] });
const lastText = (state: { messages: BaseMessage[] }) => state.messages.at(-1)?.content;

describe('toolrunMiddleware with a dead-letter place', () => {
  it('a 503 then success stays in-band: neither DLQ gets an entry', async () => {
    const stores = createMemoryStores();
    let calls = 0;
    const { runtime, writes } = writeRuntime(() => (++calls === 1 ? unavailable() : undefined));
    const { model } = scripted([{ call: 'c1' }, { text: 'saved' }]);
    const agent = createAgent({ model, middleware: [toolrunMiddleware(runtime, { deadLetter: { stores } })] });
    const state = await agent.invoke(ask());
    expect(lastText(state)).toBe('saved');
    expect(writes).toEqual(['O-1']);
    expect(await stores.toolDlq.list()).toEqual([]);
    expect(await stores.messageDlq.list()).toEqual([]);
  });

  it('past the retry budget across steps: one resumable entry, the conversation stored, the model still gets the envelope', async () => {
    const stores = createMemoryStores();
    const { runtime, writes } = writeRuntime(unavailable);
    const live = scripted([{ call: 'c1' }, { call: 'c2' }, { text: 'could not save' }]);
    const agent = createAgent({ model: live.model, middleware: [toolrunMiddleware(runtime, { deadLetter: { stores } })] });
    const state = await agent.invoke(ask());
    expect(lastText(state)).toBe('could not save');
    expect(live.calls()).toBe(3);
    expect(writes).toEqual([]);
    const failures = state.messages.filter((message) => ToolMessage.isInstance(message) && message.status === 'error');
    expect(failures).toHaveLength(2);

    const records = await stores.toolDlq.list();
    expect(records).toHaveLength(1);
    const entry = records[0]!.entry as ToolFailureEntry;
    expect(entry).toMatchObject({
      kind: 'tool',
      stepIndex: 0,
      toolName: 'save_order',
      attempts: 3,
      lastError: { kind: 'server', status: 503 },
      reason: 'retry-budget-exhausted',
      // the usage of the run's model turns up to the failed call's own (one turn)
      tokensSpent: { input: 10, output: 5 },
      originalMessageId: `langchain:${entry.runId}`,
    });
    expect(entry.runId).toMatch(/^run_[0-9a-f]{32}$/);
    expect(JSON.stringify(entry.toolArgs)).not.toContain('4111111111111111');
    const conversation = (await stores.conversations.get(entry.conversationRef)) as Array<{ type: string; data: Record<string, unknown> }>;
    expect(conversation.map((message) => message.type)).toEqual(['human', 'ai']);
    expect(conversation[1]?.data.tool_calls).toEqual([{ type: 'tool_call', id: 'c1', name: 'save_order', args: { order: 'O-1', card: '4111111111111111' } }]);
    expect(await stores.messageDlq.list()).toEqual([]);
  });

  it('with a LangGraph checkpointer the entry references the thread and checkpoint instead of copying the messages', async () => {
    const stores = createMemoryStores();
    const { runtime } = writeRuntime(unavailable);
    const { model } = scripted([{ call: 'c1' }, { text: 'could not save' }]);
    const checkpointer = new MemorySaver();
    const agent = createAgent({ model, checkpointer, middleware: [toolrunMiddleware(runtime, { deadLetter: { stores, toolRetryBudget: 1 } })] });
    await agent.invoke(ask(), { configurable: { thread_id: 'chat-7' } });
    const [record] = await stores.toolDlq.list();
    const entry = record!.entry as ToolFailureEntry;
    const match = /^langgraph:chat-7:([^:]+):c1$/.exec(entry.conversationRef);
    expect(match).not.toBeNull();
    expect(await stores.conversations.get(entry.conversationRef)).toBeUndefined();
    // the referenced checkpoint is the state before the tools step: the model's call, no answer yet
    const snapshot = await agent.graph.getState({ configurable: { thread_id: 'chat-7', checkpoint_id: decodeURIComponent(match![1]!) } });
    expect(snapshot.next).toEqual(['tools']);
    expect((snapshot.values as { messages: BaseMessage[] }).messages.map((message) => message.getType())).toEqual(['human', 'ai']);
    expect(entry).toMatchObject({ attempts: 2, tokensSpent: { input: 10, output: 5 } });
  });

  it('a 401 for every run: the shared breaker opens once (one alert); each run is one entry', async () => {
    const stores = createMemoryStores();
    const events: SharedBreakerEvent[] = [];
    const sharedBreaker = createSharedBreaker({
      store: createMemoryBreakerStateStore(),
      clock: createAutoAdvancingClock(),
      options: { failureThreshold: 2, halfOpenAfterMs: 60_000 },
      onEvent: (event) => events.push(event),
    });
    const { runtime } = writeRuntime(() => new ToolError({ kind: 'auth', status: 401, message: 'invalid_token' }), sharedBreaker);
    const middleware = toolrunMiddleware(runtime, { deadLetter: { stores } });
    for (let index = 0; index < 4; index++) {
      const { model } = scripted([{ call: `c${index}` }, { text: 'cannot' }]);
      await createAgent({ model, middleware: [middleware] }).invoke(ask(`save for user ${index}`));
    }
    const entries = (await stores.toolDlq.list()).map((record) => record.entry as ToolFailureEntry);
    expect(entries.map((entry) => entry.reason)).toEqual(['misconfiguration', 'misconfiguration', 'circuit-open', 'circuit-open']);
    expect(new Set(entries.map((entry) => entry.runId)).size).toBe(4);
    expect(events.filter((event) => event.type === 'breaker-open')).toHaveLength(1);
    expect(await stores.messageDlq.list()).toEqual([]);
  });

  it('an entry whose run then makes the failed call again and succeeds leaves the DLQ (the model recovered)', async () => {
    const stores = createMemoryStores();
    let down = true;
    const { runtime, writes } = writeRuntime(() => (down ? unavailable() : undefined));
    const model = fakeModel();
    let turns = 0;
    for (let count = 0; count < 4; count++)
      model.respond(() => {
        turns += 1;
        if (turns === 3) down = false;
        return turns <= 3
          ? new AIMessage({ content: '', tool_calls: [{ type: 'tool_call', id: `c${turns}`, name: 'save_order', args: { order: 'O-1' } }] })
          : new AIMessage('saved at last');
      });
    const agent = createAgent({ model, middleware: [toolrunMiddleware(runtime, { deadLetter: { stores } })] });
    const state = await agent.invoke(ask());
    expect(lastText(state)).toBe('saved at last');
    expect(writes).toEqual(['O-1']);
    expect(await stores.toolDlq.list()).toEqual([]);
  });

  it('a call id delivered twice in one turn runs the write once, with a dead-letter place', async () => {
    const stores = createMemoryStores();
    const { runtime, writes } = writeRuntime(() => undefined);
    const model = fakeModel();
    const call = { type: 'tool_call' as const, id: 'dup', name: 'save_order', args: { order: 'O-1' } };
    model.respond(new AIMessage({ content: '', tool_calls: [call, call] })).respond(new AIMessage('saved'));
    const agent = createAgent({ model, middleware: [toolrunMiddleware(runtime, { deadLetter: { stores } })] });
    const state = await agent.invoke(ask());
    expect(lastText(state)).toBe('saved');
    expect(writes).toEqual(['O-1']);
    expect(await stores.toolDlq.list()).toEqual([]);
  });

  it('refuses stores that are not toolrun stores', () => {
    const { runtime } = writeRuntime(unavailable);
    expect(() => toolrunMiddleware(runtime, { deadLetter: { stores: {} as never } })).toThrow(ToolrunError);
    expect(() => toolrunMiddleware(runtime, { deadLetter: { stores: createMemoryStores(), toolRetryBudget: -1 } })).toThrow(/toolRetryBudget/);
  });
});

describe('replayLangChainDeadLetter', () => {
  async function deadLettered(options: { checkpointer?: MemorySaver } = {}) {
    const stores = createMemoryStores();
    let fixed = false;
    const { runtime, writes } = writeRuntime(() => (fixed ? undefined : unavailable()));
    const live = scripted([{ call: 'c1' }, { text: 'could not save' }]);
    const middleware = toolrunMiddleware(runtime, { deadLetter: { stores, toolRetryBudget: 1 } });
    const agent = createAgent({ model: live.model, middleware: [middleware], ...(options.checkpointer ? { checkpointer: options.checkpointer } : {}) });
    await agent.invoke(ask(), { configurable: { thread_id: 'chat-1' } });
    const [record] = await stores.toolDlq.list();
    return { stores, runtime, writes, middleware, record: record!, fix: () => (fixed = true), liveModelCalls: live.calls() };
  }

  for (const withCheckpointer of [false, true]) {
    it(`${withCheckpointer ? 'from the checkpoint' : 'from the stored messages'}: two replays at once apply the write once, the model is called for the remaining step only`, async () => {
      const checkpointer = withCheckpointer ? new MemorySaver() : undefined;
      const { stores, runtime, writes, middleware, record, fix, liveModelCalls } = await deadLettered(checkpointer ? { checkpointer } : {});
      expect(liveModelCalls).toBe(2);
      fix();
      const replay = scripted([{ text: 'saved O-1' }]);
      const agent = createAgent({ model: replay.model, middleware: [middleware], ...(checkpointer ? { checkpointer } : {}) });
      const options = { stores, runtime, agent, config: { configurable: { thread_id: 'chat-1' } } };
      const results = await Promise.all([replayLangChainDeadLetter(record, options), replayLangChainDeadLetter(record, options)]);
      expect(results.map((result) => result.status).sort()).toEqual(['completed', 'in_progress']);
      expect(results.find((result) => result.status === 'completed')).toMatchObject({ modelCalls: 1, text: 'saved O-1', removed: true });
      expect(replay.calls()).toBe(1);
      expect(writes).toEqual(['O-1']);
      // the model saw the conversation up to the failed call, then the tool's answer
      const seen = replay.model.calls[0]!.messages.map((message) => [message.getType(), ToolMessage.isInstance(message) ? message.status : undefined]);
      expect(seen).toEqual([
        ['human', undefined],
        ['ai', undefined],
        ['tool', 'success'],
      ]);
      expect(await stores.toolDlq.list()).toEqual([]);
      if (checkpointer) {
        const latest = await agent.graph.getState({ configurable: { thread_id: 'chat-1' } });
        expect((latest.values as { messages: BaseMessage[] }).messages.map((message) => message.content).at(-1)).toBe('saved O-1');
      }
      const again = await replayLangChainDeadLetter(record, options);
      expect(again).toMatchObject({ status: 'already_completed', modelCalls: 0 });
      expect(writes).toEqual(['O-1']);
    });
  }

  it('a remaining step that fails past its budget during the replay is dead-lettered as a new entry; the replayed one leaves', async () => {
    const stores = createMemoryStores();
    let fixed = false;
    const writes: string[] = [];
    const runtime = createToolRuntime({
      clock: createAutoAdvancingClock(),
      random: () => 0,
      retry: FAST_RETRY,
      tools: [
        defineTool({
          name: 'save_order',
          description: 'Saves an order',
          inputSchema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] } as const,
          execute: async ({ order }) => {
            // O-1's upstream gets fixed; O-2's stays down
            if (order === 'O-2' || !fixed) throw unavailable();
            writes.push(order);
            return { saved: order };
          },
        }),
      ],
    });
    const middleware = toolrunMiddleware(runtime, { deadLetter: { stores, toolRetryBudget: 1 } });
    const live = scripted([{ call: 'c1', args: { order: 'O-1' } }, { text: 'could not save' }]);
    await createAgent({ model: live.model, middleware: [middleware] }).invoke(ask());
    const [first] = await stores.toolDlq.list();
    fixed = true;
    const replay = scripted([{ call: 'c2', args: { order: 'O-2' } }, { text: 'O-1 saved, O-2 not' }]);
    const agent = createAgent({ model: replay.model, middleware: [middleware] });
    const result = await replayLangChainDeadLetter(first!, { stores, runtime, agent });
    expect(result).toMatchObject({ status: 'completed', modelCalls: 2, removed: true });
    expect(writes).toEqual(['O-1']);
    const left = (await stores.toolDlq.list()).map((record) => record.entry as ToolFailureEntry);
    expect(left).toHaveLength(1);
    expect(left[0]).toMatchObject({ runId: (first!.entry as ToolFailureEntry).runId, stepIndex: 1, toolArgs: { order: 'O-2' } });
  });

  it('from a checkpoint, the other calls of the failed turn keep the answers they got live (their writes are not run again)', async () => {
    const stores = createMemoryStores();
    let fixed = false;
    const writes: string[] = [];
    const runtime = createToolRuntime({
      clock: createAutoAdvancingClock(),
      random: () => 0,
      retry: FAST_RETRY,
      tools: [
        defineTool({
          name: 'save_order',
          description: 'Saves an order',
          inputSchema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] } as const,
          execute: async ({ order }) => {
            if (order === 'O-1' && !fixed) throw unavailable();
            writes.push(order);
            return { saved: order };
          },
        }),
      ],
    });
    const checkpointer = new MemorySaver();
    const middleware = toolrunMiddleware(runtime, { deadLetter: { stores, toolRetryBudget: 1 } });
    const live = fakeModel()
      .respondWithTools([
        { name: 'save_order', args: { order: 'O-1' }, id: 'c1' },
        { name: 'save_order', args: { order: 'O-2' }, id: 'c2' },
      ])
      .respond(new AIMessage('O-2 saved, O-1 not'));
    await createAgent({ model: live, middleware: [middleware], checkpointer }).invoke(ask(), { configurable: { thread_id: 'chat-2' } });
    expect(writes).toEqual(['O-2']);
    const [record] = await stores.toolDlq.list();
    fixed = true;
    const replay = scripted([{ text: 'both saved' }]);
    const agent = createAgent({ model: replay.model, middleware: [middleware], checkpointer });
    expect(await replayLangChainDeadLetter(record!, { stores, runtime, agent })).toMatchObject({ status: 'completed', modelCalls: 1 });
    expect(writes).toEqual(['O-2', 'O-1']);
    const answers = replay.model.calls[0]!.messages.filter((message) => ToolMessage.isInstance(message));
    expect(answers.map((message) => [(message as ToolMessage).tool_call_id, (message as ToolMessage).status])).toEqual([
      ['c2', 'success'],
      ['c1', 'success'],
    ]);
  });

  it('a tool still failing: tool_failed, the model not called, the entry stays', async () => {
    const { stores, runtime, middleware, record } = await deadLettered();
    const replay = scripted([{ text: 'not reached' }]);
    const agent = createAgent({ model: replay.model, middleware: [middleware] });
    const result = await replayLangChainDeadLetter(record, { stores, runtime, agent });
    expect(result).toMatchObject({ status: 'tool_failed', removed: false });
    expect(replay.calls()).toBe(0);
    expect(await stores.toolDlq.list()).toHaveLength(1);
  });

  it('an expired conversation, or a deleted thread, ends expired; an entry of another host is invalid here', async () => {
    const { stores, runtime, middleware, record, fix } = await deadLettered();
    fix();
    const agent = createAgent({ model: scripted([]).model, middleware: [middleware] });
    await stores.conversations.delete((record.entry as ToolFailureEntry).conversationRef);
    expect(await replayLangChainDeadLetter(record, { stores, runtime, agent })).toMatchObject({ status: 'expired', removed: false });
    const foreign = { ...record, entry: { ...record.entry, originalMessageId: 'ai-sdk:run_1' } };
    expect(await replayLangChainDeadLetter(foreign, { stores, runtime, agent })).toMatchObject({ status: 'invalid_entry' });

    const checkpointer = new MemorySaver();
    const checkpointed = await deadLettered({ checkpointer });
    checkpointed.fix();
    await checkpointer.deleteThread('chat-1');
    const withSaver = createAgent({ model: scripted([]).model, middleware: [checkpointed.middleware], checkpointer });
    expect(
      await replayLangChainDeadLetter(checkpointed.record, { stores: checkpointed.stores, runtime: checkpointed.runtime, agent: withSaver }),
    ).toMatchObject({
      status: 'expired',
    });
    expect(checkpointed.writes).toEqual([]);
  });

  it('a drain without a LangChain registration (removeExpired) leaves the entry untouched; with one, it replays it in the agent’s loop', async () => {
    const checkpointer = new MemorySaver();
    const { stores, runtime, record, writes, middleware, fix } = await deadLettered({ checkpointer });
    fix();
    let toolrunModelCalls = 0;
    const model = async () => {
      toolrunModelCalls += 1;
      return { text: 'not reached', usage: { input: 0, output: 0 } };
    };
    const left = await drainToolDlq({ stores, runtime, model, removeExpired: true });
    expect(left).toMatchObject({ total: 1, removed: 0 });
    expect(await stores.toolDlq.list()).toEqual([record]);
    expect(writes).toEqual([]);

    const replay = scripted([{ text: 'saved O-1' }]);
    const agent = createAgent({ model: replay.model, middleware: [middleware], checkpointer });
    const drained = await drainToolDlq({ stores, runtime, model, hosts: { langchain: langchainContinuation({ agent, stores }) } });
    expect(drained).toMatchObject({ total: 1, removed: 1 });
    expect(await stores.toolDlq.list()).toEqual([]);
    expect(writes).toEqual(['O-1']);
    expect(replay.calls()).toBe(1);
    expect(toolrunModelCalls).toBe(0);
  });
});
