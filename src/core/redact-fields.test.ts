import { describe, expect, it } from 'vitest';
import { defineTool } from './define-tool.ts';
import { createToolRuntime } from './create-tool-runtime.ts';
import { createRedactor } from './redact.ts';
import { redactFieldErrors } from './redact-fields.ts';

const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

describe('redactFieldErrors', () => {
  it('masks the received value of a field whose name is itself a secret, and that value in the other texts', () => {
    const { fields, maskText } = redactFieldErrors(createRedactor(), [
      { path: '/AKIAIOSFODNN7EXAMPLE', received: JSON.stringify(SECRET), message: `AKIAIOSFODNN7EXAMPLE: ${SECRET} is not allowed` },
      { path: '/note', received: '"plain"' },
    ]);
    expect(fields).toEqual([
      { path: '/***', received: '***', message: '***: *** is not allowed' },
      { path: '/note', received: '"plain"' },
    ]);
    expect(maskText(`unexpected ${SECRET}`)).toBe('unexpected ***');
  });
});

describe('a tool with additionalProperties: false called with an AWS key pair', () => {
  it('keeps neither the key id nor its secret in the envelope', async () => {
    const runtime = createToolRuntime({
      tools: [
        defineTool({
          name: 'send_receipt',
          description: 'Sends a receipt',
          inputSchema: { type: 'object', properties: { priority: { type: 'integer' } }, additionalProperties: false },
          execute: () => ({ sent: true }),
        }),
      ],
    });
    const record = await runtime.execute({ name: 'send_receipt', args: JSON.stringify({ priority: 1, AKIAIOSFODNN7EXAMPLE: SECRET }) });
    const envelope = JSON.stringify(record.result);
    expect(record.result.status).toBe('failed');
    expect(envelope).not.toContain('wJalr');
    expect(envelope).not.toContain('IOSFODNN7EXAMPLE');
  });
});
