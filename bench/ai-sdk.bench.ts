/**
 * `toolrun/ai-sdk`'s benchmark, with the AI SDK's own mock model (`MockLanguageModelV3` of
 * `ai/test`, answering at once) and one tool (the search-flight fixture):
 * - per tool call through `generateText` (`ai` 6): a step with one tool call plus the final step,
 *   (a) with a plain AI SDK tool whose JSON Schema the SDK validates with a precompiled Ajv, (b)
 *   with `toAiSdk`'s tool (toolrun parses, validates, runs the policies and builds the envelope);
 *   the difference is toolrun's cost per tool call inside the host; (e) with `toAiSdk` given a
 *   dead-letter place (`deadLetter: { stores }`, in-memory stores; one `toAiSdk` per run, as the
 *   docs say), against (a): the cost of the tool DLQ in the SDK's own loop, per 2-step run;
 * - one agent step with a tool call: (c) one step of `generateText` with the plain tool, (d) one
 *   step of `runAgent` over `fromAiSdkModel` of the same mock model with the same tool (in memory,
 *   no persistence).
 *
 * It measures the compiled package (`dist/`, what users run; `npm run bench` builds it first) when
 * it is there, else the TypeScript sources through tsx (whose transform makes toolrun's side a
 * little slower).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { measure, type BenchRow } from './measure.ts';
import type * as Toolrun from '../src/index.ts';
import type * as ToolrunAiSdk from '../src/adapters/ai-sdk/index.ts';
import { SEARCH_FLIGHT_ARGS, SEARCH_FLIGHT_SCHEMA, searchFlight } from './search-flight-fixture.ts';

async function loadToolrun(): Promise<{ toolrun: typeof Toolrun; aiSdk: typeof ToolrunAiSdk; source: string }> {
  const dist = new URL('../dist/adapters/ai-sdk/index.js', import.meta.url);
  if (existsSync(fileURLToPath(dist))) {
    return {
      toolrun: (await import(new URL('../dist/index.js', import.meta.url).href)) as typeof Toolrun,
      aiSdk: (await import(dist.href)) as typeof ToolrunAiSdk,
      source: 'dist',
    };
  }
  return { toolrun: await import('../src/index.ts'), aiSdk: await import('../src/adapters/ai-sdk/index.ts'), source: 'src via tsx' };
}

const USAGE = {
  inputTokens: { total: 20, noCache: 20, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const TOOL_CALL_RESULT = {
  content: [{ type: 'tool-call' as const, toolCallId: 'call_1', toolName: 'search_direct_flight', input: JSON.stringify(SEARCH_FLIGHT_ARGS) }],
  finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
  usage: USAGE,
  warnings: [],
};
const TEXT_RESULT = {
  content: [{ type: 'text' as const, text: 'Found 2 flights.' }],
  finishReason: { unified: 'stop' as const, raw: 'stop' },
  usage: USAGE,
  warnings: [],
};

/** The mock answers a tool call to a prompt without a tool result, the final text after one. */
function mockModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async (options) => (options.prompt.some((message) => message.role === 'tool') ? TEXT_RESULT : TOOL_CALL_RESULT),
  });
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * `a` and `b` measured in alternating rounds (the machine's load drifts between runs of a few
 * seconds each): the median time of each, and the median of the per-round ratios b / a.
 */
async function paired(a: () => unknown, b: () => unknown, rounds = 9): Promise<{ aNs: number; bNs: number; ratio: number }> {
  const aTimes: number[] = [];
  const bTimes: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const options = { batches: 3, batchSize: 100, warmup: round === 0 ? 300 : 20 };
    aTimes.push(await measure(a, options));
    bTimes.push(await measure(b, options));
  }
  return { aNs: median(aTimes), bNs: median(bTimes), ratio: median(bTimes.map((time, index) => time / aTimes[index]!)) };
}

