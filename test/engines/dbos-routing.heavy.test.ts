/**
 * toolrun inside DBOS Transact, on a real DBOS (its system database on the test PostgreSQL) with
 * toolrun's PostgreSQL stores: the routing cases of the seed, and replay as DBOS's fork of the
 * workflow from the failed step. (A worker killed mid-run: dbos-crash.heavy.test.ts.)
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/core/define-tool.ts';
import { ToolError } from '../../src/core/tool-error.ts';
import { createDbosAgent, createDbosReplayer, replayDbosRun, sweepDbosGaveUp, type DbosAgent } from '../../src/engines/dbos/index.ts';
import type { RunJournal } from '../../src/ground/ports/run-journal.ts';
import { drainToolDlq } from '../../src/worker/drain-tool-dlq.ts';
import { createDashboardApp } from '../../src/dashboard/index.ts';
import { createRedactor } from '../../src/core/redact.ts';
import { createPostgresStores, type PostgresStores } from '../../src/stores/postgres/index.ts';
import type { WorkerEvent } from '../../src/worker/worker-events.ts';
import { createTestPool, dropSchema, POSTGRES_URL, uniqueName } from '../fixtures/distributed-services.ts';
import { createTestAgent, CUSTOMER_EMAIL, dbosDatabaseUrl, dropDatabase } from './dbos-fixtures.ts';

const database = dbosDatabaseUrl();
const schema = uniqueName('dbos_routing_');
let stores: PostgresStores;
let agent: DbosAgent;
let crmAgent: DbosAgent;
let waitAgent: DbosAgent;
let flakyAgent: DbosAgent;
let storesDown = false;
const quoteCalls: number[] = [];
let fixed = false;
const events: WorkerEvent[] = [];
let gate: Promise<void> = Promise.resolve();
const test = createTestAgent({ fixed: () => fixed, gate: () => gate });
const crmCalls: string[] = [];

beforeAll(async () => {
  stores = await createPostgresStores({ connectionString: POSTGRES_URL, schema });
  agent = createDbosAgent({ dbos: DBOS, model: test.model, tools: test.tools, stores, toolRetryBudget: 2, onEvent: (event) => events.push(event) });
  // a tool misconfigured for every run: its key is rejected
  const crm = defineTool({
    name: 'crm_sync',
    description: 'Syncs the CRM',
    inputSchema: { type: 'object', properties: {} },
    execute: async (_args, context) => {
      crmCalls.push(context.idempotencyKey);
      throw new ToolError({ kind: 'misconfigured', status: 401, message: 'API key rejected' });
    },
  });
  crmAgent = createDbosAgent({
    dbos: DBOS,
    name: 'toolrun.crm-agent',
    model: async (request) => ({ toolCalls: [{ id: `k${request.stepIndex}`, name: 'crm_sync', args: '{}' }], usage: { input: 50, output: 5 } }),
    tools: [crm],
    stores,
    onEvent: (event) => events.push(event),
  });
  // a rate limit whose Retry-After does not fit the runtime's call budget: the workflow waits, durably
  const quote = defineTool({
    name: 'quote',
    description: 'Quotes a fare',
    inputSchema: { type: 'object', properties: {} },
    execute: async () => {
      quoteCalls.push(Date.now());
      if (quoteCalls.length === 1) throw new ToolError({ kind: 'rate_limit', status: 429, message: 'slow down', retryAfterMs: 1500 });
      return { fare: 129 };
    },
  });
  waitAgent = createDbosAgent({
    dbos: DBOS,
    name: 'toolrun.wait-agent',
    model: async (request) =>
      request.stepIndex === 0
        ? { toolCalls: [{ id: 'q0', name: 'quote', args: '{}' }], usage: { input: 40, output: 4 } }
        : { text: 'fare 129', usage: { input: 60, output: 4 } },
    tools: [quote],
    runtimeOptions: { callBudgetMs: 500 },
    stores,
  });
  // toolrun's stores out while a run is dead-lettered, past the dead-letter step's retries
  const journal = stores.journal;
  const flakyJournal: RunJournal = {
    open: (...args) => journal.open(...args),
    recorded: (...args) => journal.recorded(...args),
    record: (...args) => journal.record(...args),
    forget: (...args) => journal.forget(...args),
    commit: (...args) => journal.commit(...args),
    finish: async (...args) => {
      if (storesDown) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      return journal.finish(...args);
    },
    renew: (...args) => journal.renew(...args),
    release: (...args) => journal.release(...args),
    recordDeliveryError: (...args) => journal.recordDeliveryError(...args),
    lastDeliveryError: (...args) => journal.lastDeliveryError(...args),
    markDeadLettered: (...args) => journal.markDeadLettered(...args),
    deadLettered: (...args) => journal.deadLettered(...args),
    conversation: (...args) => journal.conversation(...args),
    putConversation: (...args) => journal.putConversation(...args),
    markCompleted: (...args) => journal.markCompleted(...args),
    completion: (...args) => journal.completion(...args),
  };
  flakyAgent = createDbosAgent({
    dbos: DBOS,
    name: 'toolrun.flaky-agent',
    model: test.model,
    tools: test.tools,
    stores: { ...stores, journal: flakyJournal },
    storeStepRetry: { maxAttempts: 2, intervalSeconds: 0.1 },
  });
  DBOS.setConfig({ name: 'toolrun-dbos-routing', systemDatabaseUrl: database.url, logLevel: 'error' });
  await DBOS.launch();
}, 60_000);

afterAll(async () => {
  await DBOS.shutdown();
  await stores?.close();
  const pool = createTestPool({ max: 1 });
  await dropSchema(pool, schema);
  await pool.end();
  await dropDatabase(database.name);
}, 60_000);

const body = (input: string, extra: Record<string, unknown> = {}) => JSON.stringify({ input, ...extra });

describe('toolrun inside DBOS: the routing cases', () => {
  it('1. a malformed message goes to the message DLQ at once: no workflow, the model never called', async () => {
    const started = await agent.start({ id: 'm-1', body: '{not json' });
    expect(started.status).toBe('rejected');
    const messageEntries = await stores.messageDlq.list();
    expect(messageEntries).toHaveLength(1);
    expect(messageEntries[0]!.entry).toMatchObject({ kind: 'message', rawBody: '{not json', messageId: 'm-1', reason: { code: 'MALFORMED_JSON' } });
    expect(await stores.toolDlq.list()).toHaveLength(0);
    expect(test.modelCalls.size).toBe(0);
    expect(await DBOS.listWorkflows({ workflowName: agent.name })).toHaveLength(0);
    // delivered again: still one entry
    await agent.start({ id: 'm-1', body: '{not json' });
    expect(await stores.messageDlq.list()).toHaveLength(1);
  });

  it('2. a transient failure with budget left is handled in-band: the tool runs twice, the run completes, neither DLQ', async () => {
    const result = await agent.run({ id: 'm-2', body: body('book HAT001 fail-once') });
    expect(result).toMatchObject({ status: 'completed', runId: 'run_m-2', workflowId: 'run_m-2', steps: 3 });
    expect(test.executions.get('run_m-2:0:0:failed')).toBe(1);
    expect(test.executions.get('run_m-2:0:0')).toBe(1);
    expect(test.effects.get('run_m-2:1:0')).toBe(1);
    expect(await stores.toolDlq.list()).toHaveLength(0);
    expect(await stores.messageDlq.list()).toHaveLength(1); // case 1's only
    // the calls are DBOS steps of the run's workflow
    const steps = (await DBOS.listWorkflowSteps('run_m-2'))!.map((step) => step.name);
    expect(steps).toEqual(['toolrun.model:0', 'toolrun.tool:0:0', 'toolrun.model:1', 'toolrun.tool:1:0', 'toolrun.model:2']);
  });

  it('3. exhausted in-band recovery: one tool-DLQ entry with resumable state and no PII, pointing at the workflow', async () => {
    const result = await agent.run({ id: 'm-3', body: body(`book HAT001 always-503, my e-mail is ${CUSTOMER_EMAIL}`) });
    expect(result?.status).toBe('tool_failed');
    const records = await stores.toolDlq.list();
    expect(records).toHaveLength(1);
    const entry = records[0]!.entry;
    expect(entry).toMatchObject({
      kind: 'tool',
      runId: 'run_m-3',
      toolName: 'book',
      attempts: 3,
      originalMessageId: 'dbos:run_m-3',
      reason: 'retry-budget-exhausted',
    });
    expect(entry.stepIndex).toBeGreaterThan(0);
    expect(entry.conversationRef).toMatch(/^conv_/);
    expect(entry.tokensSpent.input).toBeGreaterThan(0);
    expect(JSON.stringify(entry)).not.toContain(CUSTOMER_EMAIL);
    // resumable state: the conversation and the checkpoint are in toolrun's journal
    const opened = await stores.journal.open('run_m-3');
    expect(opened.claimed && opened.checkpoint?.status).toBe('tool_failed');
    expect(opened.claimed && opened.messages?.length).toBeGreaterThan(2);
    expect(await stores.messageDlq.list()).toHaveLength(1);
    expect(events.filter((event) => event.type === 'dead-letter-add' && event.queue === 'tool')).toHaveLength(1);
  });

  it('4. a tool misconfigured for every run: each run dead-lettered, the shared breaker open once — one alert for N runs', async () => {
    const before = (await stores.toolDlq.list()).length;
    // the first two runs meet the broken tool (the shared breaker opens at its second failure); the four after them, at once, meet the breaker
    const first = [await crmAgent.run({ id: 'crm-0', body: body('sync the CRM') }), await crmAgent.run({ id: 'crm-1', body: body('sync the CRM') })];
    expect(crmCalls).toHaveLength(2);
    const others = await Promise.all(Array.from({ length: 4 }, (_, index) => crmAgent.run({ id: `crm-${index + 2}`, body: body('sync the CRM') })));
    const runs = [...first, ...others];
    expect(runs.map((run) => run?.status)).toEqual(Array(6).fill('tool_failed'));
    const entries = (await stores.toolDlq.list()).slice(before).map((record) => record.entry);
    expect(entries).toHaveLength(6);
    expect(entries.every((entry) => entry.kind === 'tool' && (entry.reason === 'misconfiguration' || entry.reason === 'circuit-open'))).toBe(true);
    expect(events.filter((event) => event.type === 'breaker-open')).toHaveLength(1);
    // the breaker is in toolrun's PostgreSQL stores: another executor (another stores instance) reads it open
    const other = await createPostgresStores({ connectionString: POSTGRES_URL, schema });
    try {
      expect(((await other.breakers.get('crm_sync')) as { state?: string } | undefined)?.state).toBe('open');
    } finally {
      await other.close();
    }
    expect(crmCalls).toHaveLength(2); // the runs after the opening never called the tool
    expect(entries.map((entry) => (entry.kind === 'tool' ? entry.reason : entry.kind))).toEqual([
      'misconfiguration',
      'misconfiguration',
      ...Array(4).fill('circuit-open'),
    ]);
  });

  it('replay forks the workflow from the failed step: the model is called only for the remaining steps; twice is once', async () => {
    const result = await agent.run({ id: 'm-5', body: body('book HAT001 broken-until-fixed') });
    expect(result?.status).toBe('tool_failed');
    const record = (await stores.toolDlq.list()).find((candidate) => candidate.entry.runId === 'run_m-5')!;
    const modelCallsBefore = test.modelCalls.get('run_m-5')!;
    fixed = true;
    const replayed = await replayDbosRun(record.entry, { control: DBOS, stores });
    expect(replayed).toMatchObject({ status: 'completed', workflowId: 'run_m-5:replay:1', text: 'Booked HAT001 and charged 129.00' });
    // remaining: the charge step's model turn and the answer
    expect(replayed.modelCalls).toBe(2);
    expect(test.modelCalls.get('run_m-5')! - modelCallsBefore).toBe(2);
    const failedStep = record.entry.stepIndex;
    expect(test.effects.get(`run_m-5:${failedStep}:0`)).toBe(1);
    expect(test.executions.get(`run_m-5:${failedStep}:0`)).toBe(1);
    // the same entry again: nothing run, nothing repeated
    const again = await replayDbosRun(record.entry, { control: DBOS, stores });
    expect(again.status).toBe('already_completed');
    expect(test.modelCalls.get('run_m-5')! - modelCallsBefore).toBe(2);
    expect([...test.executions].filter(([key]) => key.startsWith('run_m-5:')).every(([, count]) => count === 1)).toBe(true);
    const opened = await stores.journal.open('run_m-5');
    expect(opened.claimed && opened.checkpoint?.status).toBe('completed');
  });

  it('`toolrun dlq replay` and the drain route a DBOS entry to the fork, unchanged', async () => {
    fixed = false;
    for (const id of ['m-6', 'm-7']) expect((await agent.run({ id, body: body('book HAT001 broken-until-fixed') }))?.status).toBe('tool_failed');
    fixed = true;
    const recordOf = async (runId: string) => (await stores.toolDlq.list({ limit: 1000 })).find((record) => record.entry.runId === runId);
    const cliRecord = (await recordOf('run_m-6'))!;
    // the CLI process has no DBOS of its own: its config's DBOSClient forks, this process's DBOS runs the fork
    const repo = fileURLToPath(new URL('../..', import.meta.url));
    const store = Object.assign(new URL(POSTGRES_URL), { search: `?schema=${schema}` }).toString();
    const cli = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'src/cli/index.ts', 'dlq', 'replay', cliRecord.id, '--store', store, '--config', 'examples/dbos/toolrun.config.ts', '--json'],
        { cwd: repo, env: { ...process.env, DBOS_SYSTEM_DATABASE_URL: database.url, TOOLRUN_DB: '', TOOLRUN_CONFIG: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const bound = setTimeout(() => child.kill('SIGKILL'), 90_000);
      child.on('close', (code) => {
        clearTimeout(bound);
        resolve({ code, stdout, stderr });
      });
    });
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ status: 'completed', runId: 'run_m-6' });
    expect(await recordOf('run_m-6')).toBeUndefined();
    expect((await DBOS.retrieveWorkflow('run_m-6:replay:1').getStatus())?.status).toBe('SUCCESS');

    const report = await drainToolDlq({ stores, hosts: { dbos: createDbosReplayer({ control: DBOS }) }, model: test.model, tools: test.tools });
    expect(report.entries.find((result) => result.runId === 'run_m-7')).toMatchObject({ status: 'completed', host: 'dbos' });
    expect(await recordOf('run_m-7')).toBeUndefined();
    // the runs whose tools are still broken were forked again, failed again, and stay
    expect(await recordOf('run_m-3')).toBeDefined();
    for (const runId of ['run_m-6', 'run_m-7']) {
      const calls = [...test.executions].filter(([key]) => key.startsWith(`${runId}:`));
      expect(calls.length).toBe(2);
      expect(calls.every(([, count]) => count === 1)).toBe(true);
    }
  }, 120_000);

  it('a Retry-After longer than the call budget is waited for by DBOS (a durable sleep), then the step again', async () => {
    const result = await waitAgent.run({ id: 'w-1', body: body('quote a fare') });
    expect(result).toMatchObject({ status: 'completed', text: 'fare 129' });
    expect(quoteCalls).toHaveLength(2);
    expect(quoteCalls[1]! - quoteCalls[0]!).toBeGreaterThanOrEqual(1400);
    const steps = (await DBOS.listWorkflowSteps('run_w-1'))!.map((step) => step.name);
    expect(steps).toEqual(['toolrun.model:0', 'toolrun.tool:0:0', 'DBOS.sleep', 'toolrun.tool:0:0', 'toolrun.model:1']);
  });

  it('a workflow that threw (the stores out past its retries) is swept into the tool DLQ; its replay forks from the step that threw', async () => {
    storesDown = true;
    await expect(flakyAgent.run({ id: 'e-1', body: body('book HAT001 always-503') })).rejects.toThrow(/ECONNREFUSED/);
    expect((await DBOS.retrieveWorkflow('run_e-1').getStatus())?.status).toBe('ERROR');
    const entriesOf = async () => (await stores.toolDlq.list({ limit: 1000 })).filter((record) => record.entry.runId === 'run_e-1');
    expect(await entriesOf()).toHaveLength(0);
    expect(await sweepDbosGaveUp({ control: DBOS, stores, name: 'toolrun.flaky-agent' })).toEqual({ messageDlq: 0, toolDlq: 1 });
    const [swept] = await entriesOf();
    expect(swept!.entry).toMatchObject({ kind: 'run', runId: 'run_e-1', originalMessageId: 'dbos:run_e-1', lastError: { kind: 'exception' } });
    expect(swept!.entry.lastError.message).toContain('ECONNREFUSED');
    storesDown = false;
    const replayed = await replayDbosRun(swept!.entry, { control: DBOS, stores });
    // the fork went on from the step that threw, with a replay's fresh budget; the tool still fails: the run's own entry now
    expect(replayed).toMatchObject({ status: 'tool_failed', workflowId: 'run_e-1:replay:1' });
    expect((await entriesOf()).map((record) => record.entry.kind).sort()).toEqual(['run', 'tool']);
  });

  it("the dashboard's replay of a DBOS entry is the fork too", async () => {
    fixed = false;
    expect((await agent.run({ id: 'm-8', body: body('book HAT001 broken-until-fixed') }))?.status).toBe('tool_failed');
    fixed = true;
    const record = (await stores.toolDlq.list({ limit: 1000 })).find((candidate) => candidate.entry.runId === 'run_m-8')!;
    const token = 'dashboard-token-0123456789';
    const dashboard = createDashboardApp({
      source: {
        stores,
        label: 'postgres',
        redactor: createRedactor(),
        replay: { model: test.model, tools: test.tools, stores, hosts: { dbos: createDbosReplayer({ control: DBOS }) } },
      },
      token,
      sampleIntervalMs: 60_000,
    });
    try {
      const response = await dashboard.app.fetch(
        new Request(`http://127.0.0.1:4319/api/tool/entries/${record.id}/replay`, {
          method: 'POST',
          headers: { host: '127.0.0.1:4319', authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: '{}',
        }),
      );
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ type: 'replay', state: 'done', removed: 1, outcomes: { completed: 1 } });
    } finally {
      await dashboard.close();
    }
    expect((await stores.toolDlq.list({ limit: 1000 })).find((candidate) => candidate.entry.runId === 'run_m-8')).toBeUndefined();
    expect((await DBOS.retrieveWorkflow('run_m-8:replay:1').getStatus())?.status).toBe('SUCCESS');
    expect([...test.executions].filter(([key]) => key.startsWith('run_m-8:')).every(([, count]) => count === 1)).toBe(true);
  });

  it('a replay waits for the fork a bounded time: past it `in_progress`, and a later replay reports the outcome', async () => {
    fixed = false;
    expect((await agent.run({ id: 'm-9', body: body('book HAT001 broken-until-fixed') }))?.status).toBe('tool_failed');
    fixed = true;
    let open = () => undefined as void;
    gate = new Promise<void>((resolve) => (open = resolve));
    const record = (await stores.toolDlq.list({ limit: 1000 })).find((candidate) => candidate.entry.runId === 'run_m-9')!;
    expect(await replayDbosRun(record.entry, { control: DBOS, stores, waitMs: 300 })).toMatchObject({ status: 'in_progress', workflowId: 'run_m-9:replay:1' });
    // the fork is running: another replay forks nothing
    expect(await replayDbosRun(record.entry, { control: DBOS, stores, waitMs: 300 })).toMatchObject({ status: 'in_progress', workflowId: 'run_m-9:replay:1' });
    open();
    gate = Promise.resolve();
    expect(await DBOS.retrieveWorkflow<{ status: string }>('run_m-9:replay:1').getResult()).toMatchObject({ status: 'completed' });
    expect(await replayDbosRun(record.entry, { control: DBOS, stores })).toMatchObject({ status: 'already_completed' });
    expect(await DBOS.retrieveWorkflow('run_m-9:replay:2').getStatus()).toBeNull();
    expect([...test.executions].filter(([key]) => key.startsWith('run_m-9:')).every(([, count]) => count === 1)).toBe(true);
  });
});
