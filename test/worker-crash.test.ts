/**
 * The crash test of issue 3: a real worker process (test/fixtures/crash-worker.ts) on a SQLite file
 * is killed with SIGKILL at seeded random moments during a batch of runs with side-effecting tools,
 * and restarted until the queue is empty. Then:
 * - every message ends in exactly one place: a completed run, the message DLQ, or the tool DLQ,
 *   and the place its plan says; nothing is lost, the queue is empty;
 * - no side effect happened twice for one runId + step + call, except in the documented window (the
 *   process dies after the tool's side effect and before its outcome reaches the ledger): every
 *   duplicate must have been written first by a process that was killed, and runs whose tool honours
 *   `ctx.idempotencyKey` (as SPEC.md §1.4 asks of writes) have no duplicate at all.
 * The numbers (kills, redeliveries, resumes, window hits) are printed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryStores, createWorker, defineTool, ToolError, type MessageFailureEntry, type Stores, type ToolFailureEntry } from '../src/index.ts';
import { createSqliteStores } from '../src/stores/sqlite/index.ts';
import { createAutoAdvancingClock, createScriptedModel } from '../src/testing/index.ts';
import { createSeededRandom } from '../src/testing/seeded-random.ts';

const SEED = Number(process.env.CRASH_TEST_SEED ?? 20260101);
const MESSAGES = 200;
const MAX_KILLS = 25;
const MIN_KILLS = 15;
/** The longest simulated response latency after a side effect, in ms (0 measures toolrun's own window). */
const RESPONSE_MS = Number(process.env.CRASH_TEST_RESPONSE_MS ?? 8);
const LEASE_MS = 700;
const CONCURRENCY = 4;
/** Guards against a message that is never acknowledged (the loop would go on forever); generous for a loaded machine. */
const TIME_BUDGET_MS = 110_000;


type Plan = { id: string; kind: 'ok' | 'broken' | 'malformed'; honour: boolean; body: string };

function makeBatch(random: () => number): Plan[] {
  const malformedBodies = ['{not json', '{"input": 5}', '{"input": "x", "priority": "high"}', '[]', '', '{"messages": []}'];
  return Array.from({ length: MESSAGES }, (_, index) => {
    const id = `m${String(index).padStart(3, '0')}`;
    const roll = random();
    const honour = index % 2 === 0;
    if (roll < 0.06) return { id, kind: 'malformed', honour, body: malformedBodies[index % malformedBodies.length]! };
    const kind = roll < 0.18 ? 'broken' : 'ok';
    return { id, kind, honour, body: JSON.stringify({ input: `crash-test kind=${kind} honour=${honour ? 1 : 0}` }) };
  });
}

interface WorkerExit {
  killed: boolean;
  pid: number;
  lines: string[];
}

function runWorker(databasePath: string, effectsPath: string, killAfterMs: number | undefined): Promise<WorkerExit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/crash-worker.ts', databasePath, effectsPath, String(LEASE_MS), String(CONCURRENCY), String(RESPONSE_MS)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let stderr = '';
    let killed = false;
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      if (line === 'ready' && killAfterMs !== undefined) {
        setTimeout(() => {
          killed = child.kill('SIGKILL');
        }, killAfterMs);
      }
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (!killed && code !== 0) reject(new Error(`worker exited with ${code ?? signal}: ${stderr.slice(-2000)}`));
      else resolve({ killed: killed && signal === 'SIGKILL', pid: child.pid ?? -1, lines });
    });
  });
}

