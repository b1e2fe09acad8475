/**
 * A write tool fails past its retry budget inside LangChain v1's own `createAgent` loop, with a
 * LangGraph checkpointer: the run is dead-lettered (one tool-DLQ entry that references the thread's
 * checkpoint; the model still gets the envelope). The upstream is fixed and the entry is replayed
 * twice at once: the write is applied once, and the agent's loop resumes from the failed step, the
 * model called only for the remaining step. The last line is the measured outcome as JSON.
 *
 *   npx tsx examples/langchain/dead-letter-and-replay.ts
 */
import { AIMessage, createAgent, fakeModel, HumanMessage } from 'langchain';
import { MemorySaver } from '@langchain/langgraph';
import { createToolRuntime, defineTool, ToolError } from '../../src/index.ts';
import { replayLangChainDeadLetter, toolrunMiddleware } from '../../src/adapters/langchain/index.ts';
import { createMemoryStores } from '../../src/stores/memory/index.ts';

/** What a provider reports for one call (the fake model reports none): the entry's `tokensSpent` sums it. */
const withUsage = (message: AIMessage) => Object.assign(message, { usage_metadata: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } });
/** LangChain's fake chat model answering `turns` in order. */
function scriptedModel(turns: Array<{ call?: string; text?: string }>) {
  const model = fakeModel();
  for (const turn of turns)
    model.respond(
      turn.call
        ? withUsage(new AIMessage({ content: '', tool_calls: [{ type: 'tool_call', id: turn.call, name: 'save_order', args: { order: 'O-1' } }] }))
        : withUsage(new AIMessage(turn.text ?? '')),
    );
  return model;
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

const checkpointer = new MemorySaver();
const middleware = toolrunMiddleware(runtime, { deadLetter: { stores } });
const config = { configurable: { thread_id: 'order-chat-1' } };

const liveModel = scriptedModel([{ call: 'call_1' }, { text: 'I could not save the order.' }]);
const liveAgent = createAgent({ model: liveModel, middleware: [middleware], checkpointer });
await liveAgent.invoke({ messages: [new HumanMessage('Save order O-1.')] }, config);
const records = await stores.toolDlq.list();

upstreamUp = true;
const replayModel = scriptedModel([{ text: 'Order O-1 is saved.' }]);
const agent = createAgent({ model: replayModel, middleware: [middleware], checkpointer });
const replays = await Promise.all([0, 1].map(() => replayLangChainDeadLetter(records[0]!, { stores, runtime, agent })));

console.log(`dead-lettered: ${records.length}; replays: ${replays.map((replay) => replay.status).join(', ')}`);
console.log(
  JSON.stringify({
    host: 'langchain',
    dlqEntries: records.length,
    messageDlqEntries: (await stores.messageDlq.list()).length,
    replayStatus: replays.find((replay) => replay.status === 'completed')?.status ?? replays[0]!.status,
    modelCallsLive: liveModel.calls.length,
    modelCallsOnReplay: replayModel.calls.length,
    sideEffects,
  }),
);
