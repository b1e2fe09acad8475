/**
 * `toolrun/anthropic` with a tool DLQ configured: the cost of one whole 2-step run of the SDK's tool
 * runner (a `tool_use`, then an answer, against the same scripted Messages endpoint on 127.0.0.1)
 * through (a) the SDK's own JSON-Schema tool (`betaTool`) in `client.beta.messages.toolRunner`
 * against (b) the same tool in toolrun through `runAnthropicToolRunner(client, params, { tools,
 * deadLetter: { stores } })`, one run each (a new run id, its tools built per run as the docs ask).
 * The tool succeeds: this is what the DLQ costs a healthy run. CPU time of this process (the
 * endpoint runs in it too, alike on both sides); goal ≤ 1.1×.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema';
import type { BenchRow } from './measure.ts';
import type * as Toolrun from '../src/index.ts';
import type * as ToolrunAnthropic from '../src/adapters/anthropic/index.ts';
import type * as ToolrunMemory from '../src/stores/memory/index.ts';
import { SEARCH_FLIGHT_ARGS, SEARCH_FLIGHT_SCHEMA, searchFlight } from './search-flight-fixture.ts';

/** The modules measured: the compiled package by default. */
export interface AnthropicDeadLetterBenchModules {
  toolrun: typeof Toolrun;
  anthropic: typeof ToolrunAnthropic;
  memory: typeof ToolrunMemory;
}

async function loadDist(dist: URL): Promise<AnthropicDeadLetterBenchModules> {
  return {
    toolrun: (await import(new URL('index.js', dist).href)) as typeof Toolrun,
    anthropic: (await import(new URL('adapters/anthropic/index.js', dist).href)) as typeof ToolrunAnthropic,
    memory: (await import(new URL('stores/memory/index.js', dist).href)) as typeof ToolrunMemory,
  };
}

/** A Messages endpoint that answers a `tool_use` to a conversation ending with the user's question, and text after a tool result. */
async function startEndpoint(): Promise<{ origin: string; server: Server }> {
  let turn = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      turn += 1;
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages: Array<{ content: unknown }> };
      const last = body.messages.at(-1)?.content;
      const answered = Array.isArray(last) && last.some((block: { type?: string }) => block.type === 'tool_result');
      const content = answered
        ? [{ type: 'text', text: 'done' }]
        : [{ type: 'tool_use', id: `toolu_${turn}`, name: 'search_direct_flight', input: SEARCH_FLIGHT_ARGS }];
      const message = {
        id: `msg_${turn}`,
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content,
        stop_reason: answered ? 'end_turn' : 'tool_use',
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 5 },
      };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(message));
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
async function measurePair(first: () => Promise<unknown>, second: () => Promise<unknown>, sizes: { batches: number; batchSize: number; warmup: number }) {
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
  return [median(samples[0]), median(samples[1])] as const;
}

/**
 * Runs the benchmark and returns its rows. It measures the compiled package (`dist/`) unless
 * `modules` are given. `TOOLRUN_BENCH_QUICK=1` takes fewer samples.
 */
export async function runAnthropicDeadLetterBench(options: { distDir?: URL; modules?: AnthropicDeadLetterBenchModules } = {}): Promise<BenchRow[]> {
  const modules = options.modules ?? (await loadDist(options.distDir ?? new URL('../dist/', import.meta.url)));
  const quick = process.env.TOOLRUN_BENCH_QUICK === '1';
  const sizes = quick ? { batches: 5, batchSize: 10, warmup: 10 } : { batches: 15, batchSize: 30, warmup: 40 };
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
    const client = new Anthropic({ apiKey: 'sk-ant-bench', baseURL: origin, maxRetries: 0 });
    const plainTool = betaTool({
      name: 'search_direct_flight',
      description: 'Search direct flights',
      inputSchema: SEARCH_FLIGHT_SCHEMA as unknown as { type: 'object' },
      run: async (input) => JSON.stringify(await searchFlight(input as Record<string, unknown>)),
    });
    const messages = [{ role: 'user' as const, content: 'Flights from JFK to SEA on 2024-05-20?' }];
    const params = { model: 'claude-sonnet-4-5', max_tokens: 1024 };
    const [plainNs, deadLetterNs] = await measurePair(
      async () => client.beta.messages.toolRunner({ ...params, messages, tools: [plainTool] }),
      () => modules.anthropic.runAnthropicToolRunner(client, { ...params, messages }, { tools: runtime, deadLetter: { stores } }),
      sizes,
    );
    if ((await stores.toolDlq.list()).length !== 0) throw new Error('a healthy run was dead-lettered');
    return [
      { name: 'Anthropic toolRunner: SDK betaTool (2-step run, Messages API)', medianNs: plainNs },
      { name: 'Anthropic toolRunner: runAnthropicToolRunner + deadLetter', medianNs: deadLetterNs, baseline: 'SDK betaTool', ratio: deadLetterNs / plainNs },
    ];
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
