/**
 * The main job, end to end, on the τ-bench airline workload:
 * 1. start the airline HTTP service with a fault profile and a fixed seed;
 * 2. open a fresh SQLite store and enqueue the first run of every conversation and a few malformed messages;
 * 3. run the worker: each conversation's next run is enqueued when its run answered; a run that
 *    ends in the tool DLQ parks its conversation (the customer is still waiting for that answer);
 * 4. clear the faults and drain the tool DLQ as a user does (`toolrun dlq drain`, own process);
 * 5. let the parked conversations go on, with the faults still cleared;
 * 6. check against the service that no write was applied twice;
 * 7. run `toolrun report` on the SQLite file (own process): what failed most, and how.
 * The worker and the drain record every failed call, recovery and breaker opening in the file's
 * failure log (toolrun/otel), which the report reads. The service and the store are always closed,
 * also on error.
 */
import { rmSync } from 'node:fs';
import { destination, pino } from 'pino';
import { createRedactor } from '../../../src/core/redact.ts';
import { createObservability } from '../../../src/observability/index.ts';
import type { DeadLetterRecord } from '../../../src/ground/ports/stores.ts';
import type { SharedBreakerRecord } from '../../../src/policies/shared-breaker.ts';
import { createSqliteFailureLog, createSqliteStores } from '../../../src/stores/sqlite/index.ts';
import type { MessageFailureEntry, ToolFailureEntry } from '../../../src/ground/dead-letter-entries.ts';
import { loadInitialAirlineTables } from '../database.ts';
import { startAirlineService } from '../http-service.ts';
import { AIRLINE_TOOL_NAMES } from '../operations.ts';
import type { AirlineRun } from '../trajectories.ts';
import { breakerCoolDownMs, createAirlineWorkerConfig } from './airline-worker-config.ts';
import { createConversationScheduler } from './conversation-scheduler.ts';
import type { AirlineDemoSettings } from './demo-settings.ts';
import { drainToolDlqLikeAUser, toolDlqDrainArguments, type DrainToolDlqOptions, type ToolDlqDrainOutcome } from './drain-tool-dlq.ts';
import { runFailureReportLikeAUser, type FailureReportOptions, type FailureReportOutcome } from './failure-report.ts';
import { createProgressReporter } from './progress.ts';
import { runQueueMessage, type MalformedQueueMessage, type WorkloadQueueMessage } from './queue-messages.ts';
import { describeToolFailureCause, inspectResumedRuns, type ResumedRun } from './resumed-runs.ts';
import { observeReservations, runConversations } from './run-conversations.ts';
import { checkSideEffects, type SideEffectReport } from './side-effect-check.ts';
import { createWorkloadObserver, type WorkloadCounts } from './workload-observer.ts';

/** Options of {@link runAirlineWorkload}. */
export interface AirlineWorkloadOptions {
  /** The runs to work on (every run of the chosen conversations, in conversation order). */
  runs: readonly AirlineRun[];
  settings: AirlineDemoSettings;
  projectRoot: string;
  /** The SQLite file; it and its `-wal`/`-shm` files are deleted first. */
  dbPath: string;
  /** The config module the drain reads. */
  configPath: string;
  /** Environment of the worker's config and of the drain process (the service URL is added). */
  env: Record<string, string | undefined>;
  /** Extra variables for the drain process only (e.g. another breaker cool-down). */
  drainEnv?: Record<string, string | undefined>;
  /** Extra variables for the in-process worker's config only. */
  workerEnv?: Record<string, string | undefined>;
  malformedMessages: readonly MalformedQueueMessage[];
  /** @defaultValue {@link drainToolDlqLikeAUser} */
  drain?: (options: DrainToolDlqOptions) => Promise<ToolDlqDrainOutcome>;
  /** The failure report at the end. @defaultValue `toolrun report --db <file> --top 3` ({@link runFailureReportLikeAUser}) */
  failureReport?: (options: FailureReportOptions) => Promise<FailureReportOutcome>;
  /**
   * A pino log of the in-process worker's tool calls (toolrun/otel's logger, level `info`: failed
   * calls, recoveries, breaker openings, dead-letter entries), replaced at the start. @defaultValue no log
   */
  logFile?: string;
  /** Progress and narration lines. */
  log: (line: string) => void;
  /** No progress bar or lines (tests). @defaultValue false */
  quiet?: boolean;
}

/** A worker phase: its counts, store errors, and how long it took. */
export interface WorkloadPhase {
  counts: WorkloadCounts;
  storeErrors: string[];
  durationMs: number;
}