describe('worker crash test (SIGKILL at random points, restart until the queue is empty)', () => {
  const directory = mkdtempSync(join(tmpdir(), 'toolrun-crash-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it('loses nothing, routes every message to exactly one place, and repeats no recorded side effect', { timeout: 150_000 }, async () => {
    const random = createSeededRandom(SEED);
    const databasePath = join(directory, 'toolrun.db');
    const effectsPath = join(directory, 'effects.db');
    const batch = makeBatch(random);
    const setup = createSqliteStores({ path: databasePath });
    for (const message of batch) await setup.queue.enqueue({ id: message.id, body: message.body });
    await setup.close();

    const startedAt = Date.now();
    const killedPids = new Set<number>();
    const exits: WorkerExit[] = [];
    let remaining = MESSAGES;
    while (remaining > 0) {
      expect(Date.now() - startedAt, 'time budget').toBeLessThan(TIME_BUDGET_MS);
      const kill = killedPids.size < MAX_KILLS ? 20 + Math.floor(random() * 280) : undefined;
      const exit = await runWorker(databasePath, effectsPath, kill);
      exits.push(exit);
      if (exit.killed) killedPids.add(exit.pid);
      const probe = createSqliteStores({ path: databasePath });
      remaining = await probe.queue.size();
      await probe.close();
    }
    const elapsedMs = Date.now() - startedAt;

    // Where every message ended.
    const stores = createSqliteStores({ path: databasePath });
    const messageEntries = (await stores.messageDlq.list()).map((record) => record.entry as MessageFailureEntry);
    const toolEntries = (await stores.toolDlq.list()).map((record) => record.entry as ToolFailureEntry);
    const places = new Map<string, string[]>();
    const add = (id: string, place: string) => places.set(id, [...(places.get(id) ?? []), place]);
    for (const entry of messageEntries) add(entry.messageId ?? '?', 'message-dlq');
    for (const entry of toolEntries) add(entry.originalMessageId, 'tool-dlq');
    for (const message of batch) {
      const checkpoint = await stores.runs.get(`run_${message.id}`);
      if (checkpoint?.status === 'completed') add(message.id, 'completed');
      if (message.kind === 'broken') expect(checkpoint?.status, message.id).toBe('tool_failed');
    }
    await stores.close();
    const expectedPlace = { ok: 'completed', broken: 'tool-dlq', malformed: 'message-dlq' } as const;
    const misplaced = batch.filter((message) => JSON.stringify(places.get(message.id) ?? []) !== JSON.stringify([expectedPlace[message.kind]]));
    expect(misplaced.map((message) => `${message.id} (${message.kind}): ${JSON.stringify(places.get(message.id) ?? [])}`)).toEqual([]);
    expect(messageEntries.length + toolEntries.length + batch.filter((message) => message.kind === 'ok').length).toBe(MESSAGES);

    // Side effects: every expected one happened; duplicates only in the documented window.
    const effects = new BetterSqlite3(effectsPath, { readonly: true });
    const rows = effects.prepare('SELECT run_id, step_index, call_index, pid, rowid FROM effects ORDER BY rowid').all() as Array<{ run_id: string; step_index: number; call_index: number; pid: number }>;
    const keyHits = (effects.prepare('SELECT COUNT(*) AS count FROM effect_key_hits').get() as { count: number }).count;
    effects.close();
    const byKey = new Map<string, Array<{ pid: number }>>();
    for (const row of rows) {
      const key = `${row.run_id}:${row.step_index}:${row.call_index}`;
      byKey.set(key, [...(byKey.get(key) ?? []), { pid: row.pid }]);
    }
    const expectedKeys = batch.flatMap((message) =>
      message.kind === 'ok' ? ['0:0', '1:0', '1:1', '2:0'].map((suffix) => `run_${message.id}:${suffix}`) : message.kind === 'broken' ? [`run_${message.id}:0:0`] : [],
    );
    expect(expectedKeys.filter((key) => !byKey.has(key)), 'side effects missing').toEqual([]);
    expect([...byKey.keys()].filter((key) => !expectedKeys.includes(key)), 'unexpected side effects').toEqual([]);
    const honoured = new Set(batch.filter((message) => message.honour).map((message) => `run_${message.id}`));
    const duplicates = [...byKey.entries()].filter(([, writes]) => writes.length > 1);
    const honouredDuplicates = duplicates.filter(([key]) => honoured.has(key.split(':')[0]!));
    const windowHits = duplicates.filter(([key]) => !honoured.has(key.split(':')[0]!));
    expect(honouredDuplicates.map(([key]) => key), 'duplicates despite the idempotency key').toEqual([]);
    // A duplicate is only acceptable when every write but the last came from a process that was killed.
    const unexplained = windowHits.filter(([, writes]) => writes.slice(0, -1).some((write) => !killedPids.has(write.pid)));
    expect(unexplained.map(([key]) => key), 'duplicates not explained by a kill').toEqual([]);

    // Numbers.
    const lines = exits.flatMap((exit) => exit.lines);
    const deliveries = lines.filter((line) => line.startsWith('deliver '));
    const resumes = deliveries.filter((line) => line.split(' ')[3] === 'running');
    const resumesMidStep = resumes.filter((line) => line.split(' ')[5] === 'true');
    const alreadyFinished = lines.filter((line) => line.startsWith('result ') && line.endsWith(' true'));
    const storeErrors = lines.filter((line) => line.startsWith('error '));
    const report = {
      seed: SEED,
      responseMs: RESPONSE_MS,
      messages: MESSAGES,
      plans: { ok: batch.filter((m) => m.kind === 'ok').length, broken: batch.filter((m) => m.kind === 'broken').length, malformed: batch.filter((m) => m.kind === 'malformed').length },
      workerProcesses: exits.length,
      kills: killedPids.size,
      redeliveries: deliveries.length,
      resumesOfRunningRuns: resumes.length,
      resumesInsideAToolStep: resumesMidStep.length,
      redeliveriesOfFinishedRuns: alreadyFinished.length,
      // of which the message had been dead-lettered (the keyed push added nothing)
      redeliveriesAlreadyDeadLettered: alreadyFinished.filter((line) => / (rejected|tool_failed) true$/.test(line)).length,
      storeErrors: storeErrors.length,
      sideEffects: rows.length,
      expectedSideEffects: expectedKeys.length,
      duplicateSideEffectsWithoutIdempotencyKey: windowHits.reduce((sum, [, writes]) => sum + writes.length - 1, 0),
      windowHitsAbsorbedByIdempotencyKey: keyHits,
      duplicateSideEffectsWithIdempotencyKey: honouredDuplicates.length,
      elapsedMs,
    };
    console.log(`crash test: ${JSON.stringify(report)}`);
    expect(report.kills).toBeGreaterThanOrEqual(MIN_KILLS);
    expect(report.redeliveries).toBeGreaterThan(0);
  });
});

