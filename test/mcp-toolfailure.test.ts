/**
 * The draft MCP ToolFailure (`_meta["io.modelcontextprotocol/toolFailure"]`) both ways, with the
 * SDK's real `Client`, `Server` and `McpServer` on its in-memory transport: every toolrun failure
 * code has exactly one class (the same as docs/mcp.md's table), what `serveOverMcp` sends is
 * accepted by the draft's schema (test/fixtures/mcp-tool-failure), and `mcpTools` follows a
 * server's ToolFailure — its class instead of its text, `retryable: false` not retried,
 * `retryNotBefore` waited for, a non-idempotent tool never retried.
 */
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  mcpTools,
  serveOverMcp,
  TOOL_FAILURE_CLASS_OF_CODE,
  TOOL_FAILURE_META_KEY,
  TOOLRUN_ENVELOPE_META_KEY,
  toolFailureClassification,
} from '../src/adapters/mcp/index.ts';

import { FAILURE_CODES, type FailureCode } from '../src/ground/failure-codes.ts';
import type { ToolFailure } from '../src/ground/tool-result.ts';
import { createToolRuntime, defineTool, ToolError } from '../src/index.ts';
import { createFakeClock } from '../src/testing/index.ts';

const schema = JSON.parse(readFileSync(new URL('./fixtures/mcp-tool-failure/tool-failure.schema.json', import.meta.url), 'utf8')) as object;
const ajv = new Ajv2020({ strict: true, allErrors: true });
(addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
/** Validates against the draft's ToolFailure schema; the errors as text when it fails. */
const validateToolFailure = ajv.compile(schema);
function schemaErrors(value: unknown): string {
  return validateToolFailure(value) ? '' : ajv.errorsText(validateToolFailure.errors);
}

const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

const CODES = Object.keys(FAILURE_CODES) as FailureCode[];

function envelope(code: FailureCode, extra: Partial<ToolFailure['error']> = {}): ToolFailure {
  return {
    status: 'failed',
    tool_name: 'search_flights',
    call_id: 'call_1',
    duration_ms: 12,
    attempts: 1,
    trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
    error: {
      type: FAILURE_CODES[code].type,
      code,
      message: 'it failed',
      detail: '',
      retryable: FAILURE_CODES[code].retryable,
      suggestion: 'Use another tool',
      ...extra,
    },
  };
}

describe('toolrun failure codes → ToolFailure classes', () => {
  it('maps every failure code to exactly one class, and docs/mcp.md shows the same table', () => {
    expect(Object.keys(TOOL_FAILURE_CLASS_OF_CODE).sort()).toEqual([...CODES].sort());
    for (const code of CODES) expect(['capability', 'reliability', 'governance']).toContain(TOOL_FAILURE_CLASS_OF_CODE[code]);
    const docs = readFileSync(new URL('../docs/mcp.md', import.meta.url), 'utf8');
    const section = docs.slice(docs.indexOf('### ToolFailure'));
    const rows = [...section.matchAll(/^\| `([A-Z_]+)` \| `?(\w+)`? \| (\w+) \|/gm)].map((match) => ({ code: match[1]!, type: match[2]!, cls: match[3]! }));
    expect(rows.map((row) => row.code).sort()).toEqual([...CODES].sort());
    for (const row of rows) {
      expect(row.cls, row.code).toBe(TOOL_FAILURE_CLASS_OF_CODE[row.code as FailureCode]);
      expect(row.type, row.code).toBe(FAILURE_CODES[row.code as FailureCode].type);
    }
  });

  it.each(CODES)('%s gives a ToolFailure the draft schema accepts', (code) => {
    const nowMs = Date.UTC(2026, 8, 1);
    const failure = toolFailureClassification(envelope(code, code === 'RATE_LIMITED' ? { retry_after_ms: 7000 } : {}), nowMs);
    expect(schemaErrors(failure)).toBe('');
    expect(failure).toMatchObject({
      class: TOOL_FAILURE_CLASS_OF_CODE[code],
      code,
      correlationId: '4bf92f3577b34da6a3ce929d0e0e4736',
      agentGuidance: 'Use another tool',
    });
    if (code === 'RATE_LIMITED') expect(failure.retryNotBefore).toBe('2026-09-01T00:00:07.000Z');
  });
});

async function connectedClient(server: Server | McpServer): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'toolfailure-test', version: '1.0.0' });
  await client.connect(clientSide);
  closers.push(async () => {
    await client.close();
    await server.close();
  });
  return client;
}

