/**
 * The proxy's stdio client transport on a scripted child process: line framing (split and joined
 * chunks, CRLF), a line that is not JSON or not JSON-RPC reported and skipped, trusted messages
 * delivered without the schema, stderr kept from the start, and `close()` ending a child that
 * ignores its stdin.
 */
import { describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createUpstreamStdioTransport } from '../src/cli/mcp-proxy/upstream-stdio-transport.ts';

function child(script: string, trusted?: (value: unknown) => boolean) {
  const transport = createUpstreamStdioTransport({
    command: process.execPath,
    args: ['-e', script],
    env: { ...(process.env as Record<string, string>) },
    ...(trusted ? { trusted } : {}),
  });
  const messages: JSONRPCMessage[] = [];
  const errors: string[] = [];
  let stderr = '';
  transport.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const closed = new Promise<void>((resolve) => (transport.onclose = () => resolve()));
  transport.onmessage = (message) => messages.push(message);
  transport.onerror = (error) => errors.push(error.message);
  return { transport, messages, errors, closed, stderr: () => stderr };
}

/** Waits until `condition` holds (polled every 10 ms), at most `timeoutMs`: a loaded machine may take longer than any fixed sleep. */
async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('createUpstreamStdioTransport', () => {
  it('frames lines across chunks, reports and skips bad lines, keeps stderr, and echoes what it is sent', { timeout: 20_000 }, async () => {
    const script = `
      process.stderr.write('starting\\n');
      process.stdout.write('{"jsonrpc":"2.0","id":1,"res');
      setTimeout(() => {
        process.stdout.write('ult":{}}\\r\\nnot json\\n{"hello":1}\\n\\n{"jsonrpc":"2.0","method":"notifications/x"}\\n');
        process.stdin.on('data', (chunk) => process.stdout.write(chunk));
      }, 50);`;
    const { transport, messages, errors, closed, stderr } = child(script);
    await transport.start();
    expect(transport.pid).toBeGreaterThan(0);
    await until(() => messages.length >= 2 && errors.length >= 2);
    await transport.send({ jsonrpc: '2.0', id: 'a', method: 'ping' } as JSONRPCMessage);
    await until(() => messages.length >= 3);
    expect(messages).toEqual([
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', method: 'notifications/x' },
      { jsonrpc: '2.0', id: 'a', method: 'ping' },
    ]);
    expect(errors).toHaveLength(2);
    expect(errors[1]).toContain('not a JSON-RPC message');
    expect(stderr()).toContain('starting');
    await transport.close();
    await closed;
  });

  it('delivers a trusted message as parsed, without the schema', { timeout: 20_000 }, async () => {
    const { transport, messages, errors, closed } = child(
      `process.stdout.write('{"jsonrpc":"2.0","id":"own-1","result":{"n":1},"extra":true}\\n'); setInterval(() => {}, 1000);`,
      (value) => (value as { id?: unknown }).id === 'own-1',
    );
    await transport.start();
    await until(() => messages.length + errors.length >= 1);
    // the schema would refuse the extra key (a response is strict): the trusted predicate let it through
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 'own-1', result: { n: 1 }, extra: true }]);
    expect(errors).toEqual([]);
    await transport.close();
    await closed;
  });

  it('close() ends a child that ignores the end of its stdin (SIGTERM after the grace period)', { timeout: 20_000 }, async () => {
    const { transport, closed } = child(`process.stdin.resume(); process.stdin.on('end', () => {}); setInterval(() => {}, 1000);`);
    await transport.start();
    const started = Date.now();
    await transport.close();
    await closed;
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    await expect(transport.send({ jsonrpc: '2.0', method: 'x' } as JSONRPCMessage)).rejects.toThrow('Not connected');
  });

  it('start() rejects when the command does not exist', async () => {
    const transport = createUpstreamStdioTransport({ command: '/nonexistent/mcp-server', args: [], env: {} });
    transport.onerror = () => undefined;
    await expect(transport.start()).rejects.toThrow(/ENOENT/);
  });
});
