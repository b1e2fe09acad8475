/**
 * A DBOS worker process for the crash tests: launches DBOS (which recovers the workflows a killed
 * predecessor left), starts the runs of the messages that have no workflow yet, and exits once
 * every run's workflow has ended. Its model and tools log each call with synchronous writes (they
 * survive SIGKILL); the tools' side effects are rows of `<schema>.effects`, keyed by the call's
 * idempotency key (a repeated execution increments `executions`, it adds no row).
 *
 *   node --import tsx test/engines/dbos-worker-child.ts '<json config>'
 */
import { existsSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { DBOS } from '@dbos-inc/dbos-sdk';
import pg from 'pg';
import type { Model } from '../../src/agent/messages.ts';
import { defineTool } from '../../src/core/define-tool.ts';
import { ToolError } from '../../src/core/tool-error.ts';
import { createDbosAgent } from '../../src/engines/dbos/index.ts';
import { createPostgresStores } from '../../src/stores/postgres/index.ts';

interface ChildConfig {
  systemDatabaseUrl: string;
  postgresUrl: string;
  schema: string;
  logPath: string;
  messages: { id: string; body: string }[];
  maxRecoveryAttempts?: number;
  /** Kill this process in the model call of `stepIndex` of runs whose input has `word`, once per marker file. */
  killInModel?: { word: string; stepIndex: number; marker: string };
  /** Kill this process in the model call of step N of runs whose input has `poison-N`, unless this file exists. */
  poisonCuredBy?: string;
  /** A poisoned model call kills the process only once DBOS recorded this step of this workflow. */
  poisonWaitsFor?: { workflowId: string; stepName: string };
  /** Keep serving (forks, resumes) until SIGTERM instead of exiting when the runs have ended. */
  serve?: boolean;
}

const config = JSON.parse(process.argv[2]!) as ChildConfig;
const fd = openSync(config.logPath, 'a');
const log = (entry: Record<string, unknown>) => writeSync(fd, `${JSON.stringify({ pid: process.pid, ...entry })}\n`);
const pool = new pg.Pool({ connectionString: config.postgresUrl, max: 4 });
pool.on('error', () => undefined);
const systemPool = new pg.Pool({ connectionString: config.systemDatabaseUrl, max: 1 });
systemPool.on('error', () => undefined);
const jitter = () => new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 4)));

