/**
 * `toolrun/langchain`'s cost per tool call through LangChain v1's `createAgent`: one invocation is
 * two calls of LangChain's `fakeModel()` (a tool call, then an answer) and one tool call, with the
 * same tool and the same script either way — (a) a plain LangChain tool with the same JSON Schema,
 * no middleware, against (b) the same tool in toolrun with `toolrunMiddleware(runtime)`. Then the
 * failure path: invalid arguments answered by LangChain's own schema check against toolrun's
 * field-level envelope. The ratio is what the middleware adds to a whole agent step, in CPU time.
 */
import { AIMessage, createAgent, fakeModel, HumanMessage, tool } from 'langchain';
import type { JSONSchema } from '@langchain/core/utils/json_schema';
import type { BenchRow } from './measure.ts';
import type * as Toolrun from '../src/index.ts';
import type * as ToolrunLangChain from '../src/adapters/langchain/index.ts';
import { SEARCH_FLIGHT_ARGS, SEARCH_FLIGHT_SCHEMA, searchFlight } from './search-flight-fixture.ts';

type Agent = { invoke(input: { messages: HumanMessage[] }): Promise<unknown> };

/**
 * One agent step per operation: the model's queue gets its two answers, then the agent runs. The
 * model is LangChain's `fakeModel()`; it keeps every call it received, which both sides pay alike.
 */
function step(agent: Agent, model: ReturnType<typeof fakeModel>, args: Record<string, unknown>): () => Promise<unknown> {
  let index = 0;
  return () => {
    index += 1;
    model.respondWithTools([{ name: 'search_direct_flight', args, id: `call_${index}` }]).respond(new AIMessage('done'));
    return agent.invoke({ messages: [new HumanMessage('Flights from JFK to SEA on 2024-05-20?')] });
  };
}

/**
 * Median nanoseconds of CPU time (this process: user + system) per operation of each of two
 * operations, measured in alternating batches (a batch of one, then a batch of the other). CPU time,
 * not wall time: on a shared machine other processes' load changes wall time several-fold between
 * batches, while the work an agent step costs stays put.
 */
async function measurePair(
  first: () => Promise<unknown>,
  second: () => Promise<unknown>,
  sizes: { batches: number; batchSize: number; warmup: number },
): Promise<[number, number]> {
  for (let index = 0; index < sizes.warmup; index++) {
    await first();
    await second();
  }
  const times: [number[], number[]] = [[], []];
  const batch = async (operation: () => Promise<unknown>, into: number[]) => {
    const start = process.cpuUsage();
    for (let index = 0; index < sizes.batchSize; index++) await operation();
    const used = process.cpuUsage(start);
    into.push(((used.user + used.system) * 1000) / sizes.batchSize);
  };
  for (let round = 0; round < sizes.batches; round++) {
    await batch(first, times[0]);
    await batch(second, times[1]);
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return [median(times[0]), median(times[1])];
}

/**
 * Runs the LangChain benchmark and returns its rows. It measures the compiled package (`dist/`, what
 * users run; `npm run bench` builds it first), as the runtime benchmark does.
 */
export async function runLangChainBench(options: { distDir?: URL } = {}): Promise<BenchRow[]> {
  const dist = options.distDir ?? new URL('../dist/', import.meta.url);
  const { createToolRuntime, defineTool } = (await import(new URL('index.js', dist).href)) as typeof Toolrun;
  const { toolrunMiddleware } = (await import(new URL('adapters/langchain/index.js', dist).href)) as typeof ToolrunLangChain;

  const plainTool = tool(async (input: Record<string, unknown>) => JSON.stringify(await searchFlight(input)), {
    name: 'search_direct_flight',
    description: 'Search direct flights',
    schema: SEARCH_FLIGHT_SCHEMA as JSONSchema,
  });
  const runtime = createToolRuntime({
    tools: [
      defineTool({
        name: 'search_direct_flight',
        description: 'Search direct flights',
        inputSchema: SEARCH_FLIGHT_SCHEMA,
        idempotent: true,
        execute: searchFlight,
      }),
    ],
    sessionBreaker: false, // the failure rows repeat one invalid call: measure validation, not the breaker
  });

  const plainModel = fakeModel();
  const plainAgent = createAgent({ model: plainModel, tools: [plainTool] });
  const toolrunModel = fakeModel();
  const toolrunAgent = createAgent({ model: toolrunModel, middleware: [toolrunMiddleware(runtime)] });
  const invalid = { ...SEARCH_FLIGHT_ARGS, date: '2024/5/20' };

  const sizes = { batches: 21, batchSize: 20, warmup: 100 };
  const [plainNs, toolrunNs] = await measurePair(step(plainAgent, plainModel, SEARCH_FLIGHT_ARGS), step(toolrunAgent, toolrunModel, SEARCH_FLIGHT_ARGS), sizes);
  const [plainInvalidNs, toolrunInvalidNs] = await measurePair(step(plainAgent, plainModel, invalid), step(toolrunAgent, toolrunModel, invalid), sizes);

  const difference = (ns: number, what: string) => `${(Math.abs(ns) / 1000).toFixed(0)} µs ${ns >= 0 ? 'more' : 'less'} per ${what}`;
  return [
    { name: '(a) createAgent step, LangChain tool, no middleware', medianNs: plainNs, note: '2 fakeModel calls + 1 tool call' },
    {
      name: '(b) createAgent step, toolrunMiddleware',
      medianNs: toolrunNs,
      baseline: '(a)',
      ratio: toolrunNs / plainNs,
      note: difference(toolrunNs - plainNs, 'tool call'),
    },
    { name: "(c) invalid date, LangChain's schema error", medianNs: plainInvalidNs, note: 'same step, the tool does not run' },
    {
      name: "(d) invalid date, toolrun's DATE_FORMAT_ERROR envelope",
      medianNs: toolrunInvalidNs,
      baseline: '(c)',
      ratio: toolrunInvalidNs / plainInvalidNs,
      note: difference(toolrunInvalidNs - plainInvalidNs, 'failed call'),
    },
  ];
}

/** The trivial tool of the dead-letter rows: echoes its input. */
const ECHO_SCHEMA = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false } as const;

