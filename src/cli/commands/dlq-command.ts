import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import {
  drainToolDlq,
  replayToolFailure,
  type DeadLetterRecord,
  type MessageFailureEntry,
  type ReplayOptions,
  type ReplayResult,
  type ResumableEntry,
  type Stores,
  type ToolrunConfig,
} from '../../index.ts';
import { toolDeadLetterKind } from '../../worker/dead-letter-metrics.ts';
import { assertConfigToolsBuild } from '../check-config-tools.ts';
import { EXIT_CODES, usageError } from '../cli-error.ts';
import { formatCounts, formatDurationMs, formatTable, preview, printJson, printLine } from '../format.ts';
import { findConfigFile, loadConfig } from '../load-config.ts';
import { addLogOptions, addStoreOptions, integerOption, type LogOptions, type StoreOptions } from '../parse-options.ts';
import { resolveStores, type ResolvedStores } from '../resolve-stores.ts';
import { createCliObservability } from '../cli-observability.ts';
import { guardConfigOnEvent } from '../worker-output.ts';

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
async function withObservedReplays<T>(
  config: ToolrunConfig,
  options: DlqOptions,
  stores: Stores,
  resolved: ResolvedStores,
  work: (replay: ReplayOptions) => Promise<T>,
): Promise<T> {
  const observed = await createCliObservability({ config, openFailureLog: resolved.openFailureLog, logLevel: options.logLevel, logFile: options.logFile });
  const { observability } = observed;
  const configOnEvent = guardConfigOnEvent(config.onEvent, observed.redactor);
  try {
    return await work({
      ...replayOptions(config, stores),
      runtimeOptions: observed.runtimeOptions,
      runHooks: observability.runHooks,
      onEvent: (event) => {
        observability.onEvent(event);
        configOnEvent(event);
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

/** The fields of a tool-DLQ entry of any kind, as read from a store (any of them may be missing). */
type AnyToolEntry = Partial<{
  runId: string;
  stepIndex: number;
  toolName: string;
  modelName: string;
  attempts: number;
  deliveries: number;
  conversationRef: string;
  reason: string;
  firstSeenAt: string;
  lastError: { kind?: string; status?: number | null; message?: string };
}>;

function lastErrorText(entry: AnyToolEntry, length: number): string {
  const error = entry.lastError;
  if (!error || typeof error !== 'object') return '';
  return `${error.kind ?? '?'}${error.status !== null && error.status !== undefined ? ` ${error.status}` : ''}: ${preview(String(error.message ?? ''), length)}`;
}

function toolRows(records: DeadLetterRecord<unknown>[]): string[][] {
  return records.map(({ id, addedAt, entry }) => {
    const kind = toolDeadLetterKind(entry);
    const tool = (typeof entry === 'object' && entry !== null ? entry : {}) as AnyToolEntry;
    const name = kind === 'model' ? String(tool.modelName ?? '?') : kind === 'run' ? '-' : String(tool.toolName ?? '?');
    const tries =
      kind === 'run'
        ? `${tool.deliveries ?? '?'} deliver${tool.deliveries === 1 ? 'y' : 'ies'}`
        : typeof tool.attempts === 'number'
          ? `${tool.attempts} attempt${tool.attempts === 1 ? '' : 's'}`
          : '-';
    return [
      id,
      ageOf(tool.firstSeenAt, addedAt),
      kind === 'unknown' ? '?' : kind,
      tries,
      name,
      String(tool.runId ?? '?'),
      `step ${tool.stepIndex ?? '?'}`,
      String(tool.reason ?? ''),
      lastErrorText(tool, 50),
    ];
  });
}

/** What a replay of a tool-DLQ entry will do, for `dlq show`. */
export interface ReplayPlan {
  /** `re-execute-tool-call` (kind tool), `call-model` (kind model), `resume-from-checkpoint` (kind run), `not-replayable` (the entry lacks a run id, step or conversation). */
  action: 're-execute-tool-call' | 'call-model' | 'resume-from-checkpoint' | 'not-replayable';
  stepIndex: number | null;
  text: string;
}

/** What `toolrun dlq replay` will do with a tool-DLQ entry, by its kind. */
export function replayPlanOf(entry: unknown): ReplayPlan {
  const kind = toolDeadLetterKind(entry);
  const tool = (typeof entry === 'object' && entry !== null ? entry : {}) as AnyToolEntry;
  const step = Number.isInteger(tool.stepIndex) ? (tool.stepIndex as number) : null;
  if (typeof tool.runId !== 'string' || typeof tool.conversationRef !== 'string' || step === null) {
    return {
      action: 'not-replayable',
      stepIndex: step,
      text: 'this entry lacks the run id, step or conversation a replay needs: a replay ends `invalid_entry` and changes nothing',
    };
  }
  const after =
    'The run is claimed first: while another drain, replay or worker holds it, a replay does nothing (in_progress). The entry is removed once the run completes.';
  switch (kind) {
    case 'model':
      return {
        action: 'call-model',
        stepIndex: step,
        text: `a replay calls the model ${tool.modelName ?? '?'} again at step ${step} with the stored conversation (${tool.conversationRef}), then goes on with the run; tool calls already recorded are not repeated. ${after}`,
      };
    case 'run':
      return {
        action: 'resume-from-checkpoint',
        stepIndex: step,
        text: `a replay resumes run ${tool.runId} from its checkpoint at step ${step} (${tool.deliveries ?? '?'} deliver${tool.deliveries === 1 ? 'y' : 'ies'} of its message failed; the last error: ${lastErrorText(tool, 120) || 'none recorded'}) — fix that cause first, or the replay fails the same way; tool calls already recorded are not repeated. ${after}`,
      };
    default:
      return {
        action: 're-execute-tool-call',
        stepIndex: step,
        text: `a replay re-executes the failed call to ${tool.toolName ?? '?'} at step ${step} with its real arguments from the stored conversation (${tool.conversationRef}; the entry's toolArgs are redacted), then calls the model only for the remaining steps; calls recorded as done are not repeated. ${after}`,
      };
  }
}

/** What `dlq show` says about a message-DLQ entry's raw body. */
export const RAW_BODY_NOTICE =
  'rawBody is the message body AS RECEIVED, NOT REDACTED: it may hold secrets (restrict who can read this DLQ); every other field is redacted. Message-DLQ entries are not replayed: fix the body and enqueue it again (toolrun enqueue --file FILE).';

function messageRows(records: DeadLetterRecord<unknown>[]): string[][] {
  return records.map(({ id, addedAt, entry }) => {
    const message = entry as Partial<MessageFailureEntry>;
    return [
      id,
      ageOf(message.receivedAt, addedAt),
      String(message.reason?.code ?? '?'),
      String(message.messageId ?? '-'),
      preview(String(message.rawBody ?? ''), 50),
    ];
  });
}

async function printList(stores: Stores, queue: QueueName, options: DlqOptions): Promise<DeadLetterRecord<unknown>[]> {
  const dlq = queue === 'tool' ? stores.toolDlq : stores.messageDlq;
  const records = await dlq.list({ limit: options.limit ?? 50, offset: options.offset ?? 0 });
  if (options.json) return records;
  const size = await dlq.size();
  printLine(`${queue} DLQ: ${size} entr${size === 1 ? 'y' : 'ies'}`);
  if (records.length > 0) {
    const header =
      queue === 'tool' ? ['ID', 'AGE', 'KIND', 'TRIES', 'TOOL/MODEL', 'RUN', 'STEP', 'REASON', 'LAST ERROR'] : ['ID', 'AGE', 'REASON', 'MESSAGE ID', 'BODY'];
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
    ...(config.modelPolicy !== undefined ? { modelPolicy: config.modelPolicy } : {}),
    ...(config.modelName !== undefined ? { modelName: config.modelName } : {}),
    ...(config.claimLeaseMs !== undefined ? { claimLeaseMs: config.claimLeaseMs } : {}),
    ...(config.onEvent !== undefined ? { onEvent: config.onEvent } : {}),
  };
}

/** Loads the config of a replay or drain and builds its tools once, before any store is opened. */
async function loadReplayConfig(options: DlqOptions): Promise<ToolrunConfig> {
  const configPath = findConfigFile(options.config, process.env, process.cwd());
  const config = await loadConfig(configPath, process.env);
  assertConfigToolsBuild(config, configPath, 'no entry was replayed');
  return config;
}

function whyFailed(result: ReplayResult): string {
  if (!result.failure) return '';
  const { stepIndex, toolName, reason, kind } = result.failure;
  return ` at step ${stepIndex} (${kind === 'model' ? `model ${toolName}` : toolName}: ${reason})`;
}

function requireToolQueue(options: DlqOptions, action: string): void {
  if (queueName(options.queue, 'tool') === 'message') {
    throw usageError(
      `only tool-DLQ entries can be ${action}: a message-DLQ entry is a defect of the message; fix its body and enqueue it again (toolrun dlq show ID --queue message)`,
    );
  }
}

/**
 * `toolrun dlq list|show|replay|drain|purge`: inspect and work off the two dead-letter queues.
 * The tool DLQ holds three kinds of resumable entries — `tool` (a tool failed past in-band
 * recovery), `model` (the model could not be reached), `run` (a poison run: every delivery of its
 * message failed) — and `list` shows the kind, the tool or model, and the attempts or deliveries;
 * `show` prints the whole entry and what a replay will do. `replay` and `drain` build the config's
 * tools first (an invalid tool: exit 2, nothing replayed) and claim each run before resuming it: an
 * entry whose run another drain, replay or worker holds is `in_progress` — `replay` prints who holds
 * it and exits 1 having done nothing; `drain` counts it apart and leaves it to its holder.
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
    .description("print one entry in full (JSON); for a tool-DLQ entry also what a replay will do; a message-DLQ entry's raw body is not redacted")
    .argument('<id>', 'entry id (from toolrun dlq list)')
    .option(...queueOption)
    .option('--json', 'print the record as one JSON line');
  addStoreOptions(show, { queueUrl: false });
  show.action(async (id: string, options: DlqOptions) => {
    const queue = queueName(options.queue);
    await withStores(options, true, async (stores) => {
      const record = await (queue === 'tool' ? stores.toolDlq : stores.messageDlq).get(id);
      if (record === undefined) throw usageError(`no entry "${id}" in the ${queue} DLQ (toolrun dlq list --queue ${queue})`, 'NOT_FOUND');
      if (queue === 'tool') {
        const plan = replayPlanOf(record.entry);
        if (options.json) printJson({ ...record, kind: toolDeadLetterKind(record.entry), replay: plan });
        else {
          printLine(`tool-DLQ entry ${id} (kind ${toolDeadLetterKind(record.entry)}):`);
          printLine(JSON.stringify(record, null, 2));
          printLine(`replay: ${plan.text}`);
        }
      } else if (options.json) printJson({ ...record, rawBodyRedacted: false, notice: RAW_BODY_NOTICE });
      else {
        printLine(`message-DLQ entry ${id} — note: ${RAW_BODY_NOTICE}`);
        printLine(JSON.stringify(record, null, 2));
      }
    });
  });

  const replay = dlq
    .command('replay')
    .description(
      'resume the run of one tool-DLQ entry from its failed step; removed from the DLQ when the run completes; exit 1 when it did not complete, or when another drain, replay or worker holds the run (in_progress: nothing done)',
    )
    .argument('<id>', 'entry id (from toolrun dlq list --queue tool)')
    .option(...queueOption)
    .option('--config <file>', 'config module with the model and tools (default: $TOOLRUN_CONFIG or ./toolrun.config.{ts,mjs,js})')
    .option('--remove-expired', 'also remove the entry when its conversation has expired')
    .option('--json', 'print the replay result as JSON');
  addLogOptions(replay);
  addStoreOptions(replay, { queueUrl: false });
  replay.action(async (id: string, options: DlqOptions) => {
    requireToolQueue(options, 'replayed');
    const config = await loadReplayConfig(options);
    await withStores(options, true, async (stores, resolved) => {
      const record = await stores.toolDlq.get(id);
      if (record === undefined) throw usageError(`no entry "${id}" in the tool DLQ (toolrun dlq list --queue tool)`, 'NOT_FOUND');
      const result = await withObservedReplays(config, options, stores, resolved, (replay) => replayToolFailure(record.entry as ResumableEntry, replay));
      const done = result.status === 'completed' || result.status === 'already_completed';
      const removed = (done || (result.status === 'expired' && options.removeExpired === true)) && (await stores.toolDlq.remove(id));
      if (options.json) printJson({ id, removed, ...result });
      else if (result.status === 'in_progress') {
        printLine(
          `not replayed ${id} (run ${result.runId ?? '?'}): in_progress — the run is claimed by ${result.holder ?? 'another consumer'} (another drain, replay or worker is running it); nothing was done, the entry stays in the tool DLQ: try again once it is done`,
        );
      } else {
        printLine(
          `replayed ${id} (run ${result.runId ?? '?'}): ${result.status}${whyFailed(result)}, ${result.modelCalls} model call${result.modelCalls === 1 ? '' : 's'}; ${removed ? 'removed from' : 'kept in'} the tool DLQ`,
        );
      }
      if (!done) process.exitCode = EXIT_CODES.failure;
    });
  });

  const drain = dlq
    .command('drain')
    .description(
      'replay tool-DLQ entries (tool, model and run failures) with bounded concurrency and report counts per outcome; entries another drain, replay or worker holds are counted in_progress and left to it',
    )
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
    const config = await loadReplayConfig(options);
    await withStores(options, true, async (stores, resolved) => {
      const bar =
        process.stdout.isTTY && !options.json
          ? new cliProgress.SingleBar(
              { format: 'draining [{bar}] {value}/{total} {status}', stream: process.stdout, hideCursor: true },
              cliProgress.Presets.shades_classic,
            )
          : undefined;
      let started = false;
      const report = await withObservedReplays(config, options, stores, resolved, (replay) =>
        drainToolDlq({
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
        }),
      );
      bar?.stop();
      if (options.json) printJson(report);
      else {
        const left = await stores.toolDlq.size();
        printLine(
          `drained ${report.total} entr${report.total === 1 ? 'y' : 'ies'}: ${formatCounts(report.outcomes)}; removed ${report.removed}, ${left} left in the tool DLQ`,
        );
        const busy = report.entries.filter((item) => item.status === 'in_progress');
        if (busy.length > 0) {
          const ids = busy
            .slice(0, 10)
            .map((item) => item.id)
            .join(', ');
          printLine(
            `  in progress elsewhere: ${busy.length} (${ids}${busy.length > 10 ? ', …' : ''}) — claimed by another drain, replay or worker; not replayed here, left to it`,
          );
        }
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
