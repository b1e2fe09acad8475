/**
 * `toolrun dlq drain` and `toolrun dlq replay` on an entry an SDK host (Anthropic's tool runner)
 * dead-lettered into SQLite: routed to the continuation the config registers under `hosts`; without
 * one, the entry stays with a message naming the host, and nothing runs.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAnthropicToolRunner } from '../src/adapters/anthropic/index.ts';
import { createToolRuntime } from '../src/core/create-tool-runtime.ts';
import { createSqliteStores } from '../src/stores/sqlite/index.ts';
import { messageText, messageToolUse } from './adapters/fixtures/anthropic-messages.ts';
import { startScriptedServer, type ScriptedServer } from './adapters/fixtures/openai-scripted-server.ts';
import { hostReplayTools } from './fixtures/host-replay-tools.ts';
import { toolrunInProcess } from './fixtures/toolrun-in-process.ts';

const directory = mkdtempSync(join(tmpdir(), 'toolrun-cli-host-'));
const CONFIG = 'test/fixtures/host-cli-config.ts';
let server: ScriptedServer;
beforeAll(async () => {
  server = await startScriptedServer();
});
afterAll(async () => {
  await server.close();
  rmSync(directory, { recursive: true, force: true });
});

const lines = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : []);

describe('toolrun dlq with a host entry', () => {
  it('drain without the host registered leaves it with a message; replay with it registered completes the run', { timeout: 60_000 }, async () => {
    const db = join(directory, 'host.db');
    const writes = join(directory, 'writes');
    const stores = createSqliteStores({ path: db });
    const runtime = createToolRuntime({ retry: { backoff: { baseDelayMs: 1, jitterMs: 0 }, minDelayMs: 1 }, tools: hostReplayTools(writes, () => false) });
    server.script([() => messageToolUse([{ id: 'toolu_1', name: 'save_order', input: { order: 'O-1' } }]), () => messageText('could not save')]);
    const client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: server.origin, maxRetries: 0 });
    await runAnthropicToolRunner(
      client,
      { model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [{ role: 'user', content: 'Save O-1' }] },
      { tools: runtime, deadLetter: { stores } },
    );
    const [record] = await stores.toolDlq.list();
    await stores.close();
    expect(record).toBeDefined();
    const env = { HOST_CLI_WRITES: writes, HOST_CLI_ORIGIN: server.origin };

    server.script([]);
    const drained = await toolrunInProcess(['dlq', 'drain', '--config', CONFIG, '--db', db, '--remove-expired', '--json'], env);
    expect(drained.code).toBe(0);
    const report = JSON.parse(drained.stdout) as { removed: number; entries: Array<{ host?: string; status: string; message?: string }> };
    expect(report.removed).toBe(0);
    expect(report.entries).toEqual([
      expect.objectContaining({
        host: 'anthropic',
        status: 'invalid_entry',
        message: expect.stringMatching(/no continuation is registered for host "anthropic"/),
      }),
    ]);
    expect(server.requests.length + server.unexpected.length).toBe(0);
    expect(lines(writes)).toEqual([]);

    server.script([() => messageText('saved O-1')]);
    const replayed = await toolrunInProcess(['dlq', 'replay', record!.id, '--config', CONFIG, '--db', db], { ...env, HOST_CLI_REGISTER: '1' });
    expect(replayed.stderr).toBe('');
    expect(replayed.code).toBe(0);
    expect(replayed.stdout).toContain(`replayed ${record!.id} (run ${record!.entry.runId}): completed, 1 model call; removed from the tool DLQ`);
    expect(server.requests).toHaveLength(1);
    expect(lines(writes)).toEqual(['O-1']);
    const after = createSqliteStores({ path: db });
    expect(await after.toolDlq.list()).toEqual([]);
    await after.close();
  });
});
