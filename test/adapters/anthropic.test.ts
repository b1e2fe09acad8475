/**
 * `toolrun/anthropic` with the real `@anthropic-ai/sdk` client against a scripted Messages API on
 * 127.0.0.1: `createAnthropicModel` driven by toolrun's own loop (`runAgent`), and `toAnthropicTools`
 * driven by the SDK's tool runner (`client.beta.messages.toolRunner`). Each case asserts what the
 * model's NEXT request carries: a `tool_result` with toolrun's envelope and `is_error: true`.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAnthropicModel, toAnthropicTools } from '../../src/adapters/anthropic/index.ts';
import { parseAnthropicMessage, toAnthropicMessages } from '../../src/adapters/anthropic/anthropic-model.ts';
import { classifyModelError } from '../../src/core/classify-error.ts';
import { ModelResponseError } from '../../src/core/tool-error.ts';
import { runAgent } from '../../src/index.ts';
import { ToolrunError } from '../../src/ground/toolrun-error.ts';
import { messageText, messageToolUse, resultText, toolResults } from './fixtures/anthropic-messages.ts';
import { startScriptedServer, type ScriptedServer } from './fixtures/openai-scripted-server.ts';
import { createWeatherFixture, envelopeOf, type WeatherFixture } from './fixtures/openai-weather-tools.ts';

let server: ScriptedServer;
let fixture: WeatherFixture;
let client: Anthropic;

beforeAll(async () => {
  server = await startScriptedServer();
  client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: server.origin, maxRetries: 0 });
});
afterAll(() => server.close());
beforeEach(() => {
  fixture = createWeatherFixture();
});

const ask = [{ role: 'user' as const, content: 'What is the weather in Paris on 15 January 2024?' }];

async function agentRun(first: ReturnType<typeof messageToolUse>, runId = 'run-1') {
  server.script([() => first, () => messageText('Let me fix that.')]);
  const model = createAnthropicModel({ client, model: 'claude-sonnet-4-5', system: 'Use the tools.' });
  const result = await runAgent({ model, runtime: fixture.runtime, messages: ask, runId, sessionId: runId, modelPolicy: { maxAttempts: 1 } });
  return { result, next: toolResults(server.requests[1]) };
}

describe('createAnthropicModel in toolrun’s loop', () => {
  it('sends the Messages API shape: system, tools with input_schema, max_tokens', async () => {
    const { result } = await agentRun(messageToolUse([{ id: 'toolu_1', name: 'get_weather', input: { city: 'Paris', date: '2024-01-15' } }]));
    expect(result.status).toBe('completed');
    const first = server.requests[0]!;
    expect(first.path).toBe('/v1/messages');
    expect(first.body).toMatchObject({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      system: 'Use the tools.',
      messages: [{ role: 'user', content: [{ type: 'text' }] }],
    });
    expect((first.body.tools as Array<{ name: string; input_schema: unknown }>).map((tool) => tool.name)).toEqual([
      'get_weather',
      'flaky_lookup',
      'partner_search',
      'slow_report',
    ]);
    expect(server.requests[1]!.body.messages).toMatchObject([
      { role: 'user' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris', date: '2024-01-15' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1' }] },
    ]);
    const block = toolResults(server.requests[1]).get('toolu_1')!;
    expect(block.is_error).toBeUndefined();
    expect(envelopeOf(resultText(block))).toMatchObject({ status: 'success', data: { forecast: 'sunny' } });
    expect(result.tokensSpent).toEqual({ input: 100, output: 17 });
  });

  it('a wrong type: is_error true, toolrun’s envelope names /city', async () => {
    const { next } = await agentRun(messageToolUse([{ id: 'toolu_1', name: 'get_weather', input: { city: 75001, date: '2024-01-15' } }]));
    const block = next.get('toolu_1');
    expect(block?.is_error).toBe(true);
    expect(envelopeOf(resultText(block)).error).toMatchObject({ code: 'INVALID_TYPE', fields: [expect.objectContaining({ path: '/city' })] });
    expect(fixture.executions.get_weather).toBe(0);
  });

  it('a date in the wrong format: DATE_FORMAT_ERROR, is_error true', async () => {
    const { next } = await agentRun(messageToolUse([{ id: 'toolu_1', name: 'get_weather', input: { city: 'Paris', date: 'January 15' } }]));
    expect(next.get('toolu_1')?.is_error).toBe(true);
    expect(envelopeOf(resultText(next.get('toolu_1'))).error).toMatchObject({
      code: 'DATE_FORMAT_ERROR',
      fields: [expect.objectContaining({ path: '/date' })],
    });
  });

  it('a hallucinated name: TOOL_NOT_FOUND with the available tools; an equivalent spelling runs the real tool', async () => {
    const { next } = await agentRun(
      messageToolUse([
        { id: 'toolu_1', name: 'get_forecast', input: { city: 'Paris' } },
        { id: 'toolu_2', name: 'functions.get_weather', input: { city: 'Paris', date: '2024-01-15' } },
      ]),
    );
    expect(next.get('toolu_1')?.is_error).toBe(true);
    expect(envelopeOf(resultText(next.get('toolu_1'))).error).toMatchObject({
      code: 'TOOL_NOT_FOUND',
      available_tools: expect.arrayContaining(['get_weather']),
    });
    expect(next.get('toolu_2')?.is_error).toBeUndefined();
    expect(envelopeOf(resultText(next.get('toolu_2')))).toMatchObject({ status: 'success', tool_name: 'get_weather' });
    expect(fixture.executions.get_weather).toBe(1);
  });

  it('a tool_use cut off by max_tokens: MALFORMED_ARGUMENTS (truncated), the tool did not run on partial input', async () => {
    const { next } = await agentRun(messageToolUse([{ id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }], 'max_tokens'));
    expect(next.get('toolu_1')?.is_error).toBe(true);
    expect(envelopeOf(resultText(next.get('toolu_1'))).error).toMatchObject({
      code: 'MALFORMED_ARGUMENTS',
      message: expect.stringMatching(/truncated|cut off/i),
    });
    expect(fixture.executions.get_weather).toBe(0);
  });

  it('a 503 then success: the model sees one success (attempts 2), no is_error', async () => {
    const { next } = await agentRun(messageToolUse([{ id: 'toolu_1', name: 'flaky_lookup', input: { order_id: 'W1' } }]));
    expect(next.get('toolu_1')?.is_error).toBeUndefined();
    expect(envelopeOf(resultText(next.get('toolu_1')))).toMatchObject({ status: 'success', attempts: 2 });
  });

  it('a timeout: TIMEOUT with is_error true', async () => {
    const { next } = await agentRun(messageToolUse([{ id: 'toolu_1', name: 'slow_report', input: { report_id: 'R1' } }]));
    expect(next.get('toolu_1')?.is_error).toBe(true);
    expect(envelopeOf(resultText(next.get('toolu_1'))).error).toMatchObject({ code: 'TIMEOUT' });
  });

  it('model errors from the SDK keep status and headers: a 429 with retry-after and a 529 are transient, a 401 a misconfiguration', async () => {
    const model = createAnthropicModel({ client, model: 'claude-sonnet-4-5' });
    const request = { runId: 'r', stepIndex: 0, signal: new AbortController().signal, tools: [], messages: ask };
    const nowMs = Date.UTC(2025, 0, 15, 12);
    server.script([
      () => ({
        status: 429,
        headers: { 'retry-after': '7' },
        body: { type: 'error', error: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit' } },
      }),
      () => ({ status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }),
      () => ({ status: 401, body: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } } }),
      () => ({ body: '<html>maintenance</html>' }),
    ]);
    const rejections = [];
    for (let index = 0; index < 4; index++) rejections.push(await model(request).catch((error: unknown) => error));
    expect(rejections[0]).toBeInstanceOf(Anthropic.RateLimitError);
    expect(classifyModelError(rejections[0], { nowMs })).toMatchObject({ kind: 'rate_limit', status: 429, transient: true, retryAfterMs: 7000 });
    expect(classifyModelError(rejections[1], { nowMs })).toMatchObject({ status: 529, transient: true });
    expect(classifyModelError(rejections[2], { nowMs })).toMatchObject({ code: 'AUTH_EXPIRED', status: 401, misconfiguration: true });
    expect(ModelResponseError.is(rejections[3])).toBe(true);
  });

  it('the abort signal reaches the SDK: a cancelled run is cancelled, not a model failure', async () => {
    server.script([() => messageText('never read')]);
    const controller = new AbortController();
    controller.abort();
    const model = createAnthropicModel({ client, model: 'claude-sonnet-4-5' });
    const result = await runAgent({ model, runtime: fixture.runtime, messages: ask, signal: controller.signal });
    expect(result.status).toBe('cancelled');
  });

  it('options are checked at creation', () => {
    expect(() => createAnthropicModel({ client: {} as never, model: '' })).toThrow(ToolrunError);
    expect(() => createAnthropicModel({ client, model: 'm', maxTokens: 0 })).toThrow(/maxTokens/);
  });
});

describe('toAnthropicMessages / parseAnthropicMessage', () => {
  it('consecutive tool results are one user turn, a failed envelope is is_error, system messages go to system', () => {
    const converted = toAnthropicMessages([
      { role: 'system', content: 'policy' },
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: 'Checking.',
        toolCalls: [
          { id: 't1', name: 'a', args: '{"x":1}' },
          { id: 't2', name: 'b', args: { y: 2 } },
        ],
      },
      { role: 'tool', toolCallId: 't1', content: '{"status":"failed","error":{"code":"TIMEOUT"}}' },
      { role: 'tool', toolCallId: 't2', content: '<tool_result tool="b" status="success">{}</tool_result>' },
      { role: 'user', content: 'and?' },
    ]);
    expect(converted.system).toEqual(['policy']);
    expect(converted.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 't1', name: 'a', input: { x: 1 } },
          { type: 'tool_use', id: 't2', name: 'b', input: { y: 2 } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: '{"status":"failed","error":{"code":"TIMEOUT"}}', is_error: true },
          { type: 'tool_result', tool_use_id: 't2', content: '<tool_result tool="b" status="success">{}</tool_result>' },
          { type: 'text', text: 'and?' },
        ],
      },
    ]);
  });

  it.each([
    ['an HTML page', '<html></html>', 'instead of a message'],
    ['no content list', { type: 'message' }, 'not a list of blocks'],
    ['a tool_use without a name', { content: [{ type: 'tool_use', id: 'x', input: {} }] }, 'has no name'],
    ['a tool_use whose input is a string', { content: [{ type: 'tool_use', id: 'x', name: 'a', input: '{}' }] }, 'not an object'],
  ])('%s → ModelResponseError', (_label, body, problem) => {
    expect(() => parseAnthropicMessage(body)).toThrow(ModelResponseError);
    expect(() => parseAnthropicMessage(body)).toThrow(problem);
  });
});

describe('toAnthropicTools in the SDK’s tool runner', () => {
  async function runnerRun(first: ReturnType<typeof messageToolUse>) {
    server.script([() => first, () => messageText('Done.')]);
    const final = await client.beta.messages
      .toolRunner({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: ask, tools: toAnthropicTools(fixture, { sessionId: 's-1' }) })
      .runUntilDone();
    return { final, next: toolResults(server.requests[1]) };
  }

  it('bad arguments: the SDK does not validate, toolrun answers with is_error true naming the field', async () => {
    const { final, next } = await runnerRun(messageToolUse([{ id: 'toolu_1', name: 'get_weather', input: { city: 'Paris', date: '15/01/2024', extra: 1 } }]));
    expect(final.content).toEqual([{ type: 'text', text: 'Done.' }]);
    const block = next.get('toolu_1');
    expect(block?.is_error).toBe(true);
    const envelope = envelopeOf(resultText(block));
    expect(envelope).toMatchObject({ status: 'failed', call_id: 'toolu_1' });
    expect(envelope.error.fields?.map((field) => field.path).sort()).toEqual(['/date', '/extra']);
    expect(fixture.executions.get_weather).toBe(0);
  });

  it('a 503 then success: no is_error, attempts 2; a timeout: is_error with TIMEOUT', async () => {
    const first = await runnerRun(messageToolUse([{ id: 'toolu_1', name: 'flaky_lookup', input: { order_id: 'W1' } }]));
    expect(first.next.get('toolu_1')?.is_error).toBeUndefined();
    expect(envelopeOf(resultText(first.next.get('toolu_1')))).toMatchObject({ status: 'success', attempts: 2 });
    const second = await runnerRun(messageToolUse([{ id: 'toolu_2', name: 'slow_report', input: { report_id: 'R' } }]));
    expect(second.next.get('toolu_2')?.is_error).toBe(true);
    expect(envelopeOf(resultText(second.next.get('toolu_2'))).error.code).toBe('TIMEOUT');
  });

  it('a 401 for every run: AUTH_EXPIRED twice, then CIRCUIT_OPEN from the shared breaker, one alert', async () => {
    const codes: string[] = [];
    for (let index = 0; index < 3; index++) {
      const { next } = await runnerRun(messageToolUse([{ id: `toolu_${index}`, name: 'partner_search', input: { query: 'umbrella' } }]));
      expect(next.get(`toolu_${index}`)?.is_error).toBe(true);
      codes.push(envelopeOf(resultText(next.get(`toolu_${index}`))).error.code);
    }
    expect(codes).toEqual(['AUTH_EXPIRED', 'AUTH_EXPIRED', 'CIRCUIT_OPEN']);
    expect(fixture.breakerEvents.filter((event) => event.type === 'breaker-open')).toHaveLength(1);
    expect(fixture.executions.partner_search).toBe(2);
  });

  it('an unknown name is answered by the runner itself (is_error, no closest name): a documented limit', async () => {
    const { next } = await runnerRun(messageToolUse([{ id: 'toolu_1', name: 'get_forecast', input: {} }]));
    expect(next.get('toolu_1')).toMatchObject({ is_error: true });
    expect(resultText(next.get('toolu_1'))).toContain("Tool 'get_forecast' not found");
  });
});
