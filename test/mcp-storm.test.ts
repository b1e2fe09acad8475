/**
 * A breaker storm through several `toolrun mcp-proxy` processes sharing one store: their
 * upstream's API rejects its key for everyone. The shared breaker opens once, with one alert
 * (one `ALERT breaker-open` line across the proxies), and the upstream stops being called.
 * Three proxies on one SQLite file (where the failure log and `toolrun report --db` are checked
 * too), two on one PostgreSQL schema (`--store postgres://…?schema=`), two on one Redis
 * (`--queue redis://…`, each test with a tool name of its own).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { TOOLRUN_ENVELOPE_META_KEY } from '../src/adapters/mcp/index.ts';
import type { ToolFailure } from '../src/ground/tool-result.ts';
import { defaultBreakerKeyPrefix } from '../src/cli/mcp-proxy/upstream-spec.ts';
import { bundledCli } from './fixtures/mcp-cli.ts';
import { createTestPool, createTestRedis, deleteRedisKeys, dropSchema, POSTGRES_URL, REDIS_URL, uniqueName } from './fixtures/distributed-services.ts';

const CALLS_PER_PROXY = 12;
const LOCKED_SERVER = resolve(import.meta.dirname, 'fixtures/mcp-locked-server.mjs');
const folder = mkdtempSync(join(tmpdir(), 'toolrun-mcp-storm-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

interface Storm {
  /** The envelope codes every proxy's client received, all proxies together. */
  codes: string[];
  /** Calls that reached the upstreams (all proxies' upstreams together). */
  upstreamCalls: number;
  /** The proxies' stderr, together. */
  stderr: string;
}

/** `proxies` proxies with `stateArgs` (their shared store), each with a client calling `toolName` one call at a time; the proxies race each other. */
async function storm(proxies: number, stateArgs: readonly string[], toolName: string): Promise<Storm> {
  const cli = await bundledCli();
  const callsFile = join(folder, `${uniqueName('calls-')}.log`);
  const env = { ...(process.env as Record<string, string>), LOCKED_CALLS_FILE: callsFile, LOCKED_TOOL_NAME: toolName };
  const stderr: string[] = Array.from({ length: proxies }, () => '');
  const clients = await Promise.all(
    Array.from({ length: proxies }, async (_, index) => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [cli, 'mcp-proxy', ...stateArgs, '--breaker-threshold', '2', '--breaker-cooldown-ms', '60000', '--', process.execPath, LOCKED_SERVER],
        env,
        stderr: 'pipe',
      });
      transport.stderr?.on('data', (chunk: Buffer) => (stderr[index] += chunk.toString('utf8')));
      const client = new Client({ name: `storm-${index}`, version: '1.0.0' });
      await client.connect(transport);
      return client;
    }),
  );
  try {
    const codes = (
      await Promise.all(
        clients.map(async (client) => {
          const seen: string[] = [];
          for (let call = 0; call < CALLS_PER_PROXY; call++) {
            const result = (await client.callTool({ name: toolName, arguments: { from: 'SFO', to: 'JFK' } })) as CallToolResult;
            expect(result.isError).toBe(true);
            seen.push(((result._meta as Record<string, unknown>)[TOOLRUN_ENVELOPE_META_KEY] as ToolFailure).error.code);
          }
          return seen;
        }),
      )
    ).flat();
    const upstreamCalls = readFileSync(callsFile, 'utf8').trim().split('\n').length;
    return { codes, upstreamCalls, stderr: stderr.join('') };
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
}

/** What every shared store must give: one opening, one alert, the upstream no longer called. */
function expectOneOpening(result: Storm, proxies: number, toolName: string): void {
  expect(result.codes.filter((code) => code === 'AUTH_EXPIRED').length).toBe(result.upstreamCalls);
  // the threshold (2), plus at most one call in flight in each of the other proxies when it opened
  expect(result.upstreamCalls).toBeLessThanOrEqual(2 + proxies);
  expect(result.codes.filter((code) => code === 'CIRCUIT_OPEN').length).toBe(proxies * CALLS_PER_PROXY - result.upstreamCalls);
  expect(result.stderr.match(new RegExp(`ALERT breaker-open ${toolName}\\b`, 'g')) ?? []).toHaveLength(1);
}

describe('breaker storm through mcp-proxy processes sharing one store', () => {
  it('3 proxies on one SQLite file: one opening, one alert, one breaker-open record; toolrun report reads it', { timeout: 60_000 }, async () => {
    const db = join(folder, 'proxy.db');
    const result = await storm(3, ['--db', db, '--init'], 'search_flights');
    expectOneOpening(result, 3, 'search_flights');
    const database = new Database(db, { readonly: true });
    try {
      const rows = database.prepare("SELECT record FROM failure_log WHERE kind = 'breaker-open'").all() as Array<{ record: string }>;
      expect(rows.map((row) => JSON.parse(row.record) as { scope: string })).toEqual([expect.objectContaining({ scope: 'shared' })]);
      const failures = database.prepare("SELECT COUNT(*) AS count FROM failure_log WHERE kind = 'tool-failure'").get() as { count: number };
      expect(failures.count).toBe(3 * CALLS_PER_PROXY);
    } finally {
      database.close();
    }
    const cli = await bundledCli();
    const report = await promisify(execFile)(process.execPath, [cli, 'report', '--db', db], { timeout: 30_000 });
    expect(report.stdout).toContain('search_flights');
    expect(report.stdout).toMatch(/AUTH_EXPIRED|CIRCUIT_OPEN/);
  });

  it('2 proxies on one PostgreSQL schema (--store postgres://…?schema=): one opening, one alert', { timeout: 60_000 }, async () => {
    const schema = uniqueName('mcp_storm_');
    const pool = createTestPool({ max: 1 });
    try {
      const result = await storm(2, ['--store', `${POSTGRES_URL}?schema=${schema}`, '--init'], 'search_flights');
      expectOneOpening(result, 2, 'search_flights');
    } finally {
      await dropSchema(pool, schema);
      await pool.end();
    }
  });

  it('2 proxies on one Redis (--queue redis://…): one opening, one alert', { timeout: 60_000 }, async () => {
    // the proxies' Redis keys are toolrun:breaker:{mcp:<upstream hash>/<tool>}: a tool name of this test's own
    const toolName = uniqueName('search_flights_');
    const key = `${defaultBreakerKeyPrefix({ kind: 'stdio', command: process.execPath, args: [LOCKED_SERVER], env: {} })}${toolName}`;
    const redis = createTestRedis();
    try {
      const result = await storm(2, ['--queue', REDIS_URL], toolName);
      expectOneOpening(result, 2, toolName);
      expect(await redis.exists(`toolrun:breaker:{${key}}`)).toBe(1);
    } finally {
      await deleteRedisKeys(redis, `toolrun:breaker:{${key}}`);
      redis.disconnect();
    }
  });
});
