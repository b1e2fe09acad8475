/**
 * A write tool fails past its retry budget inside the Anthropic SDK's own tool runner
 * (`client.beta.messages.toolRunner`): the run is dead-lettered (one tool-DLQ entry, Claude still
 * gets the envelope as a `tool_result` with `is_error: true`). The upstream is fixed and the entry is
 * replayed twice at once through the registered host continuation (`hosts.anthropic`): the write is
 * applied once, and the model is called only for the remaining step. The Messages API is a scripted
 * endpoint on 127.0.0.1 that counts the requests it answers. The last line is the measured outcome
 * as JSON.
 *
 *   npx tsx examples/anthropic/dead-letter-and-replay.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { createToolrun, defineTool, ToolError } from '../../src/index.ts';
import { anthropicContinuation, runAnthropicToolRunner } from '../../src/adapters/anthropic/index.ts';

// The scripted Messages endpoint: a tool_use of save_order while the conversation has no result yet, then an answer.
let modelRequests = 0;
let counter = 0;
const endpoint = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    modelRequests += 1;
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages: Array<{ content: unknown }> };
    const last = body.messages.at(-1)?.content;
    const answered =
      Array.isArray(last) && last.some((block: { type?: string; is_error?: boolean }) => block.type === 'tool_result' && block.is_error !== true);
    const failed = Array.isArray(last) && last.some((block: { type?: string; is_error?: boolean }) => block.type === 'tool_result' && block.is_error === true);
    counter += 1;
    const content = answered
      ? [{ type: 'text', text: 'Order O-1 is saved.' }]
      : failed
        ? [{ type: 'text', text: 'I could not save the order.' }]
        : [{ type: 'tool_use', id: `toolu_${counter}`, name: 'save_order', input: { order: 'O-1' } }];
    const message = {
      id: `msg_${counter}`,
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content,
      stop_reason: content[0]!.type === 'tool_use' ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 40, output_tokens: 10 },
    };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(message));
  });
});
await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
const client = new Anthropic({ apiKey: 'sk-ant-example', baseURL: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`, maxRetries: 0 });
const params = { model: 'claude-sonnet-4-5', max_tokens: 1024 };

let upstreamUp = false;
let sideEffects = 0;
const saveOrder = defineTool({
  name: 'save_order',
  description: 'Saves an order',
  inputSchema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'], additionalProperties: false },
  execute: async ({ order }) => {
    if (!upstreamUp) throw new ToolError({ kind: 'server', status: 503, message: 'Service Unavailable' });
    sideEffects += 1;
    return { saved: order };
  },
});
// once, at start-up: the host continuation every replay of an Anthropic entry uses (CLI, drain, dashboard alike)
const toolrun = createToolrun({
  model: async () => ({ text: 'toolrun’s own loop is not used here', usage: { input: 0, output: 0 } }),
  tools: [saveOrder],
  runtimeOptions: { retry: { backoff: { baseDelayMs: 1, jitterMs: 0 }, minDelayMs: 1 } },
  hosts: { anthropic: anthropicContinuation({ client, params }) },
});

// the live run, in the SDK's tool runner
await runAnthropicToolRunner(
  client,
  { ...params, messages: [{ role: 'user', content: 'Save order O-1.' }] },
  { tools: toolrun, deadLetter: { stores: toolrun.stores } },
);
const modelCallsLive = modelRequests;
const records = await toolrun.stores.toolDlq.list();

// the upstream is fixed; two operators replay the entry at once
upstreamUp = true;
const replays = await Promise.all([0, 1].map(() => toolrun.replay(records[0]!)));
const modelCallsOnReplay = modelRequests - modelCallsLive;
endpoint.close();

console.log(`dead-lettered: ${records.length}; replays: ${replays.map((replay) => replay.status).join(', ')}`);
console.log(
  JSON.stringify({
    host: 'anthropic',
    dlqEntries: records.length,
    messageDlqEntries: (await toolrun.stores.messageDlq.list()).length,
    replayStatus: replays.find((replay) => replay.status === 'completed')?.status ?? replays[0]!.status,
    modelCallsLive,
    modelCallsOnReplay,
    sideEffects,
  }),
);
