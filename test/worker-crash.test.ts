/**
 * The crash test of issue 3, with the failures of issue 9: real worker processes
 * (test/fixtures/crash-worker.ts) on one SQLite file are killed with SIGKILL at seeded random
 * moments during a batch of runs with side-effecting tools, and restarted until the queue is empty.
 * Some runs' model fails once (503, retried in-band), some runs' model rejects its key (401, a
 * resumable model failure), some runs are poison (their conversation is rejected by the store at
 * every delivery, after a side effect), some runs' tool is down. Then:
 * - every message ends in exactly one place — a completed run, the message DLQ, or the tool DLQ
 *   with the entry kind its plan says (`tool`, `model`, `run`) — and nothing is lost; the only other
 *   place allowed is the one SIGKILL itself explains: a message whose consumers were killed more
 *   than `maxDeliveries` times is dead-lettered as a crash (and resumed by the drain);
 * - a poison run is ONE tool-DLQ entry of kind `run` after `maxDeliveries`, its store rejected at
 *   most `maxDeliveries` times, its side effect once; only poison deliveries count toward the bound;
 * - then TWO drain processes at once (test/fixtures/crash-drain.ts: the model, the key and the tool
 *   fixed) drain the tool DLQ: each entry is completed by exactly one drain (the other says
 *   `in_progress` or `already_completed`), no run step's model call is made twice, and nothing is
 *   left in the tool DLQ;
 * - no side effect happened twice for one runId + step + call, except in the documented window (the
 *   process dies after the tool's side effect and before its outcome reaches the ledger): every
 *   duplicate must have been written first by a process that was killed, and runs whose tool honours
 *   `ctx.idempotencyKey` (as SPEC.md §1.4 asks of writes) have no duplicate at all.
 * The kill schedule guarantees `MIN_KILLS`: while kills are missing, each process SIGKILLs itself
 * after a share of the remaining messages (see `killAfterResults`), if the seeded timer did not kill
 * it first; the seeded moment of a kill is counted from the process's first handled message. The
 * numbers (kills, redeliveries, resumes, window hits, DLQ kinds, drains) are printed.
 * `CRASH_TEST_SEED` picks another batch and schedule; `CRASH_TEST_DUMP=<file>` writes every worker
 * process's output lines there (for a reproduction).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createMemoryStores,
  createWorker,
  defineTool,
  ToolError,
  type DrainReport,
  type MessageFailureEntry,
  type ResumableEntry,
  type DeadLetterQueue,
  type Stores,
  type ToolFailureEntry,
} from '../src/index.ts';
import type { Clock } from '../src/ground/ports/clock.ts';
import { createSqliteStores } from '../src/stores/sqlite/index.ts';
import { createAutoAdvancingClock, createScriptedModel } from '../src/testing/index.ts';
import { createSeededRandom } from '../src/testing/seeded-random.ts';
import { runClaimKey } from '../src/ground/ports/run-journal.ts';
import { crashInput, EFFECTS_BY_STEP, type CrashPlanKind } from './fixtures/crash-agent.ts';
import { spawnFixture } from './fixtures/distributed-processes.ts';

const SEED = Number(process.env.CRASH_TEST_SEED ?? 20260101);
const MESSAGES = 200;
const MAX_KILLS = 25;
const MIN_KILLS = 15;
/** The longest simulated response latency after a side effect, in ms (0 measures toolrun's own window). */
const RESPONSE_MS = Number(process.env.CRASH_TEST_RESPONSE_MS ?? 8);
const LEASE_MS = 700;
const CONCURRENCY = 4;
/** The workers' delivery bound (the default). */
const MAX_DELIVERIES = 5;
/**
 * A worker process that writes no line for this long has stopped making progress (it writes one
 * per handled delivery, and stops by itself once the queue is empty): it is killed and the test
 * fails as a hang. A slow machine only makes the lines come slower.
 */
const SILENCE_MS = 60_000;
/** Bound of the two drains (they are killed, and the test fails, past it). */
const DRAIN_BUDGET_MS = 30_000;

type PlanKind = CrashPlanKind | 'malformed';
type Plan = { id: string; kind: PlanKind; honour: boolean; step: number; body: string };

