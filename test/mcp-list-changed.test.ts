/**
 * notifications/tools/list_changed through `toolrun mcp-proxy`: an upstream (the SDK's McpServer)
 * adds a tool at runtime; the proxy re-reads the list before it forwards the notification, so the
 * client's next tools/list has the new tool and a call to it is guarded (validated against its
 * schema before the upstream sees it, misspellings answered with its name) like the others.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { TOOLRUN_ENVELOPE_META_KEY } from '../src/adapters/mcp/index.ts';
import type { ToolFailure } from '../src/ground/tool-result.ts';
import { bundledCli } from './fixtures/mcp-cli.ts';

const GROWING_SERVER = resolve(import.meta.dirname, 'fixtures/mcp-growing-server.mjs');
const folder = mkdtempSync(join(tmpdir(), 'toolrun-mcp-list-changed-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function envelopeOf(result: CallToolResult): ToolFailure {
  expect(result.isError).toBe(true);
  return (result._meta as Record<string, unknown>)[TOOLRUN_ENVELOPE_META_KEY] as ToolFailure;
}

describe('mcp-proxy and notifications/tools/list_changed', () => {
  it('lists and guards a tool the upstream adds at runtime', { timeout: 60_000 }, async () => {
    const cli = await bundledCli();
    const callsFile = join(folder, 'calls.log');
    const calls = () => (existsSync(callsFile) ? readFileSync(callsFile, 'utf8').trim().split('\n') : []);
    let stderr = '';
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [cli, 'mcp-proxy', '--', process.execPath, GROWING_SERVER],
      env: { ...(process.env as Record<string, string>), GROWING_CALLS_FILE: callsFile },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const client = new Client({ name: 'list-changed-test', version: '1.0.0' });
    let changed = 0;
    let onChanged: () => void = () => undefined;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed += 1;
      onChanged();
    });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['add_tool']);
      // before it exists, the name is unknown to the proxy too
      expect(envelopeOf((await client.callTool({ name: 'count_sheep', arguments: { count: 3 } })) as CallToolResult).error.code).toBe('TOOL_NOT_FOUND');

      const notified = new Promise<void>((resolveChanged, reject) => {
        const timer = setTimeout(() => reject(new Error(`no tools/list_changed within 10 s; the proxy said:\n${stderr}`)), 10_000);
        onChanged = () => {
          clearTimeout(timer);
          resolveChanged();
        };
      });
      const added = (await client.callTool({ name: 'add_tool', arguments: { name: 'count_sheep' } })) as CallToolResult;
      expect(added.content).toEqual([{ type: 'text', text: 'added count_sheep' }]);
      await notified;
      expect(changed).toBeGreaterThanOrEqual(1);

      const listed = (await client.listTools()).tools;
      expect(listed.map((tool) => tool.name)).toEqual(['add_tool', 'count_sheep']);
      expect(listed[1]!.inputSchema.properties).toHaveProperty('count');

      // validated against the new tool's schema: the upstream never sees the bad call
      const invalid = envelopeOf((await client.callTool({ name: 'count_sheep', arguments: { count: 'three' } })) as CallToolResult);
      expect(invalid.error.type).toBe('invalid_parameter');
      expect(invalid.error.fields?.[0]?.path).toBe('/count');
      expect(invalid.attempts).toBe(0);
      const tooFew = envelopeOf((await client.callTool({ name: 'count_sheep', arguments: { count: 0 } })) as CallToolResult);
      expect(tooFew.error.fields?.[0]?.path).toBe('/count');
      expect(calls().filter((line) => line.startsWith('count_sheep'))).toEqual([]);

      // a misspelling of the new tool gets its name
      const misspelled = envelopeOf((await client.callTool({ name: 'count_sheeps', arguments: { count: 3 } })) as CallToolResult);
      expect(misspelled.error.code).toBe('TOOL_NOT_FOUND');
      expect(misspelled.error.closest_tool).toBe('count_sheep');

      // a valid call reaches it and comes back as the upstream sent it
      const counted = (await client.callTool({ name: 'count_sheep', arguments: { count: 3 } })) as CallToolResult;
      expect(counted.isError).toBeUndefined();
      expect(counted.content).toEqual([{ type: 'text', text: 'count_sheep counted to 3' }]);
      expect(calls()).toEqual(['add_tool {"name":"count_sheep"}', 'count_sheep {"count":3}']);
      expect(stderr).toMatch(/guarding 2 of 2 tools/);
    } finally {
      await client.close();
    }
  });
});
