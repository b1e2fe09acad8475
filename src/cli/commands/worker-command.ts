import type { Command } from 'commander';
import { createWorker } from '../../index.ts';
import { MAX_CONCURRENCY, MAX_WORKER_DELAY_MS } from '../../worker/check-options.ts';
import type { MetricsServer } from '../../observability/index.ts';
import { assertConfigToolsBuild } from '../check-config-tools.ts';
import { createCliObservability } from '../cli-observability.ts';
import { EXIT_CODES, warn } from '../cli-error.ts';
import { printJson, printLine } from '../format.ts';
import { findConfigFile, loadConfig } from '../load-config.ts';
import { addInitOption, addLogOptions, addStoreOptions, integerOption, portOption, type LogOptions, type StoreOptions } from '../parse-options.ts';
import { resolveStores, writerContext } from '../resolve-stores.ts';
import { countInFlight, DEFAULT_HEARTBEAT_MS, startHeartbeat } from '../worker-heartbeat.ts';
import { serveMetrics } from '../serve-metrics.ts';
import { createWorkerOutput, guardConfigOnEvent } from '../worker-output.ts';

interface WorkerCommandOptions extends StoreOptions, LogOptions {
  config?: string;
  concurrency: number;
  leaseMs: number;
  untilEmpty?: boolean;
  json?: boolean;
  metricsPort?: number;
  heartbeatMs?: number;
  init?: boolean;
  retainCompletedRunsMs?: number;
}

/** The exit codes of `toolrun worker`, as its help prints them. */
export const WORKER_EXIT_CODES_HELP = `
Exit codes:
  0    every message taken was handled: its run completed, or it was dead-lettered (a dead letter
       is a handled outcome, printed as a dead-letter-add line and counted in the summary; see
       toolrun dlq list), or the worker was stopped by SIGINT/SIGTERM
  1    a dead-letter queue is at its bound (entries or bytes) and --until-empty stopped the worker;
       or a store or the metrics port cannot be opened
  2    a usage error or an invalid config, including a tool whose definition or schema cannot be
       built (checked at start-up, before any message is taken), or a --db / --store / $TOOLRUN_DB
       that names no database (pass --init to create one; only .toolrun/toolrun.db is created
       without it)
  130  a second SIGINT/SIGTERM: exited at once (leased messages are redelivered)

Output: one line per event on stdout; on a terminal a heartbeat line every 10 s (--heartbeat-ms); for each dead letter its queue, kind (message, tool, model,
run), reason, run, tool or model, and the last error (redacted); failed deliveries, poison messages
(delivery-limit-exceeded) and lost leases are warnings on stderr. The summary counts where the
messages went: completed, tool DLQ (tool / model / run), message DLQ.`;

/**
 * `toolrun worker`: consumes the run queue with the model and tools of a config module. The config's
 * tools are built once at start-up: a tool that cannot be built (a malformed definition, a schema
 * that does not compile) ends the command with exit code 2 and one line naming the tool, before
 * any store is opened or message taken. SIGINT or SIGTERM stops it gracefully (no new message,
 * in-flight runs finish, the stores close, exit 0); a second signal exits at once (exit 130; the
 * leased messages are redelivered when their lease ends and their runs resume from their
 * checkpoints).
 *
 * Observability (toolrun/otel): failed calls, recoveries and breaker openings are recorded in the
 * SQLite file's failure log (for `toolrun report --db`); `--log-level` / `--log-file` log one line
 * per tool call; `--metrics-port N` serves this worker's tool, run and DLQ metrics in Prometheus
 * text format on `http://127.0.0.1:N/metrics` while it runs.
 *
 * Output: a line per worker event; a line per dead letter (queue, kind, reason, run, tool or model,
 * the last error — redacted); `delivery-failed`, `delivery-limit-exceeded` and `lease-lost` as
 * warnings on stderr; a summary of where the messages went (completed, tool DLQ by kind, message
 * DLQ). `--json`: every event, result (with its `deadLetter` place) and the summary as JSON lines.
 *
 * Exit codes: 0 when every message taken was handled — a dead-lettered message is a handled
 * outcome, so a worker whose runs all ended in a DLQ exits 0 (the summary and the dead-letter
 * lines say so); 1 when `--until-empty` stopped at a DLQ bound or a store cannot be opened; 2 for a
 * usage error or an invalid config (tools included); 130 after a second signal.
 */
