/**
 * The host replay core and its routing: an entry a host run dead-lettered (`originalMessageId`
 * `<host>:<runId>`) is replayed by `replayDeadLetter`, `drainToolDlq` and `createToolrun(...).replay`
 * with the continuation registered under `hosts[host]` (here the AI SDK's, driving the real
 * `generateText` loop with `ai/test` mock models), or by a durable engine's own replayer; a host
 * not registered leaves the entry in the DLQ with a message, never run by toolrun's own loop.
 */
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { aiSdkContinuation, toAiSdk } from '../src/adapters/ai-sdk/index.ts';
import { createToolRuntime } from '../src/core/create-tool-runtime.ts';
import { defineTool } from '../src/core/define-tool.ts';
import { ToolError } from '../src/core/tool-error.ts';
import type { ToolFailureEntry } from '../src/ground/dead-letter-entries.ts';
import { createMemoryStores } from '../src/stores/memory/index.ts';
import { createAutoAdvancingClock } from '../src/testing/auto-advancing-clock.ts';
import { createToolrun } from '../src/worker/create-toolrun.ts';
import { drainToolDlq } from '../src/worker/drain-tool-dlq.ts';
import type { HostReplayer } from '../src/worker/host-continuation.ts';
import { hostEntryMessageId, hostOfEntry } from '../src/worker/host-entry.ts';
import { replayDeadLetter } from '../src/worker/replay-dead-letter.ts';
import { assertToolrunConfig } from '../src/worker/worker-config.ts';
import { generateResult, type ScriptedTurn } from './adapters/fixtures/ai-sdk-scenarios.ts';

const FAST_RETRY = { backoff: { baseDelayMs: 1, jitterMs: 0 }, minDelayMs: 1 };

function scripted(turns: readonly ScriptedTurn[]) {
  let calls = 0;
  const model = new MockLanguageModelV3({ doGenerate: async () => generateResult(turns[calls++] ?? { text: 'done' }, 'v3') as never });
  return { model, calls: () => calls };
}

const saveCall = (id: string): ScriptedTurn => ({ toolCalls: [{ id, name: 'save_order', input: '{"order":"O-1"}' }] });

/** An AI SDK run whose write tool failed past its budget: one tool-DLQ entry; `fix()` mends the upstream. */
async function deadLettered() {
  const stores = createMemoryStores();
  let fixed = false;
  const writes: string[] = [];
  const tools = [
    defineTool({
      name: 'save_order',
      description: 'Saves an order',
      inputSchema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'], additionalProperties: false },
      execute: async (args) => {
        if (!fixed) throw new ToolError({ kind: 'server', status: 503, message: 'Service Unavailable' });
        writes.push(String(args.order));
        return { saved: args.order };
      },
    }),
  ];
  const runtime = createToolRuntime({ clock: createAutoAdvancingClock(), random: () => 0, retry: FAST_RETRY, tools });
  const live = toAiSdk(runtime, { deadLetter: { stores } });
  await generateText({
    model: scripted([saveCall('c1'), { text: 'could not save' }]).model,
    tools: live.tools,
    prepareStep: live.prepareStep,
    stopWhen: stepCountIs(5),
    prompt: 'save O-1',
  });
  const [record] = await stores.toolDlq.list();
  return { stores, runtime, tools, writes, record: record!, fix: () => (fixed = true) };
}

/** toolrun's own model: never to be called for a host's entry. */
function ownModel() {
  let calls = 0;
  const model = async () => {
    calls += 1;
    return { text: 'toolrun loop', usage: { input: 0, output: 0 } };
  };
  return { model, calls: () => calls };
}

describe('host entries', () => {
  it('are told apart by `<host>:<runId>` with the entry’s own run id only', () => {
    expect(hostOfEntry({ runId: 'run_1', originalMessageId: hostEntryMessageId('anthropic', 'run_1') })).toBe('anthropic');
    expect(hostOfEntry({ runId: 'run_1', originalMessageId: 'orders:run_2' })).toBeUndefined();
    expect(hostOfEntry({ runId: 'run_1', originalMessageId: 'msg-1' })).toBeUndefined();
    expect(hostOfEntry({ runId: 'run_1', originalMessageId: 'Bad Host:run_1' })).toBeUndefined();
    expect(() => hostEntryMessageId('Not A Host', 'run_1')).toThrow(TypeError);
  });
});

