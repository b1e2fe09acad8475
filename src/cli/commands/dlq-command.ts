import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import {
  createRedactor,
  drainToolDlq,
  ToolrunError,
  replayDeadLetter,
  type DeadLetterRecord,
  type MessageFailureEntry,
  type ReplayOptions,
  type ReplayResult,
  type Stores,
  type ToolrunConfig,
  type ChatMessage,
} from '../../index.ts';
import { MAX_CONCURRENCY } from '../../worker/check-options.ts';
import { toolDeadLetterKind } from '../../worker/dead-letter-metrics.ts';
import { hostOfEntry, hostReplayPlanText, isEngineHost } from '../../worker/host-entry.ts';
import { checkRunRequestBody } from '../../worker/parse-run-request.ts';
import { REDRIVE_CLAIM_MS, redriveClaimKey, redriveMessageId } from '../../worker/redrive-message.ts';

import { assertConfigToolsBuild } from '../check-config-tools.ts';
import { EXIT_CODES, usageError } from '../cli-error.ts';
import { formatCounts, formatDurationMs, formatTable, preview, printJson, printLine } from '../format.ts';
import { findConfigFile, loadConfig } from '../load-config.ts';
import { addLogOptions, addStoreOptions, integerOption, QUEUE_URL_HELP, type LogOptions, type StoreOptions } from '../parse-options.ts';
import { resolveStores, type ResolvedStores } from '../resolve-stores.ts';
import { createCliObservability } from '../cli-observability.ts';
import { guardConfigOnEvent } from '../worker-output.ts';

type QueueName = 'message' | 'tool';

interface DlqOptions extends StoreOptions, LogOptions {
  /** `--dlq message|tool`: which dead-letter queue. */
  dlq?: string;
  json?: boolean;
  limit?: number;
  offset?: number;
  /** `dlq list --after ID`: the entries after that id (keyset paging). */
  after?: string;
  concurrency: number;
  config?: string;
  yes?: boolean;
  removeExpired?: boolean;
  conversation?: boolean;
  bodyFile?: string;
  validate?: boolean;
}

/** The `dlq` subcommands, for messages. */
type DlqAction = 'list' | 'show' | 'replay' | 'drain' | 'purge' | 'redrive';

/**
 * The dead-letter queue the user picked with `--dlq`, or `undefined`. `--queue` is a run-queue URL
 * on every command: on `dlq redrive` it is where the message goes; the other `dlq` commands do not
 * touch the run queue, but take `--queue redis://…` for dead-letter queues kept in Redis (toolrun/redis).
 */
function selectedDlq(options: DlqOptions, action: DlqAction): QueueName | undefined {
  const chosen = options.dlq;
  if (options.queue !== undefined && action !== 'redrive' && !/^rediss?:/i.test(options.queue)) {
    throw usageError(
      `dlq ${action} does not use the run queue: --queue takes a run-queue URL (for dlq redrive); pick a dead-letter queue with --dlq message or --dlq tool`,
    );
  }
  if (chosen !== undefined && chosen !== 'message' && chosen !== 'tool') throw usageError(`--dlq must be "message" or "tool", received "${chosen}"`);
  return chosen;
}

function requiredDlq(options: DlqOptions, action: DlqAction): QueueName {
  const chosen = selectedDlq(options, action);
  if (chosen === undefined) throw usageError(`say which dead-letter queue: --dlq message or --dlq tool`);
  return chosen;
}

async function withStores<T>(options: DlqOptions, mustExist: boolean, work: (stores: Stores, resolved: ResolvedStores) => Promise<T>): Promise<T> {
  const resolved = await resolveStores(
    { db: options.db, store: options.store, queue: options.queue, env: process.env },
    { mustExist, deadLettersFromQueue: true },
  );
  try {
    return await work(resolved.stores, resolved);
  } finally {
    await resolved.stores.close();
  }
}

