import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { createAjvSchemaValidator } from './ajv-schema-validator.ts';
import { MAX_URL_FORMAT_LENGTH } from './string-formats.ts';
import { compileLinearRegExp } from './linear-regexp.ts';

function refusal(pattern: string): ToolrunError {
  try {
    compileLinearRegExp(pattern, 'u');
  } catch (error) {
    if (ToolrunError.is(error)) return error;
    throw error;
  }
  throw new Error(`pattern ${pattern} was accepted`);
}

describe('compileLinearRegExp', () => {
  it('runs provably cheap patterns natively and everything with an unbounded or nested quantifier on RE2', () => {
    expect(compileLinearRegExp('^[A-Z]{3}$', 'u').engine).toBe('native');
    expect(compileLinearRegExp('^\\d{4}-\\d{2}-\\d{2}$', 'u').engine).toBe('native');
    expect(compileLinearRegExp('^(?:ab|cd)$', 'u').engine).toBe('native');
    expect(compileLinearRegExp('^(a+)+$', 'u').engine).toBe('re2');
    expect(compileLinearRegExp('^a+$', 'u').engine).toBe('re2');
    expect(compileLinearRegExp('^(ab){2}$', 'u').engine).toBe('re2');
    // 9 optional characters: 2^9 = 512 ways through the pattern, over the native bound of 256
    expect(compileLinearRegExp('^a?a?a?a?a?a?a?a?a?$', 'u').engine).toBe('re2');
  });

  it('answers ^(a+)+$ on 100 KB of "a" plus "!" without backtracking', () => {
    const pattern = compileLinearRegExp('^(a+)+$', 'u');
    expect(pattern.test(`${'a'.repeat(30)}!`)).toBe(false);
    expect(pattern.test(`${'a'.repeat(100_000)}!`)).toBe(false);
    expect(pattern.test('a'.repeat(100_000))).toBe(true);
  });

  it('keeps the ECMA-262 meaning of \\s, \\S, ., [] and [^] on the RE2 engine', () => {
    const cases: Array<[string, string[]]> = [
      ['^\\s+$', ['\u00a0', ' \t\u3000', '\v', 'x', '']],
      ['^\\S+$', ['\u00a0', 'ab']],
      ['^.$', ['\n', '\r', '\u2028', 'a', '😀']],
      ['^[\\s\\d]+$', ['1 \u3000', 'a']],
      ['^[]$', ['a', '']],
      ['^[^]$', ['\n', 'a']],
      ['^\\ud83d\\ude00$', ['😀', 'x']],
      ['^[a[:]$', ['[', 'a', ':', ']']],
      ['^\\p{Letter}+$', ['héllo', '123']],
      ['^\\p{Script=Greek}+$', ['Ωλ', 'abc']],
      ['^[\\b]$', ['\b', 'b']],
      ['^(?<year>\\d{4})-\\d+$', ['2024-1', '2024-']],
    ];
    for (const [source, inputs] of cases) {
      const native = new RegExp(source, 'u');
      const linear = compileLinearRegExp(source, 'u', { engine: 're2' });
      for (const input of inputs) expect({ source, input, matches: linear.test(input) }).toEqual({ source, input, matches: native.test(input) });
    }
  });

  it('agrees with the native engine on random patterns over a small alphabet', () => {
    const atom = fc.constantFrom('a', 'b', '.', '[ab]', '[^a]', '\\s', '\\d', '(?:a|b)', '(a|bb)');
    const quantifier = fc.constantFrom('', '*', '+', '?', '{2}', '{1,3}', '*?');
    const pattern = fc.array(fc.tuple(atom, quantifier), { minLength: 1, maxLength: 5 }).map((parts) => parts.map(([a, q]) => a + q).join(''));
    const anchoredPattern = fc.tuple(fc.boolean(), pattern, fc.boolean()).map(([start, body, end]) => `${start ? '^' : ''}${body}${end ? '$' : ''}`);
    fc.assert(
      fc.property(anchoredPattern, fc.string({ unit: fc.constantFrom('a', 'b', ' ', '1', '\n', 'é'), maxLength: 12 }), (source, input) => {
        expect(compileLinearRegExp(source, 'u', { engine: 're2' }).test(input)).toBe(new RegExp(source, 'u').test(input));
      }),
      { numRuns: 500 },
    );
  });

  it('refuses lookaround and backreferences with INVALID_SCHEMA naming the pattern and the construct', () => {
    expect(refusal('^(?=a)a$').message).toContain('a lookahead is not supported');
    expect(refusal('^(?!a)b$').message).toContain('a lookahead is not supported');
    expect(refusal('(?<=a)b').message).toContain('a lookbehind is not supported');
    expect(refusal('(?<!a)b').message).toContain('a lookbehind is not supported');
    expect(refusal('^(a)\\1$').message).toContain('a backreference is not supported');
    expect(refusal('^(?<x>a)\\k<x>$').message).toContain('a backreference is not supported');
    expect(refusal('^(a)\\1$').message).toContain('"^(a)\\\\1$"');
    expect(refusal('^(a)\\1$').code).toBe('INVALID_SCHEMA');
    expect(refusal('a{').message).toContain('is not a valid regular expression');
  });

  it('distinct patterns print distinctly (Ajv keys its pattern cache on it)', () => {
    expect(String(compileLinearRegExp('^a+$', 'u'))).toBe('/^a+$/u');
    expect(String(compileLinearRegExp('^b+$', 'u'))).not.toBe(String(compileLinearRegExp('^a+$', 'u')));
  });
});

describe('the Ajv validator with the linear engine', () => {
  const validator = createAjvSchemaValidator();

  it('refuses a schema whose pattern has a backreference when it is compiled, with the pattern in the message', () => {
    expect(() => validator.compile({ type: 'object', properties: { code: { type: 'string', pattern: '^(a)\\1$' } } }, { coerce: 'none' })).toThrow(
      'the pattern "^(a)\\\\1$" cannot be evaluated in linear time',
    );
    try {
      validator.compile({ type: 'object', patternProperties: { '^(?=x)': { type: 'string' } } }, { coerce: 'none' });
      expect.unreachable();
    } catch (error) {
      expect(ToolrunError.is(error) && error.code).toBe('INVALID_SCHEMA');
      expect((error as Error).message).toContain('a lookahead is not supported');
    }
  });

  it('checks patternProperties and propertyNames with the linear engine', () => {
    const compiled = validator.compile(
      { type: 'object', patternProperties: { '^(a+)+$': { type: 'integer' } }, propertyNames: { pattern: '^(a|b)+$' } },
      { coerce: 'none' },
    );
    const hostileKey = `${'a'.repeat(50_000)}b`;
    const result = compiled.validate({ [hostileKey]: 'x', aa: 1 });
    expect(result).toMatchObject({ ok: true });
    const bad = compiled.validate({ aaa: 'not an integer' });
    expect(bad).toMatchObject({ ok: false, code: 'INVALID_TYPE' });
  });

  it('bounds the url format at 2,083 characters and keeps it valid below', () => {
    const compiled = validator.compile({ type: 'object', properties: { link: { type: 'string', format: 'url' } } }, { coerce: 'none' });
    expect(compiled.validate({ link: 'https://example.com/a/b?c=d' })).toMatchObject({ ok: true });
    expect(compiled.validate({ link: `https://example.com/${'a'.repeat(MAX_URL_FORMAT_LENGTH)}` })).toMatchObject({ ok: false, code: 'INVALID_FORMAT' });
    expect(compiled.validate({ link: `http://a${'::'.repeat(100_000)}!` })).toMatchObject({ ok: false, code: 'INVALID_FORMAT' });
  });
});
