/**
 * `toAnthropicTools({ deadLetter })` / `runAnthropicToolRunner` and the Anthropic host replay in the
 * SDK's real tool runner (`client.beta.messages.toolRunner` of `@anthropic-ai/sdk`) against a
 * scripted Messages endpoint on 127.0.0.1, with toolrun's memory stores: what is dead-lettered, what
 * stays in-band, and a replay routed by `hosts.anthropic` that calls the model for the remaining
 * steps only (counted as requests the endpoint received).
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicContinuation, replayAnthropicDeadLetter, runAnthropicToolRunner, toAnthropicTools } from '../../src/adapters/anthropic/index.ts';
import { createToolRuntime } from '../../src/core/create-tool-runtime.ts';
import { defineTool } from '../../src/core/define-tool.ts';
import { ToolError } from '../../src/core/tool-error.ts';
import type { ToolFailureEntry } from '../../src/ground/dead-letter-entries.ts';
import { ToolrunError } from '../../src/ground/toolrun-error.ts';
import { createMemoryBreakerStateStore } from '../../src/stores/memory/memory-breaker-state-store.ts';
import { createSharedBreaker, type SharedBreakerEvent } from '../../src/policies/shared-breaker.ts';
import { createMemoryStores } from '../../src/stores/memory/index.ts';
import { createAutoAdvancingClock } from '../../src/testing/auto-advancing-clock.ts';
import { createToolrun } from '../../src/worker/create-toolrun.ts';
import { messageText, messageToolUse } from './fixtures/anthropic-messages.ts';
import { startScriptedServer, type ScriptedServer } from './fixtures/openai-scripted-server.ts';

const FAST_RETRY = { backoff: { baseDelayMs: 1, jitterMs: 0 }, minDelayMs: 1 };
const PARAMS = { model: 'claude-sonnet-4-5', max_tokens: 1024 };
const ask = [{ role: 'user' as const, content: 'Save order O-1' }];

let server: ScriptedServer;
let client: Anthropic;
beforeAll(async () => {
  server = await startScriptedServer();
  client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: server.origin, maxRetries: 0 });
});
afterAll(() => server.close());

/** A write tool whose upstream answers `failWith` until it returns nothing, counting the writes applied. */
function writeRuntime(failWith: () => ToolError | undefined, sharedBreaker?: ReturnType<typeof createSharedBreaker>) {
  const writes: string[] = [];
  const tools = [
    defineTool({
      name: 'save_order',
      description: 'Saves an order',
      inputSchema: { type: 'object', properties: { order: { type: 'string' }, card: { type: 'string' } }, required: ['order'], additionalProperties: false },
      sensitive: ['card'],
      execute: async (args) => {
        const failure = failWith();
        if (failure) throw failure;
        writes.push(String(args.order));
        return { saved: args.order };
      },
    }),
  ];
  const runtime = createToolRuntime({
    clock: createAutoAdvancingClock(),
    random: () => 0,
    retry: FAST_RETRY,
    ...(sharedBreaker ? { sharedBreaker } : {}),
    tools,
  });
  return { runtime, tools, writes };
}

const unavailable = () => new ToolError({ kind: 'server', status: 503, message: 'Service Unavailable' });
const saveUse = (id: string) => () => messageToolUse([{ id, name: 'save_order', input: { order: 'O-1', card: '4111111111111111' } }]);