function makeBatch(random: () => number): Plan[] {
  const malformedBodies = ['{not json', '{"input": 5}', '{"input": "x", "priority": "high"}', '[]', '', '{"messages": []}'];
  return Array.from({ length: MESSAGES }, (_, index) => {
    const id = `m${String(index).padStart(3, '0')}`;
    const roll = random();
    const honour = index % 2 === 0;
    if (roll < 0.06) return { id, kind: 'malformed', honour, step: 0, body: malformedBodies[index % malformedBodies.length]! };
    const kind: CrashPlanKind = roll < 0.14 ? 'broken' : roll < 0.2 ? 'model-down' : roll < 0.24 ? 'poison' : roll < 0.34 ? 'model-flaky' : 'ok';
    // the step the model fails at (0–3), or the poison step (1–3: after a side effect)
    const step = kind === 'poison' ? 1 + Math.floor(random() * 3) : kind === 'model-down' || kind === 'model-flaky' ? Math.floor(random() * 4) : 0;
    return { id, kind, honour, step, body: JSON.stringify({ input: crashInput(kind, honour, step) }) };
  });
}

/** The `<step>:<call>` effects a plan's run has written once it completed. */
function finalEffects(plan: Plan): string[] {
  if (plan.kind === 'malformed') return [];
  if (plan.kind === 'broken') return ['0:0'];
  return EFFECTS_BY_STEP.flat();
}

/** The effects a plan's run has written when the worker phase is over (before the drains), when it ended where its plan says. */
function effectsBeforeDrain(plan: Plan): string[] {
  if (plan.kind === 'model-down' || plan.kind === 'poison') return EFFECTS_BY_STEP.slice(0, plan.step).flat();
  return finalEffects(plan);
}

const EXPECTED_PLACE: Record<PlanKind, string> = {
  ok: 'completed',
  'model-flaky': 'completed',
  broken: 'tool-dlq:tool',
  'model-down': 'tool-dlq:model',
  poison: 'tool-dlq:run',
  malformed: 'message-dlq',
};

interface WorkerExit {
  killed: boolean;
  pid: number;
  lines: string[];
}

function runWorker(databasePath: string, effectsPath: string, killAfterMs: number | undefined, killAfterResults: number): Promise<WorkerExit> {
  return new Promise((resolve, reject) => {
    const args = [databasePath, effectsPath, String(LEASE_MS), String(CONCURRENCY), String(RESPONSE_MS), String(MAX_DELIVERIES), String(killAfterResults)];
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/crash-worker.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    let stderr = '';
    let timer: ReturnType<typeof setTimeout> | undefined;
    let hung = false;
    const watchdog = setInterval(() => {
      if (Date.now() - lastLineAt < SILENCE_MS) return;
      hung = true;
      child.kill('SIGKILL');
    }, 1_000);
    let lastLineAt = Date.now();
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    createInterface({ input: child.stdout }).on('line', (line) => {
      lastLineAt = Date.now();
      lines.push(line);
      // the seeded moment is counted from the process's first handled message: one still warming
      // up has nothing in hand but leases, and killing it again and again would only run its
      // messages' delivery counts up to the bound
      if (line.startsWith('result ') && timer === undefined && killAfterMs !== undefined) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearInterval(watchdog);
      if (hung) return reject(new Error(`worker ${child.pid} wrote nothing for ${SILENCE_MS} ms (a hang); last lines: ${lines.slice(-5).join(' | ')}`));
      // killed by the seeded timer, or by itself after its share of the messages (killAfterResults)
      const killed = signal === 'SIGKILL';
      if (!killed && code !== 0) reject(new Error(`worker exited with ${code ?? signal}: ${stderr.slice(-2000)}`));
      else resolve({ killed, pid: child.pid ?? -1, lines });
    });
  });
}

type Places = Map<string, string[]>;

/** Where every message is now: `completed`, `message-dlq`, `tool-dlq:<kind>`; with the entries. */
async function placesOf(databasePath: string, batch: readonly Plan[]) {
  const stores = createSqliteStores({ path: databasePath });
  try {
    const messageEntries = (await stores.messageDlq.list()).map((record) => record.entry as MessageFailureEntry);
    const toolRecords = await stores.toolDlq.list();
    const toolEntries = toolRecords.map((record) => record.entry as ResumableEntry);
    const places: Places = new Map();
    const add = (id: string, place: string) => places.set(id, [...(places.get(id) ?? []), place]);
    for (const entry of messageEntries) add(entry.messageId ?? '?', 'message-dlq');
    for (const entry of toolEntries) add(entry.originalMessageId, `tool-dlq:${entry.kind}`);
    const statuses = new Map<string, string | undefined>();
    for (const message of batch) {
      const checkpoint = await stores.runs.get(`run_${message.id}`);
      statuses.set(message.id, checkpoint?.status);
      if (checkpoint?.status === 'completed') add(message.id, 'completed');
    }
    return { places, messageEntries, toolRecords, toolEntries, statuses, queueSize: await stores.queue.size() };
  } finally {
    await stores.close();
  }
}

