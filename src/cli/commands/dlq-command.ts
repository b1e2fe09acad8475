import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import {
  drainToolDlq,
  replayToolFailure,
  type DeadLetterRecord,
  type MessageFailureEntry,
  type ReplayOptions,
  type Stores,
  type ToolFailureEntry,
  type ToolrunConfig,
} from '../../index.ts';
import { EXIT_CODES, usageError } from '../cli-error.ts';
import { formatCounts, formatDurationMs, formatTable, preview, printJson, printLine } from '../format.ts';
import { findConfigFile, loadConfig } from '../load-config.ts';
import { addLogOptions, addStoreOptions, integerOption, type LogOptions, type StoreOptions } from '../parse-options.ts';
import { resolveStores, type ResolvedStores } from '../resolve-stores.ts';
import { createCliObservability } from '../cli-observability.ts';

type QueueName = 'message' | 'tool';

interface DlqOptions extends StoreOptions, LogOptions {
  queue?: string;
  json?: boolean;
  limit?: number;
  offset?: number;
  concurrency: number;
  config?: string;
  yes?: boolean;
  removeExpired?: boolean;
}

function queueName(value: string | undefined, fallback?: QueueName): QueueName {
  if (value === undefined) {
    if (fallback !== undefined) return fallback;
    throw usageError('say which dead-letter queue: --queue message or --queue tool');
  }
  if (value !== 'message' && value !== 'tool') throw usageError(`--queue must be "message" or "tool", received "${value}"`);
  return value;
}

async function withStores<T>(options: DlqOptions, mustExist: boolean, work: (stores: Stores, resolved: ResolvedStores) => Promise<T>): Promise<T> {
  const resolved = await resolveStores({ db: options.db, store: options.store, env: process.env }, { mustExist });
  try {
    return await work(resolved.stores, resolved);
  } finally {
    await resolved.stores.close();
  }
}

/**
 * Runs `work` with the replay options of `config`, observed like the worker's runs: failures into
 * the stores' failure log, run hooks, logs with `--log-level`/`--log-file`. Flushes the failure log
 * before the stores close.
 */
async function withObservedReplays<T>(config: ToolrunConfig, options: DlqOptions, stores: Stores, resolved: ResolvedStores, work: (replay: ReplayOptions) => Promise<T>): Promise<T> {
  const observed = await createCliObservability({ config, openFailureLog: resolved.openFailureLog, logLevel: options.logLevel, logFile: options.logFile });
  const { observability } = observed;
  try {
    return await work({
      ...replayOptions(config, stores),
      runtimeOptions: observed.runtimeOptions,
      runHooks: observability.runHooks,
      onEvent: (event) => {
        observability.onEvent(event);
        config.onEvent?.(event);
      },
    });
  } finally {
    await observed.flush();
  }
}

function ageOf(isoTime: unknown, fallback: string): string {
  const ms = Date.parse(typeof isoTime === 'string' ? isoTime : fallback);
  return Number.isFinite(ms) ? formatDurationMs(Date.now() - ms) : '?';
}

function toolRows(records: DeadLetterRecord<unknown>[]): string[][] {
  return records.map(({ id, addedAt, entry }) => {
    const tool = entry as Partial<ToolFailureEntry>;
    const error = tool.lastError ? `${tool.lastError.kind}${tool.lastError.status !== null ? ` ${tool.lastError.status}` : ''}: ${preview(tool.lastError.message ?? '', 50)}` : '';
    return [id, ageOf(tool.firstSeenAt, addedAt), String(tool.toolName ?? '?'), String(tool.runId ?? '?'), `step ${tool.stepIndex ?? '?'}`, String(tool.reason ?? ''), error];
  });
}

function messageRows(records: DeadLetterRecord<unknown>[]): string[][] {
  return records.map(({ id, addedAt, entry }) => {
    const message = entry as Partial<MessageFailureEntry>;
    return [id, ageOf(message.receivedAt, addedAt), String(message.reason?.code ?? '?'), String(message.messageId ?? '-'), preview(String(message.rawBody ?? ''), 50)];
  });
}

