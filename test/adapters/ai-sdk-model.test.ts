/**
 * `toolrun/ai-sdk` `fromAiSdkModel`: the AI SDK's own mock language models (`MockLanguageModelV3`
 * of `ai/test`, `MockLanguageModelV2` of `ai-v5/test`) as toolrun's model inside `runAgent` and
 * `handleMessage` (through `createToolrun`). What toolrun sends the model is read from the mock's
 * recorded `doGenerate` calls.
 */
import { APICallError } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { MockLanguageModelV2 } from 'ai-v5/test';
import { describe, expect, it } from 'vitest';
import { fromAiSdkModel } from '../../src/adapters/ai-sdk/index.ts';
import { parseAiSdkResult, toAiSdkPrompt } from '../../src/adapters/ai-sdk/from-ai-sdk-model.ts';
import { runAgent } from '../../src/agent/run-agent.ts';
import { defineTool } from '../../src/core/define-tool.ts';
import { ModelResponseError } from '../../src/core/tool-error.ts';
import { ToolrunError } from '../../src/ground/toolrun-error.ts';
import { createToolrun } from '../../src/worker/create-toolrun.ts';
import { generateResult, type PromptMessage, type ScriptedTurn } from './fixtures/ai-sdk-scenarios.ts';

const BOOKING_SCHEMA = {
  type: 'object',
  properties: { origin: { type: 'string', pattern: '^[A-Z]{3}$' }, date: { type: 'string', format: 'date' } },
  required: ['origin', 'date'],
  additionalProperties: false,
} as const;

function bookingTools() {
  const booked: unknown[] = [];
  const tools = [
    defineTool({
      name: 'book_flight',
      description: 'Book a flight',
      inputSchema: BOOKING_SCHEMA,
      execute: async (args) => {
        booked.push(args);
        return { confirmation: 'ZFA04Y' };
      },
    }),
  ];
  return { tools, booked };
}

interface RecordedCall {
  prompt: PromptMessage[];
  tools: unknown;
  toolChoice: unknown;
  abortSignal: unknown;
  temperature: unknown;
}

function mockV3(turns: readonly (ScriptedTurn | (() => never))[]) {
  const calls: RecordedCall[] = [];
  const model = new MockLanguageModelV3({
    provider: 'mock',
    modelId: 'scripted',
    doGenerate: async (options) => {
      calls.push({ ...(structuredClone({ ...options, abortSignal: undefined }) as RecordedCall), abortSignal: options.abortSignal });
      const turn = turns[calls.length - 1] ?? { text: 'done' };
      if (typeof turn === 'function') return turn();
      return generateResult(turn, 'v3') as never;
    },
  });
  return { model, calls };
}

const FAST_MODEL_POLICY = { backoff: { baseDelayMs: 1, jitterMs: 0 }, minDelayMs: 1 };

