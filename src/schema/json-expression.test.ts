/**
 * Argument text models really wrote with an expression, a stray quote or unquoted text as a value:
 * each is diagnosed as what it is (never as a missing comma), with the corrected object when it can
 * be computed.
 */
import { describe, expect, it } from 'vitest';
import { createFailurePatternLibrary } from '../core/failure-patterns.ts';
import { evaluateExpression, expressionAt } from './json-expression.ts';
import { parseArguments } from './parse-arguments.ts';

function failure(text: string) {
  const result = parseArguments(text);
  if (result.ok) throw new Error(`expected a failure for ${text}`);
  return result.failure;
}

const library = createFailurePatternLibrary();
const patternOf = (text: string) => {
  const { code, message, detail } = failure(text);
  return library.match({ toolName: 't', code, message, detail })?.id;
};

describe('expressions as values', () => {
  it.each([
    ['{"radius": 5, "angle": 2 * Math.PI}', '2 * Math.PI', '{"radius":5,"angle":6.28318530717959}'],
    ['{"angle": Math.PI / 2}', 'Math.PI / 2', '{"angle":1.5707963267949}'],
    ['{"side": sqrt(2)}', 'sqrt(2)', '{"side":1.4142135623731}'],
    ['{"side": math.sqrt(16), "n": 1}', 'math.sqrt(16)', '{"side":4,"n":1}'],
    ['{"count": 10 ** 6}', '10 ** 6', '{"count":1000000}'],
    ['{"area": np.pi * 5 ** 2}', 'np.pi * 5 ** 2', '{"area":78.5398163397448}'],
  ])('%s: %s is an expression, its result shown', (text, expression, repaired) => {
    const { message, detail, suggestion } = failure(text);
    expect(message).toMatch(/a value is (an expression|arithmetic)/);
    expect(detail).toContain(`${expression} is an expression; JSON takes only its result`);
    expect(detail).not.toContain('without a comma');
    expect(suggestion).toContain(`e.g. ${repaired}`);
    expect(patternOf(text)).toBe('json-arithmetic');
  });

  it('an expression that cannot be computed is still an expression (no corrected object)', () => {
    const { detail, suggestion } = failure('{"x": foo(2)}');
    expect(detail).toContain('foo(2) is an expression');
    expect(suggestion).toContain('Compute foo(2) and send the resulting number');
    expect(suggestion).not.toContain('e.g.');
  });

  it('strings joined with + are one string', () => {
    const { detail, suggestion } = failure('{"name": "New" + " York"}');
    expect(detail).toContain('strings joined with + is an expression');
    expect(suggestion).toContain('e.g. {"name":"New York"}');
  });

  it('a JSON number with an exponent, a negative number and an unquoted date are not expressions', () => {
    expect(parseArguments('{"x": 1e-5, "y": -2}')).toMatchObject({ ok: true, value: { x: 1e-5, y: -2 } });
    expect(expressionAt('2024-01-15}', 0)).toBeUndefined();
    expect(expressionAt('Paris}', 0)).toBeUndefined();
    expect(expressionAt('-5', 0)).toBeUndefined();
    expect(expressionAt('Math.PI}', 0)).toBe('Math.PI');
    expect(evaluateExpression('pow(2, 10) % 1000')).toBe(24);
    expect(evaluateExpression('1 / 0')).toBeUndefined();
    expect(evaluateExpression('e')).toBeUndefined();
  });
});

describe('a stray quote after a value', () => {
  it.each([
    ['{"n": 5", "b": 1}', '5', '{"n":5,"b":1}'],
    ['{"vegan_only": true"}', 'true', '{"vegan_only":true}'],
    ['{"diet": ["vegan"]"}', '"vegan"]', '{"diet":["vegan"]}'],
  ])('%s: a stray quote after %s, not a missing comma', (text, after, repaired) => {
    const { message, detail, suggestion } = failure(text);
    expect(message).toBe('arguments are not valid JSON: a double quote is out of place');
    expect(detail).toContain(`a stray " follows ${after}`);
    expect(detail).not.toContain('without a comma');
    expect(suggestion).toContain(`e.g. ${repaired}`);
  });

  it('a real missing comma is still one', () => {
    expect(failure('{"a": 1 "b": 2}').message).toBe('arguments are not valid JSON: a comma is missing');
  });
});

describe('unquoted text values', () => {
  it.each([
    ['{"city": Paris}', 'Paris', '{"city":"Paris"}'],
    ['{"date": 2024-01-15, "n": 2}', '2024-01-15', '{"date":"2024-01-15","n":2}'],
  ])('%s: %s has no double quotes', (text, value, repaired) => {
    const { detail, suggestion } = failure(text);
    expect(detail).toContain(`the value ${value} has no double quotes`);
    expect(detail).not.toContain('without a comma');
    expect(suggestion).toContain(`e.g. ${repaired}`);
    expect(patternOf(text)).toBe('json-punctuation');
  });
});