/** Everything the summary shows, and the tests assert. */
export interface AirlineWorkloadReport {
  serviceUrl: string;
  modelKind: 'recorded' | 'openai';
  modelDescription: string;
  conversations: number;
  runs: number;
  /** Phase 1: the worker with the faults on. */
  faultPhase: WorkloadPhase;
  /** Run ids the model was called for that are no run of the workload (a malformed message that reached the model): must be empty. */
  modelCallsOutsideRuns: string[];
  messageDlq: Array<DeadLetterRecord<MessageFailureEntry>>;
  /** The tool DLQ after phase 1. */
  toolDlqBeforeDrain: Array<DeadLetterRecord<ToolFailureEntry>>;
  /** Shared breakers with a record, after phase 1 and after the drain. */
  breakersBeforeDrain: Record<string, SharedBreakerRecord>;
  breakersAfterDrain: Record<string, SharedBreakerRecord>;
  /** Time waited for the breaker's cool-down before the drain, in ms. */
  coolDownWaitMs: number;
  drain: ToolDlqDrainOutcome;
  resumed: ResumedRun[];
  toolDlqAfterDrain: number;
  /** Phase 3: the parked conversations going on after the drain. */
  resumePhase: WorkloadPhase & { conversationsResumed: number };
  /** Runs whose checkpoint is `completed` at the end, of `runs`. */
  runsCompleted: number;
  /** Every run by its final checkpoint status; `not started` for runs waiting behind a parked run. */
  runsByFinalStatus: Record<string, number>;
  conversationsFinished: number;
  conversationsParked: number;
  /** Messages still in the queue at the end (must be 0: nothing lost). */
  queueLeft: number;
  messageDlqAtEnd: number;
  toolDlqAtEnd: number;
  /** The tool-DLQ entries left at the end (runs that failed again after the drain). */
  toolDlqLeft: Array<DeadLetterRecord<ToolFailureEntry>>;
  sideEffects: SideEffectReport;
  /**
   * Rows the failure log gained in each phase (the worker's and the drain's failed calls,
   * recoveries and breaker openings), in order: row ids `1…faultPhase` are the first phase's, and so on.
   */
  failureLogRows: { faultPhase: number; drain: number; resumePhase: number };
  /** Failure records the worker could not append (must be 0). */
  failureLogAppendErrors: number;
  /** `toolrun report` on the file, at the end. */
  failureReport: FailureReportOutcome;
  durationMs: number;
}

/** `reason · kind status` → count, for the tool DLQ. */
export function countToolDlqByCause(records: ReadonlyArray<DeadLetterRecord<ToolFailureEntry>>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const record of records) {
    const cause = describeToolFailureCause(record.entry);
    counts[cause] = (counts[cause] ?? 0) + 1;
  }
  return counts;
}

/** `code · first field problem` → count, for the message DLQ. */
export function countMessageDlqByCause(records: ReadonlyArray<DeadLetterRecord<MessageFailureEntry>>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const record of records) {
    const field = record.entry.reason.fields?.[0];
    const cause = field === undefined ? record.entry.reason.code : `${record.entry.reason.code} · ${field.path || '/'} ${field.problem}`;
    counts[cause] = (counts[cause] ?? 0) + 1;
  }
  return counts;
}

async function readBreakers(read: (key: string) => Promise<unknown>): Promise<Record<string, SharedBreakerRecord>> {
  const breakers: Record<string, SharedBreakerRecord> = {};
  for (const toolName of AIRLINE_TOOL_NAMES) {
    const record = (await read(toolName)) as SharedBreakerRecord | undefined;
    if (record !== undefined) breakers[toolName] = record;
  }
  return breakers;
}

