/**
 * Names that carry nothing (`func1`, `""`) resolved from the call's arguments, and calls nested in
 * others, on the real answers of BFCL's recorded models (the questions' schemas inline).
 */
import { describe, expect, it } from 'vitest';
import { createToolRuntime } from './create-tool-runtime.ts';
import { createFailurePatternLibrary } from './failure-patterns.ts';
import { defineTool } from './define-tool.ts';
import { createToolNameResolver, describeToolNotFound, type ToolNameEntry } from './resolve-tool-name.ts';
import { isPlaceholderName, suggestByArguments } from './resolve-by-arguments.ts';

// simple_python_125 (gpt-3.5-turbo-0125 answered `func1`), with two tools of the question's neighbours
const housing: ToolNameEntry[] = [
  {
    name: 'predict_house_price',
    parameters: ['area', 'rooms', 'year', 'location'],
    required: ['area', 'rooms', 'year', 'location'],
    types: { area: 'integer', rooms: 'integer', year: 'integer', location: 'string' },
  },
  { name: 'currency_converter', parameters: ['base_currency', 'target_currency', 'amount'], required: ['base_currency', 'target_currency', 'amount'] },
  { name: 'calculate_circumference', parameters: ['radius', 'unit'], required: ['radius'], types: { radius: 'integer', unit: 'string' } },
];

// multiple_49: two tools take the same three arguments (a tie: nothing is suggested)
const interest: ToolNameEntry[] = [
  {
    name: 'calc_Compound_Interest',
    parameters: ['principle_amount', 'duration', 'annual_rate', 'compound_freq'],
    required: ['principle_amount', 'duration', 'annual_rate'],
    types: { principle_amount: 'integer', duration: 'integer', annual_rate: 'number', compound_freq: 'integer' },
  },
  {
    name: 'future_value',
    parameters: ['initial_investment', 'interest_rate', 'time', 'num_compoundings'],
    required: ['initial_investment', 'interest_rate', 'time'],
    types: { initial_investment: 'number', interest_rate: 'number', time: 'integer', num_compoundings: 'integer' },
  },
  {
    name: 'calc_Simple_Interest',
    parameters: ['principle_amount', 'duration', 'annual_rate'],
    required: ['principle_amount', 'duration', 'annual_rate'],
    types: { principle_amount: 'number', duration: 'number', annual_rate: 'number' },
  },
];

describe('a name that carries nothing: the arguments choose', () => {
  const resolve = createToolNameResolver(housing);

  it.each(['func1', 'func2', 'function_3', '', 'tool', 'fn'])('%j with the arguments of exactly one tool suggests it, never runs it', (name) => {
    const resolution = resolve(name, { area: 2500, rooms: 5, year: 1990, location: 'San Francisco' });
    expect(resolution.match).toBeUndefined();
    expect(resolution.closest).toBe('predict_house_price');
    expect(resolution.reason).toBe('its parameters fit the arguments: "area", "rooms", "year", …');
  });

  it('reads the arguments as JSON text too', () => {
    expect(resolve('func1', '{"base_currency":"USD","target_currency":"GBP","amount":200}').closest).toBe('currency_converter');
  });

  it('a tie (two tools take every argument with their types) suggests nothing, and lists both', () => {
    const resolution = createToolNameResolver(interest)('func1', { principle_amount: 1500, duration: 2, annual_rate: 2.5 });
    expect(resolution.closest).toBeUndefined();
    expect(resolution.match).toBeUndefined();
    expect(resolution.candidates).toEqual([]);
  });

  it('types tell tools with the same parameter names apart', () => {
    const shapes = createToolNameResolver([
      { name: 'scale_image', parameters: ['factor'], required: ['factor'], types: { factor: 'number' } },
      { name: 'rename_image', parameters: ['factor'], required: ['factor'], types: { factor: 'string' } },
    ]);
    expect(shapes('func1', { factor: 2 }).closest).toBe('scale_image');
    expect(shapes('func1', { factor: 'x' }).closest).toBe('rename_image');
    // a numeric string fits both: a tie
    expect(shapes('func1', { factor: '2' }).closest).toBeUndefined();
  });

  it('a tool whose required parameters are all present wins over one that only declares the arguments', () => {
    const suggestion = suggestByArguments({ radius: 4 }, [
      { name: 'circle_area', parameters: new Map([['radius', ['number']]]), declaredNames: new Map([['radius', 'radius']]), required: ['radius'] },
      {
        name: 'cylinder_volume',
        parameters: new Map([
          ['radius', ['number']],
          ['height', ['number']],
        ]),
        declaredNames: new Map(),
        required: ['radius', 'height'],
      },
    ]);
    expect(suggestion.closest).toBe('circle_area');
  });

  it('a meaningful name that resembles no tool is not turned into the tool its arguments fit', () => {
    expect(resolve('estimate_rent', { area: 2500, rooms: 5, year: 1990, location: 'San Francisco' }).closest).toBeUndefined();
  });

  it('an argument no tool declares, or no arguments: no suggestion', () => {
    expect(resolve('func1', { area: 2500, colour: 'red' }).closest).toBeUndefined();
    expect(resolve('func1', {}).closest).toBeUndefined();
    expect(resolve('func1').closest).toBeUndefined();
  });

  it('a name with a hint keeps its name-based suggestion; a placeholder never suggests by spelling', () => {
    expect(resolve('predict_house_prices', { radius: 2 }).closest).toBe('predict_house_price');
    expect(isPlaceholderName('func1')).toBe(true);
    expect(isPlaceholderName('funcs')).toBe(false);
    expect(isPlaceholderName('predict')).toBe(false);
  });
});