/** Runs the benchmark and returns its rows. */
export async function runAiSdkBench(): Promise<BenchRow[]> {
  const { toolrun, aiSdk, source } = await loadToolrun();
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
  const validate = ajv.compile(SEARCH_FLIGHT_SCHEMA);
  const plainTools = {
    search_direct_flight: tool({
      description: 'Search direct flights',
      inputSchema: jsonSchema<typeof SEARCH_FLIGHT_ARGS>(SEARCH_FLIGHT_SCHEMA as never, {
        validate: (value) => (validate(value) ? { success: true, value: value as typeof SEARCH_FLIGHT_ARGS } : { success: false, error: new Error('invalid') }),
      }),
      execute: async (args) => searchFlight(args),
    }),
  };
  const runtime = toolrun.createToolRuntime({
    tools: [
      toolrun.defineTool({
        name: 'search_direct_flight',
        description: 'Search direct flights',
        inputSchema: SEARCH_FLIGHT_SCHEMA,
        idempotent: true,
        execute: searchFlight,
      }),
    ],
  });
  const { tools, repairToolCall } = aiSdk.toAiSdk(runtime, { sessionId: 'bench' });
  const model = mockModel();
  const toolrunModel = aiSdk.fromAiSdkModel(mockModel());
  const messages = [{ role: 'user' as const, content: 'Flights JFK to SEA on May 20?' }];

  const plainCall = () => generateText({ model, tools: plainTools, stopWhen: stepCountIs(2), prompt: 'Flights JFK to SEA on May 20?' });
  const toolrunCall = () =>
    generateText({ model, tools, experimental_repairToolCall: repairToolCall, stopWhen: stepCountIs(2), prompt: 'Flights JFK to SEA on May 20?' });
  const plainStep = () => generateText({ model, tools: plainTools, stopWhen: stepCountIs(1), prompt: 'Flights JFK to SEA on May 20?' });
  const agentStep = () => toolrun.runAgent({ model: toolrunModel, runtime, messages, maxSteps: 1 });

  const check = await agentStep();
  if (check.steps !== 1 || check.modelCalls !== 1)
    throw new Error(`runAgent did not run one step: ${JSON.stringify({ status: check.status, steps: check.steps })}`);

  const stores = toolrun.createMemoryStores();
  const deadLetterCall = () => {
    const run = aiSdk.toAiSdk(runtime, { sessionId: 'bench', deadLetter: { stores } });
    return generateText({
      model,
      tools: run.tools,
      prepareStep: run.prepareStep,
      experimental_repairToolCall: run.repairToolCall,
      stopWhen: stepCountIs(2),
      prompt: 'Flights JFK to SEA on May 20?',
    });
  };

  const perCall = await paired(plainCall, toolrunCall);
  const withDeadLetter = await paired(plainCall, deadLetterCall);
  const perStep = await paired(plainStep, agentStep);
  return [
    { name: '(a) generateText, 1 tool call + final step, plain tool (SDK validates, precompiled Ajv)', medianNs: perCall.aNs },
    {
      name: '(b) generateText, same, toAiSdk tool (toolrun validates, policies, envelope)',
      medianNs: perCall.bNs,
      baseline: '(a)',
      ratio: perCall.ratio,
      note: `${((perCall.bNs - perCall.aNs) / 1e3).toFixed(0)} µs per tool call; ${source}`,
    },
    {
      name: '(e) generateText, same, toAiSdk with a dead-letter place (one toAiSdk per run)',
      medianNs: withDeadLetter.bNs,
      baseline: '(a)',
      ratio: withDeadLetter.ratio,
      note: `(a) measured again alongside: ${(withDeadLetter.aNs / 1e3).toFixed(0)} µs; ${source}`,
    },
    { name: '(c) one step of generateText with a tool call (plain tool)', medianNs: perStep.aNs },
    { name: '(d) one step of runAgent on fromAiSdkModel(same mock), same tool', medianNs: perStep.bNs, baseline: '(c)', ratio: perStep.ratio },
  ];
}
