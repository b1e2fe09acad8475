import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyModelError } from '../../core/classify-error.ts';
import { ModelResponseError, ToolError } from '../../core/tool-error.ts';
import { createOpenAiChatModel, parseChatCompletion, type ChatCompletionsClient } from './openai-chat-model.ts';

describe('createOpenAiChatModel', () => {
  it('sends messages and tool specs in chat-completions form and maps the answer back', async () => {
    const bodies: Array<Record<string, unknown>> = [];
    const client: ChatCompletionsClient = {
      chat: {
        completions: {
          create: async (body) => {
            bodies.push(body);
            return {
              choices: [
                {
                  message: {
                    content: null,
                    tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_user_details', arguments: '{"user_id": "mia_li_3668"' } }],
                  },
                },
              ],
              usage: { prompt_tokens: 812, completion_tokens: 19 },
            };
          },
        },
      },
    };
    const model = createOpenAiChatModel({ model: 'gpt-4o', client });
    const response = await model({
      runId: 'r',
      stepIndex: 1,
      signal: new AbortController().signal,
      tools: [{ name: 'get_user_details', description: 'Get user details', inputSchema: { type: 'object' } }],
      messages: [
        { role: 'system', content: 'policy' },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'x', args: { a: 1 } }] },
        { role: 'tool', toolCallId: 'call_1', name: 'x', content: '{"status":"failed"}' },
      ],
    });
    // A truncated argument string is passed through raw for the runtime to classify.
    expect(response).toEqual({
      text: null,
      toolCalls: [{ id: 'call_9', name: 'get_user_details', args: '{"user_id": "mia_li_3668"' }],
      usage: { input: 812, output: 19 },
    });
    expect(bodies[0]).toMatchObject({
      model: 'gpt-4o',
      tools: [{ type: 'function', function: { name: 'get_user_details', parameters: { type: 'object' } } }],
      messages: [
        { role: 'system', content: 'policy' },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'x', arguments: '{"a":1}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"status":"failed"}' },
      ],
    });
  });
});

