/**
 * The draft MCP ToolFailure through `toolrun mcp-proxy`, with real MCP servers from npm and the
 * SDK's real `Client`: each failure class (capability, governance, reliability — rate limited with
 * `retryNotBefore` from `Retry-After`, unavailable, a breaker) arrives as a ToolFailure the draft's
 * schema accepts (test/fixtures/mcp-tool-failure), joined to toolrun's envelope by its trace id.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, describe, expect, it } from 'vitest';
import { TOOL_FAILURE_META_KEY, TOOLRUN_ENVELOPE_META_KEY } from '../src/adapters/mcp/index.ts';
import { createMcpProxy, type McpProxy } from '../src/cli/mcp-proxy/mcp-proxy.ts';
import type { UpstreamSpec } from '../src/cli/mcp-proxy/upstream-spec.ts';
import type { ToolFailure } from '../src/ground/tool-result.ts';
import { EVERYTHING_SERVER, FILESYSTEM_SERVER, MEMORY_SERVER } from './fixtures/mcp-cli.ts';

const ajv = new Ajv2020({ strict: true, allErrors: true });
(addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
const validate = ajv.compile(JSON.parse(readFileSync(new URL('./fixtures/mcp-tool-failure/tool-failure.schema.json', import.meta.url), 'utf8')) as object);

const folder = mkdtempSync(join(tmpdir(), 'toolrun-mcp-toolfailure-'));
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  rmSync(folder, { recursive: true, force: true });
});

function stdio(args: string[], env: Record<string, string> = {}): UpstreamSpec {
  return { kind: 'stdio', command: process.execPath, args, env: { ...process.env, ...env } };
}

async function proxied(upstream: UpstreamSpec, options: { maxAttempts?: number } = {}): Promise<{ client: Client; proxy: McpProxy }> {
  const proxy = createMcpProxy({ upstream, log: () => undefined, restart: { baseDelayMs: 100, maxDelayMs: 1000 }, ...options });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await proxy.attach(serverSide, { label: 'test' });
  const client = new Client({ name: 'toolfailure-proxy-test', version: '1.0.0' });
  await client.connect(clientSide);
  cleanups.push(async () => {
    await client.close();
    await proxy.close();
  });
  return { client, proxy };
}

/** The ToolFailure of a result, checked against the draft schema and joined to the envelope. */
function toolFailureOf(result: CallToolResult): { failure: Record<string, unknown>; envelope: ToolFailure } {
  expect(result.isError).toBe(true);
  const meta = result._meta as Record<string, unknown>;
  const failure = meta[TOOL_FAILURE_META_KEY] as Record<string, unknown>;
  const envelope = meta[TOOLRUN_ENVELOPE_META_KEY] as ToolFailure;
  expect(validate(failure) ? '' : ajv.errorsText(validate.errors)).toBe('');
  expect(failure.correlationId).toBe(envelope.trace_id);
  expect(failure.agentGuidance).toBe(envelope.error.suggestion);
  expect(failure.code).toBe(envelope.error.code);
  return { failure, envelope };
}