/** Finds entry `id`: in `dlq` when given, else in both (ids are unique per store on SQLite and PostgreSQL). */
async function findEntry(stores: Stores, id: string, dlq: QueueName | undefined): Promise<{ queue: QueueName; record: DeadLetterRecord<unknown> }> {
  const look = async (queue: QueueName) => {
    const record = await (queue === 'tool' ? stores.toolDlq : stores.messageDlq).get(id);
    return record === undefined ? undefined : { queue, record };
  };
  if (dlq !== undefined) {
    const found = await look(dlq);
    if (found === undefined) throw usageError(`no entry "${id}" in the ${dlq} DLQ (toolrun dlq list --dlq ${dlq})`, 'NOT_FOUND');
    return found;
  }
  const [message, tool] = await Promise.all([look('message'), look('tool')]);
  if (message && tool) throw usageError(`entry "${id}" is in both DLQs on this backend: pass --dlq message or --dlq tool`);
  const found = message ?? tool;
  if (found === undefined) throw usageError(`no entry "${id}" in either DLQ (toolrun dlq list)`, 'NOT_FOUND');
  return found;
}

/**
 * Runs `work` with the replay options of `config` on `resolved.stores`, observed like the worker's runs: failures into
 * the stores' failure log, run hooks, logs with `--log-level`/`--log-file`. Flushes the failure log
 * before the stores close.
 */
async function withObservedReplays<T>(
  config: ToolrunConfig,
  options: DlqOptions,
  resolved: ResolvedStores,
  work: (replay: ReplayOptions) => Promise<T>,
): Promise<T> {
  const { stores } = resolved;
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
  const host = hostOfEntry(entry);
  if (host !== undefined)
    return { action: isEngineHost(host) ? 'resume-from-checkpoint' : 're-execute-tool-call', stepIndex: step, text: hostReplayPlanText(host, tool.toolName) };
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
  'rawBody is the message body AS RECEIVED, NOT REDACTED: it may hold secrets (restrict who can read this DLQ); every other field is redacted. Message-DLQ entries are not replayed: fix the body and redrive it (toolrun dlq redrive ID --body-file FILE): it is enqueued again and leaves this DLQ.';

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
  const limit = options.limit ?? 50;
  const offset = options.offset ?? 0;
  // one more than the page, to know whether another page follows
  const read = await dlq.list({ limit: limit + 1, offset, ...(options.after !== undefined ? { after: options.after } : {}) });
  const records = read.slice(0, limit);
  if (options.json) return records;
  const size = await dlq.size();
  printLine(`${queue} DLQ: ${size} entr${size === 1 ? 'y' : 'ies'}`);
  if (records.length > 0) {
    const header =
      queue === 'tool' ? ['ID', 'AGE', 'KIND', 'TRIES', 'TOOL/MODEL', 'RUN', 'STEP', 'REASON', 'LAST ERROR'] : ['ID', 'AGE', 'REASON', 'MESSAGE ID', 'BODY'];
    for (const line of formatTable([header, ...(queue === 'tool' ? toolRows(records) : messageRows(records))])) printLine(`  ${line}`);
  }
  if (read.length > limit) {
    const next = `--dlq ${queue} --after ${records[records.length - 1]!.id}`;
    if (options.after === undefined) {
      const shown = offset + records.length;
      printLine(`  … ${size - shown} more (${next}, or --offset ${shown})`);
    } else printLine(`  … more (${next})`);
  }
  return records;
}

/** The replay options of `config` over `stores` (`toolrun dlq replay|drain` and the dashboard build them the same way). */
export function replayOptions(config: ToolrunConfig, stores: Stores): ReplayOptions {
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
    ...(config.hosts !== undefined ? { hosts: config.hosts } : {}),
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
  if (result.failedAgain !== undefined) {
    const calls = result.failedAgain.map(({ toolName, code }) => `${toolName} (${code})`).join(', ');
    return ` — but ${calls} failed again and the model went on without ${result.failedAgain.length === 1 ? 'it' : 'them'}`;
  }
  if (!result.failure) return '';
  const { stepIndex, toolName, reason, kind } = result.failure;
  return ` at step ${stepIndex} (${kind === 'model' ? `model ${toolName}` : toolName}: ${reason})`;
}

function requireToolQueue(options: DlqOptions, action: 'replay' | 'drain'): void {
  if (selectedDlq(options, action) === 'message') {
    throw usageError(
      `only tool-DLQ entries can be ${action === 'replay' ? 'replayed' : 'drained'}: a message-DLQ entry is a defect of the message; fix its body and redrive it (toolrun dlq redrive ID --body-file FILE)`,
    );
  }
}

