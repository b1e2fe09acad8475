import { describe, expect, it } from 'vitest';
import { createToolRuntime } from '../core/create-tool-runtime.ts';
import { defineTool, type ToolDefinition } from '../core/define-tool.ts';
import { createAjvSchemaValidator } from './ajv-schema-validator.ts';
import { findSchemaCycle, findUnknownFormat } from './schema-shape.ts';

const tool = (inputSchema: unknown) => ({ name: 't', description: 'd', inputSchema, execute: () => 1 }) as unknown as ToolDefinition;

describe('tool schemas refused when they are defined', () => {
  it('inputSchema "string" and false: INVALID_DEFINITION from defineTool', () => {
    expect(() => defineTool(tool('string'))).toThrow(expect.objectContaining({ code: 'INVALID_DEFINITION' }));
    expect(() => defineTool(tool(false))).toThrow(
      expect.objectContaining({ code: 'INVALID_DEFINITION', message: expect.stringContaining('accepts no arguments') }),
    );
    expect(() => createToolRuntime({ tools: [tool(false) as never] })).toThrow(expect.objectContaining({ code: 'INVALID_DEFINITION' }));
    // true (any arguments) and an empty object schema stay valid
    expect(() => createToolRuntime({ tools: [defineTool(tool(true)), defineTool({ ...tool({ type: 'object', properties: {} }), name: 'u' })] })).not.toThrow();
  });

  it('format "dat": INVALID_SCHEMA when the tool is created, naming where and the format meant', () => {
    const schema = { type: 'object', properties: { day: { type: 'string', format: 'dat' } } };
    expect(() => createToolRuntime({ tools: [defineTool(tool(schema))] })).toThrow(
      expect.objectContaining({ code: 'INVALID_SCHEMA', message: expect.stringMatching(/\/properties\/day\/format: "dat" \(did you mean "date"\?/) }),
    );
    expect(() => createToolRuntime({ tools: [defineTool(tool({ type: 'object', properties: { n: { type: 'integer', format: 7 } } }))] })).toThrow(
      expect.objectContaining({ code: 'INVALID_SCHEMA' }),
    );
  });

  it("known formats, the specification's, OpenAPI annotations, formats of one's own and a property named format are accepted", () => {
    const schema = {
      type: 'object',
      properties: {
        format: { type: 'string' },
        day: { type: 'string', format: 'date' },
        count: { type: 'integer', format: 'int64' },
        pin: { type: 'string', format: 'password' },
        host: { type: 'string', format: 'idn-hostname' },
        airport: { type: 'string', format: 'x-airport' },
      },
    };
    expect(() => createToolRuntime({ tools: [defineTool(tool(schema))] })).not.toThrow();
    // a format of one's own close to a known name: refused unless added with configureAjv
    const own = { type: 'object', properties: { d: { type: 'string', format: 'data' } } };
    expect(() => createToolRuntime({ tools: [defineTool(tool(own))] })).toThrow(expect.objectContaining({ code: 'INVALID_SCHEMA' }));
    const validator = createAjvSchemaValidator({ configureAjv: (ajv) => ajv.addFormat('data', /^.+$/) });
    expect(() => createToolRuntime({ tools: [defineTool(tool(own))], validator })).not.toThrow();
  });

  it('a circular inputSchema: INVALID_DEFINITION from defineTool, naming where it refers to itself, without compiling it', () => {
    const schema: Record<string, unknown> = { type: 'object', properties: {} };
    (schema.properties as Record<string, unknown>).child = { type: 'object', properties: { parent: schema } };
    expect(() => defineTool(tool(schema))).toThrow(
      expect.objectContaining({ code: 'INVALID_DEFINITION', message: expect.stringContaining('refers to itself at /properties/child/properties/parent') }),
    );
    // a schema that recurses with $ref is fine
    const recursive = { type: 'object', properties: { children: { type: 'array', items: { $ref: '#' } } } };
    expect(() => createToolRuntime({ tools: [defineTool(tool(recursive))] })).not.toThrow();
  });
});

describe('the shape walks', () => {
  it('findSchemaCycle: shared subschemas are not cycles; a self-reference is; 10^5-deep chains do not overflow', () => {
    const shared = { type: 'string' };
    expect(findSchemaCycle({ properties: { a: shared, b: shared } })).toBeUndefined();
    const self: Record<string, unknown> = {};
    self.not = self;
    expect(findSchemaCycle(self)).toBe('/not');
    let deep: Record<string, unknown> = { type: 'string' };
    for (let index = 0; index < 100_000; index++) deep = { not: deep };
    expect(findSchemaCycle(deep)).toBeUndefined();
  });

  it('findUnknownFormat reads keywords only, through every kind of subschema', () => {
    const known = (name: string) => name === 'date';
    expect(findUnknownFormat({ properties: { format: { type: 'string' } } }, known)).toBeUndefined();
    expect(findUnknownFormat({ anyOf: [{ format: 'date' }, { items: { format: 'dat' } }] }, known)).toEqual({
      pointer: '/anyOf/1/items/format',
      format: 'dat',
    });
    expect(findUnknownFormat({ $defs: { 'a/b': { format: 'x' } } }, known)).toEqual({ pointer: '/$defs/a~1b/format', format: 'x' });
  });
});
