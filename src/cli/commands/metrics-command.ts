import type { Command } from 'commander';
import { printLine } from '../format.ts';
import { addStoreOptions, portOption, type StoreOptions } from '../parse-options.ts';
import { resolveStores } from '../resolve-stores.ts';
import { serveMetrics } from '../serve-metrics.ts';

interface MetricsOptions extends StoreOptions {
  port: number;
}

/**
 * `toolrun metrics [--port N]`: serves the dead-letter depth and oldest-entry age of the stores
 * (`toolrun_dlq_depth`, `toolrun_dlq_oldest_age`, per queue) in Prometheus text format on
 * `http://127.0.0.1:N/metrics` until SIGINT/SIGTERM (then exit 0). The gauges are read from the
 * stores at each scrape, so they agree with `toolrun stats`. Tool-call and run counters live in the
 * worker's process: serve them with `toolrun worker --metrics-port N`.
 */
export function addMetricsCommand(program: Command): void {
  const command = program
    .command('metrics')
    .description('serve dead-letter depth and oldest-entry age for Prometheus on 127.0.0.1 (tool and run counters: toolrun worker --metrics-port)')
    .option('--port <n>', 'TCP port from 0 to 65535 (0: a free one)', portOption(0), 9464);
  addStoreOptions(command, { queueUrl: false });
  command.action(async (options: MetricsOptions) => {
    const { stores, label } = await resolveStores({ ...options, env: process.env }, { mustExist: true });
    let stop: (() => void) | undefined;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const onSignal = () => stop?.();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      const server = await serveMetrics(options.port, stores);
      try {
        printLine(`toolrun metrics: ${label} at ${server.url} (Ctrl-C to stop)`);
        await stopped;
      } finally {
        await server.close();
      }
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await stores.close();
    }
  });
}
