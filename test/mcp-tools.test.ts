/**
 * toolrun/mcp's two directions with the SDK's real classes: `mcpTools` over a real server from npm
 * (server-memory; server-everything through a restarting `createMcpConnection`), and
 * `serveOverMcp` on a low-level `Server`, read back by a real `Client` and by `mcpTools` itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { createMcpConnection, mcpTools, serveOverMcp, TOOL_FAILURE_META_KEY } from '../src/adapters/mcp/index.ts';
import { createToolRuntime, defineTool, ToolError } from '../src/index.ts';
import { EVERYTHING_SERVER, MEMORY_SERVER } from './fixtures/mcp-cli.ts';

const folder = mkdtempSync(join(tmpdir(), 'toolrun-mcp-tools-'));
const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  rmSync(folder, { recursive: true, force: true });
});

describe('mcpTools over @modelcontextprotocol/server-memory', () => {
  it('builds guarded toolrun tools: schema checked first, idempotency from the annotations, data from structuredContent', async () => {
    const client = new Client({ name: 'mcp-tools-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [MEMORY_SERVER],
        env: { ...(process.env as Record<string, string>), MEMORY_FILE_PATH: join(folder, 'm.jsonl') },
        stderr: 'ignore',
      }),
    );
    closers.push(() => client.close());
    const tools = await mcpTools(client, { prefix: 'memory.' });
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get('memory.read_graph')?.idempotent).toBe(true);
    expect(byName.get('memory.create_entities')).toMatchObject({ idempotent: false, retry: { maxAttempts: 1 } });
    const runtime = createToolRuntime({ tools });
    const invalid = await runtime.run({ name: 'memory.create_entities', args: { entities: [{ name: 'Ada' }] } });
    expect(invalid).toMatchObject({ status: 'failed', attempts: 0, error: { type: 'invalid_parameter' } });
    const created = await runtime.run({ name: 'memory.create_entities', args: { entities: [{ name: 'Ada', entityType: 'person', observations: ['math'] }] } });
    expect(created).toMatchObject({ status: 'success', data: { entities: [{ name: 'Ada', entityType: 'person', observations: ['math'] }] } });
    const graph = await runtime.run({ name: 'memory.read_graph', args: {} });
    expect(graph).toMatchObject({ status: 'success', data: { entities: [expect.objectContaining({ name: 'Ada' })] } });
  });
});

describe('mcpTools over a restarting connection to @modelcontextprotocol/server-everything', () => {
  it('fails with UNAVAILABLE while the server is down and works again after the restart', async () => {
    let transport: StdioClientTransport | undefined;
    const connection = createMcpConnection({
      transport: () => (transport = new StdioClientTransport({ command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'], stderr: 'ignore' })),
      restart: { baseDelayMs: 100, maxDelayMs: 500 },
    });
    closers.push(() => connection.close());
    const runtime = createToolRuntime({ tools: await mcpTools(connection), retry: { maxAttempts: 1 } });
    expect(await runtime.run({ name: 'get-sum', args: { a: 1, b: 2 } })).toMatchObject({ status: 'success' });
    const closed = new Promise<void>((resolve) => {
      const client = connection.client!;
      const previous = client.onclose;
      client.onclose = () => {
        previous?.();
        resolve();
      };
    });
    process.kill(transport!.pid!, 'SIGKILL');
    await closed;
    expect(await runtime.run({ name: 'get-sum', args: { a: 1, b: 2 } })).toMatchObject({ status: 'failed', error: { code: 'UNAVAILABLE' } });
    const deadline = Date.now() + 10_000;
    while (!connection.client && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(connection.connections).toBe(2);
    expect(await runtime.run({ name: 'get-sum', args: { a: 1, b: 2 } })).toMatchObject({ status: 'success' });
  });
});

describe('serveOverMcp', () => {
  const runtime = createToolRuntime({
    tools: [
      defineTool({
        name: 'get_weather',
        description: 'Weather of a city on a date',
        inputSchema: {
          type: 'object',
          properties: { city: { type: 'string' }, date: { type: 'string', format: 'date' } },
          required: ['city', 'date'],
          additionalProperties: false,
        },
        idempotent: true,
        execute: ({ city }) => {
          if (city === 'Atlantis') throw new ToolError({ kind: 'not_found', message: 'no city named Atlantis' });
          return { city, high_c: 21 };
        },
      }),
    ],
  });

  async function connected(): Promise<Client> {
    const server = new Server({ name: 'weather', version: '1.0.0' });
    serveOverMcp(runtime, server);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'serve-test', version: '1.0.0' });
    await client.connect(clientSide);
    closers.push(async () => {
      await client.close();
      await server.close();
    });
    return client;
  }

  it('advertises every tool with its schema and idempotentHint, and answers with envelopes', async () => {
    const client = await connected();
    const { tools } = await client.listTools();
    expect(tools).toEqual([
      expect.objectContaining({
        name: 'get_weather',
        annotations: { idempotentHint: true },
        inputSchema: expect.objectContaining({ required: ['city', 'date'] }),
      }),
    ]);
    const ok = (await client.callTool({ name: 'get_weather', arguments: { city: 'Paris', date: '2026-05-01' } })) as CallToolResult;
    expect(ok.isError).toBeUndefined();
    expect(ok.structuredContent).toMatchObject({ status: 'success', data: { city: 'Paris', high_c: 21 } });
    const bad = (await client.callTool({ name: 'get_weather', arguments: { city: 'Paris', date: '2026/5/1' } })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toMatchObject({ status: 'failed', error: { fields: [expect.objectContaining({ path: '/date' })] } });
    expect((bad._meta as Record<string, unknown>)[TOOL_FAILURE_META_KEY]).toMatchObject({ class: 'capability', retryable: true });
    const unknown = (await client.callTool({ name: 'get_wether', arguments: {} })) as CallToolResult;
    expect(unknown.isError).toBe(true);
    expect(unknown.structuredContent).toMatchObject({ error: { code: 'TOOL_NOT_FOUND', closest_tool: 'get_weather' } });
  });

  it('round-trips: mcpTools reads the classification serveOverMcp writes', async () => {
    const client = await connected();
    const again = createToolRuntime({ tools: await mcpTools(client) });
    const missing = await again.run({ name: 'get_weather', args: { city: 'Atlantis', date: '2026-05-01' } });
    expect(missing).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'NOT_FOUND', type: 'logic' } });
  });

  it('refuses a server that is already connected', async () => {
    const server = new Server({ name: 'late', version: '1.0.0' }, { capabilities: {} });
    const [, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    closers.push(() => server.close());
    expect(() => serveOverMcp(runtime, server)).toThrow(/before server.connect/);
  });
});
