/**
 * toolrun/mcp's failure classification on its own (no process): the SDK's own error classes, what
 * real servers send as `isError` text, a `_meta` tool-failure classification, HTTP status through
 * `createMcpStatusFetch`, and the classification toolrun writes for a failure envelope.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { createMcpStatusFetch, McpHttpStatusError, TOOL_FAILURE_META_KEY, toolFailureClassification } from '../src/adapters/mcp/index.ts';
import { errorFromMcpThrown, errorFromToolResult } from '../src/adapters/mcp/mcp-failure.ts';
import { classifyError } from '../src/core/classify-error.ts';
import type { ToolFailure } from '../src/ground/tool-result.ts';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const classify = (error: unknown) => classifyError(error, { nowMs: NOW });
const text = (value: string) => ({ content: [{ type: 'text', text: value }], isError: true });

describe('isError results', () => {
  it.each([
    ["ENOENT: no such file or directory, open '/tmp/x/missing.txt'", 'NOT_FOUND'],
    ['Access denied - path outside allowed directories: /etc/hostname not in /tmp/x', 'PERMISSION_DENIED'],
    ['401 Unauthorized: the API key was rejected', 'AUTH_EXPIRED'],
    ['MCP error -32602: Input validation error: Invalid arguments for tool create_entities', 'INVALID_INPUT'],
    ["EEXIST: file already exists, mkdir '/tmp/x/a'", 'PRECONDITION_FAILED'],
    ['something odd happened', 'TOOL_EXCEPTION'],
  ])('%s → %s, never transient', (message, code) => {
    const classified = classify(errorFromToolResult(text(message), NOW));
    expect(classified.code).toBe(code);
    expect(classified.transient).toBe(false);
  });

  it("uses the server's _meta classification when it sends one, retryNotBefore included", () => {
    const result = {
      ...text('upstream busy'),
      _meta: { [TOOL_FAILURE_META_KEY]: { class: 'reliability', code: 'RATE_LIMITED', retryable: true, retryNotBefore: new Date(NOW + 2500).toISOString() } },
    };
    const classified = classify(errorFromToolResult(result, NOW));
    expect(classified).toMatchObject({ code: 'RATE_LIMITED', transient: true, retryAfterMs: 2500 });
    const governance = { ...text('nope'), _meta: { [TOOL_FAILURE_META_KEY]: { class: 'governance', code: 'policy_blocked', retryable: false } } };
    expect(classify(errorFromToolResult(governance, NOW)).code).toBe('PERMISSION_DENIED');
  });
});

describe('thrown by the SDK', () => {
  it.each([
    [new McpError(ErrorCode.ConnectionClosed, 'Connection closed'), 'UNAVAILABLE', true],
    [new McpError(ErrorCode.RequestTimeout, 'Request timed out'), 'TIMEOUT', true],
    [new McpError(ErrorCode.InvalidParams, 'Tool read_grph not found'), 'NOT_FOUND', false],
    [new McpError(ErrorCode.InvalidParams, 'Invalid arguments'), 'INVALID_INPUT', false],
    [new McpError(ErrorCode.InternalError, 'boom'), 'UNAVAILABLE', true],
    [new StreamableHTTPError(503, 'Error POSTing to endpoint: busy'), 'UNAVAILABLE', true],
    [new StreamableHTTPError(429, 'Error POSTing to endpoint: slow down'), 'RATE_LIMITED', true],
    [new Error('Not connected'), 'UNAVAILABLE', true],
  ])('%s → %s', (thrown, code, transient) => {
    const classified = classify(errorFromMcpThrown(thrown));
    expect(classified.code).toBe(code);
    expect(classified.transient).toBe(transient);
  });

  it("a result the SDK refuses (-32602 'Invalid tools/call result') is the server's defect: not the arguments', not retried", () => {
    const thrown = new McpError(ErrorCode.InvalidParams, 'MCP error -32602: Invalid tools/call result: [{"code":"invalid_type","path":["content"]}]');
    const classified = classify(errorFromMcpThrown(thrown));
    expect(classified).toMatchObject({ kind: 'misconfigured', transient: false, misconfiguration: true });
    expect(classified.code).not.toBe('INVALID_INPUT');
    expect(classified.message).toMatch(/not a valid tools\/call result .*the server is at fault, not the arguments/);
    expect(classified.message).not.toMatch(/MCP error -32602: MCP error/);
    // arguments the server refuses stay the model's to fix, with the SDK's doubled prefix said once
    const args = classify(errorFromMcpThrown(new McpError(ErrorCode.InvalidParams, 'MCP error -32602: Invalid arguments for tool x')));
    expect(args).toMatchObject({ code: 'INVALID_INPUT', message: 'MCP error -32602: Invalid arguments for tool x' });
  });

  it('keeps the status and Retry-After of a 429 through createMcpStatusFetch', async () => {
    const fetchFunction = createMcpStatusFetch(async () => new Response('slow down', { status: 429, headers: { 'retry-after': '3' } }));
    const thrown = await fetchFunction('http://127.0.0.1:1/mcp', { method: 'POST' }).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(McpHttpStatusError);
    expect(classify(errorFromMcpThrown(thrown))).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryAfterMs: 3000 });
    // a GET (the SSE stream) and a success are the transport's business
    const passThrough = createMcpStatusFetch(async () => new Response('', { status: 503 }));
    expect((await passThrough('http://127.0.0.1:1/mcp', { method: 'GET' })).status).toBe(503);
  });
});

describe('the classification toolrun writes', () => {
  it('maps the failure type to the class and retry_after_ms to retryNotBefore', () => {
    const failure: ToolFailure = {
      status: 'failed',
      tool_name: 'search',
      call_id: 'c1',
      duration_ms: 3,
      attempts: 3,
      trace_id: 'abc',
      error: {
        type: 'environment',
        code: 'RATE_LIMITED',
        message: 'rate limited',
        detail: '',
        retryable: false,
        suggestion: 'Use another tool',
        retry_after_ms: 60_000,
      },
    };
    expect(toolFailureClassification(failure, NOW)).toEqual({
      class: 'reliability',
      code: 'RATE_LIMITED',
      retryable: false,
      retryNotBefore: '2026-01-01T00:01:00.000Z',
      correlationId: 'abc',
      agentGuidance: 'Use another tool',
      type: 'environment',
    });
  });
});
