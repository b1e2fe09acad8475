/**
 * `toolrun mcp-proxy` against real MCP servers from npm (server-memory, server-filesystem in a temp
 * folder, server-everything), through the SDK's real `Client`. Most cases run the proxy in-process
 * (`createMcpProxy`, the downstream on the SDK's in-memory transport, the upstream a real spawned
 * server); the process cases run the bundled CLI on raw stdio, under the MCP Inspector's CLI and
 * over Streamable HTTP.
 */
import { execFile } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOL_FAILURE_META_KEY, TOOLRUN_ENVELOPE_META_KEY } from '../src/adapters/mcp/index.ts';
import type { ToolFailure } from '../src/ground/tool-result.ts';
import { createMcpProxy, type McpProxy } from '../src/cli/mcp-proxy/mcp-proxy.ts';
import type { UpstreamSpec } from '../src/cli/mcp-proxy/upstream-spec.ts';
import { refusedHttpOrigin } from '../src/cli/mcp-proxy/run-mcp-proxy.ts';
import { EVERYTHING_SERVER, FILESYSTEM_SERVER, INSPECTOR_CLI, initializeLine, jsonLines, MEMORY_SERVER, spawnProxy, stop } from './fixtures/mcp-cli.ts';

const run = promisify(execFile);
const folder = mkdtempSync(join(tmpdir(), 'toolrun-mcp-'));
const memoryFile = join(folder, 'memory.jsonl');
const files = join(folder, 'files');
const cleanups: Array<() => Promise<void>> = [];

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  rmSync(folder, { recursive: true, force: true });
});

function stdioUpstream(args: string[], env: Record<string, string> = {}): UpstreamSpec {
  return { kind: 'stdio', command: process.execPath, args, env: { ...process.env, ...env } };
}

/** A direct SDK client on a real server (the reference the proxied answers are compared with). */
async function direct(args: string[], env: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'direct', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args, env: { ...(process.env as Record<string, string>), ...env }, stderr: 'ignore' }),
  );
  cleanups.push(() => client.close());
  return client;
}

/** An in-process proxy on a real upstream, and an SDK client connected to it. */
async function proxied(upstream: UpstreamSpec, options: { maxAttempts?: number } = {}): Promise<{ client: Client; proxy: McpProxy; log: string[] }> {
  const log: string[] = [];
  const proxy = createMcpProxy({ upstream, log: (line) => log.push(line), restart: { baseDelayMs: 100, maxDelayMs: 1000 }, ...options });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await proxy.attach(serverSide, { label: 'test' });
  const client = new Client({ name: 'proxied', version: '1.0.0' });
  await client.connect(clientSide);
  cleanups.push(async () => {
    await client.close();
    await proxy.close();
  });
  return { client, proxy, log };
}

function envelopeOf(result: CallToolResult): ToolFailure {
  expect(result.isError).toBe(true);
  const envelope = (result._meta as Record<string, unknown> | undefined)?.[TOOLRUN_ENVELOPE_META_KEY] as ToolFailure;
  expect(envelope.status).toBe('failed');
  // the text the model reads is the same envelope
  expect((result.content[0] as { text: string }).text).toContain(`"code":"${envelope.error.code}"`);
  return envelope;
}

