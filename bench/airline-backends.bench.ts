/**
 * Issue 6's airline benchmark: the wall time of the airline workload's phase with faults (the main
 * job's step 4, docs/main-job.md) on the embedded SQLite worker against the BullMQ worker with every
 * store in PostgreSQL, measured in the same run on the same input: the first 40 conversations of
 * τ-bench (324 runs) plus the six malformed messages, seed 42, the demo's fault profile and
 * policies (`AIRLINE_DEMO_SETTINGS`), the recorded model, and the demo's 10 messages at a time.
 *
 * Both sides run the same `handleMessage` options (`workloadHandleOptions`) and keep each
 * conversation in order the same way (`nextRunMessage`: a conversation's next run is enqueued when
 * its run ended). Each side has its own airline service (fresh databases, the same faults: they
 * are drawn per run, tool, call and attempt) and a fresh store:
 * - SQLite: `runConversations` (`createWorker` polling `createSqliteStores` in a temporary folder);
 * - BullMQ + PostgreSQL: `createBullMqWorker` on a queue of its own name, the stores from
 *   `createPostgresStores` in a schema of its own, requests recorded in the PostgreSQL outbox
 *   (`enqueueRun(…, { outbox })`, acknowledged by the worker) as docs/distributed-notes.md deploys
 *   it. The queue is obliterated and the schema dropped at the end.
 * No toolrun/otel observers on either side (the failure log is SQLite-only); no drain, no report.
 * The timed span is from creating the worker to the worker stopped after the last message; the
 * sides alternate over 3 rounds and each row is the median.
 * Needs the τ-bench data, Redis and PostgreSQL (test/fixtures/distributed-services.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import type { Stores } from '../src/ground/ports/stores.ts';
import { createBullMqWorker, enqueueRun } from '../src/queues/bullmq/index.ts';
import { createPostgresStores } from '../src/stores/postgres/index.ts';
import { createSqliteStores } from '../src/stores/sqlite/index.ts';
import { loadInitialAirlineTables } from '../examples/airline/database.ts';
import { startAirlineService, type AirlineService } from '../examples/airline/http-service.ts';
import { loadAirlineRuns, loadAirlineTrajectories, type AirlineRun } from '../examples/airline/trajectories.ts';
import { createAirlineWorkerConfig, type AirlineWorkerConfig } from '../examples/airline/workload/airline-worker-config.ts';
import { createConversationScheduler } from '../examples/airline/workload/conversation-scheduler.ts';
import { AIRLINE_DEMO_SETTINGS, type AirlineDemoSettings } from '../examples/airline/workload/demo-settings.ts';
import { MALFORMED_QUEUE_MESSAGES, runQueueMessage, type WorkloadQueueMessage } from '../examples/airline/workload/queue-messages.ts';
import { nextRunMessage, runConversations, workloadHandleOptions } from '../examples/airline/workload/run-conversations.ts';
import { createWorkloadObserver, type WorkloadObserver } from '../examples/airline/workload/workload-observer.ts';
import { hasSharedData } from '../examples/shared-data.ts';
import { createTestPool, dropSchema, REDIS_URL, uniqueName } from '../test/fixtures/distributed-services.ts';
import type { BenchRow } from './measure.ts';

/** Where the messages of one side went, from the worker's results and the stores at the end. */
interface BackendOutcome {
  wallTimeMs: number;
  /** Handled messages by result status (`completed`, `tool_failed`, `rejected`, …). */
  byStatus: Record<string, number>;
  toolDlq: number;
  messageDlq: number;
  /** Writes the airline service applied (each once per idempotency key). */
  writesApplied: number;
  storeErrors: string[];
}

/** What both sides start from: a fresh service, the worker config on it, the scheduler and the first messages. */
interface SideSetup {
  service: AirlineService;
  config: AirlineWorkerConfig;
  scheduler: ReturnType<typeof createConversationScheduler>;
  observer: WorkloadObserver;
  initialMessages: WorkloadQueueMessage[];
}

async function setUpSide(runs: readonly AirlineRun[], settings: AirlineDemoSettings): Promise<SideSetup> {
  const service = await startAirlineService({ faultProfile: settings.faultProfile, seed: settings.seed });
  // Only the service URL: the recorded model whatever TOOLRUN_OPENAI_MODEL says, the settings' breaker cool-down.
  const config = createAirlineWorkerConfig({ env: { TOOLRUN_AIRLINE_URL: service.url }, settings, runs });
  const scheduler = createConversationScheduler(runs);
  const initialMessages = [...MALFORMED_QUEUE_MESSAGES, ...scheduler.start().map(runQueueMessage)];
  return { service, config, scheduler, observer: createWorkloadObserver(), initialMessages };
}

