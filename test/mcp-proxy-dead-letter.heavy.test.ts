/**
 * `toolrun mcp-proxy` dead-letters a guarded call that exhausts its retries (in-process proxy, the
 * booking MCP server as its stdio upstream, SQLite stores): one tool-DLQ entry of host `mcp`, the
 * arguments redacted, the call and its MCP origin in the conversation store, the message DLQ empty,
 * the client still answered with the failure. Its replay (the `mcp` host's continuation) re-issues
 * the call upstream once under the claim and the ledger, two replays at once included.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpProxyContinuation } from '../src/adapters/mcp/index.ts';
import { createMcpProxy, type McpProxy } from '../src/cli/mcp-proxy/mcp-proxy.ts';
import type { McpProxiedCall } from '../src/adapters/mcp/mcp-proxy-continuation.ts';
import type { ToolFailureEntry } from '../src/ground/dead-letter-entries.ts';
import { createRedactor } from '../src/core/redact.ts';
import { createDashboardApp } from '../src/dashboard/index.ts';
import { systemClock } from '../src/ground/ports/clock.ts';
import { createMemoryBreakerStateStore } from '../src/stores/memory/memory-breaker-state-store.ts';
import { createSharedBreaker, type SharedBreakerEvent } from '../src/policies/shared-breaker.ts';
import { createMemoryStores } from '../src/stores/memory/index.ts';
import { createSqliteStores, type SqliteStores } from '../src/stores/sqlite/index.ts';
import { hostOfEntry } from '../src/worker/host-entry.ts';
import { replayHostRun } from '../src/worker/replay-host-run.ts';
import { bundledCli } from './fixtures/mcp-cli.ts';
import { toolrunInProcess } from './fixtures/toolrun-in-process.ts';

const BOOKING_SERVER = new URL('./fixtures/mcp-booking-server.mjs', import.meta.url).pathname;

let dir: string;
let calls: string;
let down: string;
let stores: SqliteStores;
let proxy: McpProxy;
let client: Client;
const entries: ToolFailureEntry[] = [];
const env = () => ({ ...process.env, BOOKING_CALLS_FILE: calls, BOOKING_DOWN_FILE: down }) as Record<string, string>;
const booked = () =>
  existsSync(calls)
    ? readFileSync(calls, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
    : [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolrun-mcp-dlq-'));
  calls = join(dir, 'calls.log');
  down = join(dir, 'down');
  stores = createSqliteStores({ path: join(dir, 'toolrun.db') });
  proxy = createMcpProxy({
    upstream: { kind: 'stdio', command: process.execPath, args: [BOOKING_SERVER], env: env() },
    runtimeOptions: { redact: { keys: ['card'] } },
    deadLetter: { stores, onDeadLettered: (entry) => entries.push(entry) },
    log: () => undefined,
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await proxy.attach(serverSide, { label: 'stdio' });
  client = new Client({ name: 'dlq-test', version: '1.0.0' });
  await client.connect(clientSide);
});
afterAll(async () => {
  await client?.close();
  await proxy?.close();
  await stores?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('mcp-proxy: the tool DLQ', () => {
  it('a call that fails past its retries: one entry of host mcp, redacted, with its origin; the client answered', { timeout: 30_000 }, async () => {
    writeFileSync(down, '');
    const answer = (await client.callTool({ name: 'book_seat', arguments: { flight: 'AF1', card: '4111111111111111' } })) as CallToolResult;
    expect(answer.isError).toBe(true);
    expect(booked()).toEqual([]);

    const records = await stores.toolDlq.list();
    expect(records).toHaveLength(1);
    const entry = records[0]!.entry as ToolFailureEntry;
    expect(hostOfEntry(entry)).toBe('mcp');
    expect(entry).toMatchObject({
      kind: 'tool',
      toolName: 'book_seat',
      stepIndex: 0,
      attempts: 1,
      reason: 'retry-budget-exhausted',
      originalMessageId: `mcp:${entry.runId}`,
    });
    expect(entry.lastError.message).toContain('unavailable');
    expect(entry.runId).toMatch(/^stdio_req-\d+_[0-9a-f]{12}$/);
    expect(JSON.stringify(entry)).not.toContain('4111111111111111');
    expect(entries.map((written) => written.runId)).toEqual([entry.runId]);

    const [stored] = (await stores.conversations.get(entry.conversationRef)) as McpProxiedCall[];
    expect(stored).toMatchObject({
      type: 'mcp_tools_call',
      name: 'book_seat',
      arguments: { flight: 'AF1', card: '4111111111111111' },
      origin: { sessionId: null, connection: 'stdio', requestId: expect.any(Number), upstream: expect.stringContaining('mcp-booking-server.mjs') },
    });
    expect(await stores.messageDlq.list()).toEqual([]);
  });

  it('the dashboard lists the entry and shows it, the arguments redacted', async () => {
    const [record] = await stores.toolDlq.list();
    const token = 'dashboard-test-token-0123456789';
    const dashboard = createDashboardApp({ source: { stores, label: 'sqlite', redactor: createRedactor() }, token, sampleIntervalMs: 60_000 });
    const get = async (path: string) => {
      const response = await dashboard.app.fetch(
        new Request(`http://127.0.0.1:4319${path}`, { headers: { host: '127.0.0.1:4319', authorization: `Bearer ${token}` } }),
      );
      expect(response.status).toBe(200);
      return response.text();
    };
    try {
      const list = await get('/api/tool/entries');
      expect(list).toContain(record!.id);
      expect(list).toContain('book_seat');
      const detail = await get(`/api/tool/entries/${record!.id}`);
      const shown = JSON.parse(detail) as { entry: ToolFailureEntry; conversation: { available: boolean; messages: Array<{ name?: string }> } };
      expect(shown.entry).toMatchObject({ originalMessageId: `mcp:${(record!.entry as ToolFailureEntry).runId}`, toolArgs: { flight: 'AF1', card: '***' } });
      expect(shown.conversation).toMatchObject({ available: true, messages: [{ name: 'book_seat' }] });
      expect(detail).not.toContain('4111111111111111');
    } finally {
      await dashboard.close();
    }
  });

  it('a call that succeeds, and one refused for its arguments, are not dead-lettered', { timeout: 30_000 }, async () => {
    rmSync(down, { force: true });
    const ok = (await client.callTool({ name: 'book_seat', arguments: { flight: 'AF2' } })) as CallToolResult;
    expect(ok.isError).not.toBe(true);
    const refused = (await client.callTool({ name: 'book_seat', arguments: { flight: 7 } })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(await stores.toolDlq.list()).toHaveLength(1);
    expect(booked()).toHaveLength(1);
  });

  it('replayed twice at once after the fix: the call re-issued upstream once, the entry done, no model', { timeout: 30_000 }, async () => {
    rmSync(down, { force: true });
    const before = booked().length;
    const [record] = await stores.toolDlq.list();
    const continuation = mcpProxyContinuation({ transport: () => new StdioClientTransport({ command: process.execPath, args: [BOOKING_SERVER], env: env() }) });
    const options = { stores, runtime: continuation.runtime! };
    const results = await Promise.all([replayHostRun(record!, continuation, options), replayHostRun(record!, continuation, options)]);
    expect(results.map((result) => result.status).sort()).toEqual(['completed', 'in_progress']);
    expect(results.find((result) => result.status === 'completed')).toMatchObject({
      modelCalls: 0,
      removed: true,
      text: expect.stringContaining('booked AF1'),
    });
    expect(
      booked()
        .slice(before)
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual([{ flight: 'AF1', card: '4111111111111111' }]);
    expect(await stores.toolDlq.list()).toEqual([]);
    const conversation = await stores.conversations.get((record!.entry as ToolFailureEntry).conversationRef);
    expect(conversation?.at(-1)).toMatchObject({
      type: 'mcp_tools_result',
      result: { content: [{ type: 'text', text: expect.stringContaining('booked AF1') }] },
    });

    expect(await replayHostRun(record!, continuation, options)).toMatchObject({ status: 'already_completed' });
    expect(booked()).toHaveLength(before + 1);
  });

  it('a replay while the upstream is still down: tool_failed, the entry stays', { timeout: 30_000 }, async () => {
    writeFileSync(down, '');
    await client.callTool({ name: 'book_seat', arguments: { flight: 'AF3' } });
    const [record] = await stores.toolDlq.list();
    expect((record!.entry as ToolFailureEntry).toolArgs).toEqual({ flight: 'AF3' });
    const continuation = mcpProxyContinuation({ transport: () => new StdioClientTransport({ command: process.execPath, args: [BOOKING_SERVER], env: env() }) });
    expect(await replayHostRun(record!, continuation, { stores, runtime: continuation.runtime! })).toMatchObject({ status: 'tool_failed', removed: false });
    expect(await stores.toolDlq.list()).toHaveLength(1);
  });
});

describe('mcp-proxy: a revoked key, for every client', () => {
  it('each call is an entry (misconfiguration, then circuit-open); the shared breaker opens once: one alert', { timeout: 30_000 }, async () => {
    const revoked = join(dir, 'revoked');
    writeFileSync(revoked, '');
    const memory = createMemoryStores();
    const events: SharedBreakerEvent[] = [];
    const sharedBreaker = createSharedBreaker({
      store: createMemoryBreakerStateStore(),
      clock: systemClock,
      options: { failureThreshold: 2, halfOpenAfterMs: 60_000 },
      onEvent: (event) => events.push(event),
    });
    const guarded = createMcpProxy({
      upstream: {
        kind: 'stdio',
        command: process.execPath,
        args: [BOOKING_SERVER],
        env: { ...env(), BOOKING_DOWN_FILE: join(dir, 'never-down'), BOOKING_REVOKED_FILE: revoked },
      },
      sharedBreaker,
      deadLetter: { stores: memory },
      log: () => undefined,
    });
    const clients: Client[] = [];
    try {
      for (let index = 0; index < 4; index++) {
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
        await guarded.attach(serverSide, { label: `client-${index}` });
        const each = new Client({ name: `client-${index}`, version: '1.0.0' });
        await each.connect(clientSide);
        clients.push(each);
        const answer = (await each.callTool({ name: 'book_seat', arguments: { flight: `BA${index}` } })) as CallToolResult;
        expect(answer.isError).toBe(true);
      }
      const reasons = (await memory.toolDlq.list()).map((record) => (record.entry as ToolFailureEntry).reason);
      expect(reasons).toEqual(['misconfiguration', 'misconfiguration', 'circuit-open', 'circuit-open']);
      expect(events.filter((event) => event.type === 'breaker-open')).toHaveLength(1);
      expect(await memory.messageDlq.list()).toEqual([]);
    } finally {
      for (const each of clients) await each.close();
      await guarded.close();
    }
  });
});

describe('toolrun mcp-proxy → toolrun dlq list → toolrun dlq replay (the CLI, the mcp host from the config)', () => {
  it('the proxy process dead-letters; dlq list shows the entry; dlq replay books it once', { timeout: 60_000 }, async () => {
    const db = join(dir, 'cli.db');
    const cliCalls = join(dir, 'cli-calls.log');
    const cliDown = join(dir, 'cli-down');
    writeFileSync(cliDown, '');
    const bookingEnv = { ...process.env, BOOKING_CALLS_FILE: cliCalls, BOOKING_DOWN_FILE: cliDown } as Record<string, string>;
    const cli = await bundledCli();
    const proxied = new Client({ name: 'cli-dlq-test', version: '1.0.0' });
    await proxied.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [cli, 'mcp-proxy', '--db', db, '--init', '--', process.execPath, BOOKING_SERVER],
        env: bookingEnv,
        stderr: 'pipe',
      }),
    );
    const answer = (await proxied.callTool({ name: 'book_seat', arguments: { flight: 'LH9' } })) as CallToolResult;
    expect(answer.isError).toBe(true);
    await proxied.close();

    const listed = await toolrunInProcess(['dlq', 'list', '--dlq', 'tool', '--db', db, '--json']);
    expect(listed.code).toBe(0);
    const records = JSON.parse(listed.stdout) as Array<{ id: string; entry: ToolFailureEntry }>;
    expect(records).toHaveLength(1);
    expect(records[0]!.entry).toMatchObject({
      toolName: 'book_seat',
      reason: 'retry-budget-exhausted',
      originalMessageId: expect.stringMatching(/^mcp:stdio_req-/),
    });

    // the failed call is in the report the proxy's failure records make
    const report = await toolrunInProcess(['report', '--db', db, '--json']);
    expect(report.code).toBe(0);
    expect(JSON.parse(report.stdout)).toMatchObject({ totals: { failures: 1, tools: 1 } });
    expect(report.stdout).toContain('book_seat');

    rmSync(cliDown, { force: true });
    const config = fileURLToPath(new URL('./fixtures/mcp-proxy-replay.config.ts', import.meta.url));
    const replayEnv = { BOOKING_CALLS_FILE: cliCalls, BOOKING_DOWN_FILE: cliDown };
    const replayed = await toolrunInProcess(['dlq', 'replay', records[0]!.id, '--db', db, '--config', config, '--json'], replayEnv);
    expect(replayed.stderr).toBe('');
    expect(JSON.parse(replayed.stdout)).toMatchObject({ status: 'completed', host: 'mcp', modelCalls: 0, removed: true });
    expect(readFileSync(cliCalls, 'utf8').trim().split('\n')).toEqual(['{"flight":"LH9"}']);
    const after = await toolrunInProcess(['dlq', 'list', '--dlq', 'tool', '--db', db, '--json']);
    expect(JSON.parse(after.stdout)).toEqual([]);
  });
});
