/**
 * toolrun inside DBOS Transact: DBOS is launched on the local PostgreSQL (its system database is
 * created for this run and dropped after), the agent loop is a DBOS workflow whose id is the run
 * id, and a write tool that is down fails past its retry budget. The run is dead-lettered into
 * toolrun's tool DLQ (PostgreSQL stores), pointing at its workflow. The upstream is fixed and the
 * entry is replayed twice at once through `replayDeadLetter` — what `toolrun dlq replay`, the
 * drain and the dashboard call — which routes it to DBOS: a fork of the workflow from the failed
 * step. The write is applied once; the model is called only for the remaining step. The last line
 * is the measured outcome as JSON.
 *
 *   npx tsx examples/dbos/dead-letter-and-replay.ts
 *   (TOOLRUN_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/test)
 */
import { randomBytes } from 'node:crypto';
import { DBOS } from '@dbos-inc/dbos-sdk';
import pg from 'pg';
import { defineTool, replayDeadLetter, ToolError, type Model } from '../../src/index.ts';
import { createDbosAgent, createDbosReplayer } from '../../src/engines/dbos/index.ts';
import { createPostgresStores } from '../../src/stores/postgres/index.ts';

const postgresUrl = process.env.TOOLRUN_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const suffix = randomBytes(4).toString('hex');
const systemDatabase = `toolrun_dbos_example_${suffix}`;
const systemDatabaseUrl = Object.assign(new URL(postgresUrl), { pathname: `/${systemDatabase}` }).toString();
const schema = `toolrun_dbos_example_${suffix}`;
const stores = await createPostgresStores({ connectionString: postgresUrl, schema });

try {
  let upstreamUp = false;
  let writes = 0;
  const saveOrder = defineTool({
    name: 'save_order',
    description: 'Saves an order (honours the idempotency key)',
    inputSchema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'], additionalProperties: false },
    retry: { maxAttempts: 3, backoff: { baseDelayMs: 50, jitterMs: 10 } },
    execute: async ({ order }) => {
      if (!upstreamUp) throw new ToolError({ kind: 'server', status: 503, message: 'orders service unavailable' });
      writes += 1;
      return { saved: order };
    },
  });
  // the model asks to save the order until a save succeeds, then answers; each call is counted
  let modelCalls = 0;
  const model: Model = async (request) => {
    modelCalls += 1;
    const saved = request.messages.some((message) => message.role === 'tool' && message.content?.includes('"status":"success"'));
    const usage = { input: 30, output: 8 };
    return saved
      ? { text: 'Order O-1 is saved.', usage }
      : { toolCalls: [{ id: `call_${request.stepIndex}`, name: 'save_order', args: '{"order":"O-1"}' }], usage };
  };

  // registered before DBOS.launch(): one workflow per run, the model and tool calls its steps
  const agent = createDbosAgent({ dbos: DBOS, model, tools: [saveOrder], stores, toolRetryBudget: 2 });
  DBOS.setConfig({ name: 'toolrun-dbos-example', systemDatabaseUrl, logLevel: 'error' });
  await DBOS.launch();

  const run = await agent.run({ id: 'order-1', body: JSON.stringify({ input: 'Save order O-1' }) });
  console.log(`run ${run?.runId}: ${run?.status} after ${run?.steps} steps (workflow ${run?.workflowId})`);
  const records = await stores.toolDlq.list();
  const dlqEntries = records.length;
  const messageDlqEntries = (await stores.messageDlq.list()).length;
  const record = records[0]!;
  console.log(`tool DLQ: ${dlqEntries} entry, ${record.entry.kind} at step ${record.entry.stepIndex}, pointer ${record.entry.originalMessageId}`);

  // the world is fixed; two operators replay the entry at once, as `toolrun dlq replay` does
  upstreamUp = true;
  const modelCallsBefore = modelCalls;
  const hosts = { dbos: createDbosReplayer({ control: DBOS }) };
  const results = await Promise.all([
    replayDeadLetter(record, { stores, hosts, model, tools: [saveOrder] }),
    replayDeadLetter(record, { stores, hosts, model, tools: [saveOrder] }),
  ]);
  console.log(`replays: ${results.map((result) => result.status).join(', ')}; model calls for the remaining steps: ${modelCalls - modelCallsBefore}`);
  const replayed = results.find((result) => result.status === 'completed') ?? results[0]!;
  const steps = (await DBOS.listWorkflowSteps(`${record.entry.runId}:replay:1`))?.map((step) => `${step.functionID}:${step.name}`);
  console.log(`the fork's steps: ${steps?.join(', ')}; left in the tool DLQ: ${(await stores.toolDlq.list()).length}`);

  console.log(JSON.stringify({ engine: 'dbos', dlqEntries, messageDlqEntries, replayStatus: replayed.status, sideEffects: writes }));
} finally {
  await DBOS.shutdown();
  await stores.close();
  const admin = new pg.Pool({ connectionString: postgresUrl, max: 1 });
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.query(`DROP DATABASE IF EXISTS "${systemDatabase}" WITH (FORCE)`);
  await admin.end();
}
process.exit(0);