/** The longest text of one message `dlq show --conversation` prints (the rest is cut, marked). */
const CONVERSATION_TEXT_LIMIT = 2_000;

/** The redacted conversation behind a tool-DLQ entry, or why there is none. */
interface ConversationView {
  conversationRef: string | null;
  /** `null`: the conversation is gone (its TTL passed) or the entry names none. */
  messages: unknown[] | null;
  /** The step the entry failed at (its assistant turn is marked). */
  stepIndex: number | null;
}

async function readConversation(stores: Stores, entry: unknown): Promise<ConversationView> {
  const tool = (typeof entry === 'object' && entry !== null ? entry : {}) as AnyToolEntry;
  const ref = typeof tool.conversationRef === 'string' ? tool.conversationRef : null;
  const stepIndex = Number.isInteger(tool.stepIndex) ? (tool.stepIndex as number) : null;
  if (ref === null) return { conversationRef: null, messages: null, stepIndex };
  const stored = await stores.conversations.get(ref);
  // the stored conversation holds the real arguments (a replay needs them): never print it unredacted
  const messages = stored === undefined ? null : (createRedactor().value(stored) as unknown[]);
  return { conversationRef: ref, messages: Array.isArray(messages) ? messages : null, stepIndex };
}

function conversationLines(view: ConversationView): string[] {
  if (view.conversationRef === null) return ['conversation: none (the entry names no conversation)'];
  if (view.messages === null) return [`conversation ${view.conversationRef}: gone (its time to live passed; a replay ends expired)`];
  const cut = (text: string) => (text.length > CONVERSATION_TEXT_LIMIT ? `${text.slice(0, CONVERSATION_TEXT_LIMIT)}…[cut]` : text);
  const lines = [`conversation ${view.conversationRef} (${view.messages.length} messages, redacted):`];
  // The conversation holds earlier runs too (a chat goes on across runs): the run's steps are its
  // last assistant turns, the failed step the very last one; earlier turns are history.
  const assistantTurns = view.messages.filter((value) => (value as Partial<ChatMessage> | null)?.role === 'assistant').length;
  let turn = -1;
  for (const [index, value] of view.messages.entries()) {
    const message = (typeof value === 'object' && value !== null ? value : {}) as Partial<ChatMessage>;
    const content = typeof message.content === 'string' ? cut(message.content.replaceAll('\n', ' ')) : '';
    if (message.role === 'assistant') {
      turn += 1;
      const step = view.stepIndex === null ? null : view.stepIndex - (assistantTurns - 1 - turn);
      const calls = (message.toolCalls ?? []).map(
        (call) => `${call.name}(${cut(typeof call.args === 'string' ? call.args : JSON.stringify(call.args ?? {}))}) [${call.id}]`,
      );
      const failed = turn === assistantTurns - 1 && view.stepIndex !== null ? '  ◀ the failed step' : '';
      const label = step !== null && step >= 0 ? `step ${step}` : 'earlier run';
      lines.push(`  [${index}] assistant, ${label}: ${content}${calls.length > 0 ? `${content ? ' ' : ''}→ ${calls.join(', ')}` : ''}${failed}`);
    } else if (message.role === 'tool') {
      lines.push(`  [${index}] tool ${message.name ?? '?'} [${message.toolCallId ?? '?'}]: ${content}`);
    } else lines.push(`  [${index}] ${String(message.role ?? '?')}: ${content}`);
  }
  return lines;
}

/** What `dlq redrive` did. */
interface RedriveOutcome {
  id: string;
  messageId: string;
  /** `enqueued`: put on the run queue now; `already_enqueued`: an earlier redrive of this entry did (the body given now is not used). */
  status: 'enqueued' | 'already_enqueued';
  /** Whether this command removed the entry from the message DLQ (`false`: it had left already). */
  removed: boolean;
  bodySource: 'the entry' | string;
}