export function addWorkerCommand(program: Command): void {
  const command = program
    .command('worker')
    .description('consume the run queue: run each message as an agent run, dead-letter what cannot be recovered')
    .option('--config <file>', 'config module (default: $TOOLRUN_CONFIG or ./toolrun.config.{ts,mjs,js})')
    .option('--concurrency <n>', 'messages handled at once', integerOption(1, MAX_CONCURRENCY), 1)
    .option(
      '--lease-ms <ms>',
      'how long a taken message stays invisible to other workers; make it longer than a run',
      integerOption(1, MAX_WORKER_DELAY_MS),
      300_000,
    )
    .option('--until-empty', 'exit once the queue is empty instead of waiting for messages')
    .option(
      '--retain-completed-runs-ms <ms>',
      "SQLite: delete a completed run's checkpoint, ledger rows and acknowledged message this long after it completed (default: keep them; a message enqueued again with a deleted run's id runs again)",
      integerOption(0),
    )
    .option(
      '--metrics-port <n>',
      "serve this worker's metrics (tool calls, runs, retries, breakers, DLQ) for Prometheus on 127.0.0.1:N/metrics (0: a free port)",
      portOption(0),
    )
    .option(
      '--heartbeat-ms <ms>',
      `print a heartbeat line (handled, throughput, in flight, queue, DLQ depths) every N ms; default ${DEFAULT_HEARTBEAT_MS} when stdout is a terminal, else none; 0: none; never with --json`,
      integerOption(0),
    )
    .option('--json', 'print events, results and the summary as JSON lines')
    .addHelpText('after', WORKER_EXIT_CODES_HELP);
  addLogOptions(command);
  addStoreOptions(command, { queueUrl: true });
  addInitOption(command);
  command.action(async (options: WorkerCommandOptions) => {
    const configPath = findConfigFile(options.config, process.env, process.cwd());
    const config = await loadConfig(configPath, process.env);
    // before any store is opened or message taken: a tool that cannot be built fails once, here
    assertConfigToolsBuild(config, configPath);
    const location = { ...options, env: process.env };
    const {
      stores: opened,
      label,
      openFailureLog,
    } = await resolveStores(location, {
      ...writerContext(location, options.init),
      ...(options.retainCompletedRunsMs !== undefined ? { retainCompletedRunsMs: options.retainCompletedRunsMs } : {}),
    });
    const counted = countInFlight(opened.queue);
    const stores = { ...opened, queue: counted.queue };
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
    const maxDeliveries = config.maxDeliveries ?? 5;
    const output = createWorkerOutput({ json: options.json === true, redactor: observed.redactor, maxDeliveries, debug: process.env.TOOLRUN_DEBUG === '1' });
    const configOnEvent = guardConfigOnEvent(config.onEvent, observed.redactor);
    const worker = createWorker({
      ...config,
      stores,
      runtimeOptions: observed.runtimeOptions,
      runHooks: observability.runHooks,
      concurrency: options.concurrency,
      leaseMs: options.leaseMs,
      maxDeliveries,
      onEvent: (event) => {
        observability.onEvent(event);
        output.onEvent(event);
        configOnEvent(event);
      },
      onResult: (result) => output.onResult(result),
      onError: (error) => output.onError(error),
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
    const heartbeatMs = options.json ? 0 : (options.heartbeatMs ?? (process.stdout.isTTY ? DEFAULT_HEARTBEAT_MS : 0));
    const heartbeat =
      heartbeatMs > 0
        ? startHeartbeat({ intervalMs: heartbeatMs, stores, handled: () => worker.stats.handled, inFlight: counted.inFlight, writeLine: printLine })
        : undefined;
    try {
      if (options.untilEmpty) await worker.runUntilEmpty();
      else await worker.run();
      const left = await stores.queue.size();
      const messages = `${left} message${left === 1 ? '' : 's'}`;
      if (left > 0 && options.untilEmpty) {
        // not an error (another worker may be running them), but not "every message handled" either
        warn(
          `${messages} still in the queue, leased by another worker or by one that stopped without finishing: a stopped worker's messages come back when its lease ends (its --lease-ms, 300000 ms by default); run the worker again then to take them`,
        );
      } else if (left > 0 && !options.json) printLine(`toolrun worker: ${messages} left in the queue (leased by another worker, or not taken)`);
    } finally {
      heartbeat?.stop();
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      output.flush();
      await observed.flush();
      await server?.close();
      await stores.close();
    }
    const { handled, byStatus, paused, failedDeliveries } = worker.stats;
    if (options.json) printJson({ type: 'summary', handled, byStatus, paused, failedDeliveries, placed: output.placements });
    else for (const line of output.summaryLines(handled, byStatus, failedDeliveries)) printLine(line);
    if (worker.stats.paused && signals === 0) {
      process.stderr.write('toolrun worker: stopped with a dead-letter queue at its bound; drain or purge it (toolrun dlq drain / purge)\n');
      process.exitCode = EXIT_CODES.failure;
    }
  });
}