describe('the Anthropic tool runner with a dead-letter place', () => {
  it('a 503 then success stays in-band: neither DLQ gets an entry', async () => {
    const stores = createMemoryStores();
    let calls = 0;
    const { runtime, writes } = writeRuntime(() => (++calls === 1 ? unavailable() : undefined));
    server.script([saveUse('toolu_1'), () => messageText('saved')]);
    const run = await runAnthropicToolRunner(client, { ...PARAMS, messages: ask }, { tools: runtime, deadLetter: { stores } });
    expect(run).toMatchObject({ text: 'saved', modelCalls: 2 });
    expect(writes).toEqual(['O-1']);
    expect(await stores.toolDlq.list()).toEqual([]);
    expect(await stores.messageDlq.list()).toEqual([]);
  });

  it('past the retry budget: exactly one resumable entry, the model still gets the envelope, the message DLQ empty', async () => {
    const stores = createMemoryStores();
    const { runtime, writes } = writeRuntime(unavailable);
    server.script([saveUse('toolu_1'), saveUse('toolu_2'), () => messageText('could not save')]);
    const run = await runAnthropicToolRunner(client, { ...PARAMS, messages: ask }, { tools: runtime, deadLetter: { stores } });
    expect(run).toMatchObject({ text: 'could not save', modelCalls: 3 });
    expect(writes).toEqual([]);
    const sent = server.requests[1]!.body.messages as Array<{ content: Array<{ type: string; is_error?: boolean; content?: string }> }>;
    const result = sent.at(-1)!.content[0]!;
    expect(result).toMatchObject({ type: 'tool_result', is_error: true });
    expect(JSON.parse(result.content!)).toMatchObject({ status: 'failed', error: { type: 'environment' } });

    const records = await stores.toolDlq.list();
    expect(records).toHaveLength(1);
    const entry = records[0]!.entry as ToolFailureEntry;
    expect(entry).toMatchObject({
      kind: 'tool',
      runId: run.runId,
      stepIndex: 0,
      toolName: 'save_order',
      attempts: 3,
      lastError: { kind: 'server', status: 503 },
      reason: 'retry-budget-exhausted',
      tokensSpent: { input: 40, output: 12 },
      originalMessageId: `anthropic:${run.runId}`,
    });
    expect(JSON.stringify(entry.toolArgs)).not.toContain('4111111111111111');
    const conversation = await stores.conversations.get(entry.conversationRef);
    expect(conversation).toEqual([
      { role: 'user', content: 'Save order O-1' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'save_order', input: { order: 'O-1', card: '4111111111111111' } }] },
    ]);
    expect(await stores.messageDlq.list()).toEqual([]);
  });

  it('a 401 for every run: the shared breaker opens once (one alert for N runs); each run is one entry', async () => {
    const stores = createMemoryStores();
    const events: SharedBreakerEvent[] = [];
    const sharedBreaker = createSharedBreaker({
      store: createMemoryBreakerStateStore(),
      clock: createAutoAdvancingClock(),
      options: { failureThreshold: 2, halfOpenAfterMs: 60_000 },
      onEvent: (event) => events.push(event),
    });
    const { runtime } = writeRuntime(() => new ToolError({ kind: 'auth', status: 401, message: 'invalid_token' }), sharedBreaker);
    for (let index = 0; index < 4; index++) {
      server.script([saveUse(`toolu_${index}`), () => messageText('cannot')]);
      await runAnthropicToolRunner(client, { ...PARAMS, messages: ask }, { tools: runtime, sessionId: `user-${index}`, deadLetter: { stores } });
    }
    const reasons = (await stores.toolDlq.list()).map((record) => (record.entry as ToolFailureEntry).reason);
    expect(reasons).toEqual(['misconfiguration', 'misconfiguration', 'circuit-open', 'circuit-open']);
    expect(events.filter((event) => event.type === 'breaker-open')).toHaveLength(1);
    expect(await stores.messageDlq.list()).toEqual([]);
  });

  it('one tool_use id delivered twice in one turn runs the write once, with deadLetter', async () => {
    const stores = createMemoryStores();
    const { runtime, writes } = writeRuntime(() => undefined);
    const once = saveUse('toolu_1')();
    const body = once.body as { content: unknown[] };
    server.script([() => ({ body: { ...body, content: [...body.content, ...body.content] } }), () => messageText('saved')]);
    const run = await runAnthropicToolRunner(client, { ...PARAMS, messages: ask }, { tools: runtime, deadLetter: { stores } });
    expect(run.text).toBe('saved');
    expect(writes).toEqual(['O-1']);
    expect(await stores.toolDlq.list()).toEqual([]);
  });

  it('toAnthropicTools with deadLetter reads the runner’s conversation through `messages`, and refuses bad options', async () => {
    const stores = createMemoryStores();
    const { runtime } = writeRuntime(unavailable);
    const bound: { runner?: { params: { messages: readonly unknown[] } } } = {};
    const tools = toAnthropicTools(runtime, {
      runId: 'run_own',
      deadLetter: { stores, toolRetryBudget: 0, messages: () => bound.runner?.params.messages ?? [] },
    });
    server.script([saveUse('toolu_9'), () => messageText('no')]);
    const runner = client.beta.messages.toolRunner({ ...PARAMS, messages: ask, tools });
    bound.runner = runner;
    await runner;
    const [record] = await stores.toolDlq.list();
    expect(record?.entry).toMatchObject({ runId: 'run_own', originalMessageId: 'anthropic:run_own', attempts: 1, tokensSpent: { input: 0, output: 0 } });
    expect(() => toAnthropicTools(runtime, { deadLetter: { stores } as never })).toThrow(/deadLetter.messages/);
    expect(() => toAnthropicTools(runtime, { deadLetter: { stores: {} as never, messages: () => [] } })).toThrow(ToolrunError);
  });
});

