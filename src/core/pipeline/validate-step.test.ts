import { describe, expect, it } from 'vitest';
import { createToolRuntime } from '../create-tool-runtime.ts';
import { defineTool } from '../define-tool.ts';
import type { ToolCallRecord } from '../tool-call-record.ts';
import { MAX_ARGUMENT_DEPTH } from './validate-step.ts';

const nested = (depth: number) => `{"text":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;

describe('arguments nested too deep', () => {
  let runs = 0;
  const records: ToolCallRecord[] = [];
  const echo = defineTool({
    name: 'echo',
    description: 'Echoes',
    inputSchema: { type: 'object', properties: { text: {} } },
    execute: (args) => {
      runs += 1;
      return { got: typeof args.text };
    },
  });
  const runtime = createToolRuntime({ tools: [echo], onCallEnd: (record) => records.push(record), sessionBreaker: false });

  it.each([
    ['as JSON text', nested(5_000)],
    ['as an object', JSON.parse(nested(100_000)) as unknown],
  ])('%s: MALFORMED_ARGUMENTS before any recursive walk; the tool does not run, the developer record arrives', async (_, args) => {
    runs = 0;
    records.length = 0;
    const result = await runtime.run({ name: 'echo', args });
    expect(result.status).toBe('failed');
    expect(result.status === 'failed' && result.error).toMatchObject({ type: 'invalid_parameter', code: 'MALFORMED_ARGUMENTS' });
    expect(runs).toBe(0);
    expect(records).toHaveLength(1);
  });

  it(`${MAX_ARGUMENT_DEPTH} levels are still arguments like any`, async () => {
    runs = 0;
    const result = await runtime.run({ name: 'echo', args: nested(MAX_ARGUMENT_DEPTH) });
    expect(result.status).toBe('success');
    expect(runs).toBe(1);
  });
});

describe('names and options that are not what they claim', () => {
  it('a name that is not a string never runs a tool, even when its toString names one', async () => {
    let runs = 0;
    const echo = defineTool({ name: 'echo', description: 'Echoes', inputSchema: { type: 'object' }, execute: () => (runs += 1) });
    const runtime = createToolRuntime({ tools: [echo] });
    const result = await runtime.run({ name: { toString: () => 'echo' } as unknown as string, args: {} });
    expect(result.status === 'failed' && result.error.code).toBe('TOOL_NOT_FOUND');
    expect(runs).toBe(0);
  });

  it('createToolRuntime without an options object throws INVALID_OPTIONS, not a TypeError', () => {
    expect(() => createToolRuntime(undefined as never)).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
  });
});