async function outcomeOf(setup: SideSetup, stores: Stores, wallTimeMs: number, storeErrors: string[]): Promise<BackendOutcome> {
  return {
    wallTimeMs,
    byStatus: setup.observer.counts().byStatus,
    toolDlq: await stores.toolDlq.size(),
    messageDlq: await stores.messageDlq.size(),
    writesApplied: setup.service.mutations().length,
    storeErrors,
  };
}

/** The phase with faults on the SQLite worker, as the main job runs it. */
async function runOnSqlite(runs: readonly AirlineRun[], settings: AirlineDemoSettings): Promise<BackendOutcome> {
  const directory = mkdtempSync(join(tmpdir(), 'toolrun-airline-bench-'));
  let setup: SideSetup | undefined;
  let stores: ReturnType<typeof createSqliteStores> | undefined;
  try {
    setup = await setUpSide(runs, settings);
    stores = createSqliteStores({ path: join(directory, 'airline-bench.db') });
    const startedAt = process.hrtime.bigint();
    const { storeErrors } = await runConversations({
      stores,
      config: setup.config,
      scheduler: setup.scheduler,
      initialMessages: setup.initialMessages,
      observer: setup.observer,
      concurrency: settings.conversationConcurrency,
    });
    const wallTimeMs = Number(process.hrtime.bigint() - startedAt) / 1e6;
    return await outcomeOf(setup, stores, wallTimeMs, storeErrors);
  } finally {
    await setup?.service.close();
    await stores?.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

/** The same phase on `createBullMqWorker` with every store in a fresh PostgreSQL schema. */
async function runOnBullMqPostgres(runs: readonly AirlineRun[], settings: AirlineDemoSettings): Promise<BackendOutcome> {
  const pool = createTestPool({ max: 10 });
  const schema = uniqueName('toolrun_airline_bench_');
  const queueName = uniqueName('toolrun-airline-bench-');
  const connection = { url: REDIS_URL };
  const queue = new Queue(queueName, { connection });
  let setup: SideSetup | undefined;
  let stores: Awaited<ReturnType<typeof createPostgresStores>> | undefined;
  try {
    setup = await setUpSide(runs, settings);
    const side = setup;
    const postgres = (stores = await createPostgresStores({ pool, schema }));
    await queue.waitUntilReady();
    const storeErrors: string[] = [];
    let pending = 0;
    let settle!: (error?: unknown) => void;
    const settled = new Promise<void>((resolve, reject) => {
      settle = (error) => (error === undefined ? resolve() : reject(error instanceof Error ? error : new Error(String(error))));
    });
    const enqueue = (message: WorkloadQueueMessage) => {
      pending += 1;
      enqueueRun(queue, message.body, message.id, { outbox: postgres.queue }).catch((error: unknown) => settle(error));
    };

    const startedAt = process.hrtime.bigint();
    const worker = createBullMqWorker({
      connection,
      queueName,
      stores: postgres,
      outbox: postgres.queue,
      concurrency: settings.conversationConcurrency,
      ...workloadHandleOptions({ config: side.config, observer: side.observer }),
      onError: (error) => storeErrors.push(error instanceof Error ? error.message : String(error)),
      onResult: (result) => {
        side.observer.messageHandled(result, Date.now());
        const next = nextRunMessage(side.scheduler, result);
        if (next !== undefined) enqueue(next);
        pending -= 1;
        if (pending === 0) settle();
      },
    });
    try {
      for (const message of side.initialMessages) enqueue(message);
      await settled;
    } finally {
      await worker.close();
    }
    const wallTimeMs = Number(process.hrtime.bigint() - startedAt) / 1e6;
    return await outcomeOf(side, postgres, wallTimeMs, storeErrors);
  } finally {
    await setup?.service.close();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await stores?.close();
    await dropSchema(pool, schema);
    await pool.end();
  }
}

/** `completed 288 · tool DLQ 8 · message DLQ 6`, from the results and the stores (`other` when any other status occurred). */
function describeOutcome(outcome: BackendOutcome): string {
  const { completed = 0, tool_failed: toolFailed = 0, rejected = 0, ...others } = outcome.byStatus;
  const otherCount = Object.values(others).reduce((sum, count) => sum + count, 0);
  const stores =
    toolFailed === outcome.toolDlq && rejected === outcome.messageDlq ? '' : ` (stores: tool DLQ ${outcome.toolDlq}, message DLQ ${outcome.messageDlq})`;
  return `completed ${completed} · tool DLQ ${toolFailed} · message DLQ ${rejected}${otherCount > 0 ? ` · other ${JSON.stringify(others)}` : ''}${stores} · writes ${outcome.writesApplied}${outcome.storeErrors.length > 0 ? ` · store errors ${outcome.storeErrors.length}` : ''}`;
}

function sameOutcome(first: BackendOutcome, second: BackendOutcome): boolean {
  const statuses = new Set([...Object.keys(first.byStatus), ...Object.keys(second.byStatus)]);
  return (
    [...statuses].every((status) => first.byStatus[status] === second.byStatus[status]) &&
    first.toolDlq === second.toolDlq &&
    first.messageDlq === second.messageDlq &&
    first.writesApplied === second.writesApplied
  );
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * Runs the airline benchmark and returns two rows: SQLite (the baseline) and BullMQ + PostgreSQL,
 * `medianNs` the median wall time of the phase over `rounds` (in ns; the two sides alternate, so
 * that load from elsewhere hits both alike), `note` that time in ms and the messages per outcome;
 * `ratio` = BullMQ + PostgreSQL's median / SQLite's. Prints one line per side and round with the
 * counts per outcome, and whether every round of both sides agrees.
 * Returns one row saying so when the τ-bench data is missing.
 *
 * @param options.conversations the first N conversations of the recording. @defaultValue 40
 * @param options.rounds runs of each side. @defaultValue 3
 * @throws when Redis or PostgreSQL cannot be reached, or a store fails while enqueuing.
 */
export async function runAirlineBackendsBench(options: { conversations?: number; rounds?: number } = {}): Promise<BenchRow[]> {
  const conversations = options.conversations ?? 40;
  const rounds = options.rounds ?? 3;
  if (!hasSharedData('tau-bench', 'gpt-4o-airline.trajectories.json') || !hasSharedData('tau-bench', 'airline-db', 'users.json')) {
    return [{ name: 'airline workload: skipped, the τ-bench data is missing (see docs/main-job.md#data)', medianNs: 0 }];
  }
  const settings = AIRLINE_DEMO_SETTINGS;
  const runs = loadAirlineRuns(loadAirlineTrajectories().slice(0, conversations));
  // Load the airline database now, not on a timed side's first tool call.
  loadInitialAirlineTables('shipped');
  console.log(
    `airline workload, ${conversations} conversations (${runs.length} runs + ${MALFORMED_QUEUE_MESSAGES.length} malformed), seed ${settings.seed}, ${settings.conversationConcurrency} at a time, ${rounds} rounds:`,
  );
  const sqlite: BackendOutcome[] = [];
  const distributed: BackendOutcome[] = [];
  for (let round = 0; round < rounds; round++) {
    const sides = [
      { label: 'SQLite             ', outcomes: sqlite, run: runOnSqlite },
      { label: 'BullMQ + PostgreSQL', outcomes: distributed, run: runOnBullMqPostgres },
    ];
    for (const side of round % 2 === 0 ? sides : sides.reverse()) {
      const outcome = await side.run(runs, settings);
      side.outcomes.push(outcome);
      console.log(`  round ${round + 1} ${side.label} ${(outcome.wallTimeMs / 1000).toFixed(2)} s: ${describeOutcome(outcome)}`);
    }
  }
  const reference = sqlite[0]!;
  const agree = [...sqlite, ...distributed].every((outcome) => sameOutcome(reference, outcome));
  console.log(`  counts per outcome (and writes applied) ${agree ? 'agree in every round of both backends' : 'DIFFER'}`);
  const sqliteMs = median(sqlite.map((outcome) => outcome.wallTimeMs));
  const distributedMs = median(distributed.map((outcome) => outcome.wallTimeMs));
  const scope = `${conversations} conversations, seed ${settings.seed}, ${settings.conversationConcurrency} at a time, median of ${rounds}`;
  const counts = (outcome: BackendOutcome) => `completed ${outcome.byStatus.completed ?? 0} / tool DLQ ${outcome.toolDlq} / message DLQ ${outcome.messageDlq}`;
  return [
    { name: `SQLite worker, phase with faults, ${scope}`, medianNs: sqliteMs * 1e6, note: `${sqliteMs.toFixed(0)} ms; ${counts(reference)}` },
    {
      name: 'BullMQ worker + PostgreSQL stores and outbox, same runs',
      medianNs: distributedMs * 1e6,
      baseline: 'SQLite',
      ratio: distributedMs / sqliteMs,
      note: `${distributedMs.toFixed(0)} ms; ${counts(distributed[0]!)}; counts ${agree ? 'agree' : 'DIFFER'}`,
    },
  ];
}