describe('mcp-proxy in front of @modelcontextprotocol/server-memory', () => {
  let client: Client;
  let reference: Client;
  beforeAll(async () => {
    ({ client } = await proxied(stdioUpstream([MEMORY_SERVER], { MEMORY_FILE_PATH: memoryFile })));
    reference = await direct([MEMORY_SERVER], { MEMORY_FILE_PATH: memoryFile });
  });

  it('lists exactly the tools the server lists', async () => {
    const [through, straight] = await Promise.all([client.listTools(), reference.listTools()]);
    expect(through).toEqual(straight);
    expect(through.tools.map((tool) => tool.name)).toContain('create_entities');
  });

  it('answers a schema-invalid call with toolrun envelope naming the field, and the server never sees it', async () => {
    const result = (await client.callTool({
      name: 'create_entities',
      arguments: { entities: [{ name: 'Ada', entityType: 7, observations: [] }] },
    })) as CallToolResult;
    const envelope = envelopeOf(result);
    expect(envelope.error.type).toBe('invalid_parameter');
    expect(envelope.error.code).toBe('INVALID_TYPE');
    expect(envelope.error.fields?.[0]?.path).toBe('/entities/0/entityType');
    expect(envelope.attempts).toBe(0);
    const classification = (result._meta as Record<string, Record<string, unknown>>)[TOOL_FAILURE_META_KEY]!;
    expect(classification).toMatchObject({ class: 'capability', code: 'INVALID_TYPE', retryable: true });
    // memory's tools declare an outputSchema: the failure envelope is not put where the client checks it
    expect(result.structuredContent).toBeUndefined();
    // the server's state: nothing was written (no file yet), and its graph has no Ada
    expect(existsSync(memoryFile) ? readFileSync(memoryFile, 'utf8') : '').not.toContain('Ada');
    const graph = (await reference.callTool({ name: 'read_graph', arguments: {} })) as CallToolResult;
    expect(JSON.stringify(graph.structuredContent)).not.toContain('Ada');
  });

  it('answers a misspelled tool with TOOL_NOT_FOUND and the closest name, not a protocol error', async () => {
    const envelope = envelopeOf((await client.callTool({ name: 'read_grph', arguments: {} })) as CallToolResult);
    expect(envelope.error.code).toBe('TOOL_NOT_FOUND');
    expect(envelope.error.closest_tool).toBe('read_graph');
  });

  it('passes a valid call through and returns exactly what the server returns', async () => {
    const created = (await client.callTool({
      name: 'create_entities',
      arguments: { entities: [{ name: 'Grace', entityType: 'person', observations: ['admiral'] }] },
    })) as CallToolResult;
    expect(created.isError).toBeUndefined();
    expect(created.structuredContent).toEqual({ entities: [{ name: 'Grace', entityType: 'person', observations: ['admiral'] }] });
    const [through, straight] = await Promise.all([
      client.callTool({ name: 'open_nodes', arguments: { names: ['Grace'] } }),
      reference.callTool({ name: 'open_nodes', arguments: { names: ['Grace'] } }),
    ]);
    expect(through).toEqual(straight);
  });
});

describe('mcp-proxy in front of @modelcontextprotocol/server-filesystem (a temp folder)', () => {
  let client: Client;
  beforeAll(async () => {
    rmSync(files, { recursive: true, force: true });
    await import('node:fs/promises').then((fs) => fs.mkdir(files, { recursive: true }));
    writeFileSync(join(files, 'hello.txt'), 'hello from the temp folder\n');
    ({ client } = await proxied(stdioUpstream([FILESYSTEM_SERVER, files])));
  });

  it('reads a file exactly as the server returns it', async () => {
    const result = (await client.callTool({ name: 'read_text_file', arguments: { path: join(files, 'hello.txt') } })) as CallToolResult;
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({ content: 'hello from the temp folder\n' });
  });

  it('classifies a missing file as NOT_FOUND and does not retry it, although the tool is read-only', async () => {
    const envelope = envelopeOf((await client.callTool({ name: 'read_text_file', arguments: { path: join(files, 'missing.txt') } })) as CallToolResult);
    expect(envelope.error).toMatchObject({ type: 'logic', code: 'NOT_FOUND', retryable: false });
    expect(envelope.attempts).toBe(1);
  });

  it('classifies a path outside the allowed folder as PERMISSION_DENIED', async () => {
    const envelope = envelopeOf((await client.callTool({ name: 'read_text_file', arguments: { path: '/etc/hostname' } })) as CallToolResult);
    expect(envelope.error).toMatchObject({ type: 'permission', code: 'PERMISSION_DENIED' });
    expect(envelope.attempts).toBe(1);
  });
});

