/**
 * Offline stand-ins for the README's agent examples, so each runs with no key and no network: the
 * SDKs' own code runs unchanged, only the model's answers are scripted. A turn is the tool calls
 * the model makes (name and JSON argument text) or its final text.
 *
 * - {@link scriptedLanguageModel}: an AI SDK model, the SDK's own `MockLanguageModelV3` (`ai/test`).
 * - {@link scriptedOpenAiFetch} / {@link scriptedAnthropicFetch}: a `fetch` for the real `openai` /
 *   `@anthropic-ai/sdk` clients, answering Chat Completions / Messages API requests in turn.
 * - {@link scriptedOpenAiEndpoint}: the same Chat Completions answers over HTTP on 127.0.0.1, for
 *   SDKs that build their own client (the OpenAI Agents SDK's `OpenAIProvider` takes a `baseURL`).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MockLanguageModelV3 } from 'ai/test';

/** One scripted model turn: tool calls (`args` is the JSON text the model sends), or the final text. */
export type Turn = Array<{ name: string; args: string }> | string;

/** An AI SDK language model answering with `turns` in order (the last one repeats). */
export function scriptedLanguageModel(turns: readonly Turn[]): MockLanguageModelV3 {
  let step = 0;
  const usage = {
    inputTokens: { total: 40, noCache: 40, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 8, text: 8, reasoning: undefined },
  };
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const turn = turns[Math.min(step, turns.length - 1)] ?? '';
      step += 1;
      if (typeof turn === 'string') return { content: [{ type: 'text', text: turn }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
      return {
        content: turn.map((call, index) => ({ type: 'tool-call' as const, toolCallId: `call_${step}_${index}`, toolName: call.name, input: call.args })),
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    },
  });
}

function answering(bodies: (turn: Turn, step: number) => unknown, turns: readonly Turn[]): typeof fetch {
  let step = 0;
  return async () => {
    const turn = turns[Math.min(step, turns.length - 1)] ?? '';
    step += 1;
    return new Response(JSON.stringify(bodies(turn, step)), { status: 200, headers: { 'content-type': 'application/json' } });
  };
}

/** A `fetch` answering OpenAI Chat Completions requests with `turns` in order (the last one repeats). */
export function scriptedOpenAiFetch(turns: readonly Turn[]): typeof fetch {
  return answering(
    (turn, step) => ({
      id: `chatcmpl-${step}`,
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o-mini',
      choices: [
        typeof turn === 'string'
          ? { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: turn } }
          : {
              index: 0,
              finish_reason: 'tool_calls',
              message: {
                role: 'assistant',
                content: null,
                tool_calls: turn.map((call, index) => ({ id: `call_${step}_${index}`, type: 'function', function: { name: call.name, arguments: call.args } })),
              },
            },
      ],
      usage: { prompt_tokens: 40, completion_tokens: 8, total_tokens: 48 },
    }),
    turns,
  );
}

/** {@link scriptedOpenAiFetch} served over HTTP on 127.0.0.1 (a free port): its `baseURL`, and `close` to stop it. */
export async function scriptedOpenAiEndpoint(turns: readonly Turn[]): Promise<{ baseURL: string; close: () => Promise<void> }> {
  const answer = scriptedOpenAiFetch(turns);
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      void answer('http://offline/').then(async (reply) => response.writeHead(reply.status, { 'content-type': 'application/json' }).end(await reply.text()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { baseURL: `http://127.0.0.1:${port}/v1`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** A `fetch` answering Anthropic Messages API requests with `turns` in order (the last one repeats). */
export function scriptedAnthropicFetch(turns: readonly Turn[]): typeof fetch {
  return answering(
    (turn, step) => ({
      id: `msg_${step}`,
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content:
        typeof turn === 'string'
          ? [{ type: 'text', text: turn }]
          : turn.map((call, index) => ({ type: 'tool_use', id: `toolu_${step}_${index}`, name: call.name, input: JSON.parse(call.args) as unknown })),
      stop_reason: typeof turn === 'string' ? 'end_turn' : 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 40, output_tokens: 8 },
    }),
    turns,
  );
}

/** The script every agent example plays: a call the schema refuses, the call fixed from the envelope, the answer. */
export const cancelTurns: readonly Turn[] = [
  [{ name: 'cancel_reservation', args: '{"reservation_id":"zfa04y"}' }], // the pattern wants upper case → INVALID_FORMAT
  [{ name: 'cancel_reservation', args: '{"reservation_id":"ZFA04Y"}' }], // fixed after reading the envelope
  'Reservation ZFA04Y is cancelled.',
];
