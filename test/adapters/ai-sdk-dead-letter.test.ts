/**
 * `toAiSdk({ deadLetter })` and `replayAiSdkDeadLetter` in the AI SDK's real `generateText` loop
 * (`MockLanguageModelV3` of `ai/test`), with toolrun's memory stores: what is dead-lettered, what
 * stays in-band, and a replay from the failed step that calls the model for the remaining steps only.
 */
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { replayAiSdkDeadLetter, toAiSdk } from '../../src/adapters/ai-sdk/index.ts';
import { ToolError } from '../../src/core/tool-error.ts';
import type { ToolFailureEntry } from '../../src/ground/dead-letter-entries.ts';
import { ToolrunError } from '../../src/ground/toolrun-error.ts';
import { createMemoryBreakerStateStore } from '../../src/stores/memory/memory-breaker-state-store.ts';
import { createSharedBreaker, type SharedBreakerEvent } from '../../src/policies/shared-breaker.ts';
import { createMemoryStores } from '../../src/stores/memory/index.ts';
import { drainToolDlq } from '../../src/worker/drain-tool-dlq.ts';
import { createAutoAdvancingClock } from '../../src/testing/auto-advancing-clock.ts';
import { generateResult, type ScriptedTurn } from './fixtures/ai-sdk-scenarios.ts';
import { writeRuntime } from './fixtures/save-order-runtime.ts';

/** The SDK's mock model answering `turns` in order (then "done"), counting its calls. */
function scripted(turns: readonly ScriptedTurn[]) {
  let calls = 0;
  const model = new MockLanguageModelV3({
    doGenerate: async () => generateResult(turns[calls++] ?? { text: 'done' }, 'v3') as never,
  });
  return { model, calls: () => calls };
}

/** A write tool whose upstream answers `failWith` until `fixed`, counting the writes applied. */
const unavailable = () => new ToolError({ kind: 'server', status: 503, message: 'Service Unavailable' });
const saveCall = (id: string): ScriptedTurn => ({ toolCalls: [{ id, name: 'save_order', input: '{"order":"O-1","card":"4111111111111111"}' }] });

describe('toAiSdk with a dead-letter place', () => {
  it('a 503 then success stays in-band: neither DLQ gets an entry', async () => {
    const stores = createMemoryStores();
    let calls = 0;
    const { runtime, writes } = writeRuntime(() => (++calls === 1 ? unavailable() : undefined));
    const { tools, prepareStep } = toAiSdk(runtime, { deadLetter: { stores } });
    const { model } = scripted([saveCall('c1'), { text: 'saved' }]);
    const result = await generateText({ model, tools, prepareStep, stopWhen: stepCountIs(5), prompt: 'save O-1' });
    expect(result.text).toBe('saved');
    expect(writes).toEqual(['O-1']);
    expect(await stores.toolDlq.list()).toEqual([]);
    expect(await stores.messageDlq.list()).toEqual([]);
  });

  it('a failure past the retry budget across steps: one resumable entry, the model still gets the envelope', async () => {
    const stores = createMemoryStores();
    const { runtime, writes } = writeRuntime(unavailable);
    const { tools, prepareStep, runId } = toAiSdk(runtime, { deadLetter: { stores } });
    const { model, calls } = scripted([saveCall('c1'), saveCall('c2'), { text: 'could not save' }]);
    const result = await generateText({ model, tools, prepareStep, stopWhen: stepCountIs(5), prompt: 'save O-1' });
    expect(result.text).toBe('could not save');
    expect(calls()).toBe(3);
    expect(writes).toEqual([]);
    const errors = result.steps.flatMap((step) => step.content.filter((part) => part.type === 'tool-error'));
    expect(errors).toHaveLength(2);

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
      tokensSpent: { input: 0, output: 0 },
      originalMessageId: `ai-sdk:${runId}`,
    });
    expect(JSON.stringify(entry.toolArgs)).not.toContain('4111111111111111');
    expect((entry.toolArgs as { order: string }).order).toBe('O-1');
    const conversation = await stores.conversations.get(entry.conversationRef);
    expect(conversation?.at(-1)).toMatchObject({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'save_order' }] });
    expect(await stores.messageDlq.list()).toEqual([]);
  });

  it('tokensSpent is the usage of the steps before the failed one (with the returned prepareStep)', async () => {
    const stores = createMemoryStores();
    let calls = 0;
    // the first call succeeds, then the upstream is down for good
    const { runtime } = writeRuntime(() => (++calls === 1 ? undefined : unavailable()));
    const { tools, prepareStep } = toAiSdk(runtime, { deadLetter: { stores } });
    const { model } = scripted([saveCall('c1'), saveCall('c2'), { text: 'done' }]);
    await generateText({ model, tools, prepareStep, stopWhen: stepCountIs(5), prompt: 'save O-1 twice' });
    const [record] = await stores.toolDlq.list();
    expect(record?.entry).toMatchObject({ stepIndex: 1, tokensSpent: { input: 10, output: 5 } });
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
    for (let index = 0; index < 4; index++) {
      const { tools, prepareStep } = toAiSdk(runtime, { sessionId: `user-${index}`, deadLetter: { stores } });
      const { model } = scripted([saveCall(`c${index}`), { text: 'cannot' }]);
      await generateText({ model, tools, prepareStep, stopWhen: stepCountIs(3), prompt: 'save', maxRetries: 0 });
    }
    const reasons = (await stores.toolDlq.list()).map((record) => (record.entry as ToolFailureEntry).reason);
    expect(reasons).toEqual(['misconfiguration', 'misconfiguration', 'circuit-open', 'circuit-open']);
    expect(events.filter((event) => event.type === 'breaker-open')).toHaveLength(1);
    expect(await stores.messageDlq.list()).toEqual([]);
  });

  it('an entry whose run then makes the failed call again and succeeds leaves the DLQ (the model recovered)', async () => {
    const stores = createMemoryStores();
    let down = true;
    const { runtime, writes } = writeRuntime(() => (down ? unavailable() : undefined));
    const { tools, prepareStep } = toAiSdk(runtime, { deadLetter: { stores } });
    let steps = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        steps += 1;
        if (steps === 3) down = false;
        return generateResult(steps <= 3 ? saveCall(`c${steps}`) : { text: 'saved at last' }, 'v3') as never;
      },
    });
    const result = await generateText({ model, tools, prepareStep, stopWhen: stepCountIs(5), prompt: 'save O-1' });
    expect(result.text).toBe('saved at last');
    expect(writes).toEqual(['O-1']);
    expect(await stores.toolDlq.list()).toEqual([]);
  });

  it('refuses stores that are not toolrun stores', () => {
    const { runtime } = writeRuntime(unavailable);
    expect(() => toAiSdk(runtime, { deadLetter: { stores: {} as never } })).toThrow(ToolrunError);
    expect(() => toAiSdk(runtime, { deadLetter: { stores: createMemoryStores(), toolRetryBudget: -1 } })).toThrow(/toolRetryBudget/);
  });
});

