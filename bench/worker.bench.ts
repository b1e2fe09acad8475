/**
 * Issue 3's benchmark: runs per second through the SQLite worker for a 3-step run (two tool calls,
 * then an answer), against a bare loop doing the same number of SQLite writes of the same sizes in
 * the same run; and the size of a tool-DLQ entry for a conversation of 10 and of 1,000 messages.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createWorker, defineTool, handleMessage, ToolError, type Stores, type ToolFailureEntry } from '../src/index.ts';
import { createSqliteStores } from '../src/stores/sqlite/index.ts';
import { createMemoryStores } from '../src/stores/memory/index.ts';
import { createAutoAdvancingClock } from '../src/testing/auto-advancing-clock.ts';
import { createScriptedModel } from '../src/testing/scripted-model.ts';
import type { BenchRow } from './measure.ts';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a record up',
  inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  idempotent: true,
  execute: async ({ id }) => ({ id, status: 'ok' }),
});
const threeSteps = () =>
  createScriptedModel([
    { toolCalls: [{ id: 'c1', name: 'lookup', args: '{"id":"a"}' }], usage: { input: 100, output: 10 } },
    { toolCalls: [{ id: 'c2', name: 'lookup', args: '{"id":"b"}' }], usage: { input: 120, output: 10 } },
    { text: 'done', usage: { input: 140, output: 5 } },
  ]);

/** Wraps every store method to count calls and bytes written (JSON of the arguments). */
function countingStores(stores: Stores): { stores: Stores; writes: () => { count: number; bytes: number } } {
  let count = 0;
  let bytes = 0;
  const wrap = <T extends object>(target: T, writing: readonly string[]): T =>
    new Proxy(target, {
      get(object, key, receiver) {
        const value = Reflect.get(object, key, receiver) as unknown;
        if (typeof value !== 'function' || !writing.includes(String(key))) return value;
        return (...args: unknown[]) => {
          count += 1;
          bytes += JSON.stringify(args)?.length ?? 0;
          return (value as (...a: unknown[]) => unknown).apply(object, args);
        };
      },
    });
  const wrapped: Stores = {
    ...stores,
    conversations: wrap(stores.conversations, ['put']),
    runs: wrap(stores.runs, ['put']),
    ledger: wrap(stores.ledger, ['putIfAbsent']),
    queue: wrap(stores.queue, ['enqueue', 'reserve', 'ack']),
    close: () => stores.close(),
  };
  return { stores: wrapped, writes: () => ({ count, bytes }) };
}

async function workerRunsPerSecond(runs: number): Promise<{ perSecond: number; writesPerRun: number; bytesPerRun: number }> {
  const folder = mkdtempSync(join(tmpdir(), 'toolrun-bench-'));
  const sqlite = createSqliteStores({ path: join(folder, 'bench.db') });
  const { stores, writes } = countingStores(sqlite);
  const tools = [lookup];
  try {
    for (let index = 0; index < runs; index++) await stores.queue.enqueue({ body: JSON.stringify({ input: `run ${index}` }), id: `m${index}` });
    // A fresh scripted model per message: each run is the same 3 steps.
    let model = threeSteps();
    const worker = createWorker({
      stores,
      tools,
      model: (request) => {
        if (request.stepIndex === 0) model = threeSteps();
        return model(request);
      },
      onResult: (result) => {
        if (result.status !== 'completed') throw new Error(`bench run ended ${result.status}`);
      },
    });
    const start = process.hrtime.bigint();
    await worker.runUntilEmpty();
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const { count, bytes } = writes();
    return { perSecond: runs / seconds, writesPerRun: count / runs, bytesPerRun: bytes / runs };
  } finally {
    await sqlite.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

/** The same number of single-statement writes of the same sizes, straight on better-sqlite3. */
function bareRunsPerSecond(runs: number, writesPerRun: number, bytesPerRun: number): number {
  const folder = mkdtempSync(join(tmpdir(), 'toolrun-bench-'));
  const database = new Database(join(folder, 'bare.db'));
  try {
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    database.exec('CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT)');
    const upsert = database.prepare('INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value');
    const writes = Math.round(writesPerRun);
    const payload = 'x'.repeat(Math.max(1, Math.round(bytesPerRun / writes)));
    const start = process.hrtime.bigint();
    for (let run = 0; run < runs; run++) {
      for (let write = 0; write < writes; write++) upsert.run(`${run}:${write % 4}`, payload);
    }
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    return runs / seconds;
  } finally {
    database.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

async function deadLetterEntryBytes(conversationLength: number): Promise<number> {
  const toolDlq: ToolFailureEntry[] = [];
  const messages = Array.from({ length: conversationLength }, (_, index) => ({
    role: index % 2 === 0 ? 'user' : 'assistant',
    content: `message ${index} `.repeat(20),
  }));
  messages[messages.length - 1] = { role: 'user', content: 'please book it' };
  const down = defineTool({
    name: 'book',
    description: '',
    inputSchema: { type: 'object' },
    execute: () => {
      throw new ToolError({ kind: 'server', status: 503 });
    },
  });
  const call = { toolCalls: [{ id: 'c', name: 'book', args: '{"flight":"HAT001"}' }], usage: { input: 50_000, output: 10 } };
  await handleMessage(
    { body: JSON.stringify({ messages }), id: `size-${conversationLength}` },
    {
      model: createScriptedModel([call, call]),
      tools: [down],
      queues: { messageDlq: [], toolDlq },
      stores: createMemoryStores(),
      runtimeOptions: { clock: createAutoAdvancingClock() },
    },
  );
  if (toolDlq.length !== 1) throw new Error('expected one tool-DLQ entry');
  return Buffer.byteLength(JSON.stringify(toolDlq[0]));
}

/** Runs the worker benchmark and returns its rows. */
export async function runWorkerBench(runs = 400): Promise<BenchRow[]> {
  const worker = await workerRunsPerSecond(runs);
  const bare = bareRunsPerSecond(runs, worker.writesPerRun, worker.bytesPerRun);
  const small = await deadLetterEntryBytes(10);
  const large = await deadLetterEntryBytes(1000);
  return [
    { name: `bare loop: ${worker.writesPerRun.toFixed(0)} SQLite writes per run`, medianNs: 1e9 / bare, note: `${bare.toFixed(0)} runs/s` },
    {
      name: 'toolrun SQLite worker, 3-step run',
      medianNs: 1e9 / worker.perSecond,
      baseline: 'bare loop',
      ratio: bare / worker.perSecond,
      note: `${worker.perSecond.toFixed(0)} runs/s`,
    },
    { name: 'tool-DLQ entry, conversation of 10 messages', medianNs: 0, note: `${small} bytes` },
    { name: 'tool-DLQ entry, conversation of 1,000 messages', medianNs: 0, baseline: '10 messages', ratio: large / small, note: `${large} bytes` },
  ];
}