async function printList(stores: Stores, queue: QueueName, options: DlqOptions): Promise<DeadLetterRecord<unknown>[]> {
  const dlq = queue === 'tool' ? stores.toolDlq : stores.messageDlq;
  const records = await dlq.list({ limit: options.limit ?? 50, offset: options.offset ?? 0 });
  if (options.json) return records;
  const size = await dlq.size();
  printLine(`${queue} DLQ: ${size} entr${size === 1 ? 'y' : 'ies'}`);
  if (records.length > 0) {
    const header = queue === 'tool' ? ['ID', 'AGE', 'TOOL', 'RUN', 'STEP', 'REASON', 'LAST ERROR'] : ['ID', 'AGE', 'REASON', 'MESSAGE ID', 'BODY'];
    for (const line of formatTable([header, ...(queue === 'tool' ? toolRows(records) : messageRows(records))])) printLine(`  ${line}`);
  }
  const shown = (options.offset ?? 0) + records.length;
  if (shown < size) printLine(`  … ${size - shown} more (--offset ${shown})`);
  return records;
}

function replayOptions(config: ToolrunConfig, stores: Stores): ReplayOptions {
  return {
    model: config.model,
    tools: config.tools,
    stores,
    ...(config.runtimeOptions !== undefined ? { runtimeOptions: config.runtimeOptions } : {}),
    ...(config.toolRetryBudget !== undefined ? { toolRetryBudget: config.toolRetryBudget } : {}),
    ...(config.maxSteps !== undefined ? { maxSteps: config.maxSteps } : {}),
    ...(config.sharedBreaker !== undefined ? { sharedBreaker: config.sharedBreaker } : {}),
    ...(config.onEvent !== undefined ? { onEvent: config.onEvent } : {}),
  };
}

function requireToolQueue(options: DlqOptions, action: string): void {
  if (queueName(options.queue, 'tool') === 'message') {
    throw usageError(`only tool-DLQ entries can be ${action}: a message-DLQ entry is a defect of the message; fix its body and enqueue it again (toolrun dlq show ID --queue message)`);
  }
}

/**
 * `toolrun dlq list|show|replay|drain|purge`: inspect and work off the two dead-letter queues.
 * Replays are observed like the worker's runs: failures, recoveries and breaker openings go to the
 * SQLite file's failure log (`toolrun report --db`), and `--log-level`/`--log-file` log each call.
 */
