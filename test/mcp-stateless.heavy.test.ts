/**
 * `toolrun mcp-proxy` and the stateless protocol (revision 2026-07-28: no `initialize`, no
 * `Mcp-Session-Id`, every request carries its version and client in `_meta`), with the official
 * SDK's own 2026-era client (`@modelcontextprotocol/client`, pinned to 2026-07-28) and real servers:
 * server-everything and server-filesystem from npm, and an SDK server with one booking tool that
 * is not idempotent. A stateless client gets a working per-session breaker (scoped by the trace
 * id it sends), and a call re-sent after its stream broke does not book twice (idempotency key + ledger).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as StatelessClient, InMemoryTransport as StatelessInMemoryTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { TOOL_FAILURE_META_KEY, TOOLRUN_ENVELOPE_META_KEY } from '../src/adapters/mcp/index.ts';
import { createMcpProxy } from '../src/cli/mcp-proxy/mcp-proxy.ts';
import type { UpstreamSpec } from '../src/cli/mcp-proxy/upstream-spec.ts';
import type { ToolFailure } from '../src/ground/tool-result.ts';
import { EVERYTHING_SERVER, FILESYSTEM_SERVER, spawnProxy } from './fixtures/mcp-cli.ts';

const BOOKING_SERVER = new URL('./fixtures/mcp-booking-server.mjs', import.meta.url).pathname;
const folder = mkdtempSync(join(tmpdir(), 'toolrun-mcp-stateless-'));
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  rmSync(folder, { recursive: true, force: true });
});

const STATELESS = { versionNegotiation: { mode: { pin: '2026-07-28' } } };
const traceparent = (traceId: string) => `00-${traceId}-00f067aa0ba902b7-01`;
const codeOf = (result: unknown) => ((result as CallToolResult)._meta as Record<string, ToolFailure> | undefined)?.[TOOLRUN_ENVELOPE_META_KEY]?.error.code;

function stdio(args: string[], env: Record<string, string> = {}): UpstreamSpec {
  return { kind: 'stdio', command: process.execPath, args, env: { ...process.env, ...env } };
}

describe('a stateless (2026-07-28) client through mcp-proxy', () => {
  it('over stdio-like transport: discovers, lists and calls without initialize; failures carry the ToolFailure', async () => {
    const proxy = createMcpProxy({ upstream: stdio([EVERYTHING_SERVER, 'stdio']), log: () => undefined });
    const [clientSide, serverSide] = StatelessInMemoryTransport.createLinkedPair();
    const seen: string[] = [];
    await proxy.attach(serverSide as never, { label: 'stateless' });
    const onmessage = serverSide.onmessage!;
    serverSide.onmessage = (message, extra) => {
      seen.push((message as { method?: string }).method ?? 'response');
      onmessage(message, extra);
    };
    const client = new StatelessClient({ name: 'stateless', version: '1.0.0' }, STATELESS as never);
    await client.connect(clientSide);
    cleanups.push(async () => {
      await client.close();
      await proxy.close();
    });
    expect(seen).not.toContain('initialize');
    expect(seen[0]).toBe('server/discover');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('get-sum');
    expect(JSON.stringify((await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } })).content)).toContain('5');
    const invalid = await client.callTool({ name: 'get-sum', arguments: { a: 'two', b: 3 } });
    expect(invalid.isError).toBe(true);
    expect((invalid._meta as Record<string, unknown>)[TOOL_FAILURE_META_KEY]).toMatchObject({ class: 'capability', code: 'INVALID_TYPE' });
  });

  it('over Streamable HTTP without sessions: the per-session breaker is keyed by the traceparent each request carries', async () => {
    const files = join(folder, 'files');
    mkdirSync(files, { recursive: true });
    const proxy = await spawnProxy(['--listen', '127.0.0.1:0', '--', process.execPath, FILESYSTEM_SERVER, files]);
    cleanups.push(async () => {
      proxy.child.kill('SIGTERM');
      await proxy.exited;
    });
    const [, url] = await proxy.waitForStderr(/at (http:\/\/\S+\/mcp)/);
    const client = new StatelessClient({ name: 'stateless-http', version: '1.0.0' }, STATELESS as never);
    await client.connect(new StreamableHTTPClientTransport(new URL(url!)));
    cleanups.push(() => client.close());
    const runA = traceparent('4bf92f3577b34da6a3ce929d0e0e4736');
    const runB = traceparent('0af7651916cd43dd8448eb211c80319c');
    const missing = { path: join(files, 'nope.txt') };
    const codes: Array<string | undefined> = [];
    for (let index = 0; index < 4; index++) {
      codes.push(codeOf(await client.callTool({ name: 'read_text_file', arguments: missing, _meta: { traceparent: runA } })));
    }
    // three failures in a row in run A cut the tool off for run A only
    expect(codes).toEqual(['NOT_FOUND', 'NOT_FOUND', 'NOT_FOUND', 'TOO_MANY_FAILURES']);
    expect(codeOf(await client.callTool({ name: 'read_text_file', arguments: missing, _meta: { traceparent: runB } }))).toBe('NOT_FOUND');
  });
});

describe('a call re-sent after its stream broke (idempotency key)', () => {
  it('books once: the re-send joins the running call, a later one gets the recorded answer; another key books again', async () => {
    const callsFile = join(folder, 'bookings.jsonl');
    writeFileSync(callsFile, '');
    const proxy = createMcpProxy({ upstream: stdio([BOOKING_SERVER], { BOOKING_CALLS_FILE: callsFile }), log: () => undefined });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await proxy.attach(serverSide, { label: 'booking' });
    // A real SDK client initializes the session; the re-sends are raw requests with new ids, as a client re-issues them.
    const client = new Client({ name: 'booking-test', version: '1.0.0' });
    const answers = new Map<string | number, CallToolResult>();
    await client.connect(clientSide);
    cleanups.push(async () => {
      await client.close();
      await proxy.close();
    });
    const onmessage = clientSide.onmessage!;
    clientSide.onmessage = (message, extra) => {
      const response = message as { id?: string | number; result?: CallToolResult };
      if (typeof response.id === 'string' && response.id.startsWith('resend-') && response.result) answers.set(response.id, response.result);
      else onmessage(message, extra);
    };
    const book = (id: string, key: string, flight = 'LH123') =>
      clientSide.send({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'book_seat', arguments: { flight, delayMs: 400 }, _meta: { 'dev.toolrun/idempotencyKey': key } },
      } as JSONRPCMessage);
    const answered = async (ids: string[]) => {
      const deadline = Date.now() + 15_000;
      while (ids.some((id) => !answers.has(id)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      return ids.map((id) => answers.get(id)!);
    };
    await book('resend-1', 'booking-7f3a');
    await new Promise((resolve) => setTimeout(resolve, 100));
    await book('resend-2', 'booking-7f3a'); // the stream of resend-1 "broke": re-sent while it runs
    const [first, second] = await answered(['resend-1', 'resend-2']);
    expect(first!.isError).toBeFalsy();
    expect(second).toEqual(first);
    await book('resend-3', 'booking-7f3a'); // re-sent after it finished
    const [third] = await answered(['resend-3']);
    expect(third).toEqual(first);
    expect(readFileSync(callsFile, 'utf8').trim().split('\n')).toHaveLength(1);
    await book('resend-4', 'booking-9c1e'); // a new booking: a new key
    const [fourth] = await answered(['resend-4']);
    expect(fourth!.isError).toBeFalsy();
    expect(fourth).not.toEqual(first);
    expect(readFileSync(callsFile, 'utf8').trim().split('\n')).toHaveLength(2);
    // the same key with other arguments is refused, not run
    await clientSide.send({
      jsonrpc: '2.0',
      id: 'reused',
      method: 'tools/call',
      params: { name: 'book_seat', arguments: { flight: 'AF9' }, _meta: { 'dev.toolrun/idempotencyKey': 'booking-7f3a' } },
    } as JSONRPCMessage);
    expect(readFileSync(callsFile, 'utf8').trim().split('\n')).toHaveLength(2);
  });
});
