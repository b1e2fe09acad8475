/**
 * One composition root, no process-wide state: `createToolrun` builds the runtime, breakers and
 * stores once; the free functions share nothing between calls unless the caller passes `stores`.
 */
import { describe, expect, it } from 'vitest';
import {
  createAjvSchemaValidator,
  createMemoryStores,
  createToolrun,
  createWorker,
  defineTool,
  handleMessage,
  ToolError,
  type ResumableEntry,
  type SchemaValidator,
  type ToolCallRecord,
} from '../src/index.ts';
import { createAutoAdvancingClock } from '../src/testing/auto-advancing-clock.ts';
import { createScriptedModel } from '../src/testing/scripted-model.ts';

function flaky(failuresBeforeSuccess: number) {
  let calls = 0;
  const tool = defineTool({
    name: 'book_flight',
    description: 'Books a flight',
    inputSchema: { type: 'object', properties: { flight: { type: 'string' } }, required: ['flight'] },
    idempotent: true,
    execute: () => {
      calls += 1;
      if (calls <= failuresBeforeSuccess) throw new ToolError({ kind: 'server', status: 503 });
      return { confirmation: 'ABC123' };
    },
  });
  return { tool, calls: () => calls };
}

const callBooking = { toolCalls: [{ id: 'c1', name: 'book_flight', args: '{"flight":"HAT001"}' }], usage: { input: 120, output: 20 } };
const answer = { text: 'Booked', usage: { input: 150, output: 10 } };

describe('the free functions share nothing between calls', () => {
  it("runs the seed article's three routing cases in order in one file, without stores, with the same message id", async () => {
    const clock = createAutoAdvancingClock();
    const runtimeOptions = { clock };
    // 1. malformed
    const first = { messageDlq: [] as unknown[], toolDlq: [] as unknown[] };
    const one = await handleMessage(
      { id: 'm', body: '{not json' },
      { model: createScriptedModel([answer]), tools: [flaky(0).tool], queues: first, runtimeOptions },
    );
    expect(one.status).toBe('rejected');
    // 2. a 503 once, then success: the tool is called twice, nothing dead-lettered
    const second = { messageDlq: [] as unknown[], toolDlq: [] as unknown[] };
    const recovering = flaky(1);
    const two = await handleMessage(
      { id: 'm', body: JSON.stringify({ input: 'book' }) },
      { model: createScriptedModel([callBooking, answer]), tools: [recovering.tool], queues: second, runtimeOptions, toolRetryBudget: 2 },
    );
    expect(two.status).toBe('completed');
    expect(recovering.calls()).toBe(2);
    expect(second).toEqual({ messageDlq: [], toolDlq: [] });
    // 3. always 503: one tool-DLQ entry — the same message id as case 2 does not find case 2's finished run
    const third = { messageDlq: [] as unknown[], toolDlq: [] as ResumableEntry[] };
    const down = flaky(Number.POSITIVE_INFINITY);
    const three = await handleMessage(
      { id: 'm', body: JSON.stringify({ input: 'book' }) },
      { model: createScriptedModel([callBooking]), tools: [down.tool], queues: third, runtimeOptions, toolRetryBudget: 2 },
    );
    expect(three.status).toBe('tool_failed');
    expect(three.alreadyFinished).toBe(false);
    expect(down.calls()).toBe(3);
    expect(third.toolDlq).toEqual([expect.objectContaining({ kind: 'tool', toolName: 'book_flight', attempts: 3 })]);
  });

  it('each call builds its runtime from its own options: a second onCallEnd gets its calls', async () => {
    const tools = [flaky(0).tool];
    const stores = createMemoryStores();
    const seen: Record<string, ToolCallRecord[]> = { a: [], b: [] };
    for (const name of ['a', 'b'] as const) {
      await handleMessage(
        { id: name, body: JSON.stringify({ input: 'book' }) },
        {
          model: createScriptedModel([callBooking, answer]),
          tools,
          stores,
          queues: { messageDlq: [], toolDlq: [] },
          runtimeOptions: { onCallEnd: (record) => seen[name]!.push(record) },
        },
      );
    }
    expect(seen.a).toHaveLength(1);
    expect(seen.b).toHaveLength(1);
  });
});

