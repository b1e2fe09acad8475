/**
 * A write tool fails past its retry budget inside the AI SDK's own `generateText` loop: the run is
 * dead-lettered (one tool-DLQ entry, the model still gets the envelope). The upstream is fixed and
 * the entry is replayed twice at once: the write is applied once, and the model is called only for
 * the remaining step. The last line is the measured outcome as JSON.
 *
 *   npx tsx examples/ai-sdk/dead-letter-and-replay.ts
 */
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { createToolRuntime, defineTool, ToolError } from '../../src/index.ts';
import { replayAiSdkDeadLetter, toAiSdk } from '../../src/adapters/ai-sdk/index.ts';
import { createMemoryStores } from '../../src/stores/memory/index.ts';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
function scriptedModel(turns: Array<{ call?: string; text?: string }>) {
  let calls = 0;
  const model = new MockLanguageModelV3({
    doGenerate: async () => {
      const turn = turns[calls++] ?? { text: 'done' };
      const content = turn.call
        ? [{ type: 'tool-call' as const, toolCallId: turn.call, toolName: 'save_order', input: '{"order":"O-1"}' }]
        : [{ type: 'text' as const, text: turn.text ?? '' }];
      const reason = turn.call ? 'tool-calls' : 'stop';
      return { content, finishReason: { unified: reason, raw: reason }, usage, warnings: [] } as never;
    },
  });
  return { model, calls: () => calls };
}

const stores = createMemoryStores();
let upstreamUp = false;
let sideEffects = 0;
const runtime = createToolRuntime({
  retry: { backoff: { baseDelayMs: 1, jitterMs: 0 }, minDelayMs: 1 },
  tools: [
    defineTool({
      name: 'save_order',
      description: 'Saves an order',
      inputSchema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'], additionalProperties: false },
      execute: async ({ order }) => {
        if (!upstreamUp) throw new ToolError({ kind: 'server', status: 503, message: 'Service Unavailable' });
        sideEffects += 1;
        return { saved: order };
      },
    }),
  ],
});

const live = scriptedModel([{ call: 'call_1' }, { text: 'I could not save the order.' }]);
const { tools, prepareStep } = toAiSdk(runtime, { deadLetter: { stores } });
await generateText({ model: live.model, tools, prepareStep, stopWhen: stepCountIs(5), prompt: 'Save order O-1.' });
const records = await stores.toolDlq.list();

upstreamUp = true;
const replayModel = scriptedModel([{ text: 'Order O-1 is saved.' }]);
const continueRun = (messages: unknown[]) =>
  generateText({ model: replayModel.model, tools: toAiSdk(runtime).tools, messages: messages as never, stopWhen: stepCountIs(5) });
const replays = await Promise.all([0, 1].map(() => replayAiSdkDeadLetter(records[0]!, { stores, runtime, continueRun })));

console.log(`dead-lettered: ${records.length}; replays: ${replays.map((replay) => replay.status).join(', ')}`);
console.log(
  JSON.stringify({
    host: 'ai-sdk',
    dlqEntries: records.length,
    messageDlqEntries: (await stores.messageDlq.list()).length,
    replayStatus: replays.find((replay) => replay.status === 'completed')?.status ?? replays[0]!.status,
    modelCallsLive: live.calls(),
    modelCallsOnReplay: replayModel.calls(),
    sideEffects,
  }),
);