/**
 * The same crash windows, made deterministic in one process: a store write fails right after a
 * dead-letter push (as if the process died there), so the worker releases the message and it is
 * delivered again. The entry must be there exactly once.
 */
describe('crash right after a dead-letter push (in process)', () => {
  function crashAfterPush(stores: Stores, queue: 'messageDlq' | 'toolDlq') {
    let armed = false;
    let crashes = 0;
    const push = stores[queue].push.bind(stores[queue]);
    stores[queue].push = async (entry) => {
      const id = await push(entry);
      if (crashes === 0) armed = true;
      return id;
    };
    const pushOnce = stores[queue].pushOnce.bind(stores[queue]);
    stores[queue].pushOnce = async (key, entry) => {
      const result = await pushOnce(key, entry);
      if (crashes === 0) armed = true;
      return result;
    };
    const crashOnce = <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        if (armed) {
          armed = false;
          crashes += 1;
          throw new Error('the process died here');
        }
        return write(...args);
      };
    stores.ledger.putIfAbsent = crashOnce(stores.ledger.putIfAbsent.bind(stores.ledger));
    stores.runs.put = crashOnce(stores.runs.put.bind(stores.runs));
    stores.queue.ack = crashOnce(stores.queue.ack.bind(stores.queue));
    return { crashes: () => crashes };
  }

  const broken = defineTool({
    name: 'broken_service',
    description: 'A service that is down',
    inputSchema: { type: 'object' },
    execute: () => {
      throw new ToolError({ kind: 'server', status: 503 });
    },
  });

  async function runOnce(stores: Stores, body: string) {
    const clock = createAutoAdvancingClock();
    await stores.queue.enqueue({ id: 'm-1', body });
    const model = createScriptedModel([{ toolCalls: [{ id: 'c1', name: 'broken_service', args: '{}' }], usage: { input: 10, output: 1 } }]);
    const errors: unknown[] = [];
    // the redelivery must not read the DLQs (that would cost O(DLQ depth) per redelivered message)
    let dlqReads = 0;
    const lists = { messageDlq: stores.messageDlq.list, toolDlq: stores.toolDlq.list };
    for (const queue of ['messageDlq', 'toolDlq'] as const) {
      stores[queue].list = async (options) => {
        dlqReads += 1;
        return lists[queue].call(stores[queue], options);
      };
    }
    const worker = createWorker({ model, tools: [broken], stores, clock, runtimeOptions: { clock }, pollIntervalMs: 1, onError: (error) => errors.push(error) });
    await worker.runUntilEmpty();
    stores.messageDlq.list = lists.messageDlq;
    stores.toolDlq.list = lists.toolDlq;
    return { errors, model, dlqReads, stats: worker.stats };
  }

  it('a malformed message is in the message DLQ once, though the worker died before acknowledging it', async () => {
    const stores = createMemoryStores();
    const crash = crashAfterPush(stores, 'messageDlq');
    const { errors, model, dlqReads, stats } = await runOnce(stores, '{not json');
    expect(crash.crashes()).toBe(1);
    expect(errors).toHaveLength(1);
    expect(dlqReads).toBe(0);
    expect(stats).toMatchObject({ handled: 1, byStatus: { rejected: 1 } });
    expect(await stores.queue.size()).toBe(0);
    expect(await stores.messageDlq.size()).toBe(1);
    expect(await stores.toolDlq.size()).toBe(0);
    expect(model.calls).toBe(0);
  });

  it('a run that ended tool_failed is in the tool DLQ once, though the worker died right after the push', async () => {
    const stores = createMemoryStores();
    const crash = crashAfterPush(stores, 'toolDlq');
    const { errors, dlqReads, stats } = await runOnce(stores, '{"input": "call the broken service"}');
    expect(crash.crashes()).toBe(1);
    expect(errors).toHaveLength(1);
    expect(dlqReads).toBe(0);
    expect(stats).toMatchObject({ handled: 1, byStatus: { tool_failed: 1 } });
    expect(await stores.queue.size()).toBe(0);
    const entries = await stores.toolDlq.list();
    expect(entries.map((record) => (record.entry as ToolFailureEntry).originalMessageId)).toEqual(['m-1']);
    expect(await stores.messageDlq.size()).toBe(0);
  });
});
