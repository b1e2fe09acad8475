/**
 * SIGKILL inside the SQLite backend's group commits: a child process (test/fixtures/sqlite-group-
 * worker.ts) runs a worker at concurrency 4 over 12 queued 3-step runs — its step commits,
 * reservations, claims and acknowledgements share group transactions — and kills itself right before
 * its k-th statement inside a group transaction (between two writes of the group, inside one, or
 * before its COMMIT), for k spread over all of them. The test process then reads what the file
 * holds, resumes with a worker of its own (the leases of the dead process ended by its clock), and
 * checks, for every k:
 * - every message ends as a completed run, with the conversation an uninterrupted run has; nothing
 *   is dead-lettered and nothing is left in the queue;
 * - the file is never left half-way through a step: each checkpoint and its conversation agree;
 * - no tool call whose ledger row the file held runs again, a call runs at most twice and twice only
 *   when the dead process ran it and its row was not committed (the one documented window); no model
 *   turn of a committed step is asked again.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../src/agent/messages.ts';
import { createWorker, type RunCheckpoint } from '../src/index.ts';
import { systemClock, type Clock } from '../src/ground/ports/clock.ts';
import { createSqliteStores } from '../src/stores/sqlite/index.ts';
import { comparableConversation, spawnCrashChild } from './fixtures/crash-child.ts';
import { createGroupCrashAgent, type GroupCrashLogEntry } from './fixtures/sqlite-group-agent.ts';

const repo = fileURLToPath(new URL('..', import.meta.url));
const child = join(repo, 'test/fixtures/sqlite-group-worker.ts');
const directory = mkdtempSync(join(tmpdir(), 'toolrun-group-crash-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const MESSAGES = 12;
/** Kill points tried, spread evenly over the group statements of an uninterrupted run. */
const KILL_POINTS = 40;
/** Past every lease and claim of the killed process (the worker's defaults are 5 minutes). */
const LATER_MS = 3_600_000;

const readLog = (path: string): GroupCrashLogEntry[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as GroupCrashLogEntry);

async function seed(path: string) {
  const stores = createSqliteStores({ path });
  for (let index = 0; index < MESSAGES; index++) await stores.queue.enqueue({ id: `m${index}`, body: JSON.stringify({ input: `run ${index}` }) });
  await stores.close();
}

function runChild(databasePath: string, logPath: string, killAt: number): Promise<'killed' | 'finished'> {
  writeFileSync(logPath, '');
  return spawnCrashChild(child, [databasePath, logPath, String(killAt)], logPath).ended;
}

