/**
 * The success-path cost of `runtime.run` with observability on against off, in the same process
 * and run, batches interleaved (the order rotating each batch, so no case always follows the same
 * one) so drift and GC hit every case alike; three rounds, each case keeping its best round.
 * - (a) no observability (no `onCallEnd`);
 * - (b) `createObservability`: pino at `info` (a success writes no line), a span per call through
 *   the OpenTelemetry SDK (batch span processor, as in production) with a no-op exporter, the
 *   metrics on an SDK meter;
 * - (c) as (b) with pino at `debug`: every success is a redacted JSON line (to a no-op destination);
 * - (d) the floor: the OpenTelemetry SDK alone, one span (the 5 attributes of (b)'s) and one counter
 *   increment, set up as in (b);
 * - (d′) the SDK alone doing everything (b) asks of it per success: (d) plus the duration histogram's
 *   record (2 attributes, the same buckets);
 * - (f) `runtime.run` with a hand-written `onCallEnd` making (d′)'s SDK calls from the call's record
 *   (the same span name, attributes and times, the counter and the histogram; no logger, no
 *   redaction, no label checks, the span name built once, times as `HrTime`): the least any
 *   integration of the SDK costs inside `runtime.run`.
 * Then the summary rows: (b) against (a) + (d), (a) + (d′) and (f), and toolrun's own cost beyond
 * each, (b) − (a) − (d), (b) − (a) − (d′) and (b) − (f), as a ratio to (a) (negative when (b) cost less).
 * It measures the compiled package (`dist/`, or the folder `TOOLRUN_BENCH_DIST` names), as the runtime benchmark does.
 */
import { SpanKind, type HrTime } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import type * as Toolrun from '../src/index.ts';
import type * as ToolrunObservability from '../src/observability/index.ts';
import type { ToolCallRecord, ToolRuntime } from '../src/index.ts';
import type { BenchRow } from './measure.ts';
import { distEntry, median, timingRow, type Timing } from './runtime.bench.ts';
import { SEARCH_FLIGHT_ARGS, SEARCH_FLIGHT_SCHEMA, searchFlight } from './search-flight-fixture.ts';

const schema = SEARCH_FLIGHT_SCHEMA;
const args = SEARCH_FLIGHT_ARGS;
const search = searchFlight;

/** The buckets of toolrun's duration histogram, in seconds. */
const DURATION_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

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

/** (f): a runtime whose `onCallEnd` makes only the SDK calls of (b)'s span, counter and histogram. */
function handWrittenHookRuntime({ createToolRuntime, defineTool }: Package): ToolRuntime {
  const tool = defineTool({ name: 'search_direct_flight', description: 'Search direct flights', inputSchema: schema, idempotent: true, execute: search });
  const tracer = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(noopExporter)] }).getTracer('hand-written');
  const meter = new MeterProvider({ readers: [new IdleReader()] }).getMeter('hand-written');
  const calls = meter.createCounter('toolrun.tool.calls');
  const duration = meter.createHistogram('gen_ai.execute_tool.duration', { unit: 's', advice: { explicitBucketBoundaries: DURATION_BUCKETS_SECONDS } });
  const callLabels = { 'gen_ai.tool.name': 'search_direct_flight', 'toolrun.status': 'success' };
  const durationLabels = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search_direct_flight' };
  // As cheap as the SDK allows: the span name built once, times as HrTime (no Date per timestamp).
  const spanName = 'execute_tool search_direct_flight';
  const hrTime = (epochMs: number): HrTime => [Math.trunc(epochMs / 1000), Math.round((epochMs % 1000) * 1e6)];
  const onCallEnd = (record: ToolCallRecord) => {
    const span = tracer.startSpan(spanName, {
      kind: SpanKind.INTERNAL,
      startTime: hrTime(record.startedAt),
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': record.toolName,
        'gen_ai.tool.call.id': record.callId,
        'gen_ai.tool.type': 'function',
        'toolrun.attempts': record.attempts.length,
      },
    });
    span.end(hrTime(record.startedAt + record.durationMs));
    calls.add(1, callLabels);
    duration.record(record.durationMs / 1000, durationLabels);
  };
  return createToolRuntime({ tools: [tool], onCallEnd });
}

/**
 * Median ns per call of each operation (wall-clock and CPU time) over `batches` batches, after a
 * warm-up. Batch `k` runs the operations starting from `k mod n` (a, b, c…, then b, c…, a), so
 * none always runs right after the same other one (and pays for its garbage).
 */