/**
 * Puts a message-DLQ entry back on the run queue, with its raw body or a fixed one, and removes it
 * from the message DLQ — once, even with two operators at once: the entry is claimed first
 * (`dlq:message:<id>` in `stores.claims`), the message id is deterministic (a repeat of a redrive
 * that died before the removal enqueues nothing: the queue never takes an id twice), and the
 * removal is the store's atomic `remove`.
 */
async function redrive(stores: Stores, resolved: ResolvedStores, id: string, options: DlqOptions): Promise<RedriveOutcome> {
  const key = redriveClaimKey(id);
  const holder = `redrive:${process.pid}:${globalThis.crypto.randomUUID()}`;
  if (!(await stores.claims.acquire(key, holder, REDRIVE_CLAIM_MS))) {
    const current = await stores.claims.get(key).catch(() => undefined);
    throw new ToolrunError(
      'STORE_CONFLICT',
      `not redriven ${id}: another redrive holds it (${current?.holder ?? 'unknown holder'}); nothing was done, try again once it is done`,
    );
  }
  try {
    const record = await stores.messageDlq.get(id);
    if (record === undefined) {
      const inTool = await stores.toolDlq.get(id);
      throw usageError(
        inTool !== undefined
          ? `entry "${id}" is a tool-DLQ entry: tool-DLQ entries are resumed, not redriven (toolrun dlq replay ${id})`
          : `no entry "${id}" in the message DLQ (already redriven or purged? toolrun dlq list --dlq message)`,
        'NOT_FOUND',
      );
    }
    const entry = record.entry as Partial<MessageFailureEntry>;
    let body: string;
    let bodySource: string;
    if (options.bodyFile !== undefined) {
      try {
        body = readFileSync(options.bodyFile === '-' ? 0 : options.bodyFile, 'utf8');
      } catch (error) {
        const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : ((error as NodeJS.ErrnoException).code ?? String(error));
        throw usageError(`cannot read ${options.bodyFile}: ${reason}`, 'NOT_FOUND');
      }
      bodySource = options.bodyFile;
    } else {
      if (typeof entry.rawBody !== 'string')
        throw usageError(`entry "${id}" has no raw body to redrive: pass the fixed body with --body-file FILE`, 'BAD_INPUT');
      body = entry.rawBody;
      bodySource = 'the entry';
    }
    if (options.validate !== false) {
      const problem = checkRunRequestBody(body);
      if (problem !== undefined) {
        throw usageError(
          `the body from ${bodySource} is ${problem}; nothing was redriven (fix it and pass --body-file FILE; --no-validate redrives it anyway)`,
          'BAD_INPUT',
        );
      }
    }
    const messageId = redriveMessageId(id, entry.messageId);
    const known = resolved.findMessageIds ? await resolved.findMessageIds([messageId]) : new Set<string>();
    const status = known.has(messageId) ? 'already_enqueued' : 'enqueued';
    if (status === 'enqueued') await stores.queue.enqueue({ id: messageId, body });
    const removed = await stores.messageDlq.remove(id);
    return { id, messageId, status, removed, bodySource };
  } finally {
    await stores.claims.release(key, holder).catch(() => undefined);
  }
}

/**
 * `toolrun dlq list|show|replay|drain|purge|redrive`: inspect and work off the two dead-letter
 * queues, picked with `--dlq message|tool` (`--queue` is a run-queue URL on every command). The tool DLQ holds three kinds of resumable
 * entries — `tool` (a tool failed past in-band recovery), `model` (the model could not be reached),
 * `run` (a poison run: every delivery of its message failed) — and `list` shows the kind, the tool
 * or model, and the attempts or deliveries; `show ID` finds the entry in either DLQ and prints it
 * whole, what a replay will do, and with `--conversation` the redacted conversation behind it.
 * `replay` and `drain` build the config's tools first (an invalid tool: exit 2, nothing replayed)
 * and claim each run before resuming it: an entry whose run another drain, replay or worker holds is
 * `in_progress` — `replay` prints who holds it and exits 1 having done nothing; `drain` counts it
 * apart and leaves it to its holder. A replay that fails again at another step replaces the entry
 * with the new one (so `list` shows the new failing step). `redrive ID [--body-file F]` puts a
 * message-DLQ entry back on the run queue (fixed or as it was) and removes it, once.
 * Replays are observed like the worker's runs: failures, recoveries and breaker openings go to the
 * SQLite file's failure log (`toolrun report --db`), and `--log-level`/`--log-file` log each call.
 */