/**
 * A message dead-lettered because its consumers were SIGKILLed more than `maxDeliveries` times is
 * where the delivery bound rightly puts it: a `run` entry whose last error is a crash (the run had
 * started), or a `DELIVERY_LIMIT_EXCEEDED` message entry that says every delivery ended without a
 * result (it had not).
 */
function deadLetteredByCrashes(plan: Plan, place: string, toolEntry: ResumableEntry | undefined, messageEntry: MessageFailureEntry | undefined): boolean {
  if (plan.kind === 'malformed' || plan.kind === 'poison') return false;
  if (place === 'tool-dlq:run') return toolEntry?.kind === 'run' && toolEntry.lastError.kind === 'crash';
  if (place === 'message-dlq') return messageEntry?.reason.code === 'DELIVERY_LIMIT_EXCEEDED' && /ended without a result/.test(messageEntry.reason.detail);
  return false;
}

function spawnDrain(databasePath: string, effectsPath: string) {
  return spawnFixture('test/fixtures/crash-drain.ts', [databasePath, effectsPath, String(CONCURRENCY)], { TOOLRUN_CRASH_WORLD: 'fixed' });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('worker crash test (SIGKILL at random points, restart until the queue is empty, then two drains at once)', () => {
  const directory = mkdtempSync(join(tmpdir(), 'toolrun-crash-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it(
    'loses nothing, routes every message to exactly one place, bounds poison runs, drains each entry once, and repeats no recorded side effect',
    { timeout: 600_000 }, // a last resort: a hang ends at the first silent worker (SILENCE_MS)
    async () => {
      const random = createSeededRandom(SEED);
      const databasePath = join(directory, 'toolrun.db');
      const effectsPath = join(directory, 'effects.db');
      const batch = makeBatch(random);
      const byId = new Map(batch.map((message) => [message.id, message]));
      const setup = createSqliteStores({ path: databasePath });
      for (const message of batch) await setup.queue.enqueue({ id: message.id, body: message.body });
      await setup.close();

      const startedAt = Date.now();
      const killedPids = new Set<number>();
      const exits: WorkerExit[] = [];
      let remaining = MESSAGES;
      let selfKillBounds = 0;
      while (remaining > 0) {
        // Every process but the last is killed (kills stop at MAX_KILLS), and one that is not runs
        // until the queue is empty: more processes than that is a loop.
        expect(exits.length, 'worker processes').toBeLessThanOrEqual(MAX_KILLS);
        const kill = killedPids.size < MAX_KILLS ? 20 + Math.floor(random() * 280) : undefined;
        // While kills are missing, a process may handle at most its share of what is left: with k
        // kills to go and r messages left, r / (k + 1) each, so at least k + 1 processes are needed and
        // the first k are all killed, however fast or slow the machine is.
        const missing = MIN_KILLS - killedPids.size;
        const killAfterResults = missing > 0 ? Math.max(1, Math.floor(remaining / (missing + 1))) : 0;
        if (killAfterResults > 0) selfKillBounds += 1;
        const exit = await runWorker(databasePath, effectsPath, kill, killAfterResults);
        exits.push(exit);
        if (exit.killed) killedPids.add(exit.pid);
        const probe = createSqliteStores({ path: databasePath });
        remaining = await probe.queue.size();
        await probe.close();
      }
      const elapsedMs = Date.now() - startedAt;
      if (process.env.CRASH_TEST_DUMP)
        writeFileSync(process.env.CRASH_TEST_DUMP, exits.map((exit) => `process ${exit.pid} killed=${exit.killed}\n${exit.lines.join('\n')}`).join('\n'));

      // Where every message ended after the worker phase.
      const before = await placesOf(databasePath, batch);
      expect(before.queueSize).toBe(0);
      const toolEntryOf = new Map(before.toolEntries.map((entry) => [entry.originalMessageId, entry]));
      const messageEntryOf = new Map(before.messageEntries.map((entry) => [entry.messageId ?? '?', entry]));
      const crashDeadLettered = new Set<string>();
      const misplaced: string[] = [];
      for (const message of batch) {
        const found = before.places.get(message.id) ?? [];
        if (found.length === 1 && found[0] === EXPECTED_PLACE[message.kind]) continue;
        if (found.length === 1 && deadLetteredByCrashes(message, found[0]!, toolEntryOf.get(message.id), messageEntryOf.get(message.id))) {
          crashDeadLettered.add(message.id);
          continue;
        }
        misplaced.push(`${message.id} (${message.kind} step ${message.step}): ${JSON.stringify(found)} run ${before.statuses.get(message.id)}`);
      }
      expect(misplaced, 'messages not in the one place their plan says').toEqual([]);
      const completedBefore = [...before.places.values()].filter((found) => found.includes('completed')).length;
      expect(before.messageEntries.length + before.toolEntries.length + completedBefore, 'entries + completed runs').toBe(MESSAGES);

      // What the entries say: the step to resume at, the kind of failure, the bound.
      const entryProblems: string[] = [];
      for (const entry of before.toolEntries) {
        const message = byId.get(entry.originalMessageId);
        if (!message || crashDeadLettered.has(message.id)) continue;
        const problem = (what: string) => entryProblems.push(`${message.id} (${message.kind}): ${what}: ${JSON.stringify(entry)}`);
        if (entry.kind === 'tool' && entry.toolName !== 'broken_service') problem('not the broken service');
        if (entry.kind === 'model') {
          if (entry.stepIndex !== message.step) problem(`model failure at step ${entry.stepIndex}, not ${message.step}`);
          if (entry.reason !== 'model-not-retryable' || entry.lastError.status !== 401 || entry.attempts !== 1) problem('not a rejected key, tried once');
        }
        if (entry.kind === 'run') {
          if (entry.stepIndex !== message.step) problem(`poison checkpoint at step ${entry.stepIndex}, not ${message.step}`);
          // deliveries killed by SIGKILL count too (as SQS counts receives), so the bound may be reached sooner in failures
          if (entry.deliveries < MAX_DELIVERIES) problem(`dead-lettered after ${entry.deliveries} deliveries, fewer than ${MAX_DELIVERIES}`);
          if (entry.lastError.kind !== 'exception' || !entry.lastError.message.includes('unsupported Unicode escape sequence'))
            problem('the last error is not the store rejection');
        }
        if (!entry.conversationRef.startsWith('conv_')) problem('no conversation to resume');
      }
      expect(entryProblems).toEqual([]);

      // Only poison deliveries count toward the bound (a busy SQLite is an outage, not counted), and
      // a poison run's store rejected it at most maxDeliveries times.
      const lines = exits.flatMap((exit) => exit.lines);
      const failed = lines.filter((line) => line.startsWith('failed ')).map((line) => line.split(' '));
      const countedFailures = failed.filter((parts) => parts[3] === '1');
      // (so a message dead-lettered as a crash was charged with kills only)
      expect(
        countedFailures.filter((parts) => byId.get(parts[1]!)?.kind !== 'poison').map((parts) => parts.join(' ')),
        'counted failures of healthy messages',
      ).toEqual([]);
      const effectsReader = new BetterSqlite3(effectsPath, { readonly: true });
      const rejections = new Map(
        (effectsReader.prepare('SELECT run_id, COUNT(*) AS count FROM store_rejections GROUP BY run_id').all() as Array<{ run_id: string; count: number }>).map(
          (row) => [row.run_id, row.count],
        ),
      );
      const flakyFailures = new Set((effectsReader.prepare('SELECT run_id FROM model_failures').all() as Array<{ run_id: string }>).map((row) => row.run_id));
      const effectsBefore = effectsReader.prepare('SELECT run_id, step_index, call_index FROM effects').all() as Array<{
        run_id: string;
        step_index: number;
        call_index: number;
      }>;
      effectsReader.close();
      const poison = batch.filter((message) => message.kind === 'poison');
      expect(
        poison
          .filter((message) => !((rejections.get(`run_${message.id}`) ?? 0) >= 1 && (rejections.get(`run_${message.id}`) ?? 0) <= MAX_DELIVERIES))
          .map((m) => `${m.id}: ${rejections.get(`run_${m.id}`) ?? 0} rejections`),
      ).toEqual([]);
      expect(
        [...rejections.keys()].filter((runId) => byId.get(runId.slice(4))?.kind !== 'poison'),
        'store rejections of other runs',
      ).toEqual([]);
      // every flaky run that completed met its 503
      const flaky = batch.filter((message) => message.kind === 'model-flaky' && !crashDeadLettered.has(message.id));
      expect(
        flaky.filter((message) => !flakyFailures.has(`run_${message.id}`)).map((message) => message.id),
        'model-flaky runs whose model never failed',
      ).toEqual([]);
      // the effects so far: exactly the plan's steps before its failure (each key at least once; no other key)
      const keysBefore = new Map<string, Set<string>>();
      for (const row of effectsBefore) keysBefore.set(row.run_id, (keysBefore.get(row.run_id) ?? new Set()).add(`${row.step_index}:${row.call_index}`));
      const effectProblems = batch.flatMap((message) => {
        const got = [...(keysBefore.get(`run_${message.id}`) ?? [])].sort();
        const allowed = finalEffects(message);
        if (crashDeadLettered.has(message.id)) return got.every((key) => allowed.includes(key)) ? [] : [`${message.id}: ${JSON.stringify(got)}`];
        const wanted = effectsBeforeDrain(message).sort();
        return JSON.stringify(got) === JSON.stringify(wanted)
          ? []
          : [`${message.id} (${message.kind} step ${message.step}): effects ${JSON.stringify(got)}, expected ${JSON.stringify(wanted)}`];
      });
      expect(effectProblems, 'side effects before the drains').toEqual([]);

      // Two drains at once, with the world fixed, once the claims killed workers held on dead-lettered runs have lapsed.
      const claimStores = createSqliteStores({ path: databasePath });
      try {
        const until = Date.now() + LEASE_MS + 2_000;
        for (;;) {
          const held = (await Promise.all(before.toolEntries.map((entry) => claimStores.claims?.get(runClaimKey(entry.runId))))).filter(
            (claim) => claim !== undefined,
          );
          if (held.length === 0) break;
          expect(Date.now(), `runs still claimed: ${JSON.stringify(held)}`).toBeLessThan(until);
          await sleep(50);
        }
      } finally {
        await claimStores.close();
      }
      const drainStartedAt = Date.now();
      const drains = [spawnDrain(databasePath, effectsPath), spawnDrain(databasePath, effectsPath)];
      await Promise.all(drains.map((drain) => drain.ready));
      for (const drain of drains) drain.child.stdin.end('go\n');
      const drainTimer = setTimeout(() => drains.forEach((drain) => drain.child.kill('SIGKILL')), DRAIN_BUDGET_MS);
      const drainExits = await Promise.all(drains.map((drain) => drain.exited));
      clearTimeout(drainTimer);
      const drainMs = Date.now() - drainStartedAt;
      expect(
        drainExits.map((exit) => exit.code),
        drains.map((drain) => drain.stderr()).join('\n'),
      ).toEqual([0, 0]);
      const reports = drains.map((drain) => (drain.events[0] as { pid: number; report: DrainReport }).report);
      const drainPids = new Set(drains.map((drain) => drain.child.pid ?? -1));

      // Each entry was completed by exactly one drain; the other found it in progress or completed.
      const completedBy = new Map<string, number>();
      const outcomes: Record<string, number> = {};
      for (const report of reports) {
        for (const entry of report.entries) {
          outcomes[entry.status] = (outcomes[entry.status] ?? 0) + 1;
          if (entry.status === 'completed') completedBy.set(entry.id, (completedBy.get(entry.id) ?? 0) + 1);
        }
      }
      expect(
        Object.keys(outcomes).filter((status) => !['completed', 'in_progress', 'already_completed'].includes(status)),
        JSON.stringify(reports),
      ).toEqual([]);
      expect(
        before.toolRecords
          .filter((record) => completedBy.get(record.id) !== 1)
          .map((record) => `${record.id}: completed ${completedBy.get(record.id) ?? 0} times`),
      ).toEqual([]);
      expect(reports[0]!.removed + reports[1]!.removed).toBe(before.toolRecords.length);

      const after = await placesOf(databasePath, batch);
      expect(after.toolEntries, 'left in the tool DLQ after the drains').toEqual([]);
      const finalPlace = (message: Plan) =>
        message.kind === 'malformed' || (crashDeadLettered.has(message.id) && before.places.get(message.id)?.[0] === 'message-dlq')
          ? 'message-dlq'
          : 'completed';
      expect(
        batch
          .filter((message) => JSON.stringify(after.places.get(message.id) ?? []) !== JSON.stringify([finalPlace(message)]))
          .map((m) => `${m.id} (${m.kind}): ${JSON.stringify(after.places.get(m.id) ?? [])}`),
      ).toEqual([]);

      // The drains called the model only for the remaining steps, each step once.
      const effects = new BetterSqlite3(effectsPath, { readonly: true });
      const drainCalls = effects
        .prepare('SELECT run_id, step_index, COUNT(*) AS count FROM model_calls GROUP BY run_id, step_index ORDER BY run_id, step_index')
        .all() as Array<{ run_id: string; step_index: number; count: number }>;
      expect(
        drainCalls.filter((row) => row.count > 1),
        'a model call repeated by the drains',
      ).toEqual([]);
      const firstDrainStep = new Map<string, number>();
      for (const row of drainCalls) if (!firstDrainStep.has(row.run_id)) firstDrainStep.set(row.run_id, row.step_index);
      // (the step after a failed tool's; a crashed run's own step, or the next one when it died inside a tool step)
      const resumesAt = (entry: ResumableEntry) =>
        entry.kind === 'tool'
          ? [entry.stepIndex + 1]
          : entry.kind === 'run' && entry.lastError.kind === 'crash'
            ? [entry.stepIndex, entry.stepIndex + 1]
            : [entry.stepIndex];
      expect(
        before.toolEntries
          .filter((entry) => !resumesAt(entry).includes(firstDrainStep.get(entry.runId) ?? -1))
          .map((entry) => `${entry.runId} (${entry.kind} at ${entry.stepIndex}): first drain call at ${firstDrainStep.get(entry.runId)}`),
      ).toEqual([]);

      // Side effects: every expected one happened; duplicates only in the documented window.
      const rows = effects.prepare('SELECT run_id, step_index, call_index, pid, rowid FROM effects ORDER BY rowid').all() as Array<{
        run_id: string;
        step_index: number;
        call_index: number;
        pid: number;
      }>;
      const keyHits = (effects.prepare('SELECT COUNT(*) AS count FROM effect_key_hits').get() as { count: number }).count;
      effects.close();
      const byKey = new Map<string, Array<{ pid: number }>>();
      for (const row of rows) {
        const key = `${row.run_id}:${row.step_index}:${row.call_index}`;
        byKey.set(key, [...(byKey.get(key) ?? []), { pid: row.pid }]);
      }
      const expectedKeys = batch.flatMap((message) =>
        finalPlace(message) === 'completed' ? finalEffects(message).map((suffix) => `run_${message.id}:${suffix}`) : [],
      );
      expect(
        expectedKeys.filter((key) => !byKey.has(key)),
        'side effects missing',
      ).toEqual([]);
      const crashMessageDlq = batch
        .filter((message) => crashDeadLettered.has(message.id) && finalPlace(message) === 'message-dlq')
        .map((message) => `run_${message.id}:`);
      expect(
        [...byKey.keys()].filter((key) => !expectedKeys.includes(key) && !crashMessageDlq.some((prefix) => key.startsWith(prefix))),
        'unexpected side effects',
      ).toEqual([]);
      const honoured = new Set(batch.filter((message) => message.honour).map((message) => `run_${message.id}`));
      const duplicates = [...byKey.entries()].filter(([, writes]) => writes.length > 1);
      const honouredDuplicates = duplicates.filter(([key]) => honoured.has(key.split(':')[0]!));
      const windowHits = duplicates.filter(([key]) => !honoured.has(key.split(':')[0]!));
      expect(
        honouredDuplicates.map(([key]) => key),
        'duplicates despite the idempotency key',
      ).toEqual([]);
      // A duplicate is only acceptable when every write but the last came from a process that was killed
      // (never from a drain: nothing kills them).
      const unexplained = windowHits.filter(([, writes]) => writes.slice(0, -1).some((write) => !killedPids.has(write.pid)));
      expect(
        unexplained.map(([key]) => key),
        'duplicates not explained by a kill',
      ).toEqual([]);
      const drainWrites = rows.filter((row) => drainPids.has(row.pid)).length;

      // Numbers.
      const deliveries = lines.filter((line) => line.startsWith('deliver '));
      const resumes = deliveries.filter((line) => line.split(' ')[3] === 'running');
      const resumesMidStep = resumes.filter((line) => line.split(' ')[5] === 'true');
      const alreadyFinished = lines.filter((line) => line.startsWith('result ') && line.endsWith(' true'));
      const countBy = (values: readonly string[]) =>
        Object.fromEntries([...new Set(values)].sort().map((value) => [value, values.filter((other) => other === value).length]));
      const report = {
        seed: SEED,
        responseMs: RESPONSE_MS,
        messages: MESSAGES,
        plans: countBy(batch.map((message) => message.kind)),
        workerProcesses: exits.length,
        kills: killedPids.size,
        processesWithAKillBound: selfKillBounds,
        redeliveries: deliveries.length,
        resumesOfRunningRuns: resumes.length,
        resumesInsideAToolStep: resumesMidStep.length,
        redeliveriesOfFinishedRuns: alreadyFinished.length,
        // of which the message had been dead-lettered (the keyed push added nothing)
        redeliveriesAlreadyDeadLettered: alreadyFinished.filter((line) => / (rejected|tool_failed|model_failed|delivery_limit_exceeded) true$/.test(line))
          .length,
        failedDeliveries: failed.length,
        countedFailedDeliveries: countedFailures.length,
        poisonStoreRejections: [...rejections.values()].reduce((sum, count) => sum + count, 0),
        toolDlqBeforeDrains: countBy(before.toolEntries.map((entry) => entry.kind)),
        messageDlq: before.messageEntries.length,
        deadLetteredByCrashes: crashDeadLettered.size,
        drains: { outcomes, removed: reports.map((drainReport) => drainReport.removed), modelCalls: drainCalls.length, sideEffects: drainWrites, ms: drainMs },
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
    },
  );
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
    const dlq: DeadLetterQueue<unknown> = stores[queue];
    const push = dlq.push.bind(dlq);
    dlq.push = async (entry) => {
      const id = await push(entry);
      if (crashes === 0) armed = true;
      return id;
    };
    const pushOnce = dlq.pushOnce.bind(dlq);
    dlq.pushOnce = async (key, entry) => {
      const result = await pushOnce(key, entry);
      if (crashes === 0) armed = true;
      return result;
    };
    const crashOnce =
      <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
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

  // the stores and the worker on one clock: the queue's redelivery delay and the worker's wait for it agree
  async function runOnce(stores: Stores, clock: Clock, body: string) {
    await stores.queue.enqueue({ id: 'm-1', body });
    const model = createScriptedModel([{ toolCalls: [{ id: 'c1', name: 'broken_service', args: '{}' }], usage: { input: 10, output: 1 } }]);
    const errors: unknown[] = [];
    // the redelivery must not read the DLQs (that would cost O(DLQ depth) per redelivered message)
    let dlqReads = 0;
    const lists = { messageDlq: stores.messageDlq.list, toolDlq: stores.toolDlq.list };
    for (const queue of ['messageDlq', 'toolDlq'] as const) {
      const dlq: DeadLetterQueue<unknown> = stores[queue];
      const list = lists[queue].bind(dlq);
      dlq.list = async (options) => {
        dlqReads += 1;
        return list(options);
      };
    }
    const worker = createWorker({
      model,
      tools: [broken],
      stores,
      clock,
      runtimeOptions: { clock },
      pollIntervalMs: 1,
      onError: (error) => errors.push(error),
    });
    await worker.runUntilEmpty();
    stores.messageDlq.list = lists.messageDlq;
    stores.toolDlq.list = lists.toolDlq;
    return { errors, model, dlqReads, stats: worker.stats };
  }

  it('a malformed message is in the message DLQ once, though the worker died before acknowledging it', async () => {
    const clock = createAutoAdvancingClock();
    const stores = createMemoryStores({ clock });
    const crash = crashAfterPush(stores, 'messageDlq');
    const { errors, model, dlqReads, stats } = await runOnce(stores, clock, '{not json');
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
    const clock = createAutoAdvancingClock();
    const stores = createMemoryStores({ clock });
    const crash = crashAfterPush(stores, 'toolDlq');
    const { errors, dlqReads, stats } = await runOnce(stores, clock, '{"input": "call the broken service"}');
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
