/**
 * A write tool fails past its retry budget inside the OpenAI Agents SDK's own `Runner` loop: the
 * run is dead-lettered (one tool-DLQ entry, the model still gets the envelope). The upstream is
 * fixed and the entry is replayed twice at once: the write is applied once, and the model is
 * called only for the remaining step. The model is a scripted Responses endpoint on 127.0.0.1
 * (no key, no network); the last line is the measured outcome as JSON.
 *
 *   npx tsx examples/openai-agents/dead-letter-and-replay.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, OpenAIProvider, Runner, setTracingDisabled } from '@openai/agents';
import { createToolRuntime, defineTool, ToolError } from '../../src/index.ts';
import { replayOpenAiAgentsDeadLetter, toOpenAiAgents } from '../../src/adapters/openai-agents/index.ts';
import { createMemoryStores } from '../../src/stores/memory/index.ts';

/** A Responses endpoint answering each request with the next scripted output item; it counts the requests. */
async function scriptedEndpoint() {
  const outputs: unknown[] = [];
  let requests = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      requests += 1;
      const output = outputs.shift() ?? {
        type: 'message',
        id: 'msg',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'done', annotations: [] }],
      };
      const usage = {
        input_tokens: 20,
        output_tokens: 5,
        total_tokens: 25,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens_details: { reasoning_tokens: 0 },
      };
      const body = { id: `resp_${requests}`, object: 'response', created_at: 1, status: 'completed', model: 'gpt-4o', output: [output], usage };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    next: (...items: unknown[]) => outputs.push(...items),
    requests: () => requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
const say = (text: string) => ({
  type: 'message',
  id: 'msg',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text, annotations: [] }],
});
const saveCall = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'save_order', arguments: '{"order":"O-1"}', status: 'completed' };

setTracingDisabled(true);
const endpoint = await scriptedEndpoint();
const modelProvider = new OpenAIProvider({ apiKey: 'sk-local', baseURL: `${endpoint.origin}/v1`, useResponses: true });
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

// the live run: one toOpenAiAgents call per run, its runConfig passed to the Runner
endpoint.next(saveCall, say('I could not save the order.'));
const live = toOpenAiAgents(runtime, { deadLetter: { stores } });
await new Runner({ ...live.runConfig, modelProvider }).run(new Agent({ name: 'orders', model: 'gpt-4o', tools: live.tools }), 'Save order O-1.');
const modelCallsLive = endpoint.requests();
const records = await stores.toolDlq.list();

// fixed; how this app continues a run (registered once), and two replays of the entry at once
upstreamUp = true;
endpoint.next(say('Order O-1 is saved.'));
const app = toOpenAiAgents(runtime);
const continueRun = (items: unknown[]) =>
  new Runner({ ...app.runConfig, modelProvider }).run(new Agent({ name: 'orders', model: 'gpt-4o', tools: app.tools }), items as never);
const replays = await Promise.all([0, 1].map(() => replayOpenAiAgentsDeadLetter(records[0]!, { stores, runtime, continueRun })));
const modelCallsOnReplay = endpoint.requests() - modelCallsLive;
await endpoint.close();

console.log(`dead-lettered: ${records.length}; replays: ${replays.map((replay) => replay.status).join(', ')}`);
console.log(
  JSON.stringify({
    host: 'openai-agents',
    dlqEntries: records.length,
    messageDlqEntries: (await stores.messageDlq.list()).length,
    replayStatus: replays.find((replay) => replay.status === 'completed')?.status ?? replays[0]!.status,
    modelCallsLive,
    modelCallsOnReplay,
    sideEffects,
  }),
);
