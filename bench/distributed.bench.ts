/**
 * Issue 6's benchmark: throughput of toolrun's BullMQ worker (every store in PostgreSQL, the
 * trivial agent: one tool call, then an answer) with 1 and 4 worker processes, against a bare
 * BullMQ worker doing the same work in the same run: the same model and tool calls and the same
 * number of PostgreSQL reads and writes of the same sizes per run (counted on toolrun's stores
 * first), by hand. Needs Redis and PostgreSQL (see test/fixtures/distributed-services.ts).
 *
 * Issue 13: toolrun commits each step in one statement (`RunJournal.commit`: the new messages, the
 * checkpoint, the ledger rows). The first bare worker writes what the ports describe one by one
 * (as before, and as the SQLite worker benchmark's bare loop does); the second sends as many
 * statements as toolrun does, step commits and the run's claim included (taken with the
 * checkpoint's read in one statement; released by the run's last step commit), each of the step's
 * size (the stricter floor). Each bare statement commits synchronously.
 * `TOOLRUN_BENCH_ROUNDS` sets the rounds (default 3).
 *
 * Each round first runs `TOOLRUN_BENCH_WARMUP` trivial jobs per worker process (default 750), not
 * measured: the rows compare workers in their steady state, as a long-lived worker runs. Without it
 * a round of 1,000 jobs on 4 fresh processes (250 each) mostly measures the processes' warm-up
 * (JIT compilation, first connections and prepared statements), which costs the first 250 runs of a
 * process about twice the CPU per run of the next ones (toolrun's worker: 9.8 against 4.7 ms per
 * run; the bare one: 5.9 against 3.0), so the 4-process rows paid four warm-ups per 1,000 runs where
 * the 1-process rows paid one. 200 warm-up runs were not enough either: measured in successive
 * windows of 1,000 jobs on 4 processes after 200 each, toolrun's worker spent 2.53, 1.82, 1.61,
 * 1.85 and 1.43 ms of CPU per run, the bare one 1.92, 1.58, 1.60, 1.60 and 1.39 — toolrun has more
 * code to compile, and reaches its steady state (at the bare worker's cost) after about 700 runs
 * per process.
 *
 * Besides runs/s (wall time, the worker processes sharing the machine with everything else), each
 * row gives CPU time per run: the worker processes' own (from the end of the warm-up to the end)
 * and, when this process can read `/proc` of the server's processes (a local server), that of
 * their PostgreSQL backends (found by the connections' `application_name`).
 */
import { readFileSync } from 'node:fs';
import { Queue } from 'bullmq';
import { createStoreJournal, handleMessage, type Stores } from '../src/index.ts';
import { createPostgresStores } from '../src/stores/postgres/index.ts';
import { createDistributedTools, distributedModel } from '../test/fixtures/distributed-agent.ts';
import type { DistributedBenchWorkerConfig } from '../test/fixtures/distributed-bench-worker.ts';
import { spawnFixture } from '../test/fixtures/distributed-processes.ts';
import { createTestPool, dropSchema, POSTGRES_URL, REDIS_URL, uniqueName } from '../test/fixtures/distributed-services.ts';
import type { BenchRow } from './measure.ts';

const TRIVIAL_BODY = JSON.stringify({ input: 'trivial' });
const CONCURRENCY = 4;

/**
 * Store calls of one trivial run through `handleMessage`. `steps`: `'port-by-port'` counts, on a
 * proxy of the PostgreSQL stores (the claim store's included), the calls the ports describe one by
 * one (a whole conversation per `put`, a checkpoint per `runs.put`, a ledger row per
 * `putIfAbsent`, a breaker read per check: the run goes through a journal composed from the stores);
 * `'committed'` counts the statements toolrun sends on `pool` (a step commit or run claim is a
 * write; a breaker check the breaker store answers without a read sends nothing).
 */