describe('mcp-proxy in front of @modelcontextprotocol/server-everything', () => {
  let client: Client;
  let reference: Client;
  let proxy: McpProxy;
  beforeAll(async () => {
    ({ client, proxy } = await proxied(stdioUpstream([EVERYTHING_SERVER, 'stdio']), { maxAttempts: 1 }));
    reference = await direct([EVERYTHING_SERVER, 'stdio']);
  });

  it('forwards resources and prompts unchanged', async () => {
    const [resources, referenceResources] = await Promise.all([client.listResources(), reference.listResources()]);
    expect(resources).toEqual(referenceResources);
    const uri = resources.resources[0]!.uri;
    expect(await client.readResource({ uri })).toEqual(await reference.readResource({ uri }));
    const [prompts, referencePrompts] = await Promise.all([client.listPrompts(), reference.listPrompts()]);
    expect(prompts).toEqual(referencePrompts);
    const simple = prompts.prompts.find((prompt) => (prompt.arguments ?? []).every((argument) => !argument.required))!;
    expect(await client.getPrompt({ name: simple.name })).toEqual(await reference.getPrompt({ name: simple.name }));
  });

  it('forwards progress notifications of a guarded call', async () => {
    const progress: number[] = [];
    const result = (await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, undefined, {
      onprogress: (update) => progress.push(update.progress),
    })) as CallToolResult;
    expect(result.isError).toBeUndefined();
    expect(progress.length).toBeGreaterThanOrEqual(2);
  });

  it('fails the call in flight with UNAVAILABLE when the upstream is killed, then recovers after the restart', async () => {
    let killed = false;
    const call = client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 5, steps: 10 } }, undefined, {
      onprogress: () => {
        if (!killed && proxy.upstreamPid !== undefined) {
          killed = true;
          process.kill(proxy.upstreamPid, 'SIGKILL');
        }
      },
    });
    const envelope = envelopeOf((await call) as CallToolResult);
    expect(killed).toBe(true);
    expect(envelope.error).toMatchObject({ type: 'environment', code: 'UNAVAILABLE' });
    const deadline = Date.now() + 15_000;
    let echoed: CallToolResult | undefined;
    while (Date.now() < deadline) {
      echoed = (await client.callTool({ name: 'echo', arguments: { message: 'back' } })) as CallToolResult;
      if (!echoed.isError) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(echoed?.isError).toBeUndefined();
    expect(JSON.stringify(echoed?.content)).toContain('back');
  });
});

describe('toolrun mcp-proxy as a process', () => {
  it('answers unparsable JSON, a non-JSON-RPC value and a huge message with errors, and keeps serving', async () => {
    const proxy = await spawnProxy(['--max-message-bytes', '65536', '--', process.execPath, MEMORY_SERVER], {
      ...process.env,
      MEMORY_FILE_PATH: join(folder, 'raw.jsonl'),
    });
    cleanups.push(() => stop(proxy.child));
    const lines = jsonLines(proxy.child);
    proxy.child.stdin.write('{"jsonrpc": "2.0", "id": 1, "method": \n');
    expect(await lines.next()).toMatchObject({ id: null, error: { code: -32700 } });
    proxy.child.stdin.write('{"hello": "world", "id": 7}\n');
    expect(await lines.next()).toMatchObject({ id: 7, error: { code: -32600 } });
    proxy.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping', params: { pad: 'x'.repeat(100_000) } })}\n`);
    const huge = await lines.next();
    expect(huge).toMatchObject({ id: 2, error: { code: -32600 } }); // its own id: the client fails at once
    expect(String((huge.error as { message: string }).message)).toContain('65536 bytes');
    proxy.child.stdin.write(initializeLine(3));
    expect(await lines.next()).toMatchObject({ id: 3, result: { serverInfo: { name: 'memory-server' } } });
    proxy.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/list' })}\n`);
    expect(((await lines.next()).result as { tools: unknown[] }).tools.length).toBeGreaterThan(5);
    // stdin closes: the proxy closes the upstream and exits 0
    proxy.child.stdin.end();
    expect(await proxy.exited).toBe(0);
  });

  it('says why an upstream that never starts did not start, and stays up', async () => {
    const proxy = await spawnProxy(['--', join(folder, 'no-such-mcp-server')]);
    cleanups.push(() => stop(proxy.child));
    const lines = jsonLines(proxy.child);
    proxy.child.stdin.write(initializeLine(1));
    const first = await lines.next();
    expect(first).toMatchObject({ id: 1, error: { code: -32603 } });
    expect(String((first.error as { message: string }).message)).toMatch(/did not start.*not found|ENOENT/);
    proxy.child.stdin.write(initializeLine(2));
    expect(await lines.next()).toMatchObject({ id: 2, error: { code: -32603 } });
    expect(proxy.child.exitCode).toBeNull();
  });

  // The Inspector's CLI keeps what follows its own `--` and drops the `--` (the proxy gets `mcp-proxy node server.js`);
  // it finds its package.json relative to the working directory, hence `cwd`.
  it('works with the MCP Inspector CLI as the client', async () => {
    const { bundledCli } = await import('./fixtures/mcp-cli.ts');
    const cli = await bundledCli();
    const env = { ...process.env, MEMORY_FILE_PATH: join(folder, 'inspector.jsonl') };
    const called = await run(
      process.execPath,
      [
        INSPECTOR_CLI,
        process.execPath,
        cli,
        'mcp-proxy',
        '--method',
        'tools/call',
        '--tool-name',
        'search_nodes',
        '--tool-arg',
        'query=5',
        '--',
        process.execPath,
        MEMORY_SERVER,
      ],
      { env, timeout: 30_000, cwd: dirname(INSPECTOR_CLI) },
    );
    const result = JSON.parse(called.stdout) as CallToolResult;
    // the Inspector sends query=5 as the number 5; search_nodes wants a string
    expect(envelopeOf(result).error).toMatchObject({ code: 'INVALID_TYPE', fields: [expect.objectContaining({ path: '/query' })] });
  });

  it('guards a Streamable HTTP server (--url) and serves over Streamable HTTP (--listen)', async () => {
    const { spawn } = await import('node:child_process');
    const port = 20_000 + (process.pid % 20_000);
    const upstream = spawn(process.execPath, [EVERYTHING_SERVER, 'streamableHttp'], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanups.push(async () => void upstream.kill('SIGKILL'));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('server-everything (streamableHttp) did not start')), 20_000);
      const onData = (chunk: Buffer) => {
        if (/listening|running|port/i.test(chunk.toString())) {
          clearTimeout(timer);
          resolve();
        }
      };
      upstream.stdout.on('data', onData);
      upstream.stderr.on('data', onData);
    });
    const proxy = await spawnProxy(['--listen', '127.0.0.1:0', '--url', `http://127.0.0.1:${port}/mcp`]);
    cleanups.push(async () => {
      proxy.child.kill('SIGTERM');
      await proxy.exited;
    });
    const [, url] = await proxy.waitForStderr(/at (http:\/\/\S+\/mcp)/);
    const client = new Client({ name: 'http-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url!)));
    cleanups.push(() => client.close());
    const sum = (await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } })) as CallToolResult;
    expect(JSON.stringify(sum.content)).toContain('5');
    const invalid = envelopeOf((await client.callTool({ name: 'get-sum', arguments: { a: 'two', b: 3 } })) as CallToolResult);
    expect(invalid.error.fields?.[0]?.path).toBe('/a');
    expect((await client.listResources()).resources.length).toBeGreaterThan(0);
    // DNS rebinding: a page of another site reaching the loopback port is refused before MCP
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'evil', version: '1' } },
    });
    const target = new URL(url!);
    for (const headers of [{ host: `evil.example:${target.port}` }, { host: target.host, origin: 'http://evil.example' }]) {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const request = httpRequest(
          target,
          { method: 'POST', headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } },
          (response) => {
            let body = '';
            response.on('data', (chunk: Buffer) => (body += chunk.toString()));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
          },
        );
        request.on('error', reject);
        request.end(initialize);
      });
      expect(answer.status).toBe(403);
      expect(answer.body).toMatch(/Forbidden/);
      expect(answer.body).not.toMatch(/serverInfo/);
    }
  });
});