/** The command-line options every `dlq` subcommand but redrive takes: the store, and `--queue` (dead-letter queues in Redis). */
function addDlqStoreOptions(command: Command): Command {
  command.option('--queue <url>', 'run-queue URL (dlq redrive), or redis://host:6379[?prefix=toolrun:] for dead-letter queues kept in Redis (toolrun/redis)');
  addStoreOptions(command, { queueUrl: false });
  return command;
}

const DLQ_OPTION = ['--dlq <name>', 'which dead-letter queue: message or tool'] as const;

/** Adds `toolrun dlq` and its subcommands (list, show, replay, drain, redrive, purge) to `program`. */
export function addDlqCommand(program: Command): void {
  const dlq = program.command('dlq').description('inspect, replay, drain, redrive and purge the message and tool dead-letter queues');
  addListCommand(dlq);
  addShowCommand(dlq);
  addReplayCommand(dlq);
  addDrainCommand(dlq);
  addRedriveCommand(dlq);
  addPurgeCommand(dlq);
}

/** `toolrun dlq list`. */
function addListCommand(dlq: Command): void {
  const list = dlq
    .command('list')
    .description('list entries, oldest first (both queues unless --dlq)')
    .option(...DLQ_OPTION)
    .option('--limit <n>', 'entries per queue', integerOption(1), 50)
    .option('--offset <n>', 'skip the oldest N entries', integerOption(0), 0)
    .option('--after <id>', 'only entries after the entry with this id (the last id of the previous page; needs --dlq): a deep page costs what the first does')
    .option('--json', 'print the records as JSON');
  addDlqStoreOptions(list);
  list.action(listEntries);
}

/** Prints the entries of one or both DLQs. */
async function listEntries(options: DlqOptions): Promise<void> {
  const chosen = selectedDlq(options, 'list');
  if (options.after !== undefined && chosen === undefined) throw usageError('--after takes an id of one queue: add --dlq message or --dlq tool');
  const queues: QueueName[] = chosen === undefined ? ['message', 'tool'] : [chosen];
  await withStores(options, true, async (stores) => {
    const result: Partial<Record<QueueName, DeadLetterRecord<unknown>[]>> = {};
    for (const queue of queues) result[queue] = await printList(stores, queue, options);
    if (options.json) printJson(chosen === undefined ? result : result[queues[0]!]);
  });
}

/** `toolrun dlq show`. */
function addShowCommand(dlq: Command): void {
  const show = dlq
    .command('show')
    .description(
      "print one entry in full (JSON), from either DLQ; for a tool-DLQ entry also what a replay will do (and, with --conversation, the redacted conversation); a message-DLQ entry's raw body is not redacted",
    )
    .argument('<id>', 'entry id (from toolrun dlq list)')
    .option(...DLQ_OPTION)
    .option('--conversation', 'also print the redacted conversation behind a tool-DLQ entry, up to the failed step')
    .option('--json', 'print the record as one JSON line');
  addDlqStoreOptions(show);
  show.action(showEntry);
}

/** Prints one entry in full, and for a tool-DLQ entry what a replay will do. */
async function showEntry(id: string, options: DlqOptions): Promise<void> {
  const chosen = selectedDlq(options, 'show');
  await withStores(options, true, async (stores) => {
    const { queue, record } = await findEntry(stores, id, chosen);
    if (queue === 'tool') {
      const plan = replayPlanOf(record.entry);
      const conversation = options.conversation ? await readConversation(stores, record.entry) : undefined;
      if (options.json) {
        printJson({
          ...record,
          queue,
          kind: toolDeadLetterKind(record.entry),
          replay: plan,
          ...(conversation ? { conversation: { ref: conversation.conversationRef, messages: conversation.messages, redacted: true } } : {}),
        });
      } else {
        printLine(`tool-DLQ entry ${id} (kind ${toolDeadLetterKind(record.entry)}):`);
        printLine(JSON.stringify(record, null, 2));
        printLine(`replay: ${plan.text}`);
        if (conversation) for (const line of conversationLines(conversation)) printLine(line);
      }
    } else {
      if (options.conversation)
        throw usageError(`entry "${id}" is a message-DLQ entry: its run never started, so it has no conversation (drop --conversation)`);
      if (options.json) printJson({ ...record, queue, rawBodyRedacted: false, notice: RAW_BODY_NOTICE });
      else {
        printLine(`message-DLQ entry ${id} — note: ${RAW_BODY_NOTICE}`);
        printLine(JSON.stringify(record, null, 2));
      }
    }
  });
}

