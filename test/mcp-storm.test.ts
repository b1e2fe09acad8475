/**
 * A breaker storm through three `toolrun mcp-proxy` processes sharing one SQLite store: their
 * upstream's API rejects its key for everyone. The shared breaker opens once, with one alert
 * (one `ALERT breaker-open` line across the three proxies, one `breaker-open` record in the
 * failure log), and the upstream stops being called; `toolrun report --db` reads the proxies' traffic.
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
import { bundledCli } from './fixtures/mcp-cli.ts';

const PROXIES = 3;
const CALLS_PER_PROXY = 12;
const LOCKED_SERVER = resolve(import.meta.dirname, 'fixtures/mcp-locked-server.mjs');
const folder = mkdtempSync(join(tmpdir(), 'toolrun-mcp-storm-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('breaker storm through 3 mcp-proxy processes sharing one SQLite store', () => {
  it('opens the shared breaker once with one alert, and stops calling the upstream', { timeout: 60_000 }, async () => {
    const cli = await bundledCli();
    const db = join(folder, 'proxy.db');
    const callsFile = join(folder, 'calls.log');
    const env = { ...(process.env as Record<string, string>), LOCKED_CALLS_FILE: callsFile };
    const stderr: string[] = Array.from({ length: PROXIES }, () => '');
    const clients = await Promise.all(
      Array.from({ length: PROXIES }, async (_, index) => {
        const transport = new StdioClientTransport({
          command: process.execPath,
          args: [cli, 'mcp-proxy', '--db', db, '--breaker-threshold', '2', '--breaker-cooldown-ms', '60000', '--', process.execPath, LOCKED_SERVER],
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
      // each proxy's client calls one at a time; the three proxies race each other
      const codes = (
        await Promise.all(
          clients.map(async (client) => {
            const seen: string[] = [];
            for (let call = 0; call < CALLS_PER_PROXY; call++) {
              const result = (await client.callTool({ name: 'search_flights', arguments: { from: 'SFO', to: 'JFK' } })) as CallToolResult;
              expect(result.isError).toBe(true);
              seen.push(((result._meta as Record<string, unknown>)[TOOLRUN_ENVELOPE_META_KEY] as ToolFailure).error.code);
            }
            return seen;
          }),
        )
      ).flat();
      const upstreamCalls = readFileSync(callsFile, 'utf8').trim().split('\n').length;
      expect(codes.filter((code) => code === 'AUTH_EXPIRED').length).toBe(upstreamCalls);
      // the threshold (2), plus at most one call in flight in each of the other proxies when it opened
      expect(upstreamCalls).toBeLessThanOrEqual(2 + PROXIES);
      expect(codes.filter((code) => code === 'CIRCUIT_OPEN').length).toBe(PROXIES * CALLS_PER_PROXY - upstreamCalls);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
    const alerts = stderr.join('').match(/ALERT breaker-open search_flights/g) ?? [];
    expect(alerts).toHaveLength(1);
    const database = new Database(db, { readonly: true });
    try {
      const rows = database.prepare("SELECT record FROM failure_log WHERE kind = 'breaker-open'").all() as Array<{ record: string }>;
      expect(rows.map((row) => JSON.parse(row.record) as { scope: string; tool_name?: string; toolName?: string })).toEqual([
        expect.objectContaining({ scope: 'shared' }),
      ]);
      const failures = database.prepare("SELECT COUNT(*) AS count FROM failure_log WHERE kind = 'tool-failure'").get() as { count: number };
      expect(failures.count).toBe(PROXIES * CALLS_PER_PROXY);
    } finally {
      database.close();
    }
    const report = await promisify(execFile)(process.execPath, [cli, 'report', '--db', db], { timeout: 30_000 });
    expect(report.stdout).toContain('search_flights');
    expect(report.stdout).toMatch(/AUTH_EXPIRED|CIRCUIT_OPEN/);
  });
});