/** One 2-step run (a tool call, then an answer) of `agent` on the trivial tool, a new input message each time. */
function echoRun(agent: Agent, model: ReturnType<typeof fakeModel>): () => Promise<unknown> {
  let index = 0;
  return () => {
    index += 1;
    model.respondWithTools([{ name: 'echo', args: { text: 'hi' }, id: `call_${index}` }]).respond(new AIMessage('done'));
    return agent.invoke({ messages: [new HumanMessage('Echo hi.')] });
  };
}

/**
 * What a dead-letter place costs a LangChain agent run that does not fail: a 2-step `createAgent`
 * run on `fakeModel()` with a trivial tool, (e) as a bare LangChain tool against (f) the same tool
 * through `toolrunMiddleware(runtime, { deadLetter: { stores } })` on memory stores (per-run retry
 * budgets, a run id from the invocation's input message); then (h), the same (f) measured against
 * (g), the middleware without a dead-letter place, which isolates the dead-letter place's own cost.
 * CPU time per run, as above.
 */
export async function runLangChainDeadLetterBench(options: { distDir?: URL } = {}): Promise<BenchRow[]> {
  const dist = options.distDir ?? new URL('../dist/', import.meta.url);
  const { createToolRuntime, defineTool, createMemoryStores } = (await import(new URL('index.js', dist).href)) as typeof Toolrun;
  const { toolrunMiddleware } = (await import(new URL('adapters/langchain/index.js', dist).href)) as typeof ToolrunLangChain;
  const echo = async (input: Record<string, unknown>) => ({ text: input.text });
  const bareTool = tool(async (input: Record<string, unknown>) => JSON.stringify(await echo(input)), {
    name: 'echo',
    description: 'Echoes its input',
    schema: ECHO_SCHEMA as JSONSchema,
  });
  const runtime = createToolRuntime({ tools: [defineTool({ name: 'echo', description: 'Echoes its input', inputSchema: ECHO_SCHEMA, execute: echo })] });
  const stores = createMemoryStores();
  const bareModel = fakeModel();
  const bareAgent = createAgent({ model: bareModel, tools: [bareTool] });
  const dlqModel = fakeModel();
  const dlqAgent = createAgent({ model: dlqModel, middleware: [toolrunMiddleware(runtime, { deadLetter: { stores } })] });
  const plainModel = fakeModel();
  const plainAgent = createAgent({ model: plainModel, middleware: [toolrunMiddleware(runtime)] });
  const sizes = { batches: 21, batchSize: 20, warmup: 100 };
  const [bareNs, dlqNs] = await measurePair(echoRun(bareAgent, bareModel), echoRun(dlqAgent, dlqModel), sizes);
  const [plainNs, dlqAgainNs] = await measurePair(echoRun(plainAgent, plainModel), echoRun(dlqAgent, dlqModel), sizes);
  if ((await stores.toolDlq.list()).length !== 0) throw new Error('the LangChain dead-letter bench dead-lettered a run that succeeded');
  return [
    { name: '(e) 2-step createAgent run, bare LangChain tool', medianNs: bareNs, note: '2 fakeModel calls + 1 trivial tool call' },
    {
      name: '(f) same run, toolrunMiddleware with deadLetter',
      medianNs: dlqNs,
      baseline: '(e)',
      ratio: dlqNs / bareNs,
      note: `${((dlqNs - bareNs) / 1000).toFixed(0)} µs more per run; goal ≤ 1.1×`,
    },
    { name: '(g) same run, toolrunMiddleware without deadLetter', medianNs: plainNs, note: 'what the dead-letter place is added to' },
    {
      name: '(h) same run, toolrunMiddleware with deadLetter, measured against (g)',
      medianNs: dlqAgainNs,
      baseline: '(g)',
      ratio: dlqAgainNs / plainNs,
      note: "the dead-letter place's own cost",
    },
  ];
}
