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
    expect(result.failure.message).toBe('arguments are not valid JSON: a comma is missing');
    expect(result.failure.detail).toContain('at position 8');
    // the position is said once, and the engine's own message (which may quote the text) is not embedded
    expect(result.failure.detail.match(/position/g)).toHaveLength(1);
    expect(result.failure.detail).not.toMatch(/Expected|Unexpected token/);
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
    expect(result.failure.fields).toEqual([
      { path: '', problem: 'type', expected: 'object', received, message: `expected a JSON object, received ${type} ${received}` },
    ]);
  });

  it('rejects a raw array or number that is not a string', () => {
    expect(parseArguments([1]).ok).toBe(false);
    expect(parseArguments(5).ok).toBe(false);
  });
});

describe('parseArguments: integers beyond 2^53 in the JSON text', () => {
  it('fails {"id": 12345678901234567890} with INVALID_TYPE at /id, asking for a string, instead of rounding it', () => {
    const result = parseArguments('{"id": 12345678901234567890}');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.failure.code).toBe('INVALID_TYPE');
    expect(result.failure.fields).toEqual([expect.objectContaining({ path: '/id', problem: 'type', received: '12345678901234567890' })]);
    expect(result.failure.fields[0]?.message).toContain('send it as a string: "12345678901234567890"');
    expect(result.failure.suggestion).toContain('as a string');
  });

  it('finds them at any depth, negative too, and leaves safe integers, fractions and digit strings alone', () => {
    const result = parseArguments(
      '{"a": [1, {"b/c": -9007199254740993}], "ok": 9007199254740991, "f": 12345678901234567890.5, "e": 1e30, "s": "12345678901234567890"}',
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.failure.fields.map((field) => field.path)).toEqual(['/a/1/b~1c']);
    expect(parseArguments('{"ok": 9007199254740991, "neg": -9007199254740991, "s": "12345678901234567890"}')).toMatchObject({ ok: true });
  });

  it('checks the inner text of a JSON string holding JSON', () => {
    const result = parseArguments(JSON.stringify('{"id": 12345678901234567890}'));
    expect(result).toMatchObject({ ok: false, failure: { code: 'INVALID_TYPE', fields: [{ path: '/id' }] } });
  });

  it('bounds what it quotes: a 100,000-digit integer is shown as at most 40 characters', () => {
    const result = parseArguments(`{"n": ${'9'.repeat(100_000)}}`);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.failure.fields[0]?.received?.length).toBeLessThanOrEqual(40);
    expect(JSON.stringify(result.failure).length).toBeLessThan(2_000);
  });
});

describe('parseArguments: excerpts of the text are cut from redacted text', () => {
  // A cut 80 characters before the end falls inside "x-api-key: Hdr3canaryKey": the excerpt would
  // start "y: Hdr3canaryKey", which no redactor can recognise afterwards.
  const truncated = `{"note": "${'a'.repeat(200)} | x-api-key: Hdr3canaryKey | ${'b'.repeat(61)}`;
  const redactText = (text: string) => text.replace(/x-api-key: \S+/g, 'x-api-key: ***');

  it('without redactText the tail excerpt splits the secret (what the runtime must avoid)', () => {
    const result = parseArguments(truncated);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.failure.detail).toContain('Hdr3canaryKey');
    expect(result.failure.detail).not.toContain('x-api-key');
  });

  it('with redactText the excerpt and a margin around it are redacted first: the secret is masked whole', () => {
    const result = parseArguments(truncated, { redactText });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.failure.message).toBe('arguments are truncated JSON');
    expect(JSON.stringify(result.failure)).not.toContain('Hdr3canaryKey');
  });

  it('also for an excerpt centred on a syntax error, and for the received head', () => {
    const text = `{"a": "${'c'.repeat(150)} x-api-key: Hdr3canaryKey" , , "b": 1, "pad": "${'d'.repeat(300)}"}`;
    const raw = parseArguments(text);
    const redacted = parseArguments(text, { redactText });
    expect(raw.ok || redacted.ok).toBe(false);
    if (redacted.ok) return;
    expect(JSON.stringify(redacted.failure)).not.toContain('Hdr3canaryKey');
  });
});
