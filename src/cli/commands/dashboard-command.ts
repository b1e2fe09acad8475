import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { createRedactor, createToolRuntime, type Redactor, type ReplayOptions, type ToolrunConfig } from '../../index.ts';
import { backendConversationExpiry, DEFAULT_DASHBOARD_BOUNDS, startDashboard, type DashboardSource } from '../../dashboard/index.ts';
import { assertConfigToolsBuild } from '../check-config-tools.ts';
import { createCliObservability } from '../cli-observability.ts';
import { usageError } from '../cli-error.ts';
import { printLine } from '../format.ts';
import { DEFAULT_CONFIG_FILES, findConfigFile, loadConfig } from '../load-config.ts';
import { addLogOptions, addStoreOptions, integerOption, portOption, type LogOptions, type StoreOptions } from '../parse-options.ts';
import { DEAD_LETTERS_QUEUE_URL_HELP, resolveStores } from '../resolve-stores.ts';
import { guardConfigOnEvent } from '../worker-output.ts';
import { replayOptions } from './dlq-command.ts';

interface DashboardOptions extends StoreOptions, LogOptions {
  config?: string;
  port: number;
  host: string;
  token?: string;
  readOnly?: boolean;
  sampleIntervalMs: number;
}

/** Whether a config would be found (`--config`, `$TOOLRUN_CONFIG`, or a default file here). */
function configGiven(options: DashboardOptions): boolean {
  if (options.config !== undefined) return true;
  if (process.env.TOOLRUN_CONFIG !== undefined && process.env.TOOLRUN_CONFIG !== '') return true;
  return DEFAULT_CONFIG_FILES.some((name) => existsSync(resolve(process.cwd(), name)));
}

function isRedactor(value: unknown): value is Redactor {
  return typeof value === 'object' && value !== null && typeof (value as Redactor).text === 'function';
}

/**
 * The redactor of what the dashboard sends: the config's (`runtimeOptions.redact`), with room for a
 * whole page of rows or a long conversation in one `value` call (the default bounds would replace
 * the tail of a large page with a marker).
 */
function responseRedactor(config: ToolrunConfig | undefined): Redactor {
  const configured = config?.runtimeOptions?.redact;
  if (isRedactor(configured)) return configured;
  return createRedactor({ ...configured, maxNodes: 2_000_000, maxItems: 100_000, maxKeys: 100_000, maxValueBytes: 256 * 1024 * 1024 });
}

/**
 * `toolrun dashboard`: serves the operator's page over the stores (`--db`, `--store`, `--queue` as
 * the other commands) on 127.0.0.1 (`--host`, `--port`): both DLQs' depth, age, bounds and alerts,
 * the breakers, the failure mix; the entries by cause, each with its conversation, envelope,
 * developer record and ledger; replay, bulk replay, drain and purge. Replays use the config's
 * model and tools (`--config`, found as `dlq replay` finds it; without one the page cannot replay)
 * and the same claimed, idempotent replay code as `toolrun dlq replay|drain`. Every action needs
 * the token (printed at start, or `--token` / `$TOOLRUN_DASHBOARD_TOKEN`); off 127.0.0.1 every
 * request does. `--read-only` refuses every action. Runs until SIGINT/SIGTERM.
 */