describe('ToolFailure through mcp-proxy, real servers', () => {
  it('capability: a schema-invalid call to server-memory, a missing file and an unknown tool on server-filesystem', async () => {
    const memory = await proxied(stdio([MEMORY_SERVER], { MEMORY_FILE_PATH: join(folder, 'memory.jsonl') }));
    const invalid = toolFailureOf(
      (await memory.client.callTool({
        name: 'create_entities',
        arguments: { entities: [{ name: 'Ada', entityType: 7, observations: [] }] },
      })) as CallToolResult,
    );
    expect(invalid.failure).toMatchObject({ class: 'capability', code: 'INVALID_TYPE', retryable: true });
    const files = await proxied(stdio([FILESYSTEM_SERVER, folder]));
    const missing = toolFailureOf((await files.client.callTool({ name: 'read_text_file', arguments: { path: join(folder, 'nope.txt') } })) as CallToolResult);
    expect(missing.failure).toMatchObject({ class: 'capability', code: 'NOT_FOUND', retryable: false });
    const unknown = toolFailureOf((await files.client.callTool({ name: 'read_text_fil', arguments: {} })) as CallToolResult);
    expect(unknown.failure).toMatchObject({ class: 'capability', code: 'TOOL_NOT_FOUND' });
  });

  it('governance: a path outside server-filesystem’s allowed folder', async () => {
    const files = await proxied(stdio([FILESYSTEM_SERVER, join(folder)]));
    const outside = toolFailureOf((await files.client.callTool({ name: 'read_text_file', arguments: { path: '/etc/hostname' } })) as CallToolResult);
    expect(outside.failure).toMatchObject({ class: 'governance', code: 'PERMISSION_DENIED', retryable: false });
  });

  it('reliability: server-everything answering 429 with Retry-After (retryNotBefore), then killed (UNAVAILABLE), then the session breaker', async () => {
    const port = 21_000 + (process.pid % 20_000);
    const everything = spawn(process.execPath, [EVERYTHING_SERVER, 'streamableHttp'], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanups.push(async () => void everything.kill('SIGKILL'));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('server-everything (streamableHttp) did not start')), 20_000);
      const onData = (chunk: Buffer) => {
        if (/listening|running|port/i.test(chunk.toString())) {
          clearTimeout(timer);
          resolve();
        }
      };
      everything.stdout.on('data', onData);
      everything.stderr.on('data', onData);
    });
    // A front that relays to server-everything, and answers tools/call with 429 + Retry-After while `limited`.
    let limited = false;
    const front: HttpServer = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks);
        if (limited && /"method"\s*:\s*"tools\/call"/.test(body.toString('utf8'))) {
          response.writeHead(429, { 'retry-after': '30', 'content-type': 'text/plain' }).end('slow down');
          return;
        }
        const upstream = httpRequest({ host: '127.0.0.1', port, path: request.url, method: request.method, headers: request.headers }, (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        });
        upstream.on('error', () => response.destroy());
        upstream.end(body);
      });
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => front.close(() => resolve())));
    const frontUrl = new URL(`http://127.0.0.1:${(front.address() as AddressInfo).port}/mcp`);

    const { client } = await proxied({ kind: 'http', url: frontUrl }, { maxAttempts: 1 });
    expect((await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } })).isError).toBeFalsy();
    limited = true;
    const before = Date.now();
    const rateLimited = toolFailureOf((await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } })) as CallToolResult);
    expect(rateLimited.failure).toMatchObject({ class: 'reliability', code: 'RATE_LIMITED' });
    const notBefore = Date.parse(rateLimited.failure.retryNotBefore as string);
    expect(notBefore).toBeGreaterThanOrEqual(before + 29_000);
    expect(notBefore).toBeLessThanOrEqual(Date.now() + 30_000);
    // Failures in a row open this session's breaker for the tool: the class of an open breaker is reliability too.
    let breaker: CallToolResult | undefined;
    for (let index = 0; index < 5 && !breaker; index++) {
      const result = (await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } })) as CallToolResult;
      if ((result._meta as Record<string, ToolFailure>)[TOOLRUN_ENVELOPE_META_KEY]!.error.code === 'TOO_MANY_FAILURES') breaker = result;
    }
    expect(breaker).toBeDefined();
    expect(toolFailureOf(breaker!).failure).toMatchObject({ class: 'reliability', code: 'TOO_MANY_FAILURES', retryable: false });
    limited = false;
    everything.kill('SIGKILL');
    await new Promise((resolve) => everything.once('exit', resolve));
    const down = toolFailureOf((await client.callTool({ name: 'get-tiny-image', arguments: {} })) as CallToolResult);
    expect(down.failure).toMatchObject({ class: 'reliability', retryable: false });
    expect(['UNAVAILABLE', 'NETWORK_ERROR']).toContain(down.failure.code);
  });
});