/** `toolrun dlq replay`. */
function addReplayCommand(dlq: Command): void {
  const replay = dlq
    .command('replay')
    .description(
      'resume the run of one tool-DLQ entry from its failed step; removed from the DLQ when the run completes, replaced by the new entry when it fails at another step; exit 1 when it did not complete, or when another drain, replay or worker holds the run (in_progress: nothing done)',
    )
    .argument('<id>', 'entry id (from toolrun dlq list --dlq tool)')
    .option(...DLQ_OPTION)
    .option('--config <file>', 'config module with the model and tools (default: $TOOLRUN_CONFIG or ./toolrun.config.{ts,mjs,js})')
    .option('--remove-expired', 'also remove the entry when its conversation has expired')
    .option('--json', 'print the replay result as JSON');
  addLogOptions(replay);
  addDlqStoreOptions(replay);
  replay.action(replayEntry);
}

/** Resumes the run of one tool-DLQ entry; exit code 1 when it did not complete. */
async function replayEntry(id: string, options: DlqOptions): Promise<void> {
  requireToolQueue(options, 'replay');
  const config = await loadReplayConfig(options);
  await withStores(options, true, async (stores, resolved) => {
    const record = await stores.toolDlq.get(id);
    if (record === undefined) {
      const inMessage = await stores.messageDlq.get(id);
      throw usageError(
        inMessage !== undefined
          ? `entry "${id}" is a message-DLQ entry: fix its body and redrive it (toolrun dlq redrive ${id} --body-file FILE)`
          : `no entry "${id}" in the tool DLQ (toolrun dlq list --dlq tool)`,
        'NOT_FOUND',
      );
    }
    const result = await withObservedReplays(config, options, resolved, (replay) =>
      replayDeadLetter(record, { ...replay, dlq: stores.toolDlq, removeExpired: options.removeExpired === true }),
    );
    const done = result.status === 'completed' || result.status === 'already_completed';
    const { removed, replacedBy } = result;
    if (options.json) printJson(result);
    else if (result.status === 'in_progress') {
      printLine(
        `not replayed ${id} (run ${result.runId ?? '?'}): in_progress — the run is claimed by ${result.holder ?? 'another consumer'} (another drain, replay or worker is running it); nothing was done, the entry stays in the tool DLQ: try again once it is done`,
      );
    } else {
      const place =
        replacedBy !== undefined
          ? `entry ${replacedBy} (step ${result.entry?.stepIndex ?? '?'}) replaces it in the tool DLQ`
          : `${removed ? 'removed from' : 'kept in'} the tool DLQ`;
      printLine(
        `replayed ${id} (run ${result.runId ?? '?'}): ${result.status}${whyFailed(result)}, ${result.modelCalls} model call${result.modelCalls === 1 ? '' : 's'}; ${place}`,
      );
    }
    if (!done) process.exitCode = EXIT_CODES.failure;
  });
}

/** `toolrun dlq drain`. */
function addDrainCommand(dlq: Command): void {
  const drain = dlq
    .command('drain')
    .description(
      'replay tool-DLQ entries (tool, model and run failures) with bounded concurrency and report counts per outcome; entries another drain, replay or worker holds are counted in_progress and left to it',
    )
    .option(...DLQ_OPTION)
    .option('--config <file>', 'config module with the model and tools (default: $TOOLRUN_CONFIG or ./toolrun.config.{ts,mjs,js})')
    .option('--limit <n>', 'drain at most N entries, oldest first', integerOption(1))
    .option('--concurrency <n>', 'replays at once', integerOption(1, MAX_CONCURRENCY), 4)
    .option('--remove-expired', 'also remove entries whose conversation has expired')
    .option('--json', 'print the drain report as JSON');
  addLogOptions(drain);
  addDlqStoreOptions(drain);
  drain.action(drainEntries);
}