async function storeCallsPerRun(
  stores: Stores,
  pool: ReturnType<typeof createTestPool>,
  runs: number,
  steps: 'port-by-port' | 'committed',
): Promise<{ reads: number; writes: number; bytesPerWrite: number }> {
  let reads = 0;
  let writes = 0;
  let bytes = 0;
  const count = <T extends object>(target: T, reading: readonly string[], writing: readonly string[]): T =>
    new Proxy(target, {
      get(object, key, receiver) {
        const value = Reflect.get(object, key, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (reading.includes(String(key))) reads += 1;
          if (writing.includes(String(key))) {
            writes += 1;
            bytes += JSON.stringify(args)?.length ?? 0;
          }
          return (value as (...values: unknown[]) => unknown).apply(object, args);
        };
      },
    });
  const parts = {
    ...stores,
    conversations: count(stores.conversations, ['get'], ['put', 'delete']),
    runs: count(stores.runs, ['get'], ['put']),
    ledger: count(stores.ledger, ['get'], ['putIfAbsent', 'delete']),
    breakers: count(stores.breakers, ['get'], ['update']),
    claims: count(stores.claims, ['get'], ['acquire', 'renew', 'release']),
  };
  // port by port: a claim, then a read; a step's writes one by one
  const counted: Stores = steps === 'committed' ? stores : { ...parts, journal: createStoreJournal(parts) };
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  if (steps === 'committed') {
    (pool as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
      const { text, values } = typeof config === 'string' ? { text: config, values: rest[0] } : (config as { text: string; values?: unknown });
      if (/^\s*SELECT\b/i.test(text) && !/commit_step|claim_run/.test(text)) reads += 1;
      else {
        writes += 1;
        bytes += JSON.stringify(values ?? [])?.length ?? 0;
      }
      return query(config, ...rest);
    };
  }
  const tools = createDistributedTools();
  try {
    for (let index = 0; index < runs; index++) {
      const result = await handleMessage(
        { body: TRIVIAL_BODY, id: `count-${steps}-${index}` },
        { model: distributedModel, tools, stores: counted, queues: { messageDlq: stores.messageDlq, toolDlq: stores.toolDlq } },
      );
      if (result.status !== 'completed') throw new Error(`bench run ended ${result.status}`);
    }
  } finally {
    (pool as { query: unknown }).query = query;
  }
  return { reads: Math.round(reads / runs), writes: Math.round(writes / runs), bytesPerWrite: Math.round(bytes / Math.max(1, writes)) };
}

/** Throughput of one round, and CPU time per run in ms (`postgresCpuMs`: `NaN` when `/proc` of the server is not readable). */
interface RoundResult {
  runsPerSecond: number;
  workerCpuMs: number;
  postgresCpuMs: number;
}

/** CPU time in ms of the server processes serving connections named `applicationName` (`NaN` if `/proc` cannot tell). */
async function backendCpuMs(pool: ReturnType<typeof createTestPool>, applicationName: string): Promise<number> {
  const { rows } = await pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [applicationName]);
  let total = 0;
  for (const { pid } of rows) {
    try {
      // fields 14 and 15 of /proc/<pid>/stat: utime and stime in clock ticks (100 per second on Linux)
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      total += ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    } catch {
      return Number.NaN;
    }
  }
  return rows.length === 0 ? Number.NaN : total;
}