describe('nested calls', () => {
  const derivative: ToolNameEntry[] = [
    { name: 'calculate_derivative', parameters: ['function', 'x_value'], required: ['function'], types: { function: 'string', x_value: 'integer' } },
  ];
  const resolve = createToolNameResolver(derivative);
  // claude-2.1 on parallel_71
  const nestedText = "calculate_derivative(function=calculate_derivative(function='3x^3 - 2x^2 + 5x - 7'), x_value=4)";

  it('call text whose outer name is the only offered tool: suggested, flagged nested, never run', () => {
    const resolution = resolve(nestedText, {});
    expect(resolution).toMatchObject({ closest: 'calculate_derivative', nested: 'outer' });
    expect(resolution.match).toBeUndefined();
    const wording = describeToolNotFound(nestedText, resolution, 'calculate_derivative');
    expect(wording.detail).toContain('calls cannot be nested');
    expect(wording.suggestion).toContain('Call "calculate_derivative" on its own');
  });

  it('a call written out as the name (no call inside) is suggested without the nesting wording', () => {
    const resolution = resolve("calculate_derivative(function='x**2')");
    expect(resolution).toMatchObject({ closest: 'calculate_derivative', reason: 'the name was sent with its arguments written after it' });
    expect(resolution.nested).toBeUndefined();
  });

  it('a wrapper whose arguments hold a call of an offered tool suggests that tool (mistral-small on parallel_35)', () => {
    const resolution = createToolNameResolver([{ name: 'ancient_empires.get_religion_info', parameters: ['empire_name', 'include_influences'] }])(
      'ancestral_knowledge_query',
      { function_calls: [{ name: 'ancient_empires_get_religion_info', arguments: { empire_name: 'Maurya Empire' } }] },
    );
    expect(resolution).toMatchObject({ closest: 'ancient_empires.get_religion_info', nested: 'inner' });
  });
});

describe('through the runtime', () => {
  let ran = 0;
  const predict = defineTool({
    name: 'predict_house_price',
    description: 'Predicts the price of a house',
    inputSchema: {
      type: 'object',
      properties: { area: { type: 'integer' }, rooms: { type: 'integer' }, year: { type: 'integer' }, location: { type: 'string' } },
      required: ['area', 'rooms', 'year', 'location'],
    },
    execute: async () => {
      ran += 1;
      return { price: 1 };
    },
  });
  const convert = defineTool({
    name: 'currency_converter',
    description: 'Converts an amount',
    inputSchema: {
      type: 'object',
      properties: { base_currency: { type: 'string' }, target_currency: { type: 'string' }, amount: { type: 'number' } },
      required: ['base_currency', 'target_currency', 'amount'],
    },
    execute: async () => ({ converted: 1 }),
  });

  it('func1 with the arguments of predict_house_price: TOOL_NOT_FOUND naming it, and nothing ran', async () => {
    const runtime = createToolRuntime({ tools: [predict, convert] });
    const result = await runtime.run({ name: 'func1', args: { area: 2500, rooms: 5, year: 1990, location: 'San Francisco' } });
    expect(result.status).toBe('failed');
    if (result.status !== 'failed') return;
    expect(result.error.code).toBe('TOOL_NOT_FOUND');
    expect(result.error.closest_tool).toBe('predict_house_price');
    expect(result.error.suggestion).toContain('Call "predict_house_price" (its parameters fit the arguments');
    expect(ran).toBe(0);
    const { code, message, detail } = result.error;
    expect(createFailurePatternLibrary().match({ toolName: 'func1', code, message, ...(detail === undefined ? {} : { detail }) })?.id).toBe(
      'tool-name-from-arguments',
    );
  });

  it('a nested call as the name: TOOL_NOT_FOUND naming the tool, the nested-call pattern', async () => {
    const runtime = createToolRuntime({ tools: [predict, convert] });
    const result = await runtime.run({ name: 'currency_converter(amount=currency_converter(amount=1))', args: {} });
    if (result.status !== 'failed') throw new Error('expected a failure');
    expect(result.error.closest_tool).toBe('currency_converter');
    const { code, message, detail } = result.error;
    expect(createFailurePatternLibrary().match({ toolName: 'x', code, message, ...(detail === undefined ? {} : { detail }) })?.id).toBe('nested-call');
    expect(ran).toBe(0);
  });
});
