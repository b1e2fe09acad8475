/**
 * Issue 5's benchmark: the success-path cost of `runtime.run` with observability on against off,
 * in the same process and run, batches interleaved so drift and GC hit every case alike.
 * - (a) no observability (no `onCallEnd`);
 * - (b) `createObservability`: pino at `info` (a success writes no line), a span per call through
 *   the OpenTelemetry SDK (batch span processor, as in production) with a no-op exporter, the
 *   metrics on an SDK meter;
 * - (c) as (b) with pino at `debug`: every success is a redacted JSON line (to a no-op destination);
 * - (d) the floor: the OpenTelemetry SDK alone, one span and one counter increment, set up as in (b).
 * It measures the compiled package (`dist/`, or the folder `TOOLRUN_BENCH_DIST` names), as the runtime benchmark does.
 */
import { SpanKind } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import type * as Toolrun from '../src/index.ts';
import type * as ToolrunObservability from '../src/observability/index.ts';
import type { ToolRuntime } from '../src/index.ts';
import type { BenchRow } from './measure.ts';
import { distEntry } from './runtime.bench.ts';
import { SEARCH_FLIGHT_ARGS, SEARCH_FLIGHT_SCHEMA, searchFlight } from './search-flight-fixture.ts';

const schema = SEARCH_FLIGHT_SCHEMA;
const args = SEARCH_FLIGHT_ARGS;
const search = searchFlight;

/** Accepts every span and drops it. */
const noopExporter: SpanExporter = {
  export: (_spans: ReadableSpan[], done) => done({ code: 0 }),
  shutdown: async () => {},
};

/** A reader that is never collected: instruments aggregate, nothing is exported. */
class IdleReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

interface Package {
  createToolRuntime: typeof Toolrun.createToolRuntime;
  defineTool: typeof Toolrun.defineTool;
  createObservability: typeof ToolrunObservability.createObservability;
}

function runtimeWith({ createToolRuntime, defineTool, createObservability }: Package, level: 'info' | 'debug' | undefined): ToolRuntime {
  const tool = defineTool({ name: 'search_direct_flight', description: 'Search direct flights', inputSchema: schema, idempotent: true, execute: search });
  if (level === undefined) return createToolRuntime({ tools: [tool] });
  const observability = createObservability({
    logger: pino({ level }, { write: () => {} }),
    tracer: new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(noopExporter)] }).getTracer('bench'),
    meter: new MeterProvider({ readers: [new IdleReader()] }).getMeter('bench'),
  });
  return createToolRuntime({ tools: [tool], onCallEnd: observability.onCallEnd });
}

/** Median ns per call of each operation, batches interleaved (a, b, c, a, b, c, …) after a warm-up. */
async function measureInterleaved(
  operations: ReadonlyArray<() => Promise<unknown>>,
  options = { batches: 40, batchSize: 1000, warmup: 5000 },
): Promise<number[]> {
  for (const operation of operations) for (let index = 0; index < options.warmup; index++) await operation();
  const samples: number[][] = operations.map(() => []);
  for (let batch = 0; batch < options.batches; batch++) {
    for (const [which, operation] of operations.entries()) {
      const start = process.hrtime.bigint();
      for (let index = 0; index < options.batchSize; index++) await operation();
      samples[which]!.push(Number(process.hrtime.bigint() - start) / options.batchSize);
    }
  }
  return samples.map((values) => {
    values.sort((a, b) => a - b);
    return values[Math.floor(values.length / 2)]!;
  });
}

/** Runs the observability benchmark and returns its rows. */
export async function runObservabilityBench(): Promise<BenchRow[]> {
  // The compiled package (what users run), as in the runtime benchmark.
  const toolrun: Package = {
    ...((await import(distEntry())) as typeof Toolrun),
    ...((await import(distEntry('observability/index.js'))) as typeof ToolrunObservability),
  };
  const off = runtimeWith(toolrun, undefined);
  const on = runtimeWith(toolrun, 'info');
  const verbose = runtimeWith(toolrun, 'debug');
  const call = (runtime: ToolRuntime) => () => runtime.run({ name: 'search_direct_flight', args });
  // The floor: what the OpenTelemetry SDK alone costs for one span and one counter increment, set up as (b)'s.
  const floorTracer = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(noopExporter)] }).getTracer('floor');
  const floorCounter = new MeterProvider({ readers: [new IdleReader()] }).getMeter('floor').createCounter('floor.calls');
  const counterAttributes = { 'gen_ai.tool.name': 'search_direct_flight', 'toolrun.status': 'success' };
  let spans = 0;
  const sdkFloor = async () => {
    const span = floorTracer.startSpan('execute_tool search_direct_flight', {
      kind: SpanKind.INTERNAL,
      startTime: new Date(),
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'search_direct_flight',
        'gen_ai.tool.call.id': `call_${(spans += 1)}`,
        'gen_ai.tool.type': 'function',
        'toolrun.attempts': 1,
      },
    });
    span.end(new Date());
    floorCounter.add(1, counterAttributes);
  };
  const [offNs, onNs, verboseNs, floorNs] = (await measureInterleaved([call(off), call(on), call(verbose), sdkFloor])) as [number, number, number, number];
  return [
    { name: '(a) runtime.run, observability off', medianNs: offNs },
    {
      name: '(b) runtime.run, logs (info) + span + metrics',
      medianNs: onNs,
      baseline: '(a)',
      ratio: onNs / offNs,
      note: 'SDK tracer, batch processor, no-op exporter',
    },
    { name: '(c) runtime.run, logs (debug: a line per success) + span + metrics', medianNs: verboseNs, baseline: '(a)', ratio: verboseNs / offNs },
    {
      name: '(d) the OpenTelemetry SDK alone: one span (5 attributes) + one counter add, the floor of (b)',
      medianNs: floorNs,
      baseline: '(a)',
      ratio: floorNs / offNs,
    },
    { name: '(b) vs (a) + (d): toolrun off plus the SDK floor', medianNs: onNs, baseline: '(a)+(d)', ratio: onNs / (offNs + floorNs) },
    {
      name: "(e) toolrun's own observability cost, (b) − (a) − (d)",
      medianNs: Math.max(0, onNs - offNs - floorNs),
      baseline: '(a)',
      ratio: Math.max(0, onNs - offNs - floorNs) / offNs,
    },
  ];
}