/** Runs `jobs` trivial jobs through `processes` worker processes of `mode`. */
async function runRound(options: {
  mode: 'toolrun' | 'bare';
  processes: number;
  jobs: number;
  /** Jobs run before the measure, per worker process. */
  warmupPerProcess: number;
  schema: string;
  calls: { reads: number; writes: number; bytesPerWrite: number };
  pool: ReturnType<typeof createTestPool>;
}): Promise<RoundResult> {
  const applicationName = uniqueName('toolrun_bench_');
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('application_name', applicationName);
  const queueName = uniqueName('toolrun-bench-');
  const queue = new Queue(queueName, { connection: { url: REDIS_URL } });
  const config: DistributedBenchWorkerConfig = {
    mode: options.mode,
    schema: options.schema,
    queueName,
    concurrency: CONCURRENCY,
    readsPerRun: options.calls.reads,
    writesPerRun: options.calls.writes,
    bytesPerWrite: options.calls.bytesPerWrite,
  };
  const workers = Array.from({ length: options.processes }, () =>
    spawnFixture('test/fixtures/distributed-bench-worker.ts', [JSON.stringify(config)], { TOOLRUN_TEST_POSTGRES_URL: url.toString() }),
  );
  const cpuMsOf = (worker: (typeof workers)[number], mark: boolean) =>
    (
      worker.events.find(
        (event) => typeof (event as { cpuMsSinceReady?: unknown }).cpuMsSinceReady === 'number' && (event as { mark?: unknown }).mark === (mark || undefined),
      ) as { cpuMsSinceReady: number } | undefined
    )?.cpuMsSinceReady ?? Number.NaN;
  const addJobs = async (prefix: string, count: number) => {
    for (let start = 0; start < count; start += 500) {
      const batch = Array.from({ length: Math.min(500, count - start) }, (_, offset) => {
        const messageId = `${prefix}-${start + offset}`;
        return { name: 'run', data: { body: TRIVIAL_BODY, messageId }, opts: { jobId: messageId } };
      });
      await queue.addBulk(batch);
    }
  };
  const completedReach = async (count: number) => {
    for (;;) {
      const { completed = 0, failed = 0 } = await queue.getJobCounts('completed', 'failed');
      if (failed > 0) throw new Error(`${failed} ${options.mode} jobs failed`);
      if (completed >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  let postgresCpuMs = Number.NaN;
  try {
    await queue.pause();
    await Promise.all(workers.map((worker) => worker.ready));
    // warm-up, not measured: every job of it completed, the workers wait for the next
    const warmup = options.warmupPerProcess * options.processes;
    if (warmup > 0) {
      await addJobs(uniqueName('w'), warmup);
      await queue.resume();
      await completedReach(warmup);
      await queue.pause();
    }
    for (const worker of workers) worker.child.kill('SIGUSR2');
    while (workers.some((worker) => Number.isNaN(cpuMsOf(worker, true)))) await new Promise((resolve) => setTimeout(resolve, 5));
    await addJobs(uniqueName('b'), options.jobs);
    const postgresAtStart = await backendCpuMs(options.pool, applicationName);
    const startedAt = process.hrtime.bigint();
    await queue.resume();
    await completedReach(warmup + options.jobs);
    const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
    postgresCpuMs = ((await backendCpuMs(options.pool, applicationName)) - postgresAtStart) / options.jobs;
    const workerCpuMs = async () => {
      for (const worker of workers) worker.child.kill('SIGTERM');
      await Promise.all(workers.map((worker) => worker.exited));
      let total = 0;
      for (const worker of workers) total += cpuMsOf(worker, false) - cpuMsOf(worker, true);
      return total / options.jobs;
    };
    return { runsPerSecond: options.jobs / seconds, workerCpuMs: await workerCpuMs(), postgresCpuMs };
  } finally {
    for (const worker of workers) if (worker.alive) worker.child.kill('SIGTERM');
    await Promise.all(workers.map((worker) => worker.exited));
    await queue.obliterate({ force: true });
    await queue.close();
  }
}

/** The best of each measure over the rounds (highest runs/s, least CPU per run). */
function best(results: readonly RoundResult[]): RoundResult {
  const least = (values: number[]) => (values.some(Number.isNaN) ? Number.NaN : Math.min(...values));
  return {
    runsPerSecond: Math.max(...results.map((result) => result.runsPerSecond)),
    workerCpuMs: least(results.map((result) => result.workerCpuMs)),
    postgresCpuMs: least(results.map((result) => result.postgresCpuMs)),
  };
}

/** `worker 1.23 + PostgreSQL 0.45 ms CPU per run` (the PostgreSQL part only when measured). */
function describeCpu(result: RoundResult): string {
  const postgres = Number.isNaN(result.postgresCpuMs) ? '' : ` + PostgreSQL ${result.postgresCpuMs.toFixed(2)}`;
  return `CPU per run: worker ${result.workerCpuMs.toFixed(2)}${postgres} ms`;
}

/** Total CPU per run (the worker's, plus PostgreSQL's when measured). */
function cpuOf(result: RoundResult): number {
  return result.workerCpuMs + (Number.isNaN(result.postgresCpuMs) ? 0 : result.postgresCpuMs);
}

/**
 * Runs the distributed benchmark and returns its rows: per process count, toolrun's worker against
 * two bare BullMQ workers, one writing what the ports describe one by one (the data toolrun stores,
 * a statement per port write) and one sending as many statements as toolrun does (its step commits
 * included); best of `rounds`, alternating, so that load from elsewhere hits all alike. `jobs`
 * (default 1,000) are measured per round, after `warmupPerProcess` (default `TOOLRUN_BENCH_WARMUP`
 * or 750) unmeasured jobs per worker process.
 */
export async function runDistributedBench(options: { jobs?: number; rounds?: number; warmupPerProcess?: number } = {}): Promise<BenchRow[]> {
  const jobs = options.jobs ?? 1_000;
  const rounds = options.rounds ?? Number(process.env.TOOLRUN_BENCH_ROUNDS ?? 3);
  const warmupPerProcess = options.warmupPerProcess ?? Number(process.env.TOOLRUN_BENCH_WARMUP ?? 750);
  const pool = createTestPool({ max: 2 });
  const schema = uniqueName('toolrun_bench_');
  const stores = await createPostgresStores({ pool, schema });
  const rows: BenchRow[] = [];
  try {
    await pool.query(`CREATE TABLE "${schema}".bench_kv (key text PRIMARY KEY, value text NOT NULL)`);
    const portCalls = await storeCallsPerRun(stores, pool, 30, 'port-by-port');
    const committedCalls = await storeCallsPerRun(stores, pool, 30, 'committed');
    for (const processes of [1, 4]) {
      const portRounds: RoundResult[] = [];
      const committedRounds: RoundResult[] = [];
      const toolrunRounds: RoundResult[] = [];
      for (let round = 0; round < rounds; round++) {
        portRounds.push(await runRound({ mode: 'bare', processes, jobs, warmupPerProcess, schema, calls: portCalls, pool }));
        toolrunRounds.push(await runRound({ mode: 'toolrun', processes, jobs, warmupPerProcess, schema, calls: committedCalls, pool }));
        committedRounds.push(await runRound({ mode: 'bare', processes, jobs, warmupPerProcess, schema, calls: committedCalls, pool }));
      }
      const [ports, toolrunBest, committed] = [best(portRounds), best(toolrunRounds), best(committedRounds)];
      const barePorts = ports.runsPerSecond;
      const toolrun = toolrunBest.runsPerSecond;
      const bareCommitted = committed.runsPerSecond;
      const label = `${processes} process${processes === 1 ? '' : 'es'} × ${CONCURRENCY}`;
      const describe = (calls: { reads: number; writes: number; bytesPerWrite: number }) =>
        `${calls.reads} reads + ${calls.writes} writes of ${calls.bytesPerWrite} B per run`;
      rows.push({
        name: `bare BullMQ worker, ${label}: the ports' writes one by one, ${describe(portCalls)}`,
        medianNs: 1e9 / barePorts,
        note: `${barePorts.toFixed(0)} runs/s; ${describeCpu(ports)}; each round after ${warmupPerProcess} warm-up runs per process`,
      });
      rows.push({
        name: `toolrun BullMQ worker + PostgreSQL, ${label}`,
        medianNs: 1e9 / toolrun,
        baseline: `bare (ports' writes), ${label}`,
        ratio: barePorts / toolrun,
        note: `${toolrun.toFixed(0)} runs/s = ${(toolrun / barePorts).toFixed(2)} of bare; ${describeCpu(toolrunBest)}, CPU = ${(cpuOf(toolrunBest) / cpuOf(ports)).toFixed(2)}× bare's`,
      });
      rows.push({
        name: `bare BullMQ worker, ${label}: toolrun's statements, ${describe(committedCalls)}`,
        medianNs: 1e9 / bareCommitted,
        note: `${bareCommitted.toFixed(0)} runs/s; toolrun = ${(toolrun / bareCommitted).toFixed(2)} of it; ${describeCpu(committed)}, toolrun's CPU = ${(cpuOf(toolrunBest) / cpuOf(committed)).toFixed(2)}× it`,
      });
    }
    return rows;
  } finally {
    await stores.close();
    await dropSchema(pool, schema);
    await pool.end();
  }
}
