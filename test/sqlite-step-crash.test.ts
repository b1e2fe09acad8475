/**
 * SIGKILL inside the step commits of the SQLite backend: a child process runs one agent run (a
 * tool call at step 0, two parallel calls at step 1, an answer at step 2) on a fresh SQLite file
 * and kills itself right before its k-th write statement (`BEGIN`, an insert, `COMMIT`...), for
 * every k from the first statement to past the last. The test process then resumes the run from
 * whatever the file holds and checks, for every k:
 * - the run completes, with the conversation an uninterrupted run has (same messages, same tool
 *   results);
 * - no tool call whose ledger row was committed before the kill runs again, and a call runs twice
 *   only when the kill came after its side effect and before the commit holding its row (the one
 *   documented window); no model turn whose step was committed is asked again;
 * - the file is never left half-way through a step: the checkpoint and the conversation agree.
 * Each child writes what it does to a log with synchronous writes (they survive SIGKILL): every
 * statement before it runs, every side effect, every model call.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runAgent } from '../src/agent/run-agent.ts';
import type { ChatMessage, Model } from '../src/agent/messages.ts';
import type { defineTool } from '../src/core/define-tool.ts';
import { createSqliteStores } from '../src/stores/sqlite/index.ts';
import { comparableConversation, spawnCrashChild } from './fixtures/crash-child.ts';

const repo = fileURLToPath(new URL('..', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'toolrun-step-crash-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

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

/** The child: kills itself right before its k-th `Statement.run` (0: never). */
const childSource = (srcRoot: string) => `
import { openSync, writeSync } from 'node:fs';
import { createSqliteStores } from '${srcRoot}/stores/sqlite/index.ts';
import { runAgent } from '${srcRoot}/agent/run-agent.ts';
import { createAgent } from './agent.mts';
const [databasePath, logPath, killAtText] = process.argv.slice(2);
const killAt = Number(killAtText);
const fd = openSync(logPath, 'a');
const log = (entry) => writeSync(fd, JSON.stringify(entry) + '\\n');
const stores = createSqliteStores({ path: databasePath });
const statement = Object.getPrototypeOf(stores.database.prepare('SELECT 1'));
const run = statement.run;
let count = 0;
statement.run = function (...args) {
  count += 1;
  if (count === killAt) process.kill(process.pid, 'SIGKILL');
  log({ statement: count, sql: this.source.trim().slice(0, 24), ...(this.source.startsWith('INSERT INTO ledger') ? { key: args[0] } : {}) });
  return run.apply(this, args);
};
const { model, tools } = createAgent(log);
const result = await runAgent({
  model, tools, runId: 'run_1', messages: [{ role: 'user', content: 'go' }],
  persistence: { journal: stores.journal, messageId: 'm1' },
});
log({ finished: result.status, statements: count });
await stores.close();
`;

type LogEntry = { statement?: number; sql?: string; key?: string; effect?: string; model?: number; finished?: string; statements?: number };

const readLog = (path: string): LogEntry[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as LogEntry);

function runChild(childPath: string, databasePath: string, logPath: string, killAt: number): Promise<'killed' | 'finished'> {
  writeFileSync(logPath, '');
  return spawnCrashChild(childPath, [databasePath, logPath, String(killAt)], logPath).ended;
}

/** Whether what `logged` names is durable: a `COMMIT` ran after its entry (at `index`) in the log. */
const committedAfter = (entries: readonly LogEntry[], index: number) => entries.slice(index + 1).some((entry) => entry.sql === 'COMMIT');

