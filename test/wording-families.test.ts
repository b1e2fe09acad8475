/**
 * The wording layer's pieces on their own: each family of real model failure gets its own
 * failure-pattern entry (so `toolrun report` groups them), `coerce: 'scalars'` converts Python's
 * True/False, the redactor keeps toolrun's own e-mail example, the resolver weighs arguments and
 * reordered words, and `multi_tool_use.parallel` is unwrapped into calls with their own ids.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createFailurePatternLibrary } from '../src/core/failure-patterns.ts';
import { createRedactor } from '../src/core/redact.ts';
import { createToolNameResolver } from '../src/core/resolve-tool-name.ts';
import { isParallelWrapperName, unwrapParallelToolCalls } from '../src/core/unwrap-parallel.ts';
import { describeDescription, readLiteralText } from '../src/schema/describe-values.ts';
import { exampleValue } from '../src/schema/describe-schema.ts';
import { describeImpossibleDate } from '../src/schema/format-expectations.ts';
import { normaliseArguments } from '../src/schema/normalise-arguments.ts';
import type { ToolResult } from '../src/index.ts';

const golden = JSON.parse(readFileSync(new URL('./golden/wording-envelopes.json', import.meta.url), 'utf8')) as Record<string, ToolResult>;

describe('a failure-pattern entry per family', () => {
  const library = createFailurePatternLibrary();
  it.each([
    ['pythonListAsString', 'python-literal-in-string'],
    ['pythonDictAsString', 'python-literal-in-string'],
    ['jsonArrayAsString', 'json-in-string'],
    ['capitalisedBoolean', 'boolean-as-string'],
    ['zodBooleanAsString', 'boolean-as-string'],
    ['nullForRequired', 'null-for-value'],
    ['wordForInteger', 'wrong-type'],
    ['jsonArithmetic', 'json-arithmetic'],
    ['jsonComment', 'json-comment'],
    ['jsonSingleQuotes', 'json-single-quotes'],
    ['jsonPythonLiteral', 'json-python-literal'],
    ['jsonStrayQuote', 'json-stray-quote'],
    ['jsonMissingComma', 'json-punctuation'],
    ['missingRequiredSentAsOther', 'misplaced-value'],
    ['missingRequiredClass', 'misplaced-value'],
    ['unknownParameterWeak', 'unknown-parameter-weak-match'],
    ['impossibleDate', 'nonexistent-date'],
    ['dateTimeWithoutZone', 'date-time-incomplete'],
    ['emailExampleNotRedacted', 'format-mismatch'],
    ['toolNameWeighedByArguments', 'tool-name-by-arguments'],
    ['toolNameReordered', 'tool-name-reordered'],
    ['parallelWrapperUnreadable', 'parallel-wrapper'],
  ])('%s → %s', (name, id) => {
    const result = golden[name];
    if (result === undefined || result.status !== 'failed') throw new Error(`${name} is not a failure in the golden file`);
    const { error } = result;
    expect(library.match({ toolName: result.tool_name, code: error.code, message: error.message, detail: error.detail, fields: error.fields ?? [] })?.id).toBe(
      id,
    );
  });
});

describe('the pieces', () => {
  it("coerce: 'scalars' converts True/False (and TRUE/FALSE), not tRuE or yes", () => {
    const schema = { type: 'object', properties: { a: { type: 'boolean' }, b: { type: 'boolean' }, c: { type: 'boolean' }, d: { type: 'boolean' } } };
    const out = normaliseArguments({ a: 'True', b: 'FALSE', c: 'tRuE', d: 'yes' }, schema, { nullAsAbsent: false, coerce: 'scalars' });
    expect(out.value).toEqual({ a: true, b: false, c: 'tRuE', d: 'yes' });
    expect(out.normalisations).toEqual(['coerced:/a', 'coerced:/b']);
  });

  it('the redactor keeps toolrun’s example address and masks any other', () => {
    const text = createRedactor().text('expected an e-mail address, e.g. name@example.com, received mia.li@example.com or xname@example.com');
    expect(text).toBe('expected an e-mail address, e.g. name@example.com, received *** or ***');
  });

  it('reads Python and JSON literals sent as strings, and nothing else', () => {
    expect(readLiteralText("['vegan', 'gluten_free']")).toEqual({ value: ['vegan', 'gluten_free'], python: true });
    expect(readLiteralText("{'a': True, 'b': None, 'c': (1, 2,)}")).toEqual({ value: { a: true, b: null, c: [1, 2] }, python: true });
    expect(readLiteralText('[1, 2]')).toEqual({ value: [1, 2], python: false });
    expect(readLiteralText('vegan')).toBeUndefined();
    expect(readLiteralText("[os.system('x')]")).toBeUndefined();
  });

  it('a long description keeps its example when cut', () => {
    const description = `${'The day of departure in local time as the airline publishes it in its timetable. '.repeat(3)}For example 2024-05-20.`;
    const cut = describeDescription(description, 120);
    expect(cut.length).toBeLessThanOrEqual(120);
    expect(cut).toContain('For example 2024-05-20');
  });

  it('examples follow the schema and the received value', () => {
    expect(exampleValue({ type: 'array', items: { type: 'string' } }, 'vegan')).toEqual(['vegan']);
    expect(exampleValue({ type: 'integer', minimum: 3 })).toBe(3);
    expect(exampleValue({ type: 'object', properties: { a: { type: 'string', format: 'date' } }, required: ['a'] })).toEqual({ a: '2024-01-15' });
    expect(exampleValue({ enum: ['x', 'y'] })).toBe('x');
  });

  it('names the impossible date or time', () => {
    expect(describeImpossibleDate('date', '2025-02-30')).toBe('February 2025 has 28 days, so 2025-02-30 does not exist');
    expect(describeImpossibleDate('date', '2024-02-29')).toBeUndefined();
    expect(describeImpossibleDate('date', '2024-13-01')).toMatch(/no month 13/);
    expect(describeImpossibleDate('date-time', '2024-01-15T25:00:00Z')).toMatch(/no hour 25/);
    expect(describeImpossibleDate('date', '05/20/2024')).toBeUndefined();
  });
});

describe('name resolution with arguments', () => {
  const resolve = createToolNameResolver([
    { name: 'rectangle.calculate_perimeter', parameters: ['length', 'width'], required: ['length', 'width'] },
    { name: 'circle.calculate_circumference', parameters: ['diameter'], required: ['diameter'] },
    { name: 'prediction.evolution', parameters: ['species', 'years'], required: ['species'] },
    { name: 'calculate_entropy_change', parameters: ['temperature'], required: ['temperature'] },
    { name: 'entropy_change.calculate', parameters: ['initial_temp', 'final_temp'], required: ['initial_temp', 'final_temp'] },
  ]);

  it('the arguments pick the tool that takes them; without them the name decides', () => {
    expect(resolve('circle.calculate_perimeter', { diameter: 10 })).toEqual({
      closest: 'circle.calculate_circumference',
      candidates: ['circle.calculate_circumference', 'rectangle.calculate_perimeter'],
      reason: 'it takes "diameter"',
    });
    expect(resolve('circle.calculate_perimeter').closest).toBe('rectangle.calculate_perimeter');
    expect(resolve('circle.calculate_perimeter', '{"diameter": 10}').closest).toBe('circle.calculate_circumference');
  });

  it('reordered words are suggested, never run', () => {
    expect(resolve('evolution.prediction')).toEqual({
      closest: 'prediction.evolution',
      candidates: ['prediction.evolution'],
      reason: 'the same words in another order',
    });
  });

  it('a spelling match is withheld when a tool of the same words takes the arguments', () => {
    expect(resolve('calculate.entropy_change').match).toBe('calculate_entropy_change');
    const weighed = resolve('calculate.entropy_change', { initial_temp: 300, final_temp: 350 });
    expect(weighed.match).toBeUndefined();
    expect(weighed.closest).toBe('entropy_change.calculate');
    expect(resolve('calculate.entropy_change', { temperature: 300 }).match).toBe('calculate_entropy_change');
  });
});

describe('multi_tool_use.parallel', () => {
  it('recognises the wrapper however spelled', () => {
    expect(['multi_tool_use.parallel', 'multi_tool_use_parallel', 'functions.multi_tool_use.parallel'].every(isParallelWrapperName)).toBe(true);
    expect(isParallelWrapperName('parallel')).toBe(false);
  });

  it('unwraps the calls in order, each with its own id; other calls and unreadable wrappers pass unchanged', () => {
    const plain = { id: 'call_1', name: 'get_weather', args: '{"city":"Rome"}' };
    const unreadable = { id: 'call_3', name: 'multi_tool_use.parallel', args: 'not json' };
    const calls = unwrapParallelToolCalls([
      plain,
      {
        id: 'call_2',
        name: 'multi_tool_use.parallel',
        args: { tool_uses: [{ recipient_name: 'functions.get_weather', parameters: { city: 'Paris' } }, { recipient_name: 'get_time' }, { parameters: {} }] },
      },
      unreadable,
      { id: 'call_2_0', name: 'x', args: {} },
    ]);
    expect(calls).toEqual([
      plain,
      { id: 'call_2_0_', name: 'get_weather', args: { city: 'Paris' } },
      { id: 'call_2_1', name: 'get_time', args: {} },
      { id: 'call_2_2', name: 'multi_tool_use.parallel', args: { tool_uses: [{ parameters: {} }] } },
      unreadable,
      { id: 'call_2_0', name: 'x', args: {} },
    ]);
    expect(calls[0]).toBe(plain);
  });

  it('leaves a registered tool of that name alone', () => {
    const call = { id: 'c', name: 'multi_tool_use.parallel', args: { tool_uses: [{ recipient_name: 'a' }] } };
    expect(unwrapParallelToolCalls([call], { isTool: () => true })).toEqual([call]);
  });
});