describe('replaying an Anthropic entry', () => {
  async function deadLettered() {
    const stores = createMemoryStores();
    let fixed = false;
    const { runtime, tools, writes } = writeRuntime(() => (fixed ? undefined : unavailable()));
    server.script([saveUse('toolu_1'), () => messageText('could not save')]);
    const live = await runAnthropicToolRunner(client, { ...PARAMS, messages: ask }, { tools: runtime, deadLetter: { stores } });
    const [record] = await stores.toolDlq.list();
    return { stores, runtime, tools, writes, record: record!, live, fix: () => (fixed = true) };
  }

  it('after the fix, two replays at once through hosts.anthropic: the write once, the model for the remaining steps only', async () => {
    const { stores, runtime, tools, writes, record, live, fix } = await deadLettered();
    expect(runtime.specs.map((spec) => spec.name)).toEqual(['save_order']);
    expect(live.modelCalls).toBe(2);
    fix();
    server.script([() => messageText('saved O-1')]);
    const model = async () => {
      throw new Error('toolrun’s own loop must not run a host entry');
    };
    const toolrun = createToolrun({ model, tools, runtime, stores, hosts: { anthropic: anthropicContinuation({ client, params: PARAMS }) } });
    const results = await Promise.all([toolrun.replay(record), toolrun.replay(record)]);
    expect(results.map((result) => result.status).sort()).toEqual(['completed', 'in_progress']);
    expect(results.find((result) => result.status === 'completed')).toMatchObject({ host: 'anthropic', modelCalls: 1, text: 'saved O-1', removed: true });
    expect(server.requests).toHaveLength(1);
    expect(server.unexpected).toHaveLength(0);
    expect(server.requests[0]!.body.messages).toEqual([
      { role: 'user', content: 'Save order O-1' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'save_order', input: { order: 'O-1', card: '4111111111111111' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: expect.stringContaining('"status":"success"') }] },
    ]);
    expect(writes).toEqual(['O-1']);
    expect(await stores.toolDlq.list()).toEqual([]);
    const conversation = await stores.conversations.get((record.entry as ToolFailureEntry).conversationRef);
    expect(conversation?.at(-1)).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'saved O-1' }] });

    server.script([]);
    expect(await toolrun.replay(record)).toMatchObject({ status: 'already_completed', modelCalls: 0 });
    expect(server.requests).toHaveLength(0);
    expect(writes).toEqual(['O-1']);
  });

  it('a tool still failing: tool_failed, the model not called, the entry stays; a foreign entry is invalid', async () => {
    const { stores, runtime, record } = await deadLettered();
    server.script([]);
    const result = await replayAnthropicDeadLetter(record, { stores, runtime, client, params: PARAMS });
    expect(result).toMatchObject({ status: 'tool_failed', removed: false });
    expect(result.message).toMatch(/save_order failed again/);
    expect(server.requests.length + server.unexpected.length).toBe(0);
    expect(await stores.toolDlq.list()).toHaveLength(1);
    const foreign = { ...record, entry: { ...record.entry, originalMessageId: `ai-sdk:${record.entry.runId}` } };
    expect(await replayAnthropicDeadLetter(foreign, { stores, runtime, client, params: PARAMS })).toMatchObject({ status: 'invalid_entry' });
  });

  it('an expired conversation ends expired and the entry stays', async () => {
    const { stores, runtime, record, fix } = await deadLettered();
    fix();
    await stores.conversations.delete((record.entry as ToolFailureEntry).conversationRef);
    server.script([]);
    expect(await replayAnthropicDeadLetter(record, { stores, runtime, client, params: PARAMS })).toMatchObject({ status: 'expired', removed: false });
    expect(await stores.toolDlq.list()).toHaveLength(1);
  });
});
