import type { Command } from 'commander';
import { createWorker, ToolrunError, type HandleMessageResult, type WorkerEvent } from '../../index.ts';
import type { MetricsServer } from '../../observability/index.ts';
import { createCliObservability } from '../cli-observability.ts';
import { describeError, EXIT_CODES } from '../cli-error.ts';
import { formatCounts, formatWorkerEvent, printJson, printLine } from '../format.ts';
import { findConfigFile, loadConfig } from '../load-config.ts';
import { addLogOptions, addStoreOptions, integerOption, type LogOptions, type StoreOptions } from '../parse-options.ts';
import { resolveStores } from '../resolve-stores.ts';
import { serveMetrics } from '../serve-metrics.ts';

interface WorkerCommandOptions extends StoreOptions, LogOptions {
  config?: string;
  concurrency: number;
  leaseMs: number;
  untilEmpty?: boolean;
  json?: boolean;
  metricsPort?: number;
}

/**
 * `toolrun worker`: consumes the run queue with the model and tools of a config module. SIGINT or
 * SIGTERM stops it gracefully (no new message, in-flight runs finish, the stores close, exit 0); a
 * second signal exits at once (exit 130; the leased messages are redelivered when their lease ends
 * and their runs resume from their checkpoints).
 *
 * Observability (toolrun/otel): failed calls, recoveries and breaker openings are recorded in the
 * SQLite file's failure log (for `toolrun report --db`); `--log-level` / `--log-file` log one line
 * per tool call; `--metrics-port N` serves this worker's tool, run and DLQ metrics in Prometheus
 * text format on `http://127.0.0.1:N/metrics` while it runs.
 */
export function addWorkerCommand(program: Command): void {
  const command = program
    .command('worker')
    .description('consume the run queue: run each message as an agent run, dead-letter what cannot be recovered')
    .option('--config <file>', 'config module (default: $TOOLRUN_CONFIG or ./toolrun.config.{ts,mjs,js})')
    .option('--concurrency <n>', 'messages handled at once', integerOption(1), 1)
    .option('--lease-ms <ms>', 'how long a taken message stays invisible to other workers; make it longer than a run', integerOption(1), 300_000)
    .option('--until-empty', 'exit once the queue is empty instead of waiting for messages')
    .option('--metrics-port <n>', 'serve this worker\'s metrics (tool calls, runs, retries, breakers, DLQ) for Prometheus on 127.0.0.1:N/metrics (0: a free port)', integerOption(0))
    .option('--json', 'print events and the summary as JSON lines');
  addLogOptions(command);
  addStoreOptions(command, { queueUrl: true });
  command.action(async (options: WorkerCommandOptions) => {
    const config = await loadConfig(findConfigFile(options.config, process.env, process.cwd()), process.env);
    const { stores, label, openFailureLog } = await resolveStores({ ...options, env: process.env }, { mustExist: false });
    let server: MetricsServer | undefined;
    let observed: Awaited<ReturnType<typeof createCliObservability>>;
    try {
      server = options.metricsPort !== undefined ? await serveMetrics(options.metricsPort, stores) : undefined;
      observed = await createCliObservability({ config, openFailureLog, metrics: server?.metrics, logLevel: options.logLevel, logFile: options.logFile });
    } catch (error) {
      await server?.close();
      await stores.close();
      throw error;
    }
    const { observability } = observed;
    const print = (event: WorkerEvent) => (options.json ? printJson({ type: 'event', event }) : printLine(formatWorkerEvent(event)));
    const worker = createWorker({
      ...config,
      stores,
      runtimeOptions: observed.runtimeOptions,
      runHooks: observability.runHooks,
      concurrency: options.concurrency,
      leaseMs: options.leaseMs,
      onEvent: (event) => {
        observability.onEvent(event);
        if (event.type !== 'dead-letter-add' || options.json) print(event);
        config.onEvent?.(event);
      },
      onResult: (result: HandleMessageResult) => {
        if (options.json) printJson({ type: 'result', status: result.status, runId: result.runId, messageId: result.messageId });
      },
      onError: (error) =>
        process.stderr.write(
          ToolrunError.is(error) && error.code === 'LEASE_LOST'
            ? `toolrun worker: lease lost, another worker may run the same message (recorded tool calls are not repeated): ${describeError(error)}\n`
            : `toolrun worker: store error, the message will be redelivered: ${describeError(error)}\n`,
        ),
    });

    let signals = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      signals += 1;
      if (signals > 1) {
        process.stderr.write(`toolrun worker: ${signal} again, exiting now; in-flight messages are redelivered when their lease ends\n`);
        process.exit(130);
      }
      process.stderr.write(`toolrun worker: ${signal}: finishing in-flight runs (send it again to exit now)\n`);
      worker.stop();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);

    if (!options.json) {
      printLine(`toolrun worker: consuming ${label} (concurrency ${options.concurrency})`);
      if (server) printLine(`toolrun worker: metrics at ${server.url}`);
    } else if (server) printJson({ type: 'metrics', url: server.url });
    try {
      if (options.untilEmpty) await worker.runUntilEmpty();
      else await worker.run();
      const left = await stores.queue.size();
      if (left > 0 && !options.json) printLine(`toolrun worker: ${left} message${left === 1 ? '' : 's'} left in the queue (leased by another worker, or not taken)`);
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await observed.flush();
      await server?.close();
      await stores.close();
    }
    const summary = { type: 'summary', handled: worker.stats.handled, byStatus: worker.stats.byStatus, paused: worker.stats.paused };
    if (options.json) printJson(summary);
    else printLine(`toolrun worker: handled ${worker.stats.handled} message${worker.stats.handled === 1 ? '' : 's'} (${formatCounts(worker.stats.byStatus)})`);
    if (worker.stats.paused && signals === 0) {
      process.stderr.write('toolrun worker: stopped with a dead-letter queue at its bound; drain or purge it (toolrun dlq drain / purge)\n');
      process.exitCode = EXIT_CODES.failure;
    }
  });
}
