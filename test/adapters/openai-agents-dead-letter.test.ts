/**
 * `toOpenAiAgents({ deadLetter })` and `replayOpenAiAgentsDeadLetter` in the OpenAI Agents SDK's
 * real `Runner` loop (its OpenAI provider and `openai` client) against a scripted Responses endpoint
 * on 127.0.0.1, with toolrun's memory stores: what is dead-lettered, what stays in-band, and a
 * replay from the failed step that calls the model for the remaining steps only.
 */
import { Agent, OpenAIProvider, Runner, setTracingDisabled } from '@openai/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAiAgentsContinuation, replayOpenAiAgentsDeadLetter, toOpenAiAgents } from '../../src/adapters/openai-agents/index.ts';
import { ToolError } from '../../src/core/tool-error.ts';
import type { ToolFailureEntry } from '../../src/ground/dead-letter-entries.ts';
import { ToolrunError } from '../../src/ground/toolrun-error.ts';
import { createMemoryBreakerStateStore } from '../../src/stores/memory/memory-breaker-state-store.ts';
import { createSharedBreaker, type SharedBreakerEvent } from '../../src/policies/shared-breaker.ts';
import { createMemoryStores } from '../../src/stores/memory/index.ts';
import { createAutoAdvancingClock } from '../../src/testing/auto-advancing-clock.ts';
import { drainToolDlq } from '../../src/worker/drain-tool-dlq.ts';
import {
  chatText,
  chatToolCalls,
  responsesText,
  responsesToolCall,
  startScriptedServer,
  streamedResponse,
  type RecordedRequest,
  type ScriptedServer,
} from './fixtures/openai-scripted-server.ts';
import { writeRuntime } from './fixtures/save-order-runtime.ts';

let server: ScriptedServer;
beforeAll(async () => {
  setTracingDisabled(true);
  server = await startScriptedServer();
});
afterAll(async () => {
  await server.close();
});

/** A write tool whose upstream answers `failWith` until it returns nothing, counting the writes applied. */
const unavailable = () => new ToolError({ kind: 'server', status: 503, message: 'Service Unavailable' });
const saveCall = (id: string) => () => responsesToolCall({ id, name: 'save_order', arguments: '{"order":"O-1","card":"4111111111111111"}' });
const modelProvider = () => new OpenAIProvider({ apiKey: 'sk-test', baseURL: `${server.origin}/v1`, useResponses: true });
const agentWith = (tools: ReturnType<typeof toOpenAiAgents>['tools']) => new Agent({ name: 'orders', instructions: 'Save orders.', model: 'gpt-4o', tools });

/** One live run of the SDK's Runner with toolrun's tools and a dead-letter place. */
async function liveRun(runtime: ReturnType<typeof writeRuntime>['runtime'], stores: ReturnType<typeof createMemoryStores>, sessionId?: string) {
  const { tools, runConfig, runId } = toOpenAiAgents(runtime, { deadLetter: { stores }, ...(sessionId ? { sessionId } : {}) });
  const result = await new Runner({ ...runConfig, modelProvider: modelProvider() }).run(agentWith(tools), 'save O-1', { maxTurns: 6 });
  return { result, runId };
}

/** The function outputs a Responses request carries, by call id. */
function functionOutputs(request: RecordedRequest | undefined): Map<string, string> {
  const items = (request?.body.input ?? []) as Array<{ type?: string; call_id?: string; output?: unknown }>;
  return new Map(items.filter((item) => item.type === 'function_call_output').map((item) => [item.call_id ?? '', String(item.output)]));
}

