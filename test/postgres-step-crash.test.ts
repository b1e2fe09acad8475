/**
 * Crashes inside the step commits of the PostgreSQL backend. A child process runs one agent run (a
 * tool call at step 0, two parallel calls at step 1, an answer at step 2) on a fresh schema and
 * dies at a chosen point:
 * - killed (SIGKILL) right before its k-th query, for every k from the first to past the last;
 * - killed (SIGKILL) while a step commit is in the middle of its transaction (the chunk and the
 *   ledger rows written, the checkpoint not yet: a trigger the test installs stalls it there), its
 *   server connection then dropped (`pg_terminate_backend`), for every commit of the run.
 * The test process then resumes the run from whatever the schema holds and checks, every time:
 * - the run completes, with the conversation an uninterrupted run has;
 * - no tool call whose ledger row was committed before the crash runs again, and a call runs twice
 *   only when the crash came after its side effect and before the commit holding its row (the one
 *   documented window);
 * - the schema is never half-way through a step: the checkpoint and the conversation agree, and a
 *   commit cut inside its transaction left none of its rows.
 * Each child logs what it does with synchronous writes (they survive SIGKILL): every query before
 * it is sent and after it is answered, every side effect, every model call.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runAgent } from '../src/agent/run-agent.ts';
import type { ChatMessage, Model } from '../src/agent/messages.ts';
import type { defineTool } from '../src/core/define-tool.ts';
import { createPostgresStores } from '../src/stores/postgres/index.ts';
import { comparableConversation, spawnCrashChild, type CrashChild } from './fixtures/crash-child.ts';
import { createTestPool, dropSchema, POSTGRES_URL, uniqueName } from './fixtures/distributed-services.ts';

const repo = fileURLToPath(new URL('..', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'toolrun-pg-step-crash-'));
const admin = createTestPool({ max: 4 });
const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) await dropSchema(admin, schema);
  await admin.end();
  rmSync(directory, { recursive: true, force: true });
});

/** The agent of both processes: its model and tool log to `log(line)`. */
const agentSource = (srcRoot: string) => `
import { defineTool } from '${srcRoot}/core/define-tool.ts';
export const responses = [
  { toolCalls: [{ id: 'c0', name: 'effect', args: '{"n":0}' }], usage: { input: 10, output: 1 } },
  { toolCalls: [{ id: 'c1', name: 'effect', args: '{"n":1}' }, { id: 'c2', name: 'effect', args: '{"n":2}' }], usage: { input: 20, output: 2 } },
  { text: 'done', usage: { input: 30, output: 3 } },
];
export function createAgent(log) {
  const model = async (request) => {
    log({ model: request.stepIndex });
    return responses[request.stepIndex];
  };
  const tool = defineTool({
    name: 'effect',
    description: 'A side effect',
    inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
    execute: async ({ n }, context) => {
      await new Promise((resolve) => setTimeout(resolve, n));
      log({ effect: context.idempotencyKey });
      return { n, doubled: n * 2 };
    },
  });
  return { model, tools: [tool] };
}
`;

/** The child: kills itself right before its k-th query of the stores (0: never). */
const childSource = (srcRoot: string) => `
import { openSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createPostgresStores } from '${srcRoot}/stores/postgres/index.ts';
import { runAgent } from '${srcRoot}/agent/run-agent.ts';
import { createAgent } from './agent.mts';
const pg = createRequire('${srcRoot}/')('pg');
const [connectionString, schema, logPath, killAtText] = process.argv.slice(2);
const killAt = Number(killAtText);
const fd = openSync(logPath, 'a');
const log = (entry) => writeSync(fd, JSON.stringify(entry) + '\\n');
const pool = new pg.Pool({ connectionString, max: 3 });
pool.on('error', () => undefined);
const stores = await createPostgresStores({ pool, schema });
const query = pool.query.bind(pool);
let count = 0;
pool.query = (config, ...rest) => {
  count += 1;
  const statement = count;
  if (statement === killAt) process.kill(process.pid, 'SIGKILL');
  const text = typeof config === 'string' ? config : config.text;
  const commit = text.includes('.commit_step(');
  log({ statement, commit, ...(commit ? { keys: config.values[8] } : {}) });
  const answer = query(config, ...rest);
  return answer.then((result) => {
    log({ done: statement });
    return result;
  });
};
const { model, tools } = createAgent(log);
const result = await runAgent({
  model, tools, runId: 'run_1', messages: [{ role: 'user', content: 'go' }],
  persistence: { journal: stores.journal, messageId: 'm1' },
});
log({ finished: result.status, statements: count });
await stores.close();
await pool.end();
`;

