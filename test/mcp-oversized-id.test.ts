import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createStdioLineTransport, idOfOversizedLine } from '../src/cli/mcp-proxy/stdio-line-transport.ts';

describe('an MCP message over the size bound', () => {
  it('is refused with the id of the request it was, so the client fails at once instead of at its timeout', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const transport = createStdioLineTransport({ input, output, maxMessageBytes: 64 * 1024 });
    const received: unknown[] = [];
    transport.onmessage = (message) => received.push(message);
    await transport.start();
    const written: string[] = [];
    output.on('data', (chunk: Buffer) => written.push(chunk.toString('utf8')));
    const huge = 'x'.repeat(300_000);
    // the SDK writes the id last; other clients first
    input.write(JSON.stringify({ method: 'tools/call', params: { name: 'add', arguments: { text: huge } }, jsonrpc: '2.0', id: 41 }).slice(0, 100_000));
    input.write(JSON.stringify({ method: 'tools/call', params: { name: 'add', arguments: { text: huge } }, jsonrpc: '2.0', id: 41 }).slice(100_000) + '\n');
    input.write(JSON.stringify({ jsonrpc: '2.0', id: 'req-42', method: 'tools/call', params: { arguments: { text: huge } } }) + '\n');
    input.write(JSON.stringify({ jsonrpc: '2.0', id: 43, method: 'ping' }) + '\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const responses = written
      .join('')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: unknown; error?: { code: number } });
    expect(responses.map(({ id, error }) => [id, error?.code])).toEqual([
      [41, -32600],
      ['req-42', -32600],
    ]);
    expect(received).toEqual([{ jsonrpc: '2.0', id: 43, method: 'ping' }]);
  });

  it('reads no id from a nested "id" or from an end it cannot see', () => {
    expect(idOfOversizedLine(Buffer.from('{"method":"x","params":{"id":5'), Buffer.from('"id":5}}'))).toBeNull();
    expect(idOfOversizedLine(Buffer.from('{"jsonrpc":"2.0","id":7,"method"'), Buffer.from('xxxx}'))).toBe(7);
  });
});
