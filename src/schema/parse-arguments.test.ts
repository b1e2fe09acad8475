import { describe, expect, it } from 'vitest';
import { parseArguments } from './parse-arguments.ts';

describe('parseArguments', () => {
  it('passes an object through unchanged', () => {
    const args = { city: 'Paris' };
    const result = parseArguments(args);
    expect(result).toEqual({ ok: true, value: { city: 'Paris' }, normalisations: [] });
    expect(result.ok && result.value).toBe(args);
  });

  it.each([undefined, null, '', '   \n', 'null'])('reads %j as empty arguments', (raw) => {
    expect(parseArguments(raw)).toEqual({ ok: true, value: {}, normalisations: ['empty-arguments'] });
  });

  it('parses a JSON object string', () => {
    expect(parseArguments('{"date":"2024-01-15","count":2}')).toEqual({ ok: true, value: { date: '2024-01-15', count: 2 }, normalisations: [] });
  });

  it('unwraps a JSON string holding a JSON object once, and only once', () => {
    expect(parseArguments(JSON.stringify(JSON.stringify({ a: 1 })))).toEqual({ ok: true, value: { a: 1 }, normalisations: ['unwrapped-json-string'] });
    const twice = parseArguments(JSON.stringify(JSON.stringify(JSON.stringify({ a: 1 }))));
    expect(twice.ok).toBe(false);
    expect(!twice.ok && twice.failure.fields[0]?.problem).toBe('type');
  });

  it('says "two JSON values concatenated" for glued values', () => {
    expect(parseArguments('{"a":1}{"b":2}')).toEqual({
      ok: false,
      failure: {
        code: 'MALFORMED_ARGUMENTS',
        message: 'arguments are two JSON values concatenated',
        detail: 'two JSON values concatenated: a complete value ends at position 7 and another starts after it; text: "{\\"a\\":1}{\\"b\\":2}"',
        suggestion: 'Send exactly one JSON object: merge the values into one object, or make one call per value, and call again',
        fields: [
          {
            path: '',
            problem: 'syntax',
            expected: 'a single, complete JSON object',
            received: '{"a":1}{"b":2}',
            message: 'arguments are two JSON values concatenated',
          },
        ],
      },
    });
  });

  it.each(['{"query": "flights to Par', '{"a": {"b": [1, 2', '{"a":', '{"a":1'])('says "truncated" for JSON cut off mid-way: %s', (raw) => {
    const result = parseArguments(raw);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.failure.code).toBe('MALFORMED_ARGUMENTS');
    expect(result.failure.message).toBe('arguments are truncated JSON');
    expect(result.failure.detail).toMatch(/^truncated JSON: /);
  });

  it('reports other syntax errors with the position and a bounded preview', () => {
    const result = parseArguments('{"a": 1 "b": 2}');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.failure.message).toBe('arguments are not valid JSON');
    expect(result.failure.detail).toContain('at position 8');
    expect(result.failure.detail).not.toContain('truncated');

    const long = `{"text": "${'x'.repeat(5000)}" oops}`;
    const longResult = parseArguments(long);
    expect(longResult.ok).toBe(false);
    if (longResult.ok) return;
    const preview = longResult.failure.detail.slice(longResult.failure.detail.indexOf('text: ') + 6);
    expect(preview.length).toBeLessThanOrEqual(200);
    expect(longResult.failure.detail.length).toBeLessThan(400);
    expect(longResult.failure.fields[0]?.received?.length).toBeLessThanOrEqual(120);
  });

  it.each([
    ['[1, 2]', 'array', '[1,2]'],
    ['42', 'integer', '42'],
    ['true', 'boolean', 'true'],
    ['"hello"', 'string', '"hello"'],
  ])('rejects the non-object JSON value %s, expecting an object', (raw, type, received) => {
    const result = parseArguments(raw);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.failure.code).toBe('MALFORMED_ARGUMENTS');
    expect(result.failure.fields).toEqual([{ path: '', problem: 'type', expected: 'object', received, message: `expected a JSON object, received ${type} ${received}` }]);
  });

  it('rejects a raw array or number that is not a string', () => {
    expect(parseArguments([1]).ok).toBe(false);
    expect(parseArguments(5).ok).toBe(false);
  });
});