type LogEntry = {
  statement?: number;
  commit?: boolean;
  keys?: string[];
  done?: number;
  effect?: string;
  model?: number;
  finished?: string;
  statements?: number;
};

const readLog = (path: string): LogEntry[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as LogEntry);

function runChild(childPath: string, schema: string, logPath: string, killAt: number): CrashChild {
  writeFileSync(logPath, '');
  return spawnCrashChild(childPath, [POSTGRES_URL, schema, logPath, String(killAt)], logPath);
}

const KEYS = ['run_1:0:0', 'run_1:1:0', 'run_1:1:1'];

describe('PostgreSQL step commits under SIGKILL and a dropped connection', () => {
  it('resumes every run to the same conversation; a committed tool call never runs again; a cut commit leaves nothing', { timeout: 900_000 }, async () => {
    const childFolder = join(directory, 'child');
    mkdirSync(childFolder, { recursive: true });
    const srcRoot = join(repo, 'src');
    writeFileSync(join(childFolder, 'agent.mts'), agentSource(srcRoot));
    writeFileSync(join(childFolder, 'child.mts'), childSource(srcRoot));
    const childPath = join(childFolder, 'child.mts');
    const { createAgent } = (await import(join(childFolder, 'agent.mts'))) as {
      createAgent: (log: (entry: LogEntry) => void) => { model: Model; tools: ReturnType<typeof defineTool>[] };
    };
    const newSchema = () => {
      const schema = uniqueName('toolrun_pgsteps_');
      schemas.push(schema);
      return schema;
    };

    // an uninterrupted run: the reference conversation and the number of queries
    const referenceSchema = newSchema();
    const referenceLog = join(directory, 'reference.log');
    expect(await runChild(childPath, referenceSchema, referenceLog, 0).ended).toBe('finished');
    const referenceEntries = readLog(referenceLog);
    const total = referenceEntries.find((entry) => entry.finished !== undefined)?.statements ?? 0;
    const commits = referenceEntries.filter((entry) => entry.commit === true).length;
    const referenceStores = await createPostgresStores({ pool: admin, schema: referenceSchema });
    const referenceRun = await referenceStores.runs.get('run_1');
    const reference = comparableConversation((await referenceStores.conversations.get(referenceRun!.conversationRef))!);
    await referenceStores.close();
    // one commit per save of the run (each step, the end), each one statement
    expect(commits).toBeGreaterThanOrEqual(3);
    expect(total).toBeLessThan(20);

    const summary = { killed: 0, cut: 0, repeatedEffects: 0, resumed: 0 };
    /** Resumes the run in `schema` and checks it against the reference and the killed child's log. */
    const resumeAndCheck = async (schema: string, killed: readonly LogEntry[], label: string) => {
      const stores = await createPostgresStores({ pool: admin, schema });
      try {
        const before = await stores.runs.get('run_1');
        if (before !== undefined) {
          // never half a step: the conversation the checkpoint points at is there, with the step's messages
          const stored = await stores.conversations.get(before.conversationRef);
          expect(stored, label).toBeDefined();
          const assistants = (stored as ChatMessage[]).filter((message) => message.role === 'assistant').length;
          const pending = before.data?.pendingStep === true;
          expect(assistants, label).toBe(before.stepIndex + (pending ? 1 : 0));
        }
        const resumedLog: LogEntry[] = [];
        if (before?.status !== 'completed') {
          summary.resumed += 1;
          const agent = createAgent((entry) => resumedLog.push(entry));
          const result = await runAgent({
            ...agent,
            runId: 'run_1',
            messages: [{ role: 'user', content: 'go' }],
            persistence: { journal: stores.journal, messageId: 'm1' },
          });
          expect(result.status, label).toBe('completed');
        }
        const after = await stores.runs.get('run_1');
        expect(after, label).toMatchObject({ status: 'completed', stepIndex: 3 });
        expect(comparableConversation((await stores.conversations.get(after!.conversationRef))!), label).toEqual(reference);
        for (const key of KEYS) {
          const times = [...killed, ...resumedLog].filter((entry) => entry.effect === key).length;
          const carrier = killed.find((entry) => entry.commit === true && entry.keys?.includes(key));
          const durable = carrier !== undefined && killed.some((entry) => entry.done === carrier.statement);
          expect(times, `effect ${key}, ${label}`).toBe(durable || times === 1 ? 1 : 2);
          if (times === 2) {
            // the documented window: the effect ran, its row was not committed yet
            expect(killed.some((entry) => entry.effect === key)).toBe(true);
            summary.repeatedEffects += 1;
          }
          expect(await stores.ledger.get(key)).toMatchObject({ status: 'success' });
        }
      } finally {
        await stores.close();
      }
    };

    // 1. SIGKILL right before each query
    const killPoints = Array.from({ length: total + 1 }, (_, index) => index + 1);
    const killBefore = async (killAt: number) => {
      const schema = newSchema();
      const logPath = join(directory, `kill-${killAt}.log`);
      const outcome = await runChild(childPath, schema, logPath, killAt).ended;
      expect(outcome).toBe(killAt <= total ? 'killed' : 'finished');
      if (outcome === 'killed') summary.killed += 1;
      await resumeAndCheck(schema, readLog(logPath), `kill before query ${killAt}`);
    };
    for (let index = 0; index < killPoints.length; index += 2) await Promise.all(killPoints.slice(index, index + 2).map(killBefore));
    expect(summary.killed).toBe(total);

    // 2. SIGKILL inside the transaction of the c-th commit, then its connection dropped
    const cutInside = async (commit: number) => {
      const schema = newSchema();
      const prepared = await createPostgresStores({ pool: admin, schema });
      await prepared.close();
      await admin.query(`
        CREATE TABLE "${schema}".crash_control (target integer NOT NULL, seen integer NOT NULL);
        INSERT INTO "${schema}".crash_control VALUES (${commit}, 0);
        CREATE FUNCTION "${schema}".crash_stall() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
          UPDATE "${schema}".crash_control SET seen = seen + 1;
          IF (SELECT seen = target FROM "${schema}".crash_control) THEN
            PERFORM pg_sleep(120);
          END IF;
          RETURN NEW;
        END $body$;
        CREATE TRIGGER crash_stall BEFORE INSERT ON "${schema}".runs FOR EACH ROW EXECUTE FUNCTION "${schema}".crash_stall();`);
      const logPath = join(directory, `cut-${commit}.log`);
      const child = runChild(childPath, schema, logPath, 0);
      let pid: number | undefined;
      for (let tries = 0; pid === undefined && tries < 600; tries++) {
        const { rows } = await admin.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE $1`, [
          `%"${schema}".commit_step(%`,
        ]);
        pid = rows[0]?.pid;
        if (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(pid, `commit ${commit} stalled inside its transaction`).toBeDefined();
      // mid-transaction: the chunk and the ledger rows are written (invisible), the checkpoint is not
      child.kill();
      expect(await child.ended).toBe('killed');
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      for (let tries = 0; tries < 200; tries++) {
        const { rows } = await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid]);
        if (rows.length === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await admin.query(`DROP TRIGGER crash_stall ON "${schema}".runs`);
      summary.cut += 1;
      const killed = readLog(logPath);
      const stalled = killed.filter((entry) => entry.commit === true)[commit - 1];
      expect(stalled).toBeDefined();
      expect(killed.some((entry) => entry.done === stalled!.statement)).toBe(false);
      // none of the cut commit's rows: its ledger rows are absent, the checkpoint is the previous commit's
      for (const key of stalled!.keys ?? []) expect((await admin.query(`SELECT 1 FROM "${schema}".ledger WHERE key = $1`, [key])).rows).toHaveLength(0);
      const { rows: runRows } = await admin.query(`SELECT checkpoint FROM "${schema}".runs`);
      expect(runRows).toHaveLength(commit === 1 ? 0 : 1);
      await resumeAndCheck(schema, killed, `cut inside commit ${commit}`);
    };
    for (let commit = 1; commit <= commits; commit++) await cutInside(commit);

    console.log(
      `[postgres step crash] ${total} queries per run (${commits} step commits); killed before each query ${summary.killed}, cut inside a commit ${summary.cut}, resumed ${summary.resumed}, repeated effects (window) ${summary.repeatedEffects}`,
    );
  });
});
