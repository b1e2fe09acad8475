/**
 * SIGKILL during a host replay (Anthropic's tool runner, the AI SDK's `generateText`): a child
 * process replays a dead-lettered entry from SQLite stores shared with this process and is killed
 * while the host's loop waits on the model, after the failed tool ran again. The entry must still
 * be in the DLQ; a replay at once finds the run `in_progress` (the dead replayer's claim); once the
 * claim's lease (3 s) expires, a replay here completes the run — calling the model for the
 * remaining step only — without applying the write a second time (the ledger holds its outcome).
 * And the Anthropic example, run as a process: its last line is its measured counts.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, describe, expect, it } from 'vitest';
import { aiSdkContinuation, toAiSdk } from '../src/adapters/ai-sdk/index.ts';
import { anthropicContinuation, runAnthropicToolRunner } from '../src/adapters/anthropic/index.ts';
import { createToolRuntime } from '../src/core/create-tool-runtime.ts';
import { createSqliteStores } from '../src/stores/sqlite/index.ts';
import type { HostRegistry } from '../src/worker/host-continuation.ts';
import { replayDeadLetter } from '../src/worker/replay-dead-letter.ts';
import { messageText, messageToolUse } from './adapters/fixtures/anthropic-messages.ts';
import { generateResult } from './adapters/fixtures/ai-sdk-scenarios.ts';
import { spawnCrashChild } from './fixtures/crash-child.ts';
import { hostReplayTools } from './fixtures/host-replay-tools.ts';

const directory = mkdtempSync(join(tmpdir(), 'toolrun-host-sigkill-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const FAST_RETRY = { backoff: { baseDelayMs: 1, jitterMs: 0 }, minDelayMs: 1 };
const CHILD = 'test/fixtures/host-replay-child.ts';

/** A Messages endpoint: answers with `answer()` unless `hold` is set, then keeps the request open (the replayer waits on the model). */
async function messagesEndpoint() {
  const state = { hold: false, requests: 0, held: [] as ServerResponse[], answer: () => messageText('done') as { body: unknown } };
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      state.requests += 1;
      if (state.hold) {
        state.held.push(response);
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(state.answer().body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () => {
    for (const response of state.held) response.destroy();
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { state, origin, close };
}

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const lines = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : []);

/** Kills the child replayer once its continuation started, then checks the entry is claimable again after the lease. */
async function killDuringReplayThenComplete(options: {
  host: string;
  dbPath: string;
  writesPath: string;
  recordId: string;
  origin?: string;
  hosts: HostRegistry;
  modelCalls: () => number;
}) {
  const markerPath = join(directory, `${options.host}.marker`);
  const child = spawnCrashChild(
    CHILD,
    [options.host, options.dbPath, options.writesPath, markerPath, options.recordId, ...(options.origin ? [options.origin] : [])],
    markerPath,
  );
  await until(() => lines(markerPath).length > 0, 50_000);
  await new Promise((resolve) => setTimeout(resolve, 200)); // the host's model call is in flight
  child.kill();
  expect(await child.ended).toBe('killed');
  expect(lines(options.writesPath)).toEqual(['O-1']);

  const stores = createSqliteStores({ path: options.dbPath });
  try {
    const record = await stores.toolDlq.get(options.recordId);
    expect(record).toBeDefined();
    const replay = () =>
      replayDeadLetter(record!, {
        stores,
        tools: hostReplayTools(options.writesPath, () => true),
        model: async () => ({ text: 'not toolrun’s loop', usage: { input: 0, output: 0 } }),
        hosts: options.hosts,
        claimLeaseMs: 1_000,
      });
    const before = options.modelCalls();
    const first = await replay();
    if (first.status === 'in_progress') {
      // the killed replayer's claim: it frees itself when its lease (3 s) expires
      await new Promise((resolve) => setTimeout(resolve, 3_300));
    }
    const done = first.status === 'in_progress' ? await replay() : first;
    expect(done).toMatchObject({ status: 'completed', host: options.host, modelCalls: 1, removed: true });
    expect(options.modelCalls() - before).toBe(1);
    expect(lines(options.writesPath)).toEqual(['O-1']);
    expect(await stores.toolDlq.list()).toEqual([]);
    return first.status;
  } finally {
    await stores.close();
  }
}

describe('SIGKILL during a host replay', () => {
  it('Anthropic tool runner: the entry stays, claimable again after the lease; the write applied once', { timeout: 120_000 }, async () => {
    const endpoint = await messagesEndpoint();
    const dbPath = join(directory, 'anthropic.db');
    const writesPath = join(directory, 'anthropic.writes');
    const stores = createSqliteStores({ path: dbPath });
    try {
      let up = false;
      const runtime = createToolRuntime({ retry: FAST_RETRY, tools: hostReplayTools(writesPath, () => up) });
      let turn = 0;
      endpoint.state.answer = () =>
        ++turn === 1 ? messageToolUse([{ id: 'toolu_1', name: 'save_order', input: { order: 'O-1' } }]) : messageText('could not save');
      const client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: endpoint.origin, maxRetries: 0 });
      await runAnthropicToolRunner(
        client,
        { model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [{ role: 'user', content: 'Save O-1' }] },
        { tools: runtime, deadLetter: { stores } },
      );
      const [record] = await stores.toolDlq.list();
      expect(record).toBeDefined();
      up = true;
      endpoint.state.hold = true;
      const firstStatus = killDuringReplayThenComplete({
        host: 'anthropic',
        dbPath,
        writesPath,
        recordId: record!.id,
        origin: endpoint.origin,
        hosts: { anthropic: anthropicContinuation({ client, params: { model: 'claude-sonnet-4-5', max_tokens: 1024 } }) },
        modelCalls: () => endpoint.state.requests,
      });
      await until(() => endpoint.state.held.length > 0, 50_000);
      endpoint.state.hold = false;
      endpoint.state.answer = () => messageText('saved O-1');
      expect(await firstStatus).toBe('in_progress');
    } finally {
      await stores.close();
      await endpoint.close();
    }
  });

  it('AI SDK generateText: the entry stays, claimable again after the lease; the write applied once', { timeout: 120_000 }, async () => {
    const dbPath = join(directory, 'ai-sdk.db');
    const writesPath = join(directory, 'ai-sdk.writes');
    const stores = createSqliteStores({ path: dbPath });
    try {
      let up = false;
      const runtime = createToolRuntime({ retry: FAST_RETRY, tools: hostReplayTools(writesPath, () => up) });
      const turns = [{ toolCalls: [{ id: 'c1', name: 'save_order', input: '{"order":"O-1"}' }] }, { text: 'could not save' }];
      let liveCalls = 0;
      const live = new MockLanguageModelV3({ doGenerate: async () => generateResult(turns[liveCalls++] ?? { text: 'done' }, 'v3') as never });
      const { tools, prepareStep } = toAiSdk(runtime, { deadLetter: { stores } });
      await generateText({ model: live, tools, prepareStep, stopWhen: stepCountIs(5), prompt: 'save O-1' });
      const [record] = await stores.toolDlq.list();
      expect(record).toBeDefined();
      up = true;
      let replayCalls = 0;
      const replayModel = new MockLanguageModelV3({ doGenerate: async () => (replayCalls++, generateResult({ text: 'saved O-1' }, 'v3') as never) });
      const firstStatus = await killDuringReplayThenComplete({
        host: 'ai-sdk',
        dbPath,
        writesPath,
        recordId: record!.id,
        hosts: {
          'ai-sdk': aiSdkContinuation((messages, context) =>
            generateText({ model: replayModel, tools: toAiSdk(context.runtime).tools, messages: messages as never, stopWhen: stepCountIs(5) }),
          ),
        },
        modelCalls: () => replayCalls,
      });
      expect(firstStatus).toBe('in_progress');
    } finally {
      await stores.close();
    }
  });
});

describe('examples/anthropic/dead-letter-and-replay.ts', () => {
  it('prints its measured counts as its last line: one entry, replayed twice at once, one write', { timeout: 120_000 }, () => {
    const example = fileURLToPath(new URL('../examples/anthropic/dead-letter-and-replay.ts', import.meta.url));
    const output = execFileSync(process.execPath, ['--import', 'tsx', example], { encoding: 'utf8', timeout: 90_000 });
    expect(JSON.parse(output.trim().split('\n').at(-1)!)).toEqual({
      host: 'anthropic',
      dlqEntries: 1,
      messageDlqEntries: 0,
      replayStatus: 'completed',
      modelCallsLive: 2,
      modelCallsOnReplay: 1,
      sideEffects: 1,
    });
  });
});