export function addDashboardCommand(program: Command): void {
  const command = program
    .command('dashboard')
    .description('serve a web page over the two dead-letter queues: overview, entries by cause, conversations, replay, drain and purge (127.0.0.1 by default)')
    .option(
      '--config <file>',
      'config module with the model and tools, for replays (default: $TOOLRUN_CONFIG or ./toolrun.config.{ts,mjs,js}; none: no replays)',
    )
    .option('--port <n>', 'port to listen on (0: any free port)', portOption(0), 4319)
    .option('--host <address>', 'address to listen on; anything but 127.0.0.1/::1/localhost needs the token for every request', '127.0.0.1')
    .option('--token <token>', 'the token of the actions, at least 16 characters (default: $TOOLRUN_DASHBOARD_TOKEN, else a random one, printed)')
    .option('--read-only', 'refuse every action (replay, drain, purge)')
    .option('--sample-interval-ms <ms>', 'how often the depth and age samples of the sparklines are taken', integerOption(100), 15_000);
  addLogOptions(command);
  addStoreOptions(command, { queueUrl: false });
  command.option('--queue <url>', DEAD_LETTERS_QUEUE_URL_HELP);
  command.action(async (options: DashboardOptions) => {
    const token = options.token ?? (process.env.TOOLRUN_DASHBOARD_TOKEN || undefined);
    if (token !== undefined && token.length < 16)
      throw usageError('the dashboard token must have at least 16 characters (--token or $TOOLRUN_DASHBOARD_TOKEN)');
    let config: ToolrunConfig | undefined;
    if (configGiven(options)) {
      const configPath = findConfigFile(options.config, process.env, process.cwd());
      config = await loadConfig(configPath, process.env);
      assertConfigToolsBuild(config, configPath, 'the dashboard was not started');
    }
    const resolved = await resolveStores(
      { db: options.db, store: options.store, queue: options.queue, env: process.env },
      { mustExist: true, deadLettersFromQueue: true },
    );
    const { stores } = resolved;
    let flush: (() => Promise<void>) | undefined;
    try {
      const redactor = responseRedactor(config);
      let replay: ReplayOptions | undefined;
      if (config && !options.readOnly) {
        const observed = await createCliObservability({
          config,
          openFailureLog: resolved.openFailureLog,
          logLevel: options.logLevel,
          logFile: options.logFile,
        });
        const configOnEvent = guardConfigOnEvent(config.onEvent, observed.redactor);
        flush = () => observed.flush();
        replay = {
          ...replayOptions(config, stores),
          runtimeOptions: observed.runtimeOptions,
          runHooks: observed.observability.runHooks,
          onEvent: (event) => {
            observed.observability.onEvent(event);
            configOnEvent(event);
          },
        };
      }
      const source: DashboardSource = {
        stores,
        label: resolved.label,
        redactor,
        failureLog: resolved.openFailureLog?.(),
        countRunsByStatus: resolved.countRunsByStatus,
        conversationExpiry: backendConversationExpiry(stores),
        replay,
        afterReplays: flush,
        bounds:
          config?.maxDeadLetterEntries !== undefined || config?.maxDeadLetterBytes !== undefined
            ? {
                maxEntries: config.maxDeadLetterEntries ?? DEFAULT_DASHBOARD_BOUNDS.maxEntries,
                maxBytes: config.maxDeadLetterBytes ?? DEFAULT_DASHBOARD_BOUNDS.maxBytes,
                source: 'config',
              }
            : undefined,
        maxSteps: config?.maxSteps,
        toolNames: config ? createToolRuntime({ tools: config.tools }).names : undefined,
        modelName: config?.modelName,
      };
      const running = await startDashboard({
        source,
        host: options.host,
        port: options.port,
        ...(token !== undefined ? { token } : {}),
        readOnly: options.readOnly === true,
        sampleIntervalMs: options.sampleIntervalMs,
      });
      printLine(`toolrun dashboard: ${running.url} (store ${resolved.label})`);
      // read-only on loopback: nothing needs the token, so none is shown
      if (!options.readOnly || !running.loopback) {
        const what = options.readOnly ? 'reading needs the token' : 'actions need the token';
        printLine(`  ${what}: open ${running.urlWithToken}${token === undefined ? ' (a new token each start; --token to fix one)' : ''}`);
      }
      if (!running.loopback) printLine(`  listening on ${options.host}: every request needs the token (Authorization: Bearer …)`);
      if (options.readOnly) printLine('  read-only: every action is refused');
      else if (!replay) printLine(`  no config (--config FILE, $TOOLRUN_CONFIG or ./${DEFAULT_CONFIG_FILES[0]}): the page cannot replay or drain; purge works`);
      await new Promise<void>((resolveStop) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolveStop();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      await running.close();
    } finally {
      await flush?.().catch(() => undefined);
      await stores.close();
    }
  });
}