const model: Model = async (request) => {
  const input = request.messages.find((message) => message.role === 'user')?.content ?? '';
  log({ model: request.runId, step: request.stepIndex });
  const kill = config.killInModel;
  if (kill && input.includes(kill.word) && request.stepIndex === kill.stepIndex && !existsSync(kill.marker)) {
    writeFileSync(kill.marker, 'killed');
    process.kill(process.pid, 'SIGKILL');
  }
  const poison = /poison-(\d)/.exec(input);
  if (poison && Number(poison[1]) === request.stepIndex && !(config.poisonCuredBy && existsSync(config.poisonCuredBy))) {
    // the process dies only once DBOS recorded the step named by `poisonWaitsFor` (another run's progress), or after 10 s
    for (let waited = 0; config.poisonWaitsFor && waited < 10_000; waited += 20) {
      const { rowCount } = await systemPool.query('SELECT 1 FROM dbos.operation_outputs WHERE workflow_uuid = $1 AND function_name = $2', [
        config.poisonWaitsFor.workflowId,
        config.poisonWaitsFor.stepName,
      ]);
      if (rowCount) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    process.kill(process.pid, 'SIGKILL');
  }
  await jitter();
  const usage = { input: 100, output: 10 };
  if (input.includes('crm')) return { toolCalls: [{ id: `k${request.stepIndex}`, name: 'crm_sync', args: '{}' }], usage };
  const mode = input.includes('always-503') ? 'always-503' : 'ok';
  const tools = request.messages.filter((message) => message.role === 'tool');
  const booked = tools.some((message) => message.name === 'book' && message.content?.includes('"status":"success"'));
  if (!booked) return { toolCalls: [{ id: `c${request.stepIndex}`, name: 'book', args: JSON.stringify({ flight: 'HAT001', mode }) }], usage };
  if (!tools.some((message) => message.name === 'charge'))
    return { toolCalls: [{ id: `c${request.stepIndex}`, name: 'charge', args: '{"cents":12900}' }], usage };
  return { text: 'done', usage };
};

async function applyEffect(key: string): Promise<void> {
  log({ effect: key });
  await pool.query(
    `INSERT INTO "${config.schema}".effects (key, executions) VALUES ($1, 1) ON CONFLICT (key) DO UPDATE SET executions = "${config.schema}".effects.executions + 1`,
    [key],
  );
}

const book = defineTool({
  name: 'book',
  description: 'Books a flight',
  inputSchema: { type: 'object', properties: { flight: { type: 'string' }, mode: { type: 'string' } }, required: ['flight'] },
  retry: { maxAttempts: 3, backoff: { baseDelayMs: 5, factor: 2, maxDelayMs: 20, jitterMs: 1 } },
  execute: async ({ flight, mode }, context) => {
    await jitter();
    if (mode === 'always-503') throw new ToolError({ kind: 'server', status: 503, message: 'upstream 503' });
    await applyEffect(context.idempotencyKey);
    return { flight, confirmation: 'ABC123' };
  },
});
const charge = defineTool({
  name: 'charge',
  description: 'Charges the card',
  inputSchema: { type: 'object', properties: { cents: { type: 'number' } }, required: ['cents'] },
  execute: async ({ cents }, context) => {
    await jitter();
    await applyEffect(context.idempotencyKey);
    return { charged: cents };
  },
});

// misconfigured for every run: its key is rejected (the shared breaker's business)
const crmSync = defineTool({
  name: 'crm_sync',
  description: 'Syncs the CRM',
  inputSchema: { type: 'object', properties: {} },
  execute: async (_args, context) => {
    log({ crm: context.idempotencyKey });
    await jitter();
    throw new ToolError({ kind: 'misconfigured', status: 401, message: 'API key rejected' });
  },
});

const stores = await createPostgresStores({ connectionString: config.postgresUrl, schema: config.schema, maxConnections: 4 });
await pool.query(`CREATE TABLE IF NOT EXISTS "${config.schema}".effects (key text PRIMARY KEY, executions integer NOT NULL)`);
const agent = createDbosAgent({
  dbos: DBOS,
  model,
  tools: [book, charge, crmSync],
  stores,
  onEvent: (event) => {
    if (event.type === 'breaker-open') log({ breakerOpen: event.toolName, executor: DBOS.executorID });
  },
  toolRetryBudget: 2,
  ...(config.maxRecoveryAttempts !== undefined ? { maxRecoveryAttempts: config.maxRecoveryAttempts } : {}),
});
DBOS.setConfig({ name: 'toolrun-dbos-crash', systemDatabaseUrl: config.systemDatabaseUrl, logLevel: 'error' });
await DBOS.launch();
log({ launched: true });

const runIds: string[] = [];
for (const message of config.messages) {
  const runId = `run_${message.id}`;
  const existing = await DBOS.retrieveWorkflow(runId).getStatus();
  if (existing) {
    runIds.push(runId);
    continue;
  }
  const started = await agent.start(message);
  if (started.status === 'started') runIds.push(started.runId);
}
log({ started: runIds.length });

const ended = new Set(['SUCCESS', 'ERROR', 'MAX_RECOVERY_ATTEMPTS_EXCEEDED', 'CANCELLED']);
while (!config.serve) {
  const statuses = await DBOS.listWorkflows({ workflowIDs: runIds });
  if (statuses.length === runIds.length && statuses.every((status) => ended.has(status.status))) break;
  await new Promise((resolve) => setTimeout(resolve, 100));
}
if (config.serve) {
  await new Promise((resolve) => process.once('SIGTERM', resolve));
}
log({ done: true });
await DBOS.shutdown();
await stores.close();
await pool.end();
await systemPool.end();
process.exit(0);