async function measureInterleaved(
  operations: ReadonlyArray<() => Promise<unknown>>,
  options = { batches: 40, batchSize: 1000, warmup: 5000 },
): Promise<Timing[]> {
  for (const operation of operations) for (let index = 0; index < options.warmup; index++) await operation();
  const wall: number[][] = operations.map(() => []);
  const cpu: number[][] = operations.map(() => []);
  for (let batch = 0; batch < options.batches; batch++) {
    for (let turn = 0; turn < operations.length; turn++) {
      const which = (batch + turn) % operations.length;
      const operation = operations[which]!;
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

/** Rounds of {@link measureInterleaved}; each case keeps its best (lowest) wall and CPU medians: noise on a shared machine only adds. */
async function bestOfRounds(operations: ReadonlyArray<() => Promise<unknown>>, rounds = 3): Promise<Timing[]> {
  let best: Timing[] | undefined;
  for (let round = 0; round < rounds; round++) {
    const timings = await measureInterleaved(operations);
    best = best
      ? best.map((timing, which) => ({ wallNs: Math.min(timing.wallNs, timings[which]!.wallNs), cpuNs: Math.min(timing.cpuNs, timings[which]!.cpuNs) }))
      : timings;
  }
  return best!;
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
  const handWritten = handWrittenHookRuntime(toolrun);
  const call = (runtime: ToolRuntime) => () => runtime.run({ name: 'search_direct_flight', args });
  // The floor: what the OpenTelemetry SDK alone costs for one span and one counter increment, set up as (b)'s.
  const floorTracer = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(noopExporter)] }).getTracer('floor');
  const floorMeter = new MeterProvider({ readers: [new IdleReader()] }).getMeter('floor');
  const floorCounter = floorMeter.createCounter('floor.calls');
  const floorHistogram = floorMeter.createHistogram('floor.duration', {
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS_SECONDS },
  });
  const counterAttributes = { 'gen_ai.tool.name': 'search_direct_flight', 'toolrun.status': 'success' };
  const histogramAttributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search_direct_flight' };
  let spans = 0;
  const floorSpan = () => {
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
  };
  const sdkFloor = async () => {
    floorSpan();
    floorCounter.add(1, counterAttributes);
  };
  const sdkAll = async () => {
    floorSpan();
    floorCounter.add(1, counterAttributes);
    floorHistogram.record(0.001, histogramAttributes);
  };
  const [a, b, c, d, dAll, f] = (await bestOfRounds([call(off), call(on), call(verbose), sdkFloor, sdkAll, call(handWritten)])) as [
    Timing,
    Timing,
    Timing,
    Timing,
    Timing,
    Timing,
  ];
  const A = { name: '(a)', timing: a };
  const plus = (x: Timing, y: Timing): Timing => ({ wallNs: x.wallNs + y.wallNs, cpuNs: x.cpuNs + y.cpuNs });
  // Not clamped: below zero, (b) cost less than what it is compared with.
  const beyond = (base: Timing): Timing => ({ wallNs: b.wallNs - base.wallNs, cpuNs: b.cpuNs - base.cpuNs });
  return [
    timingRow('(a) runtime.run, observability off', a),
    timingRow('(b) runtime.run, logs (info) + span + metrics: on/off', b, A, 'SDK tracer, batch processor, no-op exporter'),
    timingRow('(c) runtime.run, logs (debug: a line per success) + span + metrics', c, A),
    timingRow('(d) the floor: the OpenTelemetry SDK alone, one span (5 attributes) + one counter add', d, A),
    timingRow('(d′) the SDK alone doing all (b) asks of it: (d) + one histogram record', dAll, A),
    timingRow('(f) runtime.run with a hand-written onCallEnd making only (d′)’s SDK calls', f, A),
    timingRow('(b) vs (a) + (d): toolrun off plus the SDK floor', b, { name: '(a)+(d)', timing: plus(a, d) }),
    timingRow('(b) vs (a) + (d′): toolrun off plus all the SDK work of (b)', b, { name: '(a)+(d′)', timing: plus(a, dAll) }),
    timingRow('(b) vs (f): toolrun’s observability against the hand-written SDK hook', b, { name: '(f)', timing: f }),
    timingRow("(e) toolrun's own cost beyond the floor, (b) − (a) − (d), histogram record included", beyond(plus(a, d)), A),
    timingRow("(e′) toolrun's own cost beyond all the SDK work, (b) − (a) − (d′)", beyond(plus(a, dAll)), A),
    timingRow("(e″) toolrun's own cost beyond the hand-written SDK hook, (b) − (f)", beyond(f), A),
  ];
}