/** Replays the tool-DLQ entries with bounded concurrency and prints the counts per outcome. */
async function drainEntries(options: DlqOptions): Promise<void> {
  requireToolQueue(options, 'drain');
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
    const report = await withObservedReplays(config, options, resolved, (replay) =>
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
      const hostLeft = report.entries.filter((item) => item.host !== undefined && item.status === 'invalid_entry');
      for (const entry of hostLeft.slice(0, 10)) printLine(`  ${entry.id}: ${entry.message ?? `an entry of a ${entry.host ?? '?'} run, left in the tool DLQ`}`);
    }
    if ((report.outcomes.error ?? 0) > 0) process.exitCode = EXIT_CODES.failure;
  });
}

/** `toolrun dlq redrive`. */
function addRedriveCommand(dlq: Command): void {
  const redriveCommand = dlq
    .command('redrive')
    .description(
      'put a message-DLQ entry back on the run queue — its raw body, or the fixed body of --body-file — and remove it from the message DLQ (once, even with two operators at once)',
    )
    .argument('<id>', 'message-DLQ entry id (from toolrun dlq list --dlq message)')
    .option('--body-file <file>', 'the fixed message body (- for stdin); default: the raw body as received')
    .option('--no-validate', 'redrive a body that is not a valid run request (it will come back to the message DLQ)')
    .option('--json', 'print the outcome as JSON');
  redriveCommand.option(...DLQ_OPTION);
  redriveCommand.option('--queue <url>', QUEUE_URL_HELP);
  addStoreOptions(redriveCommand, { queueUrl: false });
  redriveCommand.action(redriveEntry);
}

/** Puts a message-DLQ entry back on the run queue. */
async function redriveEntry(id: string, options: DlqOptions): Promise<void> {
  if (selectedDlq(options, 'redrive') === 'tool') throw usageError(`tool-DLQ entries are resumed, not redriven: toolrun dlq replay ${id}`);
  await withStores(options, true, async (stores, resolved) => {
    const outcome = await redrive(stores, resolved, id, options);
    if (options.json) printJson(outcome);
    else if (outcome.status === 'enqueued') {
      printLine(
        `redrove ${id}: enqueued as message ${outcome.messageId} (body from ${outcome.bodySource}); ${outcome.removed ? 'removed from the message DLQ' : 'it had already left the message DLQ'}`,
      );
    } else {
      printLine(
        `redrove ${id}: message ${outcome.messageId} was enqueued by an earlier redrive of this entry, nothing enqueued now (the body from ${outcome.bodySource} was not used); ${outcome.removed ? 'removed from the message DLQ' : 'it had already left the message DLQ'}`,
      );
    }
  });
}

/** `toolrun dlq purge`. */
function addPurgeCommand(dlq: Command): void {
  const purge = dlq
    .command('purge')
    .description('delete every entry of one dead-letter queue (asks for --yes unless it is empty)')
    .option(...DLQ_OPTION)
    .option('--yes', 'confirm the deletion')
    .option('--json', 'print the count as JSON');
  addDlqStoreOptions(purge);
  purge.action(purgeEntries);
}

/** Deletes every entry of one DLQ, after --yes. */
async function purgeEntries(options: DlqOptions): Promise<void> {
  const queue = requiredDlq(options, 'purge');
  await withStores(options, true, async (stores) => {
    const dlqStore = queue === 'tool' ? stores.toolDlq : stores.messageDlq;
    if (!options.yes) {
      const size = await dlqStore.size();
      if (size === 0) {
        if (options.json) printJson({ queue, purged: 0 });
        else printLine(`the ${queue} DLQ is empty: nothing to purge`);
        return;
      }
      throw usageError(`purge deletes all ${size} entr${size === 1 ? 'y' : 'ies'} of the ${queue} DLQ for good: pass --yes to confirm`);
    }
    const purged = await dlqStore.purge();
    if (options.json) printJson({ queue, purged });
    else printLine(`purged ${purged} entr${purged === 1 ? 'y' : 'ies'} from the ${queue} DLQ`);
  });
}
