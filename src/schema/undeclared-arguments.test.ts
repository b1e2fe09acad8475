import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createToolRuntime } from '../core/create-tool-runtime.ts';
import { defineTool } from '../core/define-tool.ts';
import { findUndeclaredArguments } from './undeclared-arguments.ts';

const openSearch = {
  type: 'object',
  properties: { query: { type: 'string' }, state: { type: 'string', enum: ['open', 'closed'] } },
} as const;

describe('findUndeclaredArguments', () => {
  it('names a misspelled key of an open schema and the declared key it resembles', () => {
    expect(findUndeclaredArguments(openSearch, { querry: 'crash on start' })).toEqual([
      {
        code: 'UNDECLARED_ARGUMENT',
        path: '/querry',
        closest: 'query',
        message: '"querry" is not a parameter of this tool, so the tool ignored its value; if you meant "query", call again with "query".',
      },
    ]);
  });

  it('a key like none: lists the declared parameters instead', () => {
    const [warning] = findUndeclaredArguments(openSearch, { query: 'x', page_size: 5 });
    expect(warning).toMatchObject({ path: '/page_size' });
    expect(warning!.closest).toBeUndefined();
    expect(warning!.message).toContain('send only the declared parameters (query, state)');
  });

  it('nothing for declared keys, for schemas that decide on other keys, and for non-objects', () => {
    expect(findUndeclaredArguments(openSearch, { query: 'x', state: 'open' })).toEqual([]);
    for (const opening of [{ additionalProperties: true }, { additionalProperties: { type: 'string' } }, { patternProperties: { '^x-': {} } }]) {
      expect(findUndeclaredArguments({ ...openSearch, ...opening }, { querry: 'x' })).toEqual([]);
    }
    expect(findUndeclaredArguments({ type: 'object' }, { anything: 1 })).toEqual([]);
    expect(findUndeclaredArguments(openSearch, 'text')).toEqual([]);
    expect(findUndeclaredArguments(true, { a: 1 })).toEqual([]);
  });

  it('nested declared objects, anyOf branches, and a pointer escaped per RFC 6901', () => {
    const schema = {
      type: 'object',
      properties: { filter: { type: 'object', properties: { status: { type: 'string' } } } },
      anyOf: [{ properties: { id: { type: 'string' } } }, { properties: { slug: { type: 'string' } } }],
    };
    const warnings = findUndeclaredArguments(schema, { filter: { stauts: 'open' }, slug: 's', 'a/b~c': 1 });
    expect(warnings.map((warning) => warning.path)).toEqual(['/filter/stauts', '/a~1b~0c']);
    expect(warnings[0]!.closest).toBe('status');
  });

  it('a key with control characters is echoed escaped and bounded; at most 10 warnings', () => {
    const [warning] = findUndeclaredArguments(openSearch, { 'que\u0000ry\n\u001b[31m': 1 });
    expect(warning!.message).toContain('"que\\u0000ry\\n\\u001b[31m"');
    expect([...warning!.message].some((char) => char.charCodeAt(0) < 0x20)).toBe(false);
    const long = findUndeclaredArguments(openSearch, { ['k'.repeat(10_000)]: 1 });
    expect(long[0]!.message.length).toBeLessThan(300);
    const many = Object.fromEntries(Array.from({ length: 50 }, (_, index) => [`extra_${index}`, index]));
    expect(findUndeclaredArguments(openSearch, many)).toHaveLength(10);
  });
});

describe('the success envelope', () => {
  const seen: unknown[] = [];
  const search = defineTool({
    name: 'search_issues',
    description: 'Searches issues; returns every issue when no query is given',
    inputSchema: openSearch,
    execute: async (args) => {
      seen.push(args);
      return { issues: [] };
    },
  });

  it('an open schema: the tool runs, the envelope warns about the misspelled key', async () => {
    const runtime = createToolRuntime({ tools: [search] });
    const result = await runtime.run({ name: 'search_issues', args: { querry: 'crash on start' } });
    expect(result).toMatchObject({ status: 'success', warnings: [{ code: 'UNDECLARED_ARGUMENT', path: '/querry', closest: 'query' }] });
    expect(seen).toHaveLength(1);
    // a clean call has no warnings member at all
    const clean = await runtime.run({ name: 'search_issues', args: { query: 'crash' } });
    expect(clean).not.toHaveProperty('warnings');
  });

  it('a tool that opts out gets no warning; a strict schema keeps refusing', async () => {
    const optedOut = createToolRuntime({ tools: [{ ...search, undeclaredArguments: 'ignore' as const }] });
    expect(await optedOut.run({ name: 'search_issues', args: { querry: 'x' } })).not.toHaveProperty('warnings');
    const strict = createToolRuntime({ tools: [{ ...search, inputSchema: { ...openSearch, additionalProperties: false } }] });
    const refused = await strict.run({ name: 'search_issues', args: { querry: 'x' } });
    expect(refused).toMatchObject({ status: 'failed', error: { code: 'UNKNOWN_PARAMETER' } });
  });

  it('a Zod object (which strips unknown keys) reports the key the model sent', async () => {
    const zodSearch = defineTool({
      name: 'zod_search',
      description: 'Searches',
      inputSchema: z.object({ query: z.string().optional() }),
      execute: async (args) => args,
    });
    const result = await createToolRuntime({ tools: [zodSearch] }).run({ name: 'zod_search', args: { querry: 'x' } });
    expect(result).toMatchObject({ status: 'success', data: {}, warnings: [{ path: '/querry', closest: 'query' }] });
  });

  it('the opt-out is checked when the tool is defined', () => {
    expect(() => defineTool({ ...search, undeclaredArguments: 'maybe' } as never)).toThrow(/undeclaredArguments must be 'warn' or 'ignore'/);
  });
});