describe('routing a host entry', () => {
  it('replayDeadLetter with the host registered: the tool once, the model for the remaining steps only, the entry removed', async () => {
    const { stores, runtime, writes, record, fix } = await deadLettered();
    fix();
    const replayModel = scripted([{ text: 'saved O-1' }]);
    const own = ownModel();
    const hosts = {
      'ai-sdk': aiSdkContinuation((messages, context) =>
        generateText({ model: replayModel.model, tools: toAiSdk(context.runtime).tools, messages: messages as never, stopWhen: stepCountIs(5) }),
      ),
    };
    const results = await Promise.all([
      replayDeadLetter(record, { stores, runtime, model: own.model, hosts }),
      replayDeadLetter(record, { stores, runtime, model: own.model, hosts }),
    ]);
    expect(results.map((result) => result.status).sort()).toEqual(['completed', 'in_progress']);
    expect(results.find((result) => result.status === 'completed')).toMatchObject({ host: 'ai-sdk', modelCalls: 1, text: 'saved O-1', removed: true });
    expect(writes).toEqual(['O-1']);
    expect(replayModel.calls()).toBe(1);
    expect(own.calls()).toBe(0);
    expect(await stores.toolDlq.list()).toEqual([]);
    const again = await replayDeadLetter(record, { stores, runtime, model: own.model, hosts });
    expect(again).toMatchObject({ status: 'already_completed', modelCalls: 0 });
    expect(writes).toEqual(['O-1']);
  });

  it('a drain without the host registered leaves the entry, with a message naming the host; never toolrun’s loop', async () => {
    const { stores, runtime, writes, record, fix } = await deadLettered();
    fix();
    const own = ownModel();
    const report = await drainToolDlq({
      stores,
      runtime,
      model: own.model,
      removeExpired: true,
      hosts: { anthropic: { replay: async () => ({ status: 'completed' }) } },
    });
    expect(report).toMatchObject({ total: 1, removed: 0, outcomes: { invalid_entry: 1 } });
    expect(report.entries[0]).toMatchObject({ host: 'ai-sdk', status: 'invalid_entry' });
    expect(report.entries[0]?.message).toMatch(/no continuation is registered for host "ai-sdk"/);
    expect(await stores.toolDlq.list()).toEqual([record]);
    expect(own.calls()).toBe(0);
    expect(writes).toEqual([]);
  });

  it('a drain with the host registered completes it; an expired conversation stays unless removeExpired', async () => {
    const { stores, runtime, record, fix } = await deadLettered();
    fix();
    const continued = scripted([{ text: 'saved' }]);
    const hosts = {
      'ai-sdk': aiSdkContinuation((messages) =>
        generateText({ model: continued.model, tools: toAiSdk(runtime).tools, messages: messages as never, stopWhen: stepCountIs(5) }),
      ),
    };
    await stores.conversations.delete((record.entry as ToolFailureEntry).conversationRef);
    const kept = await drainToolDlq({ stores, runtime, model: ownModel().model, hosts });
    expect(kept).toMatchObject({ removed: 0, outcomes: { expired: 1 } });
    expect(await stores.toolDlq.list()).toHaveLength(1);
    const removed = await drainToolDlq({ stores, runtime, model: ownModel().model, hosts, removeExpired: true });
    expect(removed).toMatchObject({ removed: 1, outcomes: { expired: 1 } });
    expect(continued.calls()).toBe(0);
  });

  it('a durable engine’s own replayer: handed the record once per replay, the entry removed when it reports completed', async () => {
    const { stores, tools, record } = await deadLettered();
    const seen: string[] = [];
    let outcome: 'in_progress' | 'completed' = 'in_progress';
    const engine: HostReplayer = {
      replay: async (replayed, context) => {
        seen.push(`${replayed.id}:${context.claimLeaseMs}`);
        return { status: outcome, modelCalls: outcome === 'completed' ? 1 : 0, text: outcome === 'completed' ? 'forked' : null };
      },
    };
    const own = ownModel();
    const toolrun = createToolrun({ model: own.model, tools, stores, hosts: { 'ai-sdk': engine } });
    expect(await toolrun.replay(record)).toMatchObject({ status: 'in_progress', removed: false });
    outcome = 'completed';
    expect(await toolrun.replay(record)).toMatchObject({ status: 'completed', text: 'forked', removed: true });
    expect(seen).toEqual([`${record.id}:300000`, `${record.id}:300000`]);
    expect(own.calls()).toBe(0);
    expect(await stores.toolDlq.list()).toEqual([]);
  });

  it('a config’s `hosts` is checked: each a continuation or a replayer', () => {
    const model = async () => ({ text: '', usage: { input: 0, output: 0 } });
    expect(() =>
      assertToolrunConfig({ model, tools: [], hosts: { 'ai-sdk': aiSdkContinuation(async () => ({ text: '', steps: [], response: { messages: [] } })) } }),
    ).not.toThrow();
    expect(() => assertToolrunConfig({ model, tools: [], hosts: { anthropic: { continueRun: async () => ({}) } } })).toThrow(
      /hosts\.anthropic` needs `failedCall`, `resultMessages`/,
    );
    expect(() => assertToolrunConfig({ model, tools: [], hosts: { 'Bad Name': { replay: async () => ({}) } } })).toThrow(/not a host name/);
    expect(() => createToolrun({ model, tools: [], hosts: [] as never })).toThrow(/`hosts` must be an object/);
  });
});
