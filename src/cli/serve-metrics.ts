import { ToolrunError, type Stores } from '../index.ts';
import type { MetricsServer } from '../observability/index.ts';
import { describeError } from './cli-error.ts';

/**
 * Starts a Prometheus endpoint on `127.0.0.1:port` (`0`: a free port) whose DLQ gauges read `stores`.
 *
 * @throws ToolrunError `LISTEN_FAILED` (exit code 1) when the port cannot be bound.
 */
export async function serveMetrics(port: number, stores: Stores): Promise<MetricsServer> {
  const { startMetricsServer } = await import('../observability/index.ts');
  try {
    return await startMetricsServer({ port, host: '127.0.0.1', stores });
  } catch (error) {
    throw new ToolrunError('LISTEN_FAILED', `cannot serve metrics on 127.0.0.1:${port}: ${describeError(error).replace(/^unexpected error: /, '')}`, {
      cause: error,
    });
  }
}
