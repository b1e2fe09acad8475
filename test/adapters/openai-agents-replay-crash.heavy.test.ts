/**
 * A replay of an OpenAI Agents entry killed with SIGKILL (a child process, on a SQLite database
 * shared with this one) while the SDK's continued run waits for the model: the entry stays, the
 * run's claim lapses with its lease, and the next replay completes it without applying the write
 * the killed replay had applied (the idempotency ledger), the model called once more. And the
 * example, run as a process: its last line is its measured counts.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, OpenAIProvider, Runner, setTracingDisabled } from '@openai/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayOpenAiAgentsDeadLetter, toOpenAiAgents } from '../../src/adapters/openai-agents/index.ts';
import { createSqliteStores } from '../../src/stores/sqlite/index.ts';
import { createAutoAdvancingClock } from '../../src/testing/auto-advancing-clock.ts';
import { spawnCrashChild, type CrashChild } from '../fixtures/crash-child.ts';
import { orderAgent, orderRuntime, writesIn } from '../fixtures/openai-agents-orders.ts';
import { responsesText, responsesToolCall, startScriptedServer, type ScriptedServer } from './fixtures/openai-scripted-server.ts';

const CHILD = fileURLToPath(new URL('../fixtures/openai-agents-replay-child.ts', import.meta.url));
const LEASE_MS = 1_500;

let server: ScriptedServer;
let dir: string;
beforeAll(async () => {
  setTracingDisabled(true);
  server = await startScriptedServer();
  dir = mkdtempSync(join(tmpdir(), 'toolrun-oai-crash-'));
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a replay of an OpenAI Agents entry killed mid-way', () => {
  it('leaves the entry claimable again; the next replay completes it, the write applied once', { timeout: 60_000 }, async () => {
    const dbPath = join(dir, 'toolrun.db');
    const writesPath = join(dir, 'writes.log');
    const stores = createSqliteStores({ path: dbPath });
    try {
      // the live run: the write tool fails past its budget, one entry
      const live = orderRuntime({ writesPath, down: () => true, clock: createAutoAdvancingClock() });
      const { tools, runConfig } = toOpenAiAgents(live, { deadLetter: { stores } });
      server.script([() => responsesToolCall({ id: 'c1', name: 'save_order', arguments: '{"order":"O-1"}' }), () => responsesText('could not save')]);
      const modelProvider = new OpenAIProvider({ apiKey: 'sk-test', baseURL: `${server.origin}/v1`, useResponses: true });
      await new Runner({ ...runConfig, modelProvider }).run(new Agent({ name: 'orders', model: 'gpt-4o', tools }), 'save O-1');
      const [record] = await stores.toolDlq.list();
      expect(record).toBeDefined();

      // a replay in another process, killed when its continued run calls the model
      const spawned: { child?: CrashChild } = {};
      server.script([
        () => {
          spawned.child?.kill();
          return responsesText('never read');
        },
      ]);
      const logPath = join(dir, 'child.log');
      spawned.child = spawnCrashChild(CHILD, [dbPath, server.origin, writesPath, String(LEASE_MS), logPath], logPath);
      expect(await spawned.child.ended).toBe('killed');
      expect(server.requests).toHaveLength(1);
      expect(writesIn(writesPath)).toEqual(['O-1']);
      expect((await stores.toolDlq.list()).map((entry) => entry.id)).toEqual([record!.id]);

      // the fixed tool, here; the killed replay's claim holds until its lease lapses
      const runtime = orderRuntime({ writesPath, down: () => false });
      const { continueRun } = orderAgent(runtime, server.origin);
      server.script([() => responsesText('saved O-1')]);
      const early = await replayOpenAiAgentsDeadLetter(record!, { stores, runtime, continueRun });
      expect(early.status).toBe('in_progress');
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 500));
      const replayed = await replayOpenAiAgentsDeadLetter(record!, { stores, runtime, continueRun });
      expect(replayed).toMatchObject({ status: 'completed', modelCalls: 1, text: 'saved O-1', removed: true });
      expect(server.requests).toHaveLength(1);
      expect(writesIn(writesPath)).toEqual(['O-1']);
      expect(await stores.toolDlq.list()).toEqual([]);
    } finally {
      await stores.close();
    }
  });
});

describe('examples/openai-agents/dead-letter-and-replay.ts', () => {
  it('prints its measured counts as its last line: one entry, replayed twice at once, one write', { timeout: 120_000 }, () => {
    const example = fileURLToPath(new URL('../../examples/openai-agents/dead-letter-and-replay.ts', import.meta.url));
    const output = execFileSync(process.execPath, ['--import', 'tsx', example], { encoding: 'utf8', timeout: 90_000 });
    expect(JSON.parse(output.trim().split('\n').at(-1)!)).toEqual({
      host: 'openai-agents',
      dlqEntries: 1,
      messageDlqEntries: 0,
      replayStatus: 'completed',
      modelCallsLive: 2,
      modelCallsOnReplay: 1,
      sideEffects: 1,
    });
  });
});
