/**
 * An upstream MCP server answering a request with a known id and a message that fails the SDK's
 * JSON-RPC schema: the request settles at once as the server's protocol error (not retried),
 * instead of being dropped to wait out its timeout and be sent upstream again.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { errorFromMcpThrown } from '../src/adapters/mcp/mcp-failure.ts';
import { createUpstreamStdioTransport } from '../src/cli/mcp-proxy/upstream-stdio-transport.ts';
import { classifyError } from '../src/core/classify-error.ts';

/** A stdio MCP server that initialises properly, then answers every tools/call with `answer(id)` and counts the calls on stderr. */
const server = (answer: string) => `
  let buffer = '';
  process.stdin.on('data', (chunk) => {
    buffer += chunk;
    for (let newline = buffer.indexOf('\\n'); newline !== -1; newline = buffer.indexOf('\\n')) {
      const message = JSON.parse(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
      if (message.method === 'initialize') {
        process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'bad', version: '1' } } }) + '\\n');
      } else if (message.method === 'tools/call') {
        process.stderr.write('call\\n');
        const id = message.id;
        process.stdout.write(${answer} + '\\n');
      }
    }
  });`;

async function callOnce(answer: string) {
  const transport = createUpstreamStdioTransport({
    command: process.execPath,
    args: ['-e', server(answer)],
    env: { ...(process.env as Record<string, string>) },
  });
  let calls = 0;
  transport.stderr.on('data', (chunk: Buffer) => (calls += chunk.toString('utf8').split('call\n').length - 1));
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(transport);
  const started = Date.now();
  const outcome = await client.callTool({ name: 'pay', arguments: {} }, undefined, { timeout: 20_000 }).then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  const elapsedMs = Date.now() - started;
  await client.close();
  return { outcome, elapsedMs, calls };
}

describe('an upstream answer with a known id that fails the JSON-RPC schema', () => {
  it.each([
    ['a result that is an array', `JSON.stringify({ jsonrpc: '2.0', id, result: [1, 2] })`],
    ['a result and an error at once', `JSON.stringify({ jsonrpc: '2.0', id, result: {}, error: { code: 1, message: 'x' } })`],
    ['an error without a code', `JSON.stringify({ jsonrpc: '2.0', id, error: { message: 'no code' } })`],
  ])('%s: the call settles at once as a protocol error, classified misconfigured (not retried)', { timeout: 30_000 }, async (_name, answer) => {
    const { outcome, elapsedMs, calls } = await callOnce(answer);
    expect(outcome.ok).toBe(false);
    const error = (outcome as { error: unknown }).error;
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32602);
    expect((error as McpError).message).toMatch(/Invalid result: the MCP server sent a line that is not a JSON-RPC message/);
    // settled by the answer, not by the 20 s request timeout
    expect(elapsedMs).toBeLessThan(15_000);
    expect(calls).toBe(1);
    const classified = classifyError(errorFromMcpThrown(error), { nowMs: 0 });
    expect(classified).toMatchObject({ kind: 'misconfigured', transient: false });
  });
});