export function addDlqCommand(program: Command): void {
  const dlq = program.command('dlq').description('inspect, replay, drain and purge the message and tool dead-letter queues');
  const queueOption = ['--queue <name>', 'which dead-letter queue: message or tool'] as const;

  const list = dlq
    .command('list')
    .description('list entries, oldest first (both queues unless --queue)')
    .option(...queueOption)
    .option('--limit <n>', 'entries per queue', integerOption(1), 50)
    .option('--offset <n>', 'skip the oldest N entries', integerOption(0), 0)
    .option('--json', 'print the records as JSON');
  addStoreOptions(list, { queueUrl: false });
  list.action(async (options: DlqOptions) => {
    const queues: QueueName[] = options.queue === undefined ? ['message', 'tool'] : [queueName(options.queue)];
    await withStores(options, true, async (stores) => {
      const result: Partial<Record<QueueName, DeadLetterRecord<unknown>[]>> = {};
      for (const queue of queues) result[queue] = await printList(stores, queue, options);
      if (options.json) printJson(options.queue === undefined ? result : result[queues[0]!]);
    });
  });

  const show = dlq
    .command('show')
    .description('print one entry in full')
    .argument('<id>', 'entry id (from toolrun dlq list)')
    .option(...queueOption)
    .option('--json', 'print the record as one JSON line');
  addStoreOptions(show, { queueUrl: false });
  show.action(async (id: string, options: DlqOptions) => {
    const queue = queueName(options.queue);
    await withStores(options, true, async (stores) => {
      const record = await (queue === 'tool' ? stores.toolDlq : stores.messageDlq).get(id);
      if (record === undefined) throw usageError(`no entry "${id}" in the ${queue} DLQ (toolrun dlq list --queue ${queue})`, 'NOT_FOUND');
      if (options.json) printJson(record);
      else printLine(JSON.stringify(record, null, 2));
    });
  });

  const replay = dlq
    .command('replay')
    .description('resume the run of one tool-DLQ entry from its failed step; removed from the DLQ when the run completes')
    .argument('<id>', 'entry id (from toolrun dlq list --queue tool)')
    .option(...queueOption)
    .option('--config <file>', 'config module with the model and tools (default: $TOOLRUN_CONFIG or ./toolrun.config.{ts,mjs,js})')
    .option('--remove-expired', 'also remove the entry when its conversation has expired')
    .option('--json', 'print the replay result as JSON');
  addLogOptions(replay);
  addStoreOptions(replay, { queueUrl: false });
  replay.action(async (id: string, options: DlqOptions) => {
    requireToolQueue(options, 'replayed');
    const configPath = findConfigFile(options.config, process.env, process.cwd());
    await withStores(options, true, async (stores, resolved) => {
      const record = await stores.toolDlq.get(id);
      if (record === undefined) throw usageError(`no entry "${id}" in the tool DLQ (toolrun dlq list --queue tool)`, 'NOT_FOUND');
      const config = await loadConfig(configPath, process.env);
      const result = await withObservedReplays(config, options, stores, resolved, (replay) => replayToolFailure(record.entry as ToolFailureEntry, replay));
      const done = result.status === 'completed' || result.status === 'already_completed';
      const removed = (done || (result.status === 'expired' && options.removeExpired === true)) && (await stores.toolDlq.remove(id));
      if (options.json) printJson({ id, removed, ...result });
      else {
        const why = result.failure ? ` at step ${result.failure.stepIndex} (${result.failure.toolName}: ${result.failure.reason})` : '';
        printLine(`replayed ${id} (run ${result.runId ?? '?'}): ${result.status}${why}, ${result.modelCalls} model call${result.modelCalls === 1 ? '' : 's'}; ${removed ? 'removed from' : 'kept in'} the tool DLQ`);
      }
      if (!done) process.exitCode = EXIT_CODES.failure;
    });
  });

  const drain = dlq
    .command('drain')
    .description('replay tool-DLQ entries with bounded concurrency and report counts per outcome')
    .option(...queueOption)
    .option('--config <file>', 'config module with the model and tools (default: $TOOLRUN_CONFIG or ./toolrun.config.{ts,mjs,js})')
    .option('--limit <n>', 'drain at most N entries, oldest first', integerOption(1))
    .option('--concurrency <n>', 'replays at once', integerOption(1), 4)
    .option('--remove-expired', 'also remove entries whose conversation has expired')
    .option('--json', 'print the drain report as JSON');
  addLogOptions(drain);
  addStoreOptions(drain, { queueUrl: false });
  drain.action(async (options: DlqOptions) => {
    requireToolQueue(options, 'drained');
    const configPath = findConfigFile(options.config, process.env, process.cwd());
    await withStores(options, true, async (stores, resolved) => {
      const config = await loadConfig(configPath, process.env);
      const bar = process.stdout.isTTY && !options.json ? new cliProgress.SingleBar({ format: 'draining [{bar}] {value}/{total} {status}', stream: process.stdout, hideCursor: true }, cliProgress.Presets.shades_classic) : undefined;
      let started = false;
      const report = await withObservedReplays(config, options, stores, resolved, (replay) => drainToolDlq({
        ...replay,
        concurrency: options.concurrency,
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
        ...(options.removeExpired ? { removeExpired: true } : {}),
        onProgress: ({ done, total, status }) => {
          if (!bar) return;
          if (!started) bar.start(total, 0, { status: '' });
          started = true;
          bar.update(done, { status });
        },
      }));
      bar?.stop();
      if (options.json) printJson(report);
      else {
        const left = await stores.toolDlq.size();
        printLine(`drained ${report.total} entr${report.total === 1 ? 'y' : 'ies'}: ${formatCounts(report.outcomes)}; removed ${report.removed}, ${left} left in the tool DLQ`);
        for (const entry of report.entries.filter((item) => item.status === 'error')) printLine(`  ${entry.id}: error: ${entry.error ?? ''}`);
      }
      if ((report.outcomes.error ?? 0) > 0) process.exitCode = EXIT_CODES.failure;
    });
  });

  const purge = dlq
    .command('purge')
    .description('delete every entry of one dead-letter queue')
    .option(...queueOption)
    .option('--yes', 'confirm the deletion')
    .option('--json', 'print the count as JSON');
  addStoreOptions(purge, { queueUrl: false });
  purge.action(async (options: DlqOptions) => {
    const queue = queueName(options.queue);
    await withStores(options, true, async (stores) => {
      const dlqStore = queue === 'tool' ? stores.toolDlq : stores.messageDlq;
      if (!options.yes) {
        const size = await dlqStore.size();
        throw usageError(`purge deletes all ${size} entr${size === 1 ? 'y' : 'ies'} of the ${queue} DLQ for good: pass --yes to confirm`);
      }
      const purged = await dlqStore.purge();
      if (options.json) printJson({ queue, purged });
      else printLine(`purged ${purged} entr${purged === 1 ? 'y' : 'ies'} from the ${queue} DLQ`);
    });
  });
}
