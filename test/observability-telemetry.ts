/**
 * Test telemetry for the observability tests: an in-memory span exporter, a metric reader that
 * collects on demand, and a pino logger that keeps every line. The OpenTelemetry SDK is used here
 * only (src/observability imports the API alone).
 */
import { MeterProvider, MetricReader, DataPointType, type MetricData } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { pino, type Logger } from 'pino';

class CollectingReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** One data point of a collected metric. `value` is a number, or `{ count, sum, min, max }` for histograms. */
export interface CollectedPoint {
  name: string;
  unit: string;
  attributes: Record<string, unknown>;
  value: number | { count: number; sum: number; min: number | undefined; max: number | undefined };
}

function pointsOf(metric: MetricData): CollectedPoint[] {
  return metric.dataPoints.map((point) => ({
    name: metric.descriptor.name,
    unit: metric.descriptor.unit,
    attributes: { ...point.attributes },
    value:
      metric.dataPointType === DataPointType.HISTOGRAM
        ? (() => {
            const histogram = point.value as { count: number; sum?: number; min?: number; max?: number };
            return { count: histogram.count, sum: histogram.sum ?? 0, min: histogram.min, max: histogram.max };
          })()
        : (point.value as number),
  }));
}

export interface TestTelemetry {
  tracer: ReturnType<BasicTracerProvider['getTracer']>;
  meter: ReturnType<MeterProvider['getMeter']>;
  logger: Logger;
  /** Finished spans, in end order. */
  spans(): ReadableSpan[];
  /** Collects every metric now. */
  collect(): Promise<CollectedPoint[]>;
  /** Every log line as written (raw JSON text) and parsed. */
  rawLines: string[];
  lines: Array<Record<string, unknown>>;
}

/** Creates fresh in-memory telemetry; `level` of the logger defaults to `debug` (every line). */
export function createTestTelemetry(options: { level?: string } = {}): TestTelemetry {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const rawLines: string[] = [];
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: options.level ?? 'debug' },
    {
      write(line: string) {
        rawLines.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  );
  return {
    tracer: tracerProvider.getTracer('toolrun-test'),
    meter: meterProvider.getMeter('toolrun-test'),
    logger,
    spans: () => exporter.getFinishedSpans(),
    collect: async () => {
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) throw new Error(`metric collection failed: ${errors.map(String).join('; ')}`);
      return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics.flatMap(pointsOf));
    },
    rawLines,
    lines,
  };
}

/** The sum of the points of `name` whose attributes include `attributes`. */
export function sumOf(points: readonly CollectedPoint[], name: string, attributes: Record<string, unknown> = {}): number {
  return points
    .filter((point) => point.name === name && Object.entries(attributes).every(([key, value]) => point.attributes[key] === value))
    .reduce((total, point) => total + (typeof point.value === 'number' ? point.value : point.value.count), 0);
}
