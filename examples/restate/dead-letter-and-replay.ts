/**
 * toolrun inside Restate: a real restate-server is started, the agent is served as a Restate
 * virtual object keyed by run id, and a write tool that is down fails past its retry budget. The
 * run is dead-lettered into toolrun's tool DLQ (its invocation ends with a TerminalError naming the
 * DLQ, so Restate does not retry it). The upstream is fixed and the entry is replayed twice at once
 * as new Restate invocations on the run's key: the write is applied once, and the model is called
 * only for the remaining step. The last line is the measured outcome as JSON.
 *
 *   npx tsx examples/restate/dead-letter-and-replay.ts
 */
import * as restate from '@restatedev/restate-sdk';
import { createToolrun, defineTool, ToolError, type Model } from '../../src/index.ts';
import { createRestateAgent, freePort, restateReplayer, startRestateServer } from '../../src/engines/restate/index.ts';
import { createMemoryStores } from '../../src/stores/memory/index.ts';

const server = await startRestateServer();
try {
  const stores = createMemoryStores();
  let upstreamUp = false;
  const applied = new Set<string>();
  const saveOrder = defineTool({
    name: 'save_order',
    description: 'Saves an order (honours the idempotency key)',
    inputSchema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'], additionalProperties: false },
    retry: { maxAttempts: 3, backoff: { baseDelayMs: 50, jitterMs: 10 } },
    execute: async ({ order }, context) => {
      if (!upstreamUp) throw new ToolError({ kind: 'server', status: 503, message: 'orders service unavailable' });
      applied.add(context.idempotencyKey);
      return { saved: order };
    },
  });
  // the model asks to save the order until a save succeeds, then answers; each call is counted
  let modelCalls = 0;
  const model: Model = async (request) => {
    modelCalls += 1;
    const saved = request.messages.some((message) => message.role === 'tool' && message.content?.includes('"status":"success"'));
    const turn = request.messages.filter((message) => message.role === 'assistant').length;
    const usage = { input: 30, output: 8 };
    return saved ? { text: 'Order O-1 is saved.', usage } : { toolCalls: [{ id: `call_${turn}`, name: 'save_order', args: '{"order":"O-1"}' }], usage };
  };

  const agent = createRestateAgent({ model, tools: [saveOrder], stores, toolRetryBudget: 2 });
  const port = await freePort();
  await restate
    .endpoint()
    .bind(agent)
    .setLogger(() => undefined)
    .listen(port);
  await server.register(`http://127.0.0.1:${port}`);

  // the run: its invocation ends with a TerminalError (409) that names the DLQ
  const response = await fetch(`${server.ingressUrl}/toolrun/order-run-1/run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ body: JSON.stringify({ input: 'Save order O-1' }) }),
  });
  const ended = (await response.json()) as { message: string; metadata?: Record<string, string> };
  console.log(`run: HTTP ${response.status} — ${ended.message}`);
  const records = await stores.toolDlq.list();
  const dlqEntries = records.length;
  const messageDlqEntries = (await stores.messageDlq.list()).length;
  const record = records[0]!;
  console.log(`tool DLQ: ${dlqEntries} entry, ${record.entry.kind} at step ${record.entry.stepIndex}, pointer ${record.entry.originalMessageId}`);

  // the world is fixed; two operators replay the entry at once, as `toolrun dlq replay` does: the
  // `restate` host (registered once, in the config or here) sends it to the run's virtual object
  upstreamUp = true;
  const toolrun = createToolrun({ model, tools: [saveOrder], stores, hosts: { restate: restateReplayer({ ingressUrl: server.ingressUrl }) } });
  const modelCallsBefore = modelCalls;
  const results = await Promise.all([toolrun.replay(record), toolrun.replay(record)]);
  console.log(`replays: ${results.map((result) => result.status).join(', ')}; model calls for the remaining steps: ${modelCalls - modelCallsBefore}`);
  const replayed = results.find((result) => result.status === 'completed') ?? results[0]!;
  const left = (await stores.toolDlq.list()).length;
  console.log(`tool DLQ after the replays: ${left} entries`);

  console.log(
    JSON.stringify({
      engine: 'restate',
      dlqEntries,
      messageDlqEntries,
      replayStatus: replayed.status,
      sideEffects: applied.size,
    }),
  );
} finally {
  await server.stop();
}
process.exit(0);
