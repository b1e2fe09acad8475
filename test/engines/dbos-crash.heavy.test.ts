/**
 * toolrun inside DBOS with the worker process killed (SIGKILL): a child process (dbos-worker-child.ts)
 * runs the DBOS worker; the test kills it and starts another, which DBOS's recovery hands the
 * unfinished workflows to. Checked from outside with a `DBOSClient`, toolrun's PostgreSQL stores
 * and the children's logs:
 * - killed mid-run: the run resumes from its last recorded step, neither DLQ, no side effect twice;
 * - killed at random points over 200 runs: every run in exactly one place, each side effect at most
 *   once per (run, step, call);
 * - a poison message DBOS gives up on lands in the right DLQ, and its replay resumes it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DBOS, DBOSClient } from '@dbos-inc/dbos-sdk';
import { afterAll, describe, expect, it } from 'vitest';
import type { DbosRunResult } from '../../src/engines/dbos/index.ts';
import { replayDbosRun, sweepDbosGaveUp } from '../../src/engines/dbos/index.ts';
import { createPostgresStores, type PostgresStores } from '../../src/stores/postgres/index.ts';
import { createTestPool, dropSchema, POSTGRES_URL, uniqueName } from '../fixtures/distributed-services.ts';
import { dbosDatabaseUrl, dropDatabase } from './dbos-fixtures.ts';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const childScript = join(repo, 'test', 'engines', 'dbos-worker-child.ts');
const directory = mkdtempSync(join(tmpdir(), 'toolrun-dbos-crash-'));
const admin = createTestPool({ max: 2 });
const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => undefined);
  await admin.end();
  rmSync(directory, { recursive: true, force: true });
}, 120_000);

interface Setup {
  systemDatabaseUrl: string;
  schema: string;
  logPath: string;
  stores: PostgresStores;
  client: DBOSClient;
}

async function setUp(name: string): Promise<Setup> {
  const database = dbosDatabaseUrl();
  const schema = uniqueName(`dbos_${name}_`);
  const stores = await createPostgresStores({ connectionString: POSTGRES_URL, schema, maxConnections: 4 });
  await admin.query(`CREATE TABLE IF NOT EXISTS "${schema}".effects (key text PRIMARY KEY, executions integer NOT NULL)`);
  const logPath = join(directory, `${name}.log`);
  writeFileSync(logPath, '');
  const setup: Setup = { systemDatabaseUrl: database.url, schema, logPath, stores, client: undefined as unknown as DBOSClient };
  cleanup.push(async () => {
    await setup.client?.destroy();
    await stores.close();
    await dropSchema(admin, schema);
    await dropDatabase(database.name);
  });
  return setup;
}

interface Child {
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
  kill(signal?: NodeJS.Signals): void;
}

function startChild(setup: Setup, extra: Record<string, unknown>, executorId = 'local'): Child {
  const config = { systemDatabaseUrl: setup.systemDatabaseUrl, postgresUrl: POSTGRES_URL, schema: setup.schema, logPath: setup.logPath, ...extra };
  const child = spawn(process.execPath, ['--import', 'tsx', childScript, JSON.stringify(config)], {
    cwd: repo,
    env: { ...process.env, DBOS__VMID: executorId },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 20_000) stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { exited, kill: (signal = 'SIGKILL') => child.kill(signal) };
}

/** Runs children until one exits by itself (each within `boundMs`). */
async function runToEnd(setup: Setup, extra: Record<string, unknown>, boundMs = 90_000): Promise<number> {
  for (let started = 1; started <= 8; started++) {
    const child = startChild(setup, extra);
    const timer = setTimeout(() => child.kill(), boundMs);
    const exit = await child.exited;
    clearTimeout(timer);
    if (exit.code === 0) return started;
    if (exit.signal !== 'SIGKILL') throw new Error(`the worker failed (${exit.code}): ${exit.stderr}`);
  }
  throw new Error('the worker was killed 8 times');
}

const readLog = (setup: Setup) =>
  readFileSync(setup.logPath, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as { pid: number; model?: string; step?: number; effect?: string; crm?: string; breakerOpen?: string; executor?: string });

async function effectsOf(setup: Setup): Promise<Map<string, number>> {
  const { rows } = await admin.query<{ key: string; executions: number }>(`SELECT key, executions FROM "${setup.schema}".effects`);
  return new Map(rows.map((row) => [row.key, row.executions]));
}

const RUN_STEPS = ['toolrun.model:0', 'toolrun.tool:0:0', 'toolrun.model:1', 'toolrun.tool:1:0', 'toolrun.model:2'];