describe('createToolrun', () => {
  it('builds the runtime once for every message, replay and drain, and routes failures to its stores', async () => {
    let compiled = 0;
    const ajv = createAjvSchemaValidator();
    const validator: SchemaValidator = { compile: (schema, options) => ((compiled += 1), ajv.compile(schema, options)) };
    const clock = createAutoAdvancingClock();
    const booking = flaky(3);
    const events: string[] = [];
    const toolCalls: number[] = [];
    const toolrun = createToolrun({
      model: createScriptedModel([callBooking, callBooking, answer], { afterScript: 'finish' }),
      tools: [booking.tool],
      runtimeOptions: { clock, validator },
      limits: { toolRetryBudget: 2 },
      hooks: { onEvent: (event) => events.push(event.type), onToolCall: (_record, stepIndex) => toolCalls.push(stepIndex) },
    });
    const failed = await toolrun.handleMessage({ id: 'm-1', body: JSON.stringify({ input: 'book' }) });
    expect(failed.status).toBe('tool_failed');
    expect(await toolrun.stores.toolDlq.size()).toBe(1);
    expect(events).toContain('dead-letter-add');
    const entry = (await toolrun.stores.toolDlq.list())[0]!.entry as ResumableEntry;
    const replayed = await toolrun.replay(entry);
    expect(replayed.status).toBe('completed');
    expect(booking.calls()).toBe(4);
    const drained = await toolrun.drain();
    expect(drained.outcomes).toEqual({ already_completed: 1 });
    expect(compiled).toBe(1);
    expect(toolCalls.length).toBeGreaterThan(0);
  });

  it('two toolruns share nothing: the same message id runs in each', async () => {
    const a = createToolrun({ model: createScriptedModel([answer]), tools: [flaky(0).tool] });
    const b = createToolrun({ model: createScriptedModel([answer]), tools: [flaky(0).tool] });
    const first = await a.handleMessage({ id: 'same', body: JSON.stringify({ input: 'hi' }) });
    const second = await b.handleMessage({ id: 'same', body: JSON.stringify({ input: 'hi' }) });
    expect([first.status, first.alreadyFinished, second.status, second.alreadyFinished]).toEqual(['completed', false, 'completed', false]);
  });

  it('refuses missing or absurd options at creation, naming every problem', () => {
    expect(() => createToolrun(null as never)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    expect(() => createToolrun({ tools: [] } as never)).toThrow(/`model` must be a function/);
    let error: unknown;
    try {
      createToolrun({ model: createScriptedModel([answer]), tools: [], limits: { maxDeliveries: -3, maxSteps: -1, toolRetryBudget: Number.NaN } });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS' });
    expect(String((error as Error).message)).toMatch(/maxSteps.*toolRetryBudget.*maxDeliveries/);
  });

  it('refuses a stores Promise (createPostgresStores without await) or a partial bundle at creation, not on the first message', () => {
    const pending = Promise.resolve(createMemoryStores());
    expect(() => createToolrun({ model: createScriptedModel([answer]), tools: [flaky(0).tool], stores: pending as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/`stores` is a Promise: await/) }),
    );
    expect(() => createWorker({ stores: pending as never, model: createScriptedModel([answer]), tools: [flaky(0).tool] })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/createWorker: `stores` is a Promise/) }),
    );
    const { queue: _queue, claims: _claims, ...partial } = createMemoryStores();
    expect(() => createToolrun({ model: createScriptedModel([answer]), tools: [flaky(0).tool], stores: partial as never })).toThrow(/lacks `queue`, `claims`/);
  });

  it('a drain refuses a concurrency it cannot honour instead of silently doing nothing', async () => {
    const toolrun = createToolrun({ model: createScriptedModel([answer]), tools: [flaky(0).tool] });
    await expect(toolrun.drain({ concurrency: Number.NaN })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    await expect(toolrun.drain({ concurrency: 0 })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
  });

  it('an API key sent as a tool name is masked in the envelope the model gets', async () => {
    const toolrun = createToolrun({ model: createScriptedModel([answer]), tools: [flaky(0).tool] });
    const result = await toolrun.runtime.run({ name: 'sk-proj-Q7hT2xLm9Vw4Kp8Zr3Nb6Yc1', args: {} });
    expect(result).toMatchObject({ status: 'failed', error: { code: 'TOOL_NOT_FOUND' } });
    expect(JSON.stringify(result)).not.toContain('Q7hT2xLm9Vw4Kp8Zr3Nb6Yc1');
  });

  it('refuses a bad tool at creation, not per message', () => {
    const bad = defineTool({
      name: 'bad',
      description: 'x',
      inputSchema: { type: 'object', properties: { a: { type: 'string', pattern: '(?<=a)b' } } },
      execute: () => 1,
    });
    expect(() => createToolrun({ model: createScriptedModel([answer]), tools: [bad] })).toThrow(expect.objectContaining({ code: 'INVALID_SCHEMA' }));
  });
});
