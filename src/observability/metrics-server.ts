import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Meter } from '@opentelemetry/api';
import type { Clock } from '../ground/ports/clock.ts';
import { METRIC_NAMES } from './attribute-names.ts';
import { createToolrunMetrics, type DeadLetterQueuesToObserve, type ToolrunMetrics } from './toolrun-metrics.ts';

/** Options of {@link startMetricsServer}. */
export interface MetricsServerOptions {
  /** TCP port; `0` picks a free one. @defaultValue 9464 (the Prometheus exporter's usual port) */
  port?: number;
  /** Interface to listen on. Keep it local unless a scraper elsewhere needs it. @defaultValue `'127.0.0.1'` */
  host?: string;
  /** URL path of the metrics. @defaultValue `'/metrics'` */
  endpoint?: string;
  /** The DLQs behind `toolrun.dlq.depth` and `toolrun.dlq.oldest_age`. */
  stores?: DeadLetterQueuesToObserve;
  /** Clock of the oldest-entry age. @defaultValue the system clock */
  clock?: Clock;
  /** `service.name` of the exported resource (`target_info`). @defaultValue `$OTEL_SERVICE_NAME`, else `'toolrun'` */
  serviceName?: string;
}

/** A running metrics endpoint. */
export interface MetricsServer {
  /** `http://host:port/metrics`. */
  readonly url: string;
  readonly port: number;
  /** The meter the endpoint exports: create more instruments on it if you like. */
  readonly meter: Meter;
  /**
   * The toolrun instruments on that meter, fed by whatever runs in this process: pass
   * `metrics.observe` / `metrics.onCallEnd` (or `createObservability({ meter })`) to the worker.
   */
  readonly metrics: ToolrunMetrics;
  /** Stops listening and shuts the meter provider down. Idempotent. */
  close(): Promise<void>;
}

/**
 * Serves the toolrun metrics in the Prometheus text format (version 0.0.4) for scraping, with
 * `@opentelemetry/exporter-prometheus` as the reader of an `@opentelemetry/sdk-metrics` meter
 * provider (both loaded only when this is called). OpenTelemetry names become Prometheus names:
 * dots become underscores and counters get `_total` (`toolrun_tool_calls_total`); the instruments
 * in seconds get `_seconds` (`gen_ai_execute_tool_duration_seconds`, `toolrun_dlq_oldest_age_seconds`,
 * with a `# UNIT … s` line); `target_info` carries `service_name` (`serviceName`).
 * Any other path answers 404.
 *
 * @throws the listen error (`EADDRINUSE`, `EACCES`) when the port cannot be bound.
 */
export async function startMetricsServer(options: MetricsServerOptions = {}): Promise<MetricsServer> {
  const [{ MeterProvider }, { PrometheusExporter }, { defaultResource, resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/exporter-prometheus'),
    import('@opentelemetry/resources'),
  ]);
  const host = options.host ?? '127.0.0.1';
  const endpoint = options.endpoint ?? '/metrics';
  const exporter = new PrometheusExporter({ preventServerStart: true, endpoint });
  const serviceName = options.serviceName ?? (process.env.OTEL_SERVICE_NAME || 'toolrun');
  // Prometheus names carry their unit (`_seconds`): this exporter does not add it, so the two
  // instruments in seconds are renamed by views here; OpenTelemetry readers keep the semconv names.
  const provider = new MeterProvider({
    readers: [exporter],
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': serviceName })),
    views: [
      { instrumentName: METRIC_NAMES.toolDuration, name: `${METRIC_NAMES.toolDuration}_seconds` },
      { instrumentName: METRIC_NAMES.deadLetterOldestAge, name: `${METRIC_NAMES.deadLetterOldestAge}_seconds` },
    ],
  });
  const meter = provider.getMeter('toolrun');
  const toolrunMetrics = createToolrunMetrics({
    meter,
    ...(options.stores ? { stores: options.stores } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });

  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method === 'GET' && path === endpoint) {
      exporter.getMetricsRequestHandler(request, response);
      return;
    }
    response.statusCode = 404;
    response.end('Not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 9464, host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch(async (error: unknown) => {
    await provider.shutdown().catch(() => undefined);
    throw error;
  });
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;

  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}${endpoint}`,
    port,
    meter,
    metrics: toolrunMetrics,
    close: () =>
      (closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await provider.shutdown().catch(() => undefined);
      })()),
  };
}