describe('toOpenAiAgents with a dead-letter place', () => {
  it('a 503 then success stays in-band: neither DLQ gets an entry', async () => {
    const stores = createMemoryStores();
    let calls = 0;
    const { runtime, writes } = writeRuntime(() => (++calls === 1 ? unavailable() : undefined));
    server.script([saveCall('c1'), () => responsesText('saved')]);
    const { result } = await liveRun(runtime, stores);
    expect(result.finalOutput).toBe('saved');
    expect(writes).toEqual(['O-1']);
    expect(JSON.parse(functionOutputs(server.requests[1]).get('c1')!)).toMatchObject({ status: 'success', attempts: 2 });
    expect(await stores.toolDlq.list()).toEqual([]);
    expect(await stores.messageDlq.list()).toEqual([]);
  });

  it('a failure past the retry budget: one resumable entry, the model still gets the envelope', async () => {
    const stores = createMemoryStores();
    const { runtime, writes } = writeRuntime(unavailable);
    server.script([saveCall('c1'), () => responsesText('could not save')]);
    const { result, runId } = await liveRun(runtime, stores);
    expect(result.finalOutput).toBe('could not save');
    expect(server.requests).toHaveLength(2);
    expect(writes).toEqual([]);
    expect(JSON.parse(functionOutputs(server.requests[1]).get('c1')!)).toMatchObject({ status: 'failed', error: { type: 'environment' } });

    const records = await stores.toolDlq.list();
    expect(records).toHaveLength(1);
    const entry = records[0]!.entry as ToolFailureEntry;
    expect(entry).toMatchObject({
      kind: 'tool',
      runId,
      stepIndex: 0,
      toolName: 'save_order',
      attempts: 3,
      lastError: { kind: 'server', status: 503 },
      reason: 'retry-budget-exhausted',
      // the SDK's RunContext.usage when the tool ran: the first model response's 20 + 5 tokens
      tokensSpent: { input: 20, output: 5 },
      originalMessageId: `openai-agents:${runId}`,
    });
    expect(JSON.stringify(entry.toolArgs)).not.toContain('4111111111111111');
    expect((entry.toolArgs as { order: string }).order).toBe('O-1');
    // the conversation is in the conversation store, never in the entry: the run's input items up to the failed call
    expect(JSON.stringify(entry)).not.toContain('save O-1');
    const conversation = await stores.conversations.get(entry.conversationRef);
    expect(conversation?.[0]).toMatchObject({ role: 'user', content: 'save O-1' });
    expect(conversation?.at(-1)).toMatchObject({ type: 'function_call', callId: 'c1', name: 'save_order' });
    expect(await stores.messageDlq.list()).toEqual([]);
  });

  it('a failure at the second step: stepIndex 1, tokensSpent the usage of both model calls', async () => {
    const stores = createMemoryStores();
    let calls = 0;
    const { runtime } = writeRuntime(() => (++calls === 1 ? undefined : unavailable()));
    server.script([saveCall('c1'), saveCall('c2'), () => responsesText('done')]);
    await liveRun(runtime, stores);
    const [record] = await stores.toolDlq.list();
    expect(record?.entry).toMatchObject({ stepIndex: 1, tokensSpent: { input: 40, output: 10 } });
    const conversation = await stores.conversations.get((record!.entry as ToolFailureEntry).conversationRef);
    expect(conversation?.map((item) => (item as { type?: string }).type ?? 'message')).toEqual([
      'message',
      'function_call',
      'function_call_result',
      'function_call',
    ]);
  });

  it('a 401 for every run: the shared breaker opens once (one alert); each run is one entry, the message DLQ empty', async () => {
    const stores = createMemoryStores();
    const events: SharedBreakerEvent[] = [];
    const sharedBreaker = createSharedBreaker({
      store: createMemoryBreakerStateStore(),
      clock: createAutoAdvancingClock(),
      options: { failureThreshold: 2, halfOpenAfterMs: 60_000 },
      onEvent: (event) => events.push(event),
    });
    const { runtime, writes } = writeRuntime(() => new ToolError({ kind: 'auth', status: 401, message: 'invalid_token' }), sharedBreaker);
    for (let index = 0; index < 4; index++) {
      server.script([saveCall(`c${index}`), () => responsesText('cannot')]);
      await liveRun(runtime, stores, `user-${index}`);
    }
    const reasons = (await stores.toolDlq.list()).map((record) => (record.entry as ToolFailureEntry).reason);
    expect(reasons).toEqual(['misconfiguration', 'misconfiguration', 'circuit-open', 'circuit-open']);
    expect(events.filter((event) => event.type === 'breaker-open')).toHaveLength(1);
    expect(writes).toEqual([]);
    expect(await stores.messageDlq.list()).toEqual([]);
  });

  it('the model makes the failed call again and it succeeds: the entry leaves the DLQ (the run recovered)', async () => {
    const stores = createMemoryStores();
    let down = true;
    const { runtime, writes } = writeRuntime(() => (down ? unavailable() : undefined));
    server.script([
      saveCall('c1'),
      () => {
        down = false; // the upstream is back before the model tries again
        return saveCall('c2')();
      },
      () => responsesText('saved at last'),
    ]);
    const { result } = await liveRun(runtime, stores);
    expect(result.finalOutput).toBe('saved at last');
    expect(writes).toEqual(['O-1']);
    expect(await stores.toolDlq.list()).toEqual([]);
  });

  it('one call id delivered twice in one turn runs the write once, with deadLetter', async () => {
    const stores = createMemoryStores();
    const { runtime, writes } = writeRuntime(() => undefined);
    const call = responsesToolCall({ id: 'c1', name: 'save_order', arguments: '{"order":"O-1"}' });
    const twice = {
      ...call,
      body: { ...(call.body as object), output: [...(call.body as { output: unknown[] }).output, ...(call.body as { output: unknown[] }).output] },
    };
    server.script([() => twice, () => responsesText('saved')]);
    await liveRun(runtime, stores);
    expect(writes).toEqual(['O-1']);
    expect(await stores.toolDlq.list()).toEqual([]);
  });

  it('a streamed run (Runner.run with stream: true) dead-letters the same way', async () => {
    const stores = createMemoryStores();
    const { runtime } = writeRuntime(unavailable);
    server.script([() => streamedResponse(saveCall('c1')()), () => streamedResponse(responsesText('could not save'))]);
    const { tools, runConfig, runId } = toOpenAiAgents(runtime, { deadLetter: { stores } });
    const streamed = await new Runner({ ...runConfig, modelProvider: modelProvider() }).run(agentWith(tools), 'save O-1', { stream: true });
    await streamed.completed;
    expect(streamed.finalOutput).toBe('could not save');
    const [record] = await stores.toolDlq.list();
    expect(server.requests.map((request) => request.body.stream)).toEqual([true, true]);
    expect(record?.entry).toMatchObject({ runId, stepIndex: 0, reason: 'retry-budget-exhausted', tokensSpent: { input: 20, output: 5 } });
    const conversation = await stores.conversations.get((record!.entry as ToolFailureEntry).conversationRef);
    expect(conversation?.at(-1)).toMatchObject({ type: 'function_call', callId: 'c1' });
  });

  it('refuses stores that are not toolrun stores', () => {
    const { runtime } = writeRuntime(unavailable);
    expect(() => toOpenAiAgents(runtime, { deadLetter: { stores: {} as never } })).toThrow(ToolrunError);
  });
});