describe('ToolFailure out: serveOverMcp', () => {
  const tools = [
    defineTool({
      name: 'rate_limited',
      description: 'always 429 with Retry-After',
      inputSchema: { type: 'object', properties: {} },
      retry: { maxAttempts: 1 },
      execute: async () => {
        throw new ToolError({ kind: 'rate_limit', status: 429, headers: { 'retry-after': '30' } });
      },
    }),
    defineTool({
      name: 'forbidden',
      description: 'always 403',
      inputSchema: { type: 'object', properties: {} },
      execute: async () => {
        throw new ToolError({ kind: 'forbidden', status: 403, message: 'no access to this account' });
      },
    }),
    defineTool({
      name: 'echo',
      description: 'echo',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      execute: async (args) => args,
    }),
  ];

  it('each class reaches a real Client as a ToolFailure the schema accepts: correlationId = trace id, guidance = suggestion, retryNotBefore from Retry-After', async () => {
    const clock = createFakeClock(Date.UTC(2026, 8, 1));
    const server = new Server({ name: 'toolrun-tools', version: '1.0.0' });
    serveOverMcp(createToolRuntime({ tools, clock }), server);
    const client = await connectedClient(server);
    const expectations: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
      ['rate_limited', {}, { class: 'reliability', code: 'RATE_LIMITED', retryNotBefore: '2026-09-01T00:00:30.000Z' }],
      ['forbidden', {}, { class: 'governance', code: 'PERMISSION_DENIED', retryable: false }],
      ['echo', { text: 5 }, { class: 'capability', code: 'INVALID_TYPE', retryable: true }],
      ['ehco', { text: 'x' }, { class: 'capability', code: 'TOOL_NOT_FOUND', retryable: false }],
    ];
    for (const [name, args, expected] of expectations) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      expect(result.isError).toBe(true);
      const meta = result._meta as Record<string, unknown>;
      const failure = meta[TOOL_FAILURE_META_KEY] as Record<string, unknown>;
      const envelope = meta[TOOLRUN_ENVELOPE_META_KEY] as ToolFailure;
      expect(schemaErrors(failure), name).toBe('');
      expect(failure, name).toMatchObject({ ...expected, correlationId: envelope.trace_id, agentGuidance: envelope.error.suggestion });
    }
  });

  it('toolFailure: false leaves the envelope alone', async () => {
    const server = new Server({ name: 'toolrun-tools', version: '1.0.0' });
    serveOverMcp(createToolRuntime({ tools }), server, { toolFailure: false });
    const client = await connectedClient(server);
    const result = (await client.callTool({ name: 'forbidden', arguments: {} })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(result._meta).not.toHaveProperty([TOOL_FAILURE_META_KEY]);
    expect(result._meta).toHaveProperty([TOOLRUN_ENVELOPE_META_KEY]);
  });
});

describe('ToolFailure in: mcpTools', () => {
  /** A real SDK server whose tools answer with a scripted ToolFailure; counts the calls per tool. */
  async function scriptedServer(startMs: number) {
    const calls = new Map<string, number>();
    const server = new McpServer({ name: 'scripted', version: '1.0.0' });
    const fail = (text: string, toolFailure: Record<string, unknown>): CallToolResult => ({
      content: [{ type: 'text', text }],
      isError: true,
      _meta: { [TOOL_FAILURE_META_KEY]: toolFailure },
    });
    const count = (name: string) => {
      const n = (calls.get(name) ?? 0) + 1;
      calls.set(name, n);
      return n;
    };
    // Busy for the first call, with a time before which a retry is pointless; then fine.
    server.registerTool('busy_read', { inputSchema: { q: z.string() }, annotations: { readOnlyHint: true } }, async () =>
      count('busy_read') === 1
        ? fail('busy', {
            class: 'reliability',
            code: 'UNAVAILABLE',
            retryable: true,
            retryNotBefore: new Date(startMs + 4000).toISOString(),
            correlationId: 'r1',
          })
        : { content: [{ type: 'text', text: 'ok' }] },
    );
    // Down for good, says the server: an idempotent tool is not retried.
    server.registerTool('down_read', { inputSchema: { q: z.string() }, annotations: { readOnlyHint: true } }, async () => {
      count('down_read');
      return fail('the index is being rebuilt', {
        class: 'reliability',
        code: 'UNAVAILABLE',
        retryable: false,
        correlationId: 'r2',
        agentGuidance: 'Search the archive instead',
      });
    });
    // Retryable, but a write: never retried by the client.
    server.registerTool('busy_write', { inputSchema: { q: z.string() } }, async () => {
      count('busy_write');
      return fail('busy', { class: 'reliability', code: 'UNAVAILABLE', retryable: true, correlationId: 'r3' });
    });
    // A capability failure whose text would read as "not found": the class decides, not the text.
    server.registerTool('refuse', { inputSchema: { q: z.string() } }, async () => {
      count('refuse');
      return fail('account not found in the allowed region', { class: 'capability', code: 'REGION_NOT_SUPPORTED', retryable: false, correlationId: 'r4' });
    });
    server.registerTool('policy', { inputSchema: { q: z.string() } }, async () => {
      count('policy');
      return fail('timeout', { class: 'governance', code: 'SPEND_LIMIT', retryable: false, correlationId: 'r5' });
    });
    return { server, calls };
  }

  it("honours the server's class, retryable and retryNotBefore; never retries a non-idempotent tool", async () => {
    const clock = createFakeClock(Date.UTC(2026, 8, 1));
    const { server, calls } = await scriptedServer(clock.now());
    const client = await connectedClient(server);
    const runtime = createToolRuntime({ tools: await mcpTools(client, { nowMs: () => clock.now() }), clock, retry: { maxAttempts: 3 } });

    const busy = runtime.run({ name: 'busy_read', args: { q: 'x' } });
    const deadline = Date.now() + 5000;
    while (clock.pendingSleeps() === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(clock.pendingSleeps()).toBe(1);
    await clock.advance(3999);
    expect(calls.get('busy_read')).toBe(1);
    await clock.advance(1);
    expect(await busy).toMatchObject({ status: 'success', attempts: 2 });
    expect(calls.get('busy_read')).toBe(2);

    expect(await runtime.run({ name: 'down_read', args: { q: 'x' } })).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: { type: 'environment', code: 'UNAVAILABLE', suggestion: 'Search the archive instead' },
    });
    expect(calls.get('down_read')).toBe(1);

    expect(await runtime.run({ name: 'busy_write', args: { q: 'x' } })).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'UNAVAILABLE' } });
    expect(calls.get('busy_write')).toBe(1);

    expect(await runtime.run({ name: 'refuse', args: { q: 'x' } })).toMatchObject({ status: 'failed', error: { type: 'logic', code: 'PRECONDITION_FAILED' } });
    expect(await runtime.run({ name: 'policy', args: { q: 'x' } })).toMatchObject({
      status: 'failed',
      error: { type: 'permission', code: 'PERMISSION_DENIED' },
    });
  });
});