describe('SQLite step commits under SIGKILL (a child killed before each of its write statements)', () => {
  it('resumes every run to the same conversation; a committed tool call or model turn never runs again', { timeout: 900_000 }, async () => {
    const childFolder = join(directory, 'child');
    rmSync(childFolder, { recursive: true, force: true });
    const srcRoot = join(repo, 'src');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(childFolder, { recursive: true });
    writeFileSync(join(childFolder, 'agent.mts'), agentSource(srcRoot));
    writeFileSync(join(childFolder, 'child.mts'), childSource(srcRoot));
    const { createAgent } = (await import(join(childFolder, 'agent.mts'))) as {
      createAgent: (log: (entry: LogEntry) => void) => { model: Model; tools: ReturnType<typeof defineTool>[] };
    };

    // an uninterrupted run: the reference conversation and the number of write statements
    const referencePath = join(directory, 'reference.db');
    const referenceLog = join(directory, 'reference.log');
    expect(await runChild(join(childFolder, 'child.mts'), referencePath, referenceLog, 0)).toBe('finished');
    const total = readLog(referenceLog).find((entry) => entry.finished !== undefined)?.statements ?? 0;
    const referenceStores = createSqliteStores({ path: referencePath });
    const referenceRun = await referenceStores.runs.get('run_1');
    const reference = comparableConversation((await referenceStores.conversations.get(referenceRun!.conversationRef))!);
    await referenceStores.close();
    expect(total).toBeGreaterThan(20);
    expect(total).toBeLessThan(60);

    const killPoints = Array.from({ length: total + 1 }, (_, index) => index + 1);
    const summary = { killed: 0, repeatedEffects: 0, repeatedModelTurns: 0, resumed: 0 };
    const check = async (killAt: number) => {
      const databasePath = join(directory, `kill-${killAt}.db`);
      const logPath = join(directory, `kill-${killAt}.log`);
      const outcome = await runChild(join(childFolder, 'child.mts'), databasePath, logPath, killAt);
      expect(outcome).toBe(killAt <= total ? 'killed' : 'finished');
      if (outcome === 'killed') summary.killed += 1;
      const killed = readLog(logPath);

      const stores = createSqliteStores({ path: databasePath });
      try {
        const before = await stores.runs.get('run_1');
        if (before !== undefined) {
          // never half a step: the conversation the checkpoint points at is there, with the step's messages
          const stored = await stores.conversations.get(before.conversationRef);
          expect(stored).toBeDefined();
          const assistants = (stored as ChatMessage[]).filter((message) => message.role === 'assistant').length;
          const pending = before.data?.pendingStep === true;
          expect(assistants).toBe(before.stepIndex + (pending ? 1 : 0));
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
          expect(result.status).toBe('completed');
        }
        const after = await stores.runs.get('run_1');
        expect(after).toMatchObject({ status: 'completed', stepIndex: 3 });
        expect(comparableConversation((await stores.conversations.get(after!.conversationRef))!)).toEqual(reference);

        for (const key of ['run_1:0:0', 'run_1:1:0', 'run_1:1:1']) {
          const times = [...killed, ...resumedLog].filter((entry) => entry.effect === key).length;
          const rowIndex = killed.findIndex((entry) => entry.key === key);
          const durable = rowIndex >= 0 && committedAfter(killed, rowIndex);
          expect(times, `effect ${key} at kill point ${killAt}`).toBe(durable || times === 1 ? 1 : 2);
          if (times === 2) {
            // the documented window: the effect ran, its row was not committed yet
            expect(killed.some((entry) => entry.effect === key)).toBe(true);
            summary.repeatedEffects += 1;
          }
          expect(await stores.ledger.get(key)).toMatchObject({ status: 'success' });
        }
        for (const step of [0, 1, 2]) {
          const calls = [...killed, ...resumedLog].filter((entry) => entry.model === step).length;
          const callIndex = killed.findIndex((entry) => entry.model === step);
          // a model turn is durable once a commit followed it (its step's first commit holds the answer)
          if (callIndex >= 0 && committedAfter(killed, callIndex)) expect(calls, `model step ${step} at kill point ${killAt}`).toBe(1);
          else expect(calls).toBeLessThanOrEqual(2);
          if (calls === 2) summary.repeatedModelTurns += 1;
        }
      } finally {
        await stores.close();
      }
    };
    // two children at a time (each bounded by its progress: see spawnCrashChild)
    for (let index = 0; index < killPoints.length; index += 2) await Promise.all(killPoints.slice(index, index + 2).map(check));
    console.log(
      `[sqlite step crash] ${total} write statements per run; kill points ${killPoints.length}, killed ${summary.killed}, resumed ${summary.resumed}, repeated effects (window) ${summary.repeatedEffects}, repeated model turns (window) ${summary.repeatedModelTurns}`,
    );
    expect(summary.killed).toBe(total);
  });
});