describe('replayOpenAiAgentsDeadLetter', () => {
  async function deadLettered() {
    const stores = createMemoryStores();
    let fixed = false;
    const { runtime, writes } = writeRuntime(() => (fixed ? undefined : unavailable()));
    server.script([saveCall('c1'), () => responsesText('could not save')]);
    await liveRun(runtime, stores);
    const liveModelCalls = server.requests.length;
    const [record] = await stores.toolDlq.list();
    const continueRun = (items: unknown[]) =>
      new Runner({ ...toOpenAiAgents(runtime).runConfig, modelProvider: modelProvider() }).run(agentWith(toOpenAiAgents(runtime).tools), items as never);
    return { stores, runtime, writes, record: record!, fix: () => (fixed = true), liveModelCalls, continueRun };
  }

  it('after the fix, two replays at once: the write applied once, the model called for the remaining step only, the entry done', async () => {
    const { stores, runtime, writes, record, fix, liveModelCalls, continueRun } = await deadLettered();
    expect(liveModelCalls).toBe(2);
    fix();
    server.script([() => responsesText('saved O-1')]);
    const options = { stores, runtime, continueRun };
    const results = await Promise.all([replayOpenAiAgentsDeadLetter(record, options), replayOpenAiAgentsDeadLetter(record, options)]);
    expect(results.map((result) => result.status).sort()).toEqual(['completed', 'in_progress']);
    const completed = results.find((result) => result.status === 'completed')!;
    expect(completed).toMatchObject({ modelCalls: 1, removed: true });
    expect(server.requests).toHaveLength(1);
    expect(server.unexpected).toHaveLength(0);
    // the model got the conversation up to the failed call and the tool's new output
    expect(JSON.parse(functionOutputs(server.requests[0]).get('c1')!)).toMatchObject({ status: 'success', data: { saved: 'O-1' } });
    expect(writes).toEqual(['O-1']);
    expect(await stores.toolDlq.list()).toEqual([]);

    const again = await replayOpenAiAgentsDeadLetter(record, options);
    expect(again).toMatchObject({ status: 'already_completed', modelCalls: 0 });
    expect(writes).toEqual(['O-1']);
    expect(server.requests).toHaveLength(1);
  });

  it('drainToolDlq with the openai-agents host registered: completed, the model called for the remaining step, toolrun’s own model never', async () => {
    const { stores, runtime, writes, fix } = await deadLettered();
    fix();
    server.script([() => responsesText('saved O-1')]);
    let ownModelCalls = 0;
    const model = async () => {
      ownModelCalls += 1;
      return { text: 'not reached', usage: { input: 0, output: 0 } };
    };
    const hosts = {
      'openai-agents': openAiAgentsContinuation((items, context) => {
        const { tools, runConfig } = toOpenAiAgents(context.runtime);
        return new Runner({ ...runConfig, modelProvider: modelProvider() }).run(agentWith(tools), items as never);
      }),
    };
    const report = await drainToolDlq({ stores, runtime, model, hosts });
    expect(report).toMatchObject({ total: 1, removed: 1, outcomes: { completed: 1 } });
    expect(report.entries[0]).toMatchObject({ host: 'openai-agents', status: 'completed' });
    expect(server.requests).toHaveLength(1);
    expect(ownModelCalls).toBe(0);
    expect(writes).toEqual(['O-1']);
  });

  it('over Chat Completions too: dead-lettered live, replayed with the model called once, the tool message carrying the write', async () => {
    const stores = createMemoryStores();
    let fixed = false;
    const { runtime, writes } = writeRuntime(() => (fixed ? undefined : unavailable()));
    const chatProvider = () => new OpenAIProvider({ apiKey: 'sk-test', baseURL: `${server.origin}/v1`, useResponses: false });
    server.script([() => chatToolCalls([{ id: 'c1', name: 'save_order', arguments: '{"order":"O-1"}' }]), () => chatText('could not save')]);
    const live = toOpenAiAgents(runtime, { deadLetter: { stores } });
    await new Runner({ ...live.runConfig, modelProvider: chatProvider() }).run(agentWith(live.tools), 'save O-1');
    const [record] = await stores.toolDlq.list();
    expect(record?.entry).toMatchObject({ reason: 'retry-budget-exhausted', tokensSpent: { input: 20, output: 5 } });
    fixed = true;
    server.script([() => chatText('saved O-1')]);
    const continueRun = (items: unknown[]) => {
      const app = toOpenAiAgents(runtime);
      return new Runner({ ...app.runConfig, modelProvider: chatProvider() }).run(agentWith(app.tools), items as never);
    };
    expect(await replayOpenAiAgentsDeadLetter(record!, { stores, runtime, continueRun })).toMatchObject({
      status: 'completed',
      modelCalls: 1,
      text: 'saved O-1',
    });
    const messages = server.requests[0]!.body.messages as Array<{ role: string; tool_call_id?: string; content?: unknown }>;
    expect(JSON.parse(String(messages.find((message) => message.role === 'tool' && message.tool_call_id === 'c1')?.content))).toMatchObject({
      status: 'success',
      data: { saved: 'O-1' },
    });
    expect(writes).toEqual(['O-1']);
  });

  it('a continued run that fails (the model down) leaves the entry; the next replay completes it, the write applied once', async () => {
    const { stores, runtime, writes, record, fix, continueRun } = await deadLettered();
    fix();
    server.script([() => ({ status: 400, body: { error: { message: 'model unavailable', type: 'invalid_request_error' } } })]);
    await expect(replayOpenAiAgentsDeadLetter(record, { stores, runtime, continueRun })).rejects.toThrow();
    expect(writes).toEqual(['O-1']);
    expect(await stores.toolDlq.list()).toEqual([record]);
    // the stored conversation still ends with the failed call: the next replay reads the write back and goes on
    server.script([() => responsesText('saved O-1')]);
    expect(await replayOpenAiAgentsDeadLetter(record, { stores, runtime, continueRun })).toMatchObject({ status: 'completed', modelCalls: 1, removed: true });
    expect(writes).toEqual(['O-1']);
  });

  it('a tool still failing: tool_failed, the model not called, the entry stays', async () => {
    const { stores, runtime, record, continueRun } = await deadLettered();
    server.script([]);
    const result = await replayOpenAiAgentsDeadLetter(record, { stores, runtime, continueRun });
    expect(result).toMatchObject({ status: 'tool_failed', removed: false, modelCalls: 0 });
    expect(server.requests).toHaveLength(0);
    expect(server.unexpected).toHaveLength(0);
    expect(await stores.toolDlq.list()).toHaveLength(1);
  });

  it('an expired conversation ends expired, the entry stays; a drain of toolrun’s own loop leaves it alone', async () => {
    const { stores, runtime, record, fix, writes, continueRun } = await deadLettered();
    fix();
    const report = await drainToolDlq({ stores, runtime, model: async () => ({ text: 'not reached', usage: { input: 0, output: 0 } }), removeExpired: true });
    expect(report).toMatchObject({ total: 1, removed: 0 });
    expect(await stores.toolDlq.list()).toEqual([record]);
    await stores.conversations.delete((record.entry as ToolFailureEntry).conversationRef);
    server.script([]);
    expect(await replayOpenAiAgentsDeadLetter(record, { stores, runtime, continueRun })).toMatchObject({ status: 'expired', removed: false });
    expect(writes).toEqual([]);
    expect(await stores.toolDlq.list()).toHaveLength(1);
  });
});