describe('fromAiSdkModel inside runAgent', () => {
  it('a wrong date: the next doGenerate prompt carries the envelope as error-json; the corrected call books; usage adds up (V3 shape)', async () => {
    const { tools, booked } = bookingTools();
    const { model, calls } = mockV3([
      { toolCalls: [{ id: 'c1', name: 'book_flight', input: '{"origin":"JFK","date":"05/20/2024"}' }] },
      { toolCalls: [{ id: 'c2', name: 'book_flight', input: '{"origin":"JFK","date":"2024-05-20"}' }] },
      { text: 'Booked: ZFA04Y' },
    ]);
    const result = await runAgent({
      model: fromAiSdkModel(model, { settings: { temperature: 0 } }),
      tools,
      messages: [
        { role: 'system', content: 'You book flights.' },
        { role: 'user', content: 'Book JFK on May 20' },
      ],
    });
    expect(result.status).toBe('completed');
    expect(result.text).toBe('Booked: ZFA04Y');
    expect(booked).toEqual([{ origin: 'JFK', date: '2024-05-20' }]);
    expect(result.tokensSpent).toEqual({ input: 30, output: 15 });

    const first = calls[0]!;
    expect(first.prompt).toEqual([
      { role: 'system', content: 'You book flights.' },
      { role: 'user', content: [{ type: 'text', text: 'Book JFK on May 20' }] },
    ]);
    expect(first.tools).toEqual([{ type: 'function', name: 'book_flight', description: 'Book a flight', inputSchema: BOOKING_SCHEMA }]);
    expect(first.toolChoice).toEqual({ type: 'auto' });
    expect(first.abortSignal).toBeInstanceOf(AbortSignal);
    expect(first.temperature).toBe(0);

    const second = calls[1]!.prompt;
    expect(second[2]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'book_flight', input: { origin: 'JFK', date: '05/20/2024' } }],
    });
    const toolMessage = second[3] as {
      role: string;
      content: Array<{ toolCallId: string; toolName: string; output: { type: string; value: { error: { code: string; fields: Array<{ path: string }> } } } }>;
    };
    expect(toolMessage.role).toBe('tool');
    expect(toolMessage.content[0]).toMatchObject({ toolCallId: 'c1', toolName: 'book_flight', output: { type: 'error-json' } });
    expect(toolMessage.content[0]!.output.value.error.code).toBe('DATE_FORMAT_ERROR');
    expect(toolMessage.content[0]!.output.value.error.fields[0]!.path).toBe('/date');
    const third = calls[2]!.prompt;
    expect(third[5]).toMatchObject({ role: 'tool', content: [{ toolCallId: 'c2', output: { type: 'text' } }] });
  });

  it('an unknown name and truncated JSON reach toolrun raw (TOOL_NOT_FOUND, MALFORMED_ARGUMENTS), in one tool message', async () => {
    const { tools, booked } = bookingTools();
    const { model, calls } = mockV3([
      {
        toolCalls: [
          { id: 'a', name: 'reserve_seat', input: '{"seat":"12A"}' },
          { id: 'b', name: 'book_flight', input: '{"origin": "JF' },
        ],
      },
      { text: 'I could not book it.' },
    ]);
    const result = await runAgent({ model: fromAiSdkModel(model), tools, messages: [{ role: 'user', content: 'book' }] });
    expect(result.status).toBe('completed');
    expect(booked).toEqual([]);
    const prompt = calls[1]!.prompt;
    expect(prompt[1]).toMatchObject({
      role: 'assistant',
      content: [
        { toolName: 'reserve_seat', input: { seat: '12A' } },
        { toolName: 'book_flight', input: {} },
      ],
    });
    const results = (prompt[2] as { role: string; content: Array<{ toolCallId: string; output: { type: string; value: { error: { code: string } } } }> })
      .content;
    expect(prompt[2]!.role).toBe('tool');
    expect(results.map((part) => [part.toolCallId, part.output.type, part.output.value.error.code])).toEqual([
      ['a', 'error-json', 'TOOL_NOT_FOUND'],
      ['b', 'error-json', 'MALFORMED_ARGUMENTS'],
    ]);
  });

  it("ai 5's MockLanguageModelV2: the same loop, usage as plain numbers", async () => {
    const { tools, booked } = bookingTools();
    const prompts: PromptMessage[][] = [];
    const turns: ScriptedTurn[] = [{ toolCalls: [{ id: 'c1', name: 'book_flight', input: '{"origin":"SFO","date":"2024-06-01"}' }] }, { text: 'ok' }];
    const model = new MockLanguageModelV2({
      doGenerate: async (options) => {
        prompts.push(structuredClone(options.prompt) as PromptMessage[]);
        return generateResult(turns[prompts.length - 1] ?? { text: 'done' }, 'v2') as never;
      },
    });
    const result = await runAgent({ model: fromAiSdkModel(model), tools, messages: [{ role: 'user', content: 'book SFO' }] });
    expect(result).toMatchObject({ status: 'completed', text: 'ok', tokensSpent: { input: 20, output: 10 } });
    expect(booked).toHaveLength(1);
    expect(prompts[1]![2]).toMatchObject({ role: 'tool', content: [{ toolCallId: 'c1', toolName: 'book_flight', output: { type: 'text' } }] });
  });

  it("the provider's APICallError goes to toolrun's model policy: a 503 is retried, a 401 ends the run as model_failed", async () => {
    const unavailable = () => {
      throw new APICallError({ message: 'Service Unavailable', url: 'https://api.example/v1', requestBodyValues: {}, statusCode: 503, isRetryable: true });
    };
    const { tools } = bookingTools();
    const flaky = mockV3([unavailable, { text: 'hello' }]);
    const recovered = await runAgent({
      model: fromAiSdkModel(flaky.model),
      tools,
      modelPolicy: FAST_MODEL_POLICY,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(recovered).toMatchObject({ status: 'completed', text: 'hello' });
    expect(flaky.calls).toHaveLength(2);

    const rejected = () => {
      throw new APICallError({ message: 'Incorrect API key', url: 'https://api.example/v1', requestBodyValues: {}, statusCode: 401, isRetryable: false });
    };
    const locked = mockV3([rejected, rejected, rejected]);
    const failed = await runAgent({ model: fromAiSdkModel(locked.model), tools, modelPolicy: FAST_MODEL_POLICY, messages: [{ role: 'user', content: 'hi' }] });
    expect(failed.status).toBe('model_failed');
    expect(locked.calls).toHaveLength(1);
    expect(failed.modelError).toContain('Incorrect API key');
  });

  it('names the model <provider>:<modelId> (the model breaker key), unless told otherwise', () => {
    const { model } = mockV3([]);
    expect((fromAiSdkModel(model) as unknown as { modelName: string }).modelName).toBe('mock:scripted');
    expect((fromAiSdkModel(model, { modelName: 'gpt' }) as unknown as { modelName: string }).modelName).toBe('gpt');
  });
});