describe('SQLite group commits under SIGKILL (a worker killed before each statement of its group transactions)', () => {
  it('resumes every run to the same conversation; a committed call or model turn never runs again', { timeout: 900_000 }, async () => {
    // an uninterrupted run: the reference conversations and the number of group statements
    const referencePath = join(directory, 'reference.db');
    const referenceLog = join(directory, 'reference.log');
    await seed(referencePath);
    expect(await runChild(referencePath, referenceLog, 0)).toBe('finished');
    const total = readLog(referenceLog).find((entry) => entry.finished)?.groupStatements ?? 0;
    // enough writes share groups for the kill points to fall inside them
    expect(total).toBeGreaterThan(50);
    const reference = new Map<string, unknown[]>();
    const referenceStores = createSqliteStores({ path: referencePath });
    for (let index = 0; index < MESSAGES; index++) {
      const run = await referenceStores.runs.get(`run_m${index}`);
      expect(run?.status).toBe('completed');
      reference.set(`run_m${index}`, comparableConversation((await referenceStores.conversations.get(run!.conversationRef))!));
    }
    await referenceStores.close();

    const killPoints = [...new Set(Array.from({ length: KILL_POINTS }, (_, index) => 1 + Math.floor((index * (total - 1)) / (KILL_POINTS - 1))))];
    const summary = { killed: 0, finished: 0, repeatedEffects: 0, committedRuns: 0 };
    const check = async (killAt: number) => {
      const databasePath = join(directory, `kill-${killAt}.db`);
      const logPath = join(directory, `kill-${killAt}.log`);
      await seed(databasePath);
      // a run's statements vary a little with timing: a late kill point may lie past the last group
      const outcome = await runChild(databasePath, logPath, killAt);
      summary[outcome === 'killed' ? 'killed' : 'finished'] += 1;
      const killed = readLog(logPath);
      if (outcome === 'killed') expect(killed.at(-1), `the kill at ${killAt} came inside a group`).toMatchObject({ kill: expect.any(String), group: true });

      const later: Clock = { ...systemClock, now: () => Date.now() + LATER_MS };
      const stores = createSqliteStores({ path: databasePath, clock: later });
      try {
        // what the file holds after the kill
        const before = new Map<string, RunCheckpoint>();
        for (let index = 0; index < MESSAGES; index++) {
          const run = await stores.runs.get(`run_m${index}`);
          if (run === undefined) continue;
          before.set(run.runId, run);
          const stored = (await stores.conversations.get(run.conversationRef)) as ChatMessage[] | undefined;
          // never half a step: the conversation the checkpoint points at holds the step's messages
          expect(stored, `conversation of ${run.runId} at kill point ${killAt}`).toBeDefined();
          const assistants = stored!.filter((message) => message.role === 'assistant').length;
          expect(assistants).toBe(run.stepIndex + (run.data?.pendingStep === true ? 1 : 0));
          if (run.status === 'completed') summary.committedRuns += 1;
        }
        const keys = Array.from({ length: MESSAGES }, (_, index) => [`run_m${index}:0:0`, `run_m${index}:1:0`, `run_m${index}:1:1`]).flat();
        const heldKeys = new Set<string>();
        for (const key of keys) if ((await stores.ledger.get(key)) !== undefined) heldKeys.add(key);

        const resumedLog: GroupCrashLogEntry[] = [];
        await createWorker({ stores, ...createGroupCrashAgent((entry) => resumedLog.push(entry)), concurrency: 4, clock: later }).runUntilEmpty();

        expect(await stores.queue.size()).toBe(0);
        expect(await stores.messageDlq.list()).toEqual([]);
        expect(await stores.toolDlq.list()).toEqual([]);
        for (const [runId, conversation] of reference) {
          const after = await stores.runs.get(runId);
          expect(after, `${runId} at kill point ${killAt}`).toMatchObject({ status: 'completed', stepIndex: 3 });
          expect(comparableConversation((await stores.conversations.get(after!.conversationRef))!)).toEqual(conversation);
          // no model turn of a step the file held is asked again
          const held = before.get(runId);
          const firstOpen = held === undefined ? 0 : held.status === 'completed' ? 3 : held.stepIndex + (held.data?.pendingStep === true ? 1 : 0);
          const resumedSteps = resumedLog.filter((entry) => entry.model?.runId === runId).map((entry) => entry.model!.step);
          expect(
            resumedSteps.every((step) => step >= firstOpen),
            `${runId} resumed steps ${resumedSteps} after ${firstOpen} at kill point ${killAt}`,
          ).toBe(true);
        }
        for (const key of keys) {
          const inKilled = killed.filter((entry) => entry.effect === key).length;
          const inResumed = resumedLog.filter((entry) => entry.effect === key).length;
          expect(inKilled + inResumed, `effect ${key} at kill point ${killAt}`).toBe(inKilled === 1 && inResumed === 1 ? 2 : 1);
          if (heldKeys.has(key)) expect(inResumed, `effect ${key} ran again though its row was committed (kill point ${killAt})`).toBe(0);
          if (inKilled + inResumed === 2) summary.repeatedEffects += 1;
        }
      } finally {
        await stores.close();
      }
    };
    // two children at a time (each bounded by its progress: see spawnCrashChild)
    for (let index = 0; index < killPoints.length; index += 2) await Promise.all(killPoints.slice(index, index + 2).map(check));
    console.log(
      `[sqlite group commit crash] ${total} group statements in an uninterrupted run; kill points ${killPoints.length}, killed inside a group ${summary.killed}, finished ${summary.finished}, runs completed before the kill ${summary.committedRuns}, repeated effects (window) ${summary.repeatedEffects}`,
    );
    // nearly every kill point lies inside a group (the last ones may fall past a run with fewer)
    expect(summary.killed).toBeGreaterThanOrEqual(killPoints.length - 3);
  });
});
