/**
 * `toolrun/openai-agents` with a tool DLQ configured: the cost of one whole 2-step `Runner` run (a
 * tool call, then an answer, against the same scripted Responses endpoint on 127.0.0.1) through
 * (a) the SDK's own function tool (`tool()` with the JSON Schema) against (b) the same tool in
 * toolrun through `toOpenAiAgents(runtime, { deadLetter: { stores } })`, built per run as the
 * docs ask (one `toOpenAiAgents` call, agent and runner per run). The tool succeeds: this is what
 * the DLQ costs a healthy run. CPU time of this process (the endpoint runs in it too, alike on both
 * sides); goal ≤ 1.1×.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import type { BenchRow } from './measure.ts';
import type * as Toolrun from '../src/index.ts';
import type * as ToolrunOpenAiAgents from '../src/adapters/openai-agents/index.ts';
import type * as ToolrunMemory from '../src/stores/memory/index.ts';
import { SEARCH_FLIGHT_ARGS, SEARCH_FLIGHT_SCHEMA, searchFlight } from './search-flight-fixture.ts';

/** The modules measured: the compiled package by default. */
export interface OpenAiAgentsDeadLetterBenchModules {
  toolrun: typeof Toolrun;
  openAiAgents: typeof ToolrunOpenAiAgents;
  memory: typeof ToolrunMemory;
}

async function loadDist(dist: URL): Promise<OpenAiAgentsDeadLetterBenchModules> {
  return {
    toolrun: (await import(new URL('index.js', dist).href)) as typeof Toolrun,
    openAiAgents: (await import(new URL('adapters/openai-agents/index.js', dist).href)) as typeof ToolrunOpenAiAgents,
    memory: (await import(new URL('stores/memory/index.js', dist).href)) as typeof ToolrunMemory,
  };
}

/** A Responses endpoint that alternates a function call and an answer. */
async function startEndpoint(): Promise<{ origin: string; server: Server }> {
  let turn = 0;
  const args = JSON.stringify(SEARCH_FLIGHT_ARGS);
  const usage = {
    input_tokens: 10,
    output_tokens: 5,
    total_tokens: 15,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens_details: { reasoning_tokens: 0 },
  };
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      turn += 1;
      const output =
        turn % 2 === 1
          ? { type: 'function_call', id: `fc_${turn}`, call_id: `call_${turn}`, name: 'search_direct_flight', arguments: args, status: 'completed' }
          : { type: 'message', id: `msg_${turn}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done', annotations: [] }] };
      const body = { id: `resp_${turn}`, object: 'response', created_at: 1, status: 'completed', model: 'gpt-4o', output: [output], usage };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

function cpuNs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) * 1000;
}

/** Median CPU ns per operation of each operation, in interleaved batches (the order rotated per batch). */
async function measureEach(
  operations: ReadonlyArray<() => Promise<unknown>>,
  sizes: { batches: number; batchSize: number; warmup: number },
): Promise<number[]> {
  for (let index = 0; index < sizes.warmup; index++) for (const operation of operations) await operation();
  const samples: number[][] = operations.map(() => []);
  for (let batch = 0; batch < sizes.batches; batch++) {
    // each batch starts with another operation, so none always runs right after the same one
    for (let turn = 0; turn < operations.length; turn++) {
      const slot = (batch + turn) % operations.length;
      const operation = operations[slot]!;
      const start = cpuNs();
      for (let index = 0; index < sizes.batchSize; index++) await operation();
      samples[slot]!.push((cpuNs() - start) / sizes.batchSize);
    }
  }
  return samples.map((values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!);
}

/**
 * Runs the benchmark and returns its rows. It measures the compiled package (`dist/`) unless
 * `modules` are given. `TOOLRUN_BENCH_QUICK=1` takes fewer samples.
 */
export async function runOpenAiAgentsDeadLetterBench(options: { distDir?: URL; modules?: OpenAiAgentsDeadLetterBenchModules } = {}): Promise<BenchRow[]> {
  const modules = options.modules ?? (await loadDist(options.distDir ?? new URL('../dist/', import.meta.url)));
  const quick = process.env.TOOLRUN_BENCH_QUICK === '1';
  const sizes = quick ? { batches: 5, batchSize: 10, warmup: 10 } : { batches: 15, batchSize: 30, warmup: 40 };
  setTracingDisabled(true);
  const { origin, server } = await startEndpoint();
  try {
    const runtime = modules.toolrun.createToolRuntime({
      tools: [
        modules.toolrun.defineTool({
          name: 'search_direct_flight',
          description: 'Search direct flights',
          inputSchema: SEARCH_FLIGHT_SCHEMA,
          execute: searchFlight,
        }),
      ],
      sessionBreaker: false,
    });
    const stores = modules.memory.createMemoryStores();
    const modelProvider = new OpenAIProvider({ apiKey: 'sk-bench', baseURL: `${origin}/v1`, useResponses: true });
    const plainTool = tool({
      name: 'search_direct_flight',
      description: 'Search direct flights',
      parameters: SEARCH_FLIGHT_SCHEMA as never,
      strict: false,
      execute: async (input) => JSON.stringify(await searchFlight(input as Record<string, unknown>)),
    });
    const plainRunner = new Runner({ modelProvider, tracingDisabled: true });
    const plainAgent = new Agent({ name: 'plain', model: 'gpt-4o', tools: [plainTool] });
    const prompt = 'Flights from JFK to SEA on 2024-05-20?';
    const adapterRun = (options: Parameters<typeof modules.openAiAgents.toOpenAiAgents>[1]) => () => {
      const { tools, runConfig } = modules.openAiAgents.toOpenAiAgents(runtime, options);
      return new Runner({ ...runConfig, modelProvider, tracingDisabled: true }).run(new Agent({ name: 'toolrun', model: 'gpt-4o', tools }), prompt);
    };
    const [plainNs, adapterNs, deadLetterNs] = (await measureEach(
      [() => plainRunner.run(plainAgent, prompt), adapterRun({}), adapterRun({ deadLetter: { stores } })],
      sizes,
    )) as [number, number, number];
    if ((await stores.toolDlq.list()).length !== 0) throw new Error('a healthy run was dead-lettered');
    return [
      { name: 'OpenAI Agents Runner: SDK tool() (2-step run, Responses API)', medianNs: plainNs },
      { name: 'OpenAI Agents Runner: toOpenAiAgents, no DLQ', medianNs: adapterNs, baseline: 'SDK tool()', ratio: adapterNs / plainNs },
      { name: 'OpenAI Agents Runner: toOpenAiAgents + deadLetter', medianNs: deadLetterNs, baseline: 'SDK tool()', ratio: deadLetterNs / plainNs },
    ];
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