describe('createOpenAiChatModel: failures a model policy can classify', () => {
  const request = { runId: 'r', stepIndex: 2, signal: new AbortController().signal, tools: [], messages: [{ role: 'user' as const, content: 'hi' }] };
  const answering = (body: unknown): ChatCompletionsClient => ({ chat: { completions: { create: async () => body } } });
  const nowMs = Date.UTC(2025, 0, 15, 12);

  it.each([
    ['an HTML page from a proxy', '<html><body>502 Bad Gateway</body></html>', 'instead of a chat completion'],
    ['an empty object', {}, 'has no `choices` list'],
    ['no choices', { choices: [] }, 'has no choices'],
    ['a choice without a message', { choices: [{ finish_reason: 'stop' }] }, 'has no `message`'],
    ['content that is not text', { choices: [{ message: { content: 42 } }] }, 'content is a number'],
    ['tool_calls that is not a list', { choices: [{ message: { content: null, tool_calls: '{"name":"x"}' } }] }, 'tool_calls is a string'],
    ['a tool call without a function', { choices: [{ message: { content: null, tool_calls: [{ id: 'c1' }] } }] }, 'tool_calls[0] has no `function` object'],
    [
      'a tool call without a name',
      { choices: [{ message: { content: null, tool_calls: [{ id: 'c1', function: { name: 7, arguments: '{}' } }] } }] },
      'tool_calls[0].function.name is a number',
    ],
    [
      'arguments that are not JSON text',
      { choices: [{ message: { content: null, tool_calls: [{ id: 'c1', function: { name: 'x', arguments: 12 } }] } }] },
      'arguments is a number',
    ],
    ['an error body without a status', { error: { message: 'upstream exploded', type: 'upstream_error' } }, 'an error body'],
  ])('%s → ModelResponseError, classified invalid_response (transient)', async (_label, body, problem) => {
    const rejection = await createOpenAiChatModel({ model: 'gpt-4o', client: answering(body) })(request).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(ModelResponseError.is(rejection)).toBe(true);
    expect((rejection as Error).message).toContain(problem);
    expect(classifyModelError(rejection, { nowMs })).toMatchObject({ kind: 'invalid_response', transient: true, misconfiguration: false });
  });

  it('a 2xx error body with an HTTP status in error.code is classified by that status', async () => {
    const rejection = await createOpenAiChatModel({
      model: 'm',
      client: answering({ error: { code: 429, message: 'Rate limit exceeded: free-models-per-min' } }),
    })(request).catch((error: unknown) => error);
    expect(classifyModelError(rejection, { nowMs })).toMatchObject({
      kind: 'rate_limit',
      status: 429,
      transient: true,
      message: 'Rate limit exceeded: free-models-per-min',
    });
  });

  it('accepts what compatible servers send: no call id, object arguments, absent arguments, text parts, no usage', async () => {
    const body = {
      choices: [
        {
          message: {
            content: [
              { type: 'text', text: 'Hel' },
              { type: 'text', text: 'lo' },
            ],
            tool_calls: [{ function: { name: 'a', arguments: { x: 1 } } }, { id: 'c2', function: { name: 'b' } }],
          },
        },
      ],
    };
    expect(await createOpenAiChatModel({ model: 'm', client: answering(body) })(request)).toEqual({
      text: 'Hello',
      toolCalls: [
        { id: 'call_2_0', name: 'a', args: { x: 1 } },
        { id: 'c2', name: 'b', args: {} },
      ],
      usage: { input: 0, output: 0 },
    });
    expect(parseChatCompletion({ choices: [{ message: { content: 'ok' } }], usage: { prompt_tokens: -3, completion_tokens: 'x' } }, 0)).toEqual({
      text: 'ok',
      usage: { input: 0, output: 0 },
    });
  });

  it('an SDK error of the endpoint rejects unchanged, status and headers kept', async () => {
    const thrown = new OpenAI.RateLimitError(429, { message: 'slow down' }, undefined, new Headers({ 'retry-after': '2' }));
    const client: ChatCompletionsClient = { chat: { completions: { create: async () => Promise.reject(thrown) } } };
    const rejection = await createOpenAiChatModel({ model: 'm', client })(request).catch((error: unknown) => error);
    expect(rejection).toBe(thrown);
    expect(classifyModelError(rejection, { nowMs })).toMatchObject({ kind: 'rate_limit', status: 429, retryAfterMs: 2000 });
  });

  it('goes by the configured model name in dead-letter entries and the shared model breaker', async () => {
    const model = createOpenAiChatModel({ model: 'gpt-4o-mini', apiKey: undefined });
    expect((model as { modelName?: unknown }).modelName).toBe('gpt-4o-mini');
    const { runAgent } = await import('../../agent/run-agent.ts');
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      const result = await runAgent({ model, tools: {}, messages: [{ role: 'user', content: 'hi' }], modelPolicy: { maxAttempts: 1 } });
      expect(result.status).toBe('model_failed');
      expect(result.modelFailure?.modelName).toBe('gpt-4o-mini');
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });

  it('no API key: a ToolError that is a misconfiguration (auth), not a tool bug', async () => {
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      const rejection = await createOpenAiChatModel({ model: 'gpt-4o' })(request).catch((error: unknown) => error);
      expect(ToolError.is(rejection)).toBe(true);
      expect(classifyModelError(rejection, { nowMs })).toMatchObject({ kind: 'auth', code: 'AUTH_EXPIRED', transient: false, misconfiguration: true });
      expect((rejection as Error).message).toContain('OPENAI_API_KEY');
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });

  describe('with the real openai client against a local server', () => {
    const answers: Array<{ status: number; headers: Record<string, string>; body: string }> = [];
    let requests = 0;
    let server: Server;
    let baseURL: string;
    beforeAll(async () => {
      server = createServer((incoming, response) => {
        requests += 1;
        incoming.resume();
        const answer = answers.shift() ?? { status: 500, headers: {}, body: '{}' };
        response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(answer.body);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('a 429 with reset headers: one request (no SDK retries underneath), classified with the server’s wait', async () => {
      requests = 0;
      answers.push({
        status: 429,
        headers: { 'x-ratelimit-reset-requests': '6m0s', 'x-ratelimit-remaining-requests': '0' },
        body: '{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}',
      });
      const rejection = await createOpenAiChatModel({ model: 'gpt-4o', apiKey: 'sk-test', baseURL })(request).catch((error: unknown) => error);
      expect(requests).toBe(1);
      expect(rejection).toBeInstanceOf(OpenAI.RateLimitError);
      expect(classifyModelError(rejection, { nowMs })).toMatchObject({
        kind: 'rate_limit',
        code: 'RATE_LIMITED',
        status: 429,
        transient: true,
        retryAfterMs: 360_000,
      });
    });

    it('a 401: the rejected key is a misconfiguration', async () => {
      answers.push({ status: 401, headers: {}, body: '{"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}}' });
      const rejection = await createOpenAiChatModel({ model: 'gpt-4o', apiKey: 'sk-wrong', baseURL })(request).catch((error: unknown) => error);
      expect(classifyModelError(rejection, { nowMs })).toMatchObject({ code: 'AUTH_EXPIRED', status: 401, misconfiguration: true, transient: false });
    });

    it('a 200 that is not a completion: ModelResponseError', async () => {
      answers.push({ status: 200, headers: {}, body: '{"choices":"nope"}' });
      answers.push({ status: 200, headers: { 'content-type': 'text/html' }, body: '<html>maintenance</html>' });
      const model = createOpenAiChatModel({ model: 'gpt-4o', apiKey: 'sk-test', baseURL });
      for (let index = 0; index < 2; index++) {
        const rejection = await model(request).catch((error: unknown) => error);
        expect(classifyModelError(rejection, { nowMs }).kind).toBe('invalid_response');
      }
    });
  });
});
