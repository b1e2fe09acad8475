/**
 * Issue 5's benchmark: the success-path cost of `runtime.run` with observability on against off,
 * in the same process and run, batches interleaved so drift and GC hit every case alike.
 * - (a) no observability (no `onCallEnd`);
 * - (b) `createObservability`: pino at `info` (a success writes no line), a span per call through
 *   the OpenTelemetry SDK (batch span processor, as in production) with a no-op exporter, the
 *   metrics on an SDK meter;
 * - (c) as (b) with pino at `debug`: every success is a redacted JSON line (to a no-op destination).
 */
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import { createToolRuntime, defineTool, type ToolRuntime } from '../src/index.ts';
import { createObservability } from '../src/observability/index.ts';
import type { BenchRow } from './measure.ts';
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

function runtimeWith(level: 'info' | 'debug' | undefined): ToolRuntime {
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
  const off = runtimeWith(undefined);
  const on = runtimeWith('info');
  const verbose = runtimeWith('debug');
  const call = (runtime: ToolRuntime) => () => runtime.run({ name: 'search_direct_flight', args });
  const [offNs, onNs, verboseNs] = await measureInterleaved([call(off), call(on), call(verbose)]);
  return [
    { name: '(a) runtime.run, observability off', medianNs: offNs! },
    {
      name: '(b) runtime.run, logs (info) + span + metrics',
      medianNs: onNs!,
      baseline: '(a)',
      ratio: onNs! / offNs!,
      note: 'SDK tracer, batch processor, no-op exporter',
    },
    { name: '(c) runtime.run, logs (debug: a line per success) + span + metrics', medianNs: verboseNs!, baseline: '(a)', ratio: verboseNs! / offNs! },
  ];
}
