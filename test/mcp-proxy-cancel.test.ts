/**
 * Cancellation of a guarded `tools/call` through `toolrun mcp-proxy` (in-process, a real stdio
 * upstream written for the test): the client's `notifications/cancelled` reaches the upstream's
 * handler as an abort, the proxy sends no response for the cancelled request, and the session
 * keeps working. Progress of a guarded call is forwarded with the client's own token.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { createMcpProxy } from '../src/cli/mcp-proxy/mcp-proxy.ts';

const SDK = resolve(import.meta.dirname, '../node_modules/@modelcontextprotocol/sdk/dist/esm');
const folder = mkdtempSync(join(tmpdir(), 'toolrun-mcp-cancel-'));
const events = join(folder, 'events.log');
const server = join(folder, 'cancel-server.mjs');
// `slow` waits for its abort and records it; `echo` answers at once; `steps` sends two progress notifications first.
writeFileSync(
  server,
  `import { appendFileSync } from 'node:fs';
import { Server } from ${JSON.stringify(pathToFileURL(join(SDK, 'server/index.js')).href)};
import { StdioServerTransport } from ${JSON.stringify(pathToFileURL(join(SDK, 'server/stdio.js')).href)};
import { CallToolRequestSchema, ListToolsRequestSchema } from ${JSON.stringify(pathToFileURL(join(SDK, 'types.js')).href)};
const server = new Server({ name: 'cancel-test', version: '1.0.0' }, { capabilities: { tools: {} } });
const schema = { type: 'object', properties: {} };
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [{ name: 'slow', inputSchema: schema, annotations: { readOnlyHint: true } }, { name: 'echo', inputSchema: schema }, { name: 'steps', inputSchema: schema }],
}));
server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  if (request.params.name === 'slow') {
    appendFileSync(process.env.EVENTS, 'started\\n');
    await new Promise((resolve) => extra.signal.addEventListener('abort', resolve));
    appendFileSync(process.env.EVENTS, 'aborted\\n');
    return { content: [{ type: 'text', text: 'too late' }] };
  }
  if (request.params.name === 'steps') {
    const token = request.params._meta?.progressToken;
    for (const progress of [1, 2]) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total: 2 } });
  }
  return { content: [{ type: 'text', text: request.params.name }] };
});
await server.connect(new StdioServerTransport());
`,
);
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  rmSync(folder, { recursive: true, force: true });
});

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolveWait) => setTimeout(resolveWait, 20));
  }
}

describe('mcp-proxy: cancellation and progress of a guarded tools/call', () => {
  it('forwards the cancellation to the upstream, sends no response for it, and keeps serving', { timeout: 30_000 }, async () => {
    const proxy = createMcpProxy({
      upstream: { kind: 'stdio', command: process.execPath, args: [server], env: { ...process.env, EVENTS: events } },
      log: () => undefined,
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await proxy.attach(serverSide, { label: 'cancel' });
    const received: unknown[] = [];
    const onmessage = (message: unknown) => received.push(message);
    const client = new Client({ name: 'cancel', version: '1.0.0' });
    await client.connect(clientSide);
    const clientHandler = clientSide.onmessage!;
    clientSide.onmessage = (message, extra) => {
      onmessage(message);
      clientHandler(message, extra);
    };
    cleanups.push(async () => {
      await client.close();
      await proxy.close();
    });
    const readEvents = () => (existsSync(events) ? readFileSync(events, 'utf8') : '');

    const controller = new AbortController();
    const call = client.callTool({ name: 'slow', arguments: {} }, undefined, { signal: controller.signal });
    await until(() => readEvents().includes('started'));
    controller.abort(new Error('the user gave up'));
    await expect(call).rejects.toThrow();
    await until(() => readEvents().includes('aborted'));
    expect(readEvents().match(/started/g)).toHaveLength(1); // not retried

    const echoed = (await client.callTool({ name: 'echo', arguments: {} })) as CallToolResult;
    expect(echoed.content).toEqual([{ type: 'text', text: 'echo' }]);
    await new Promise((resolveWait) => setTimeout(resolveWait, 200));
    // the responses after initialize: the echo's (id 2) only, none for the cancelled call (id 1)
    const responses = received.filter((message) => (message as { id?: unknown }).id !== undefined);
    expect(responses.map((message) => (message as { id: unknown }).id)).toEqual([2]);

    const progress: number[] = [];
    const stepped = (await client.callTool({ name: 'steps', arguments: {} }, undefined, {
      onprogress: (update) => progress.push(update.progress),
    })) as CallToolResult;
    expect(stepped.content).toEqual([{ type: 'text', text: 'steps' }]);
    expect(progress).toEqual([1, 2]);
  });
});