describe('toolrun inside DBOS, the worker killed', () => {
  it('5. killed mid-run: DBOS resumes the run from its last step, neither DLQ, no side effect twice', async () => {
    const setup = await setUp('killed');
    setup.client = await DBOSClient.create({ systemDatabaseUrl: setup.systemDatabaseUrl });
    const marker = join(directory, 'killed.marker');
    const children = await runToEnd(setup, {
      messages: [{ id: 'k1', body: JSON.stringify({ input: 'book HAT001 kill' }) }],
      killInModel: { word: 'kill', stepIndex: 1, marker },
    });
    expect(children).toBe(2);
    const result = await setup.client.retrieveWorkflow<DbosRunResult>('run_k1').getResult();
    expect(result).toMatchObject({ status: 'completed', text: 'done', steps: 3 });
    expect((await setup.client.listWorkflowSteps('run_k1'))!.map((step) => step.name)).toEqual(RUN_STEPS);
    const log = readLog(setup);
    const pids = [...new Set(log.map((line) => line.pid))];
    expect(pids).toHaveLength(2);
    // step 0 (model and book) ran once, in the first process; the model call of step 1 was cut and made again
    expect(log.filter((line) => line.model === 'run_k1').map((line) => [pids.indexOf(line.pid), line.step])).toEqual([
      [0, 0],
      [0, 1],
      [1, 1],
      [1, 2],
    ]);
    expect(await effectsOf(setup)).toEqual(
      new Map([
        ['run_k1:0:0', 1],
        ['run_k1:1:0', 1],
      ]),
    );
    expect(await setup.stores.toolDlq.list()).toHaveLength(0);
    expect(await setup.stores.messageDlq.list()).toHaveLength(0);
  }, 180_000);

  it('a poison message DBOS gives up on lands in the right DLQ; replaying it resumes the workflow', async () => {
    const setup = await setUp('poison');
    setup.client = await DBOSClient.create({ systemDatabaseUrl: setup.systemDatabaseUrl });
    const cured = join(directory, 'poison.cured');
    const messages = [
      { id: 'p0', body: JSON.stringify({ input: 'book HAT001 poison-0' }) },
      { id: 'p1', body: JSON.stringify({ input: 'book HAT001 poison-1' }) },
    ];
    await runToEnd(setup, { messages, maxRecoveryAttempts: 1, poisonCuredBy: cured, poisonWaitsFor: { workflowId: 'run_p1', stepName: 'toolrun.tool:0:0' } });
    for (const runId of ['run_p0', 'run_p1']) expect((await setup.client.retrieveWorkflow(runId).getStatus())?.status).toBe('MAX_RECOVERY_ATTEMPTS_EXCEEDED');
    // swept from outside any DBOS process, twice: the second adds nothing
    expect(await sweepDbosGaveUp({ control: setup.client, stores: setup.stores })).toEqual({ messageDlq: 1, toolDlq: 1 });
    expect(await sweepDbosGaveUp({ control: setup.client, stores: setup.stores })).toEqual({ messageDlq: 0, toolDlq: 0 });
    const messageEntries = await setup.stores.messageDlq.list();
    expect(messageEntries.map((record) => record.entry)).toMatchObject([{ messageId: 'p0', reason: { code: 'DELIVERY_LIMIT_EXCEEDED' } }]);
    const toolEntries = await setup.stores.toolDlq.list();
    expect(toolEntries.map((record) => record.entry)).toMatchObject([
      { kind: 'run', runId: 'run_p1', stepIndex: 1, originalMessageId: 'dbos:run_p1', reason: 'delivery-limit-exceeded' },
    ]);
    // fixed; a worker serves; the replay (from this process, through the client) resumes the workflow
    writeFileSync(cured, 'cured');
    const worker = startChild(setup, { messages: [], serve: true, poisonCuredBy: cured });
    try {
      const replayed = await replayDbosRun(toolEntries[0]!.entry, { control: setup.client, stores: setup.stores });
      expect(replayed).toMatchObject({ status: 'completed', text: 'done' });
      expect(await effectsOf(setup)).toEqual(
        new Map([
          ['run_p1:0:0', 1],
          ['run_p1:1:0', 1],
        ]),
      );
    } finally {
      worker.kill('SIGTERM');
      await worker.exited;
    }
  }, 180_000);

  it('killed at random points over 200 runs: every run in exactly one place, each side effect at most once', async () => {
    const setup = await setUp('storm');
    const startedAt = Date.now();
    const messages = Array.from({ length: 200 }, (_, index) => {
      const id = `s${index}`;
      if (index % 20 === 7) return { id, body: `{broken ${index}` }; // malformed: message DLQ
      if (index % 20 === 13) return { id, body: JSON.stringify({ input: 'book HAT001 always-503' }) }; // exhausted: tool DLQ
      return { id, body: JSON.stringify({ input: 'book HAT001' }) };
    });
    let kills = 0;
    let finished = false;
    for (let round = 0; round < 40 && !finished; round++) {
      const child = startChild(setup, { messages });
      // killed mid-run: once the child has logged a random 2–60 more lines (model calls, side effects) than before it started
      const from = statSync(setup.logPath).size;
      const killAtBytes = kills < 10 ? from + 80 * (2 + Math.floor(Math.random() * 59)) : undefined;
      const watch =
        killAtBytes !== undefined
          ? setInterval(() => {
              if (statSync(setup.logPath).size >= killAtBytes) child.kill();
            }, 5)
          : undefined;
      const bound = setTimeout(() => child.kill(), 120_000);
      const exit = await child.exited;
      clearInterval(watch);
      clearTimeout(bound);
      if (exit.code === 0) finished = true;
      else if (exit.signal === 'SIGKILL') kills += 1;
      else throw new Error(`the worker failed (${exit.code}): ${exit.stderr}`);
    }
    expect(kills).toBe(10);
    expect(finished).toBe(true);
    const elapsedMs = Date.now() - startedAt;
    setup.client = await DBOSClient.create({ systemDatabaseUrl: setup.systemDatabaseUrl });

    const messageEntries = (await setup.stores.messageDlq.list({ limit: 1000 })).map((record) => record.entry);
    const toolEntries = (await setup.stores.toolDlq.list({ limit: 1000 })).map((record) => record.entry);
    const workflows = await setup.client.listWorkflows({ workflowName: 'toolrun.agent', loadOutput: true });
    const completed = workflows.filter((workflow) => workflow.status === 'SUCCESS' && (workflow.output as DbosRunResult).status === 'completed');
    const places = new Map<string, string[]>();
    const put = (messageId: string, place: string) => places.set(messageId, [...(places.get(messageId) ?? []), place]);
    for (const entry of messageEntries) put(entry.messageId!, 'message-dlq');
    for (const entry of toolEntries) put(entry.runId.replace(/^run_/, ''), 'tool-dlq');
    for (const workflow of completed) put(workflow.workflowID.replace(/^run_/, ''), 'completed');
    expect(messages.filter((message) => (places.get(message.id) ?? []).length !== 1).map((message) => [message.id, places.get(message.id)])).toEqual([]);
    expect(messageEntries).toHaveLength(10);
    expect(toolEntries).toHaveLength(10);
    expect(completed).toHaveLength(180);
    expect(workflows.filter((workflow) => workflow.status !== 'SUCCESS')).toEqual([]);

    // each side effect once per (run, step, call): exactly the completed runs' two calls, none other
    const effects = await effectsOf(setup);
    const expected = completed.flatMap((workflow) => [`${workflow.workflowID}:0:0`, `${workflow.workflowID}:1:0`]).sort();
    expect([...effects.keys()].sort()).toEqual(expected);
    for (const workflow of completed.slice(0, 20))
      expect((await setup.client.listWorkflowSteps(workflow.workflowID))!.map((step) => step.name)).toEqual(RUN_STEPS);
    const executedAgain = [...effects.values()].filter((executions) => executions > 1).length;
    console.log(
      JSON.stringify({
        runs: 200,
        kills,
        elapsedMs,
        completed: completed.length,
        toolDlq: toolEntries.length,
        messageDlq: messageEntries.length,
        callsExecutedAgain: executedAgain,
      }),
    );
  }, 300_000);

  it('a tool misconfigured for every run, on two DBOS executors: one shared breaker, one alert for N runs', async () => {
    const setup = await setUp('breaker');
    // two executors launching at once on a new system database race in DBOS's own migration: migrate first
    await DBOS.migrate(setup.systemDatabaseUrl);
    const messagesOf = (prefix: string) =>
      Array.from({ length: 10 }, (_, index) => ({ id: `${prefix}${index}`, body: JSON.stringify({ input: 'sync the crm' }) }));
    // executor A meets the broken tool first (the shared breaker opens at its second failure) ...
    const opening = await startChild(setup, { messages: messagesOf('a').slice(0, 2) }, 'executor-a').exited;
    expect([opening.code, opening.code === 0 ? '' : opening.stderr]).toEqual([0, '']);
    // ... then both executors at once, with the rest of the runs
    const executors = [startChild(setup, { messages: messagesOf('a').slice(2) }, 'executor-a'), startChild(setup, { messages: messagesOf('b') }, 'executor-b')];
    const exits = await Promise.all(executors.map((child) => child.exited));
    expect(exits.map((exit) => [exit.code, exit.code === 0 ? '' : exit.stderr])).toEqual([
      [0, ''],
      [0, ''],
    ]);
    setup.client = await DBOSClient.create({ systemDatabaseUrl: setup.systemDatabaseUrl });
    const workflows = await setup.client.listWorkflows({ workflowName: 'toolrun.agent' });
    expect(new Set(workflows.map((workflow) => workflow.executorId))).toEqual(new Set(['executor-a', 'executor-b']));
    const entries = (await setup.stores.toolDlq.list({ limit: 100 })).map((record) => record.entry);
    expect(entries).toHaveLength(20);
    const reasons = entries.map((entry) => (entry.kind === 'tool' ? entry.reason : entry.kind));
    expect(reasons.filter((reason) => reason === 'misconfiguration')).toHaveLength(2);
    expect(reasons.filter((reason) => reason === 'circuit-open')).toHaveLength(18);
    const log = readLog(setup);
    // one alert for the 20 runs of both executors; the 18 runs after the opening, on either executor, never called the tool
    expect(log.filter((line) => line.breakerOpen !== undefined)).toHaveLength(1);
    expect(log.filter((line) => line.crm !== undefined)).toHaveLength(2);
  }, 180_000);
});
