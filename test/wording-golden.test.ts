/**
 * Golden envelopes for the wording of real model failures: each case is a failing call as real
 * models made it, run through a real runtime (JSON Schema tools and a Zod tool), the agent loop's
 * `multi_tool_use.parallel` unwrapping, and the message-DLQ reason. The envelopes are a wire
 * format: a change shows as a diff of test/golden/wording-envelopes.json. To accept an intended
 * change: TOOLRUN_UPDATE_GOLDEN=1 npx vitest run test/wording-golden.test.ts
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createToolRuntime, defineTool, type ToolResult } from '../src/index.ts';
import { unwrapParallelToolCalls } from '../src/core/unwrap-parallel.ts';
import { createFailurePatternLibrary } from '../src/core/failure-patterns.ts';
import { createAutoAdvancingClock } from '../src/testing/auto-advancing-clock.ts';
import { handleMessage } from '../src/worker/handle-message.ts';

const GOLDEN = new URL('./golden/wording-envelopes.json', import.meta.url);

const noop = async (args: unknown) => ({ ok: true, args });

const tools = [
  defineTool({
    name: 'find_recipes',
    description: 'Find recipes',
    inputSchema: {
      type: 'object',
      properties: {
        diet: { type: 'array', items: { type: 'string' } },
        filters: { type: 'object', properties: { max_minutes: { type: 'integer' } } },
        vegan_only: { type: 'boolean' },
        servings: { type: 'integer', minimum: 1 },
      },
      required: ['diet'],
      additionalProperties: false,
    },
    execute: noop,
  }),
  defineTool({
    name: 'calculate_average',
    description: 'Average of the grades',
    inputSchema: {
      type: 'object',
      properties: { gradeDict: { type: 'object', description: 'A dictionary of subjects and their grades', additionalProperties: { type: 'number' } } },
      required: ['gradeDict'],
      additionalProperties: false,
    },
    execute: noop,
  }),
  defineTool({
    name: 'school.enroll',
    description: 'Enroll a student',
    inputSchema: { type: 'object', properties: { _class: { type: 'string' }, student: { type: 'string' } }, required: ['_class', 'student'] },
    execute: noop,
  }),
  defineTool({
    name: 'audio.generate_tone',
    description: 'Generate a tone',
    inputSchema: {
      type: 'object',
      properties: { frequency: { type: 'number' }, wave_type: { type: 'string', enum: ['sine', 'square', 'sawtooth'] } },
      required: ['frequency'],
      additionalProperties: false,
    },
    execute: noop,
  }),
  defineTool({
    name: 'book_flight',
    description: 'Book a flight',
    inputSchema: {
      type: 'object',
      properties: {
        date: {
          type: 'string',
          format: 'date',
          description: 'The day of departure in the traveller’s local time zone, as the airline publishes it in its timetable, e.g. 2024-05-20',
        },
        departure: { type: 'string', format: 'date-time' },
      },
      required: ['date'],
    },
    execute: noop,
  }),
  defineTool({
    name: 'send_email',
    description: 'Send an e-mail',
    inputSchema: {
      type: 'object',
      properties: { to: { type: 'string', format: 'email' }, subject: { type: 'string' }, body: { type: 'string' } },
      required: ['to', 'subject'],
    },
    execute: noop,
  }),
  defineTool({
    name: 'set_alarm',
    description: 'Set an alarm (Zod schema)',
    inputSchema: z.object({ time: z.string(), repeat: z.boolean(), days: z.array(z.enum(['mon', 'tue', 'wed'])) }).strict(),
    execute: noop,
  }),
  defineTool({
    name: 'rectangle.calculate_perimeter',
    description: 'Perimeter of a rectangle',
    inputSchema: { type: 'object', properties: { length: { type: 'number' }, width: { type: 'number' } }, required: ['length', 'width'] },
    execute: noop,
  }),
  defineTool({
    name: 'circle.calculate_circumference',
    description: 'Circumference of a circle',
    inputSchema: { type: 'object', properties: { diameter: { type: 'number' } }, required: ['diameter'] },
    execute: noop,
  }),
  defineTool({
    name: 'prediction.evolution',
    description: 'Predict the evolution of a species',
    inputSchema: { type: 'object', properties: { species: { type: 'string' }, years: { type: 'integer' } }, required: ['species', 'years'] },
    execute: noop,
  }),
  defineTool({
    name: 'get_weather',
    description: 'Weather of a city',
    inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
    execute: async ({ city }) => ({ city, celsius: 21 }),
  }),
];

/** Every wording case of the issue, by family; the runtime uses the default failure-pattern library. */
async function scenarios(): Promise<Record<string, unknown>> {
  const clock = createAutoAdvancingClock(0);
  const runtime = createToolRuntime({ tools, clock, random: () => 0, failurePatterns: createFailurePatternLibrary() });
  const scalars = createToolRuntime({ tools, clock, random: () => 0, coerce: 'scalars' });
  let index = 0;
  const run = (name: string, args: unknown, on = runtime): Promise<ToolResult> => {
    index += 1;
    return on.run({ name, args, callId: `call_${index}`, traceId: `trace_${index}`, sessionId: `s${index}` });
  };
  const results: Record<string, unknown> = {};
  // type errors: a value to send in every message
  results.pythonListAsString = await run('find_recipes', { diet: "['vegan']" });
  results.pythonDictAsString = await run('find_recipes', { diet: ['vegan'], filters: "{'max_minutes': 30}" });
  results.jsonArrayAsString = await run('find_recipes', { diet: '["vegan", "gluten_free"]' });
  results.scalarForArray = await run('find_recipes', { diet: 'vegan' });
  results.capitalisedBoolean = await run('find_recipes', { diet: ['vegan'], vegan_only: 'True' });
  results.capitalisedBooleanCoerced = await run('find_recipes', { diet: ['vegan'], vegan_only: 'False' }, scalars);
  results.nullForRequired = await run('find_recipes', { diet: null });
  results.wordForInteger = await run('find_recipes', { diet: ['vegan'], servings: 'four' });
  // malformed JSON, as real models broke it
  results.jsonArithmetic = await run('find_recipes', '{"diet": ["vegan"], "servings": 3*4}');
  results.jsonComment = await run('find_recipes', '{"diet": ["vegan"] // the user said vegan\n}');
  results.jsonSingleQuotes = await run('find_recipes', "{'diet': ['vegan']}");
  results.jsonPythonLiteral = await run('find_recipes', '{"diet": ["vegan"], "vegan_only": True}');
  results.jsonStrayQuote = await run('send_email', '{"to": "mia@example.com", "subject": "The "best" offer"}');
  results.jsonMissingComma = await run('find_recipes', '{"diet": ["vegan"] "servings": 2}');
  // names: missing required values sent under another name, unknown parameters
  results.missingRequiredSentAsOther = await run('calculate_average', { scores: { math: 90, physics: 80 } });
  results.missingRequiredClass = await run('school.enroll', { class: '5B', student: 'Mia' });
  results.unknownParameterWeak = await run('audio.generate_tone', { frequency: 440, wave_file: 'sine' });
  // descriptions, dates, formats, Zod
  results.descriptionKeepsExample = await run('book_flight', {});
  results.impossibleDate = await run('book_flight', { date: '2025-02-30' });
  results.dateTimeWithoutZone = await run('book_flight', { date: '2025-02-28', departure: '2025-02-28T09:30:00' });
  results.emailExampleNotRedacted = await run('send_email', { to: 'mia li', subject: 'Hello' });
  results.zodBooleanAsString = await run('set_alarm', { time: '07:00', repeat: 'True', days: ['mon'] });
  results.zodEnumAndUnknown = await run('set_alarm', { time: '07:00', repeat: true, days: ['Monday'], snooze: 5 });
  // tool names
  results.toolNameWeighedByArguments = await run('circle.calculate_perimeter', { diameter: 10 });
  results.toolNameReordered = await run('evolution.prediction', { species: 'finch', years: 50 });
  results.parallelWrapperUnreadable = await run('multi_tool_use.parallel', '{"calls": []}');
  // the agent loop's unwrapping of multi_tool_use.parallel: one envelope per inner call
  const wrapped = unwrapParallelToolCalls([
    {
      id: 'call_par',
      name: 'multi_tool_use.parallel',
      args: JSON.stringify({
        tool_uses: [
          { recipient_name: 'functions.get_weather', parameters: { city: 'Paris' } },
          { recipient_name: 'functions.get_weather', parameters: { town: 'Oslo' } },
        ],
      }),
    },
  ]);
  results.parallelUnwrapped = await Promise.all(
    wrapped.map((call) => runtime.run({ name: call.name, args: call.args, callId: call.id, traceId: 'trace_par', sessionId: 'par' })),
  );
  // the message-DLQ reason for a body without input
  const rejected = await handleMessage(
    { id: 'm-1', body: JSON.stringify({ prompt: 'Book a flight to Paris' }) },
    {
      model: async () => ({ text: 'unused', usage: { input: 0, output: 0 } }),
      tools,
      clock,
      queues: { messageDlq: { push: async () => undefined }, toolDlq: { push: async () => undefined } },
    },
  );
  results.messageWithoutInput = rejected.status === 'rejected' ? rejected.reason : rejected;
  return results;
}

describe('the wording of real model failures (golden JSON)', () => {
  it('matches test/golden/wording-envelopes.json', async () => {
    const actual = JSON.parse(JSON.stringify(await scenarios())) as Record<string, unknown>;
    if (process.env.TOOLRUN_UPDATE_GOLDEN === '1' || !existsSync(GOLDEN)) {
      writeFileSync(GOLDEN, `${JSON.stringify(actual, null, 2)}\n`);
      if (process.env.CI) throw new Error('golden file was missing in CI');
    }
    const expected = JSON.parse(readFileSync(GOLDEN, 'utf8')) as Record<string, unknown>;
    expect(actual).toEqual(expected);
  });
});