describe('replayAiSdkDeadLetter', () => {
  async function deadLettered() {
    const stores = createMemoryStores();
    let fixed = false;
    const { runtime, writes } = writeRuntime(() => (fixed ? undefined : unavailable()));
    const { tools, prepareStep } = toAiSdk(runtime, { deadLetter: { stores } });
    const live = scripted([saveCall('c1'), { text: 'could not save' }]);
    await generateText({ model: live.model, tools, prepareStep, stopWhen: stepCountIs(5), prompt: 'save O-1' });
    const [record] = await stores.toolDlq.list();
    return { stores, runtime, writes, record: record!, fix: () => (fixed = true), liveModelCalls: live.calls() };
  }

  it('after the fix, two replays at once: the write applied once, the model called for the remaining steps only, the entry done', async () => {
    const { stores, runtime, writes, record, fix, liveModelCalls } = await deadLettered();
    expect(liveModelCalls).toBe(2);
    fix();
    const replayModel = scripted([{ text: 'saved O-1' }]);
    const seen: unknown[][] = [];
    const options = {
      stores,
      runtime,
      continueRun: async (messages: unknown[]) => {
        seen.push(messages);
        return generateText({ model: replayModel.model, tools: toAiSdk(runtime).tools, messages: messages as never, stopWhen: stepCountIs(5) });
      },
    };
    const results = await Promise.all([replayAiSdkDeadLetter(record, options), replayAiSdkDeadLetter(record, options)]);
    expect(results.map((result) => result.status).sort()).toEqual(['completed', 'in_progress']);
    const completed = results.find((result) => result.status === 'completed')!;
    expect(completed).toMatchObject({ modelCalls: 1, text: 'saved O-1', removed: true });
    expect(replayModel.calls()).toBe(1);
    expect(writes).toEqual(['O-1']);
    expect(seen[0]?.at(-1)).toMatchObject({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'c1', output: { type: 'json', value: { saved: 'O-1' } } }],
    });
    expect(await stores.toolDlq.list()).toEqual([]);

    const again = await replayAiSdkDeadLetter(record, options);
    expect(again).toMatchObject({ status: 'already_completed', modelCalls: 0 });
    expect(writes).toEqual(['O-1']);
  });

  it('a tool still failing: tool_failed, the model not called, the entry stays', async () => {
    const { stores, runtime, record } = await deadLettered();
    let modelCalls = 0;
    const result = await replayAiSdkDeadLetter(record, {
      stores,
      runtime,
      continueRun: async () => {
        modelCalls += 1;
        throw new Error('not reached');
      },
    });
    expect(result).toMatchObject({ status: 'tool_failed', removed: false });
    expect(modelCalls).toBe(0);
    expect(await stores.toolDlq.list()).toHaveLength(1);
  });

  it('an expired conversation ends expired; an entry of toolrun’s own loop is invalid here', async () => {
    const { stores, runtime, record, fix } = await deadLettered();
    fix();
    await stores.conversations.delete((record.entry as ToolFailureEntry).conversationRef);
    const continueRun = async () => ({ text: '', steps: [], response: { messages: [] } });
    expect(await replayAiSdkDeadLetter(record, { stores, runtime, continueRun })).toMatchObject({ status: 'expired', removed: false });
    const foreign = { ...record, entry: { ...record.entry, originalMessageId: 'msg-1' } };
    expect(await replayAiSdkDeadLetter(foreign, { stores, runtime, continueRun })).toMatchObject({ status: 'invalid_entry' });
  });

  it('a drain of toolrun’s own loop (removeExpired) leaves the entry for the host’s replay, untouched', async () => {
    const { stores, runtime, record, writes, fix } = await deadLettered();
    fix();
    let modelCalls = 0;
    const model = async () => {
      modelCalls += 1;
      return { text: 'not reached', usage: { input: 0, output: 0 } };
    };
    const report = await drainToolDlq({ stores, runtime, model, removeExpired: true });
    expect(report).toMatchObject({ total: 1, removed: 0, outcomes: { invalid_entry: 1 } });
    expect(await stores.toolDlq.list()).toEqual([record]);
    expect(modelCalls).toBe(0);
    expect(writes).toEqual([]);
  });
});