function removeDatabaseFiles(dbPath: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${dbPath}${suffix}`, { force: true });
}

/**
 * Runs the whole workload and returns its report. Progress goes to `log` (and a bar on a terminal).
 *
 * @throws when the service cannot start, the store cannot be opened, or a store fails while
 *   enqueuing; the service and the store are closed before the error propagates.
 */
export async function runAirlineWorkload(options: AirlineWorkloadOptions): Promise<AirlineWorkloadReport> {
  const startedAt = Date.now();
  const report = await runWorkerAndDrain(options);
  const failureReport = await (options.failureReport ?? runFailureReportLikeAUser)({
    projectRoot: options.projectRoot,
    dbPath: options.dbPath,
    env: options.env,
    top: 3,
  });
  return { ...report, failureReport, durationMs: Date.now() - startedAt };
}

async function runWorkerAndDrain(options: AirlineWorkloadOptions): Promise<Omit<AirlineWorkloadReport, 'failureReport'>> {
  const startedAt = Date.now();
  const { runs, settings, log } = options;
  removeDatabaseFiles(options.dbPath);
  if (options.logFile !== undefined) rmSync(options.logFile, { force: true });
  // Load the airline database now: loading it on the first tool call would make that call time out.
  const initialReservations = loadInitialAirlineTables('shipped').reservations;
  const stores = createSqliteStores({ path: options.dbPath });
  let service: Awaited<ReturnType<typeof startAirlineService>> | undefined;
  try {
    // toolrun/otel, as `toolrun worker` wires it: failures into the file's failure log (read by
    // `toolrun report --db`), a log file or no log, no console output, no tracer or meter.
    const failureLog = createSqliteFailureLog(stores.database);
    const redactor = createRedactor();
    let failureLogAppendErrors = 0;
    const observability = createObservability({
      logger: options.logFile !== undefined ? pino({ name: 'toolrun', level: 'info' }, destination({ dest: options.logFile, sync: true, mkdir: true })) : false,
      tracer: false,
      meter: false,
      redactor,
      failureLog,
      onFailureLogError: () => (failureLogAppendErrors += 1),
    });
    const workerObservability = { ...observability, redactor };
    const failureLogSize = async () => {
      await observability.flush();
      return failureLog.size();
    };
    service = await startAirlineService({ faultProfile: settings.faultProfile, seed: settings.seed });
    const env = { ...options.env, TOOLRUN_AIRLINE_URL: service.url };
    const config = createAirlineWorkerConfig({ env: { ...env, ...options.workerEnv }, settings, runs });
    log(`model     ${config.modelDescription}`);
    log(`service   ${service.url} (airline tools over HTTP, faults on)`);
    const scheduler = createConversationScheduler(runs);
    let observer = createWorkloadObserver();
    const observedStores = observeReservations(stores, (messageId, atMs) => observer.messageReserved(messageId, atMs));
    const runsAfter = countRunsAfter(runs);
    const runsById = new Map(runs.map((run) => [run.runId, run]));
    const conversations = new Set(runs.map((run) => run.trajectoryKey)).size;

    // Phase 1: the worker with the faults on.
    const initialMessages: WorkloadQueueMessage[] = [...options.malformedMessages, ...scheduler.start().map(runQueueMessage)];
    const faultPhase = await runPhase('with faults', initialMessages, runs.length + options.malformedMessages.length);
    const failureLogAfterFaultPhase = await failureLogSize();

    const messageDlq = (await stores.messageDlq.list()) as Array<DeadLetterRecord<MessageFailureEntry>>;
    const toolDlqBeforeDrain = (await stores.toolDlq.list()) as Array<DeadLetterRecord<ToolFailureEntry>>;
    const breakersBeforeDrain = await readBreakers((key) => stores.breakers.get(key));

    // Phase 2: the faults are fixed; drain the tool DLQ as a user would.
    service.setFaultProfile({});
    const drainEnv = { ...env, ...options.drainEnv };
    const coolDownMs = breakerCoolDownMs(drainEnv, settings);
    const probeAt = Math.max(
      0,
      ...Object.values(breakersBeforeDrain)
        .filter((record) => record.state !== 'closed')
        .map((record) => (record.openedAt ?? 0) + coolDownMs),
    );
    const coolDownWaitMs = Math.max(0, probeAt - Date.now());
    if (coolDownWaitMs > 0) {
      log(`faults cleared; waiting ${(coolDownWaitMs / 1000).toFixed(1)} s for the shared breaker's cool-down, so that the drain's first call is its probe`);
      await new Promise((resolve) => setTimeout(resolve, coolDownWaitMs));
    }
    const drainOptions: DrainToolDlqOptions = { projectRoot: options.projectRoot, dbPath: options.dbPath, configPath: options.configPath, env: drainEnv };
    log(`${toolDlqBeforeDrain.length} tool-DLQ entries; draining them as a user does:`);
    log(`$ toolrun ${toolDlqDrainArguments(drainOptions).join(' ')}`);
    const drain = await (options.drain ?? drainToolDlqLikeAUser)(drainOptions);
    const failureLogAfterDrain = await failureLogSize();
    const breakersAfterDrain = await readBreakers((key) => stores.breakers.get(key));
    const resumed = await inspectResumedRuns(stores, toolDlqBeforeDrain, runsById);
    const toolDlqAfterDrain = await stores.toolDlq.size();

    // Phase 3: the conversations parked behind a drained run go on.
    const released: WorkloadQueueMessage[] = [];
    let conversationsResumed = 0;
    let runsToCome = 0;
    for (const runId of scheduler.parkedRuns()) {
      if ((await stores.runs.get(runId))?.status !== 'completed') continue;
      conversationsResumed += 1;
      runsToCome += runsAfter.get(runId) ?? 0;
      const step = scheduler.resume(runId);
      if (step.state === 'next') released.push(runQueueMessage(step.run));
    }
    const resumePhase = { ...(await runPhase('after the drain', released, runsToCome)), conversationsResumed };
    const failureLogAtEnd = await failureLogSize();

    const runsByFinalStatus: Record<string, number> = {};
    for (const run of runs) {
      const status = (await stores.runs.get(run.runId))?.status ?? 'not started';
      runsByFinalStatus[status] = (runsByFinalStatus[status] ?? 0) + 1;
    }
    const progress = scheduler.progress();
    return {
      serviceUrl: service.url,
      modelKind: config.modelKind,
      modelDescription: config.modelDescription,
      conversations,
      runs: runs.length,
      faultPhase,
      modelCallsOutsideRuns: [...faultPhase.counts.modelCallRunIds, ...resumePhase.counts.modelCallRunIds].filter((runId) => !runsById.has(runId)),
      messageDlq,
      toolDlqBeforeDrain,
      breakersBeforeDrain,
      breakersAfterDrain,
      coolDownWaitMs,
      drain,
      resumed,
      toolDlqAfterDrain,
      resumePhase,
      runsCompleted: runsByFinalStatus.completed ?? 0,
      runsByFinalStatus,
      conversationsFinished: progress.filter((conversation) => conversation.state === 'finished').length,
      conversationsParked: progress.filter((conversation) => conversation.state === 'parked').length,
      queueLeft: await stores.queue.size(),
      messageDlqAtEnd: await stores.messageDlq.size(),
      toolDlqAtEnd: await stores.toolDlq.size(),
      toolDlqLeft: (await stores.toolDlq.list()) as Array<DeadLetterRecord<ToolFailureEntry>>,
      sideEffects: checkSideEffects(service, runs, (id) => Object.hasOwn(initialReservations, id), config.modelKind === 'recorded'),
      failureLogRows: {
        faultPhase: failureLogAfterFaultPhase,
        drain: failureLogAfterDrain - failureLogAfterFaultPhase,
        resumePhase: failureLogAtEnd - failureLogAfterDrain,
      },
      failureLogAppendErrors,
      durationMs: Date.now() - startedAt,
    };

    async function runPhase(label: string, messages: readonly WorkloadQueueMessage[], expected: number): Promise<WorkloadPhase> {
      const phaseStartedAt = Date.now();
      observer = createWorkloadObserver();
      const reporter = createProgressReporter({ label, log, silent: options.quiet ?? false });
      let total = Math.max(expected, messages.length);
      const tally = { completed: 0, toolDlq: 0, messageDlq: 0 };
      let done = 0;
      const outcome = await runConversations({
        stores: observedStores,
        config,
        scheduler,
        initialMessages: messages,
        observer,
        observability: workerObservability,
        concurrency: settings.conversationConcurrency,
        onHandled: (result) => {
          done += 1;
          if (result.status === 'completed') tally.completed += 1;
          else if (result.status === 'tool_failed') {
            tally.toolDlq += 1;
            // The parked conversation's later runs do not come in this phase.
            total -= runsAfter.get(result.runId) ?? 0;
          } else if (result.status === 'rejected') tally.messageDlq += 1;
          reporter.update(done, Math.max(done, total), tally);
        },
      });
      reporter.stop();
      return { counts: observer.counts(), storeErrors: outcome.storeErrors, durationMs: Date.now() - phaseStartedAt };
    }
  } finally {
    await service?.close();
    await stores.close();
  }
}

/** For each run, how many runs of its conversation come after it. */
function countRunsAfter(runs: readonly AirlineRun[]): Map<string, number> {
  const runsAfter = new Map<string, number>();
  const seen = new Map<string, number>();
  for (const run of [...runs].reverse()) {
    const after = seen.get(run.trajectoryKey) ?? 0;
    runsAfter.set(run.runId, after);
    seen.set(run.trajectoryKey, after + 1);
  }
  return runsAfter;
}
