/**
 * `toolrun/openai-agents` and `toolrun/anthropic`: the cost per tool call through each host's own
 * loop, with and without toolrun. One operation is one whole host run against the same scripted
 * endpoint on 127.0.0.1 (a tool call, then an answer: two HTTP round trips) and one call of the same
 * tool: (a) the SDK's own tool (`tool()` with the JSON Schema / `betaTool()`), against (b) the same
 * tool in toolrun through the adapter. The ratio is what toolrun adds to a whole host step, in CPU
 * time of this process (the endpoint runs in it too, alike on both sides).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema';
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import type { BenchRow } from './measure.ts';
import type * as Toolrun from '../src/index.ts';
import type * as ToolrunOpenAiAgents from '../src/adapters/openai-agents/index.ts';
import type * as ToolrunAnthropic from '../src/adapters/anthropic/index.ts';
import { SEARCH_FLIGHT_ARGS, SEARCH_FLIGHT_SCHEMA, searchFlight } from './search-flight-fixture.ts';

/** The modules measured: the compiled package by default. */
export interface HostsBenchModules {
  toolrun: typeof Toolrun;
  openAiAgents: typeof ToolrunOpenAiAgents;
  anthropic: typeof ToolrunAnthropic;
}

async function loadDist(dist: URL): Promise<HostsBenchModules> {
  return {
    toolrun: (await import(new URL('index.js', dist).href)) as typeof Toolrun,
    openAiAgents: (await import(new URL('adapters/openai-agents/index.js', dist).href)) as typeof ToolrunOpenAiAgents,
    anthropic: (await import(new URL('adapters/anthropic/index.js', dist).href)) as typeof ToolrunAnthropic,
  };
}

/** A local endpoint that alternates a tool call and an answer, per API. */
async function startEndpoint(): Promise<{ origin: string; server: Server }> {
  let turn = 0;
  const args = JSON.stringify(SEARCH_FLIGHT_ARGS);
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      turn += 1;
      const call = turn % 2 === 1;
      const body = request.url?.endsWith('/messages')
        ? {
            id: `msg_${turn}`,
            type: 'message',
            role: 'assistant',
            model: 'claude',
            content: call
              ? [{ type: 'tool_use', id: `toolu_${turn}`, name: 'search_direct_flight', input: SEARCH_FLIGHT_ARGS }]
              : [{ type: 'text', text: 'done' }],
            stop_reason: call ? 'tool_use' : 'end_turn',
            stop_sequence: null,
            usage: { input_tokens: 10, output_tokens: 5 },
          }
        : {
            id: `chatcmpl-${turn}`,
            object: 'chat.completion',
            created: 1,
            model: 'gpt-4o',
            choices: [
              call
                ? {
                    index: 0,
                    finish_reason: 'tool_calls',
                    message: {
                      role: 'assistant',
                      content: null,
                      tool_calls: [{ id: `call_${turn}`, type: 'function', function: { name: 'search_direct_flight', arguments: args } }],
                    },
                  }
                : { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'done' } },
            ],
            usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
          };
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

/** Median CPU ns per operation of each of two operations, in alternating batches. */
async function measurePair(
  first: () => Promise<unknown>,
  second: () => Promise<unknown>,
  sizes: { batches: number; batchSize: number; warmup: number },
): Promise<[number, number]> {
  for (let index = 0; index < sizes.warmup; index++) {
    await first();
    await second();
  }
  const samples: [number[], number[]] = [[], []];
  for (let batch = 0; batch < sizes.batches; batch++) {
    for (const [slot, operation] of [first, second].entries()) {
      const start = cpuNs();
      for (let index = 0; index < sizes.batchSize; index++) await operation();
      samples[slot]!.push((cpuNs() - start) / sizes.batchSize);
    }
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return [median(samples[0]), median(samples[1])];
}

/**
 * Runs the benchmark and returns its rows. It measures the compiled package (`dist/`) unless
 * `modules` are given. `TOOLRUN_BENCH_QUICK=1` takes fewer samples.
 */
export async function runHostsBench(options: { distDir?: URL; modules?: HostsBenchModules } = {}): Promise<BenchRow[]> {
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

    // OpenAI Agents: the SDK's own function tool vs toolrun's, same Runner and provider
    const provider = new OpenAIProvider({ apiKey: 'sk-bench', baseURL: `${origin}/v1`, useResponses: false });
    const plainTool = tool({
      name: 'search_direct_flight',
      description: 'Search direct flights',
      parameters: SEARCH_FLIGHT_SCHEMA as never,
      strict: false,
      execute: async (input) => JSON.stringify(await searchFlight(input as Record<string, unknown>)),
    });
    const plainRunner = new Runner({ modelProvider: provider, tracingDisabled: true });
    const plainAgent = new Agent({ name: 'plain', model: 'gpt-4o', tools: [plainTool] });
    const { tools, runConfig } = modules.openAiAgents.toOpenAiAgents(runtime);
    const toolrunRunner = new Runner({ ...runConfig, modelProvider: provider, tracingDisabled: true });
    const toolrunAgent = new Agent({ name: 'toolrun', model: 'gpt-4o', tools });
    const [plainAgentsNs, toolrunAgentsNs] = await measurePair(
      () => plainRunner.run(plainAgent, 'Flights from JFK to SEA on 2024-05-20?'),
      () => toolrunRunner.run(toolrunAgent, 'Flights from JFK to SEA on 2024-05-20?'),
      sizes,
    );

    // Anthropic: the SDK's tool runner with betaTool() vs toAnthropicTools()
    const client = new Anthropic({ apiKey: 'sk-ant-bench', baseURL: origin, maxRetries: 0 });
    const messages = [{ role: 'user' as const, content: 'Flights from JFK to SEA on 2024-05-20?' }];
    const plainBeta = betaTool({
      name: 'search_direct_flight',
      description: 'Search direct flights',
      inputSchema: SEARCH_FLIGHT_SCHEMA as { type: 'object' },
      run: async (input) => JSON.stringify(await searchFlight(input as Record<string, unknown>)),
    });
    const toolrunBeta = modules.anthropic.toAnthropicTools(runtime);
    const [plainRunnerNs, toolrunRunnerNs] = await measurePair(
      () => client.beta.messages.toolRunner({ model: 'claude', max_tokens: 256, messages, tools: [plainBeta] }).runUntilDone(),
      () => client.beta.messages.toolRunner({ model: 'claude', max_tokens: 256, messages, tools: toolrunBeta }).runUntilDone(),
      sizes,
    );

    return [
      { name: 'OpenAI Agents Runner: SDK tool() (1 tool call, 2 HTTP turns)', medianNs: plainAgentsNs },
      { name: 'OpenAI Agents Runner: toOpenAiAgents', medianNs: toolrunAgentsNs, baseline: 'SDK tool()', ratio: toolrunAgentsNs / plainAgentsNs },
      { name: 'Anthropic toolRunner: betaTool() (1 tool call, 2 HTTP turns)', medianNs: plainRunnerNs },
      { name: 'Anthropic toolRunner: toAnthropicTools', medianNs: toolrunRunnerNs, baseline: 'betaTool()', ratio: toolrunRunnerNs / plainRunnerNs },
    ];
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