describe('fromAiSdkModel inside handleMessage (createToolrun)', () => {
  it('runs a queue message end to end on the AI SDK model, fixing a bad call from the envelope', async () => {
    const { tools, booked } = bookingTools();
    const { model, calls } = mockV3([
      { toolCalls: [{ id: 'c1', name: 'book_flight', input: '{"origin":"jfk","date":"2024-05-20"}' }] },
      { toolCalls: [{ id: 'c2', name: 'book_flight', input: '{"origin":"JFK","date":"2024-05-20"}' }] },
      { text: 'Booked.' },
    ]);
    const toolrun = createToolrun({ model: fromAiSdkModel(model), tools });
    const result = await toolrun.handleMessage({ id: 'msg-1', body: JSON.stringify({ input: 'Book JFK on 2024-05-20' }) });
    expect(result).toMatchObject({ status: 'completed', text: 'Booked.', steps: 3, modelCalls: 3 });
    expect(booked).toEqual([{ origin: 'JFK', date: '2024-05-20' }]);
    const envelope = (calls[1]!.prompt.at(-1)!.content as Array<{ output: { type: string; value: { error: { fields: Array<{ path: string }> } } } }>)[0]!
      .output;
    expect(envelope.type).toBe('error-json');
    expect(envelope.value.error.fields.map((field) => field.path)).toEqual(['/origin']);
  });
});

describe('fromAiSdkModel: conversions and checks', () => {
  it('refuses a model id string and anything without doGenerate', () => {
    expect(() => fromAiSdkModel('openai/gpt-4o' as never)).toThrow(ToolrunError);
    expect(() => fromAiSdkModel('openai/gpt-4o' as never)).toThrow(/a model id needs its provider/);
    expect(() => fromAiSdkModel({} as never)).toThrow(/needs an AI SDK provider model/);
  });

  it('reads results: text parts joined, client tool calls raw, provider-executed calls left out, both usage shapes', () => {
    expect(
      parseAiSdkResult(
        {
          content: [
            { type: 'reasoning', text: 'hmm' },
            { type: 'text', text: 'Hello ' },
            { type: 'tool-call', toolCallId: 'x', toolName: 'web_search', input: '{}', providerExecuted: true },
            { type: 'text', text: 'there' },
            { type: 'tool-call', toolCallId: '', toolName: 'lookup', input: '{"q": "a' },
          ],
          usage: { inputTokens: 7, outputTokens: 3 },
        },
        4,
      ),
    ).toEqual({ text: 'Hello there', toolCalls: [{ id: 'call_4_4', name: 'lookup', args: '{"q": "a' }], usage: { input: 7, output: 3 } });
    expect(parseAiSdkResult({ content: [], usage: { inputTokens: { total: 9 }, outputTokens: { total: undefined } } }, 0)).toEqual({
      text: null,
      usage: { input: 9, output: 0 },
    });
    expect(() => parseAiSdkResult({ usage: {} }, 0)).toThrow(ModelResponseError);
    expect(() => parseAiSdkResult({ content: [{ type: 'tool-call', toolName: '' }] }, 0)).toThrow(/toolName/);
  });

  it('writes prompts: a tool message without a name takes its call name; a success envelope stays text', () => {
    const prompt = toAiSdkPrompt([
      { role: 'assistant', content: 'Checking.', toolCalls: [{ id: 'k', name: 'lookup', args: { q: 'a' } }] },
      { role: 'tool', toolCallId: 'k', content: '{"status":"success","data":1}' },
    ]);
    expect(prompt).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool-call', toolCallId: 'k', toolName: 'lookup', input: { q: 'a' } },
        ],
      },
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'k', toolName: 'lookup', output: { type: 'text', value: '{"status":"success","data":1}' } }],
      },
    ]);
  });
});
