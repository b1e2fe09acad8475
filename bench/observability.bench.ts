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
import { distEntry, median, timingRow, type Timing } from './runtime.bench.ts';
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

/** Median ns per call of each operation (wall-clock and CPU time), batches interleaved (a, b, c, a, b, c, …) after a warm-up. */
async function measureInterleaved(
  operations: ReadonlyArray<() => Promise<unknown>>,
  options = { batches: 40, batchSize: 1000, warmup: 5000 },
): Promise<Timing[]> {
  for (const operation of operations) for (let index = 0; index < options.warmup; index++) await operation();
  const wall: number[][] = operations.map(() => []);
  const cpu: number[][] = operations.map(() => []);
  for (let batch = 0; batch < options.batches; batch++) {
    for (const [which, operation] of operations.entries()) {
      const cpuStart = process.cpuUsage();
      const start = process.hrtime.bigint();
      for (let index = 0; index < options.batchSize; index++) await operation();
      wall[which]!.push(Number(process.hrtime.bigint() - start) / options.batchSize);
      const used = process.cpuUsage(cpuStart);
      cpu[which]!.push(((used.user + used.system) * 1000) / options.batchSize);
    }
  }
  return operations.map((_, which) => ({ wallNs: median(wall[which]!), cpuNs: median(cpu[which]!) }));
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
  const [a, b, c, d] = (await measureInterleaved([call(off), call(on), call(verbose), sdkFloor])) as [Timing, Timing, Timing, Timing];
  const A = { name: '(a)', timing: a };
  const offPlusFloor: Timing = { wallNs: a.wallNs + d.wallNs, cpuNs: a.cpuNs + d.cpuNs };
  const own: Timing = { wallNs: Math.max(0, b.wallNs - offPlusFloor.wallNs), cpuNs: Math.max(0, b.cpuNs - offPlusFloor.cpuNs) };
  return [
    timingRow('(a) runtime.run, observability off', a),
    timingRow('(b) runtime.run, logs (info) + span + metrics', b, A, 'SDK tracer, batch processor, no-op exporter'),
    timingRow('(c) runtime.run, logs (debug: a line per success) + span + metrics', c, A),
    timingRow('(d) the OpenTelemetry SDK alone: one span (5 attributes) + one counter add, the floor of (b)', d, A),
    timingRow('(b) vs (a) + (d): toolrun off plus the SDK floor', b, { name: '(a)+(d)', timing: offPlusFloor }),
    timingRow("(e) toolrun's own observability cost, (b) − (a) − (d)", own, A),
  ];
}