describe('refusedHttpOrigin (DNS-rebinding protection of --listen)', () => {
  it('on loopback: loopback Host names pass, others and foreign origins are refused', () => {
    for (const host of ['127.0.0.1:8808', 'localhost:8808', '[::1]:8808', '127.0.0.1', 'LOCALHOST:1']) {
      expect(refusedHttpOrigin({ host }, true)).toBeUndefined();
      expect(refusedHttpOrigin({ host, origin: 'http://localhost:3000' }, true)).toBeUndefined();
    }
    expect(refusedHttpOrigin({ host: 'evil.example:8808' }, true)).toMatch(/Forbidden/);
    expect(refusedHttpOrigin({ host: '127.0.0.1.evil.example:8808' }, true)).toMatch(/Forbidden/);
    expect(refusedHttpOrigin({}, true)).toMatch(/Forbidden/);
    expect(refusedHttpOrigin({ host: '127.0.0.1:8808', origin: 'http://evil.example' }, true)).toMatch(/DNS-rebinding/);
    expect(refusedHttpOrigin({ host: '127.0.0.1:8808', origin: 'null' }, true)).toMatch(/not an http/);
  });

  it('off loopback: any Host, but an Origin must be the request’s own host', () => {
    expect(refusedHttpOrigin({ host: 'proxy.internal:8808' }, false)).toBeUndefined();
    expect(refusedHttpOrigin({ host: 'proxy.internal:8808', origin: 'https://proxy.internal:8808' }, false)).toBeUndefined();
    expect(refusedHttpOrigin({ host: 'proxy.internal:8808', origin: 'https://evil.example' }, false)).toMatch(/DNS-rebinding/);
  });
});
