/**
 * `toolrun/ai-sdk` in a Vercel AI SDK app, kept in a type-checked file so it cannot drift from the
 * API (`npm run typecheck` compiles it). Run: `npx tsx examples/ai-sdk/generate-text.ts`.
 *
 * Offline: the model is the AI SDK's own `MockLanguageModelV3`, scripted to make the mistakes real
 * models make — a date in the wrong format, a hallucinated tool name, `functions.`-prefixed names,
 * truncated JSON — and to fix them from what it reads. With a real provider, replace `model` with
 * `openai('gpt-4o')` (or any provider model); nothing else changes.
 *
 * The glue is the two marked lines: one import, one call (plus passing `repairToolCall`).
 */
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { createToolrun, defineTool } from '../../src/index.ts';
import { fromAiSdkModel, toAiSdk, ToolCallFailure } from '../../src/adapters/ai-sdk/index.ts'; // glue 1/2: the import

const bookFlight = defineTool({
  name: 'book_flight',
  description: 'Book a flight for one passenger',
  inputSchema: {
    type: 'object',
    properties: { origin: { type: 'string', pattern: '^[A-Z]{3}$' }, date: { type: 'string', format: 'date' } },
    required: ['origin', 'date'],
    additionalProperties: false,
  },
  execute: async ({ origin, date }) => ({ confirmation: 'ZFA04Y', origin, date }),
});

/** A scripted provider model: each turn is what a real model might answer after reading the last result. */
function scriptedModel(turns: ReadonlyArray<Array<{ name: string; input: string }> | string>) {
  let step = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const turn = turns[Math.min(step, turns.length - 1)]!;
      step += 1;
      const usage = {
        inputTokens: { total: 50, noCache: 50, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 10, text: 10, reasoning: undefined },
      };
      if (typeof turn === 'string') return { content: [{ type: 'text', text: turn }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
      return {
        content: turn.map((call, index) => ({ type: 'tool-call' as const, toolCallId: `call_${step}_${index}`, toolName: call.name, input: call.input })),
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      };
    },
  });
}

const toolrun = createToolrun({ model: async () => ({ text: 'unused here', usage: { input: 0, output: 0 } }), tools: [bookFlight] });

// 1. toolrun's tools inside generateText.
const { tools, repairToolCall } = toAiSdk(toolrun.runtime, { sessionId: 'chat-42' }); // glue 2/2: the call
const result = await generateText({
  model: scriptedModel([
    [{ name: 'book_flight', input: '{"origin":"JFK","date":"05/20/2024"}' }], // wrong date format → DATE_FORMAT_ERROR naming /date
    [{ name: 'reserve_flight', input: '{"origin":"JFK"}' }], // hallucinated name → TOOL_NOT_FOUND, closest_tool
    [{ name: 'book_flight', input: '{"origin":"JFK","date":"2024-05-' }], // truncated JSON → MALFORMED_ARGUMENTS
    [{ name: 'functions.book_flight', input: '{"origin":"JFK","date":"2024-05-20"}' }], // equivalent spelling: runs book_flight
    'Booked: ZFA04Y',
  ]),
  tools,
  experimental_repairToolCall: repairToolCall, // `repairToolCall` in ai 7
  stopWhen: stepCountIs(8),
  prompt: 'Book me JFK on May 20',
});
for (const step of result.steps) {
  for (const part of step.content) {
    if (part.type === 'tool-error' && ToolCallFailure.is(part.error)) {
      // The host sees a failure; the model read the whole envelope (part.error.message is its JSON).
      const { envelope } = part.error;
      console.log(`tool-error  ${envelope.tool_name}: ${envelope.error.code} — ${envelope.error.message}`);
    }
    if (part.type === 'tool-result') console.log(`tool-result ${part.toolName}: ${JSON.stringify(part.output)}`);
  }
}
console.log(`final text  ${result.text}`);

// 2. Any AI SDK provider model as toolrun's model (runAgent, handleMessage, the worker, the drain).
const onAiSdk = createToolrun({
  model: fromAiSdkModel(
    scriptedModel([
      [{ name: 'book_flight', input: '{"origin":"jfk","date":"2024-05-20"}' }],
      [{ name: 'book_flight', input: '{"origin":"JFK","date":"2024-05-20"}' }],
      'Booked.',
    ]),
  ),
  tools: [bookFlight],
});
const handled = await onAiSdk.handleMessage({ id: 'msg-1', body: JSON.stringify({ input: 'Book JFK on 2024-05-20' }) });
console.log(`handleMessage on an AI SDK model: ${handled.status}${'steps' in handled ? `, ${handled.steps} steps` : ''}`);
