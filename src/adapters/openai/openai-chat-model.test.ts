import { describe, expect, it } from 'vitest';
import { createOpenAiChatModel, type ChatCompletionsClient } from './openai-chat-model.ts';

describe('createOpenAiChatModel', () => {
  it('sends messages and tool specs in chat-completions form and maps the answer back', async () => {
    const bodies: Array<Record<string, unknown>> = [];
    const client: ChatCompletionsClient = {
      chat: {
        completions: {
          create: async (body) => {
            bodies.push(body);
            return {
              choices: [{ message: { content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_user_details', arguments: '{"user_id": "mia_li_3668"' } }] } }],
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
    expect(response).toEqual({ text: null, toolCalls: [{ id: 'call_9', name: 'get_user_details', args: '{"user_id": "mia_li_3668"' }], usage: { input: 812, output: 19 } });
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
