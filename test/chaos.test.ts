/**
 * The chaos test of issue 6, with the failures of issue 9: 4 toolrun worker processes on one Redis
 * (BullMQ) and one PostgreSQL (every store) work through 1,000 run messages whose tools have side
 * effects, while processes are SIGKILLed and restarted at random (seeded), PostgreSQL is restarted
 * once mid-run and Redis — which keeps nothing on disk, as in CI — is restarted once too, losing
 * every job it held; the requests are re-enqueued from the PostgreSQL outbox. Among the messages:
 * runs whose model fails once (503, retried in-band), runs whose model rejects its key (401: a
 * resumable model entry), poison runs (their conversation is rejected by the store at every
 * delivery, after a side effect: one `run` entry at the delivery bound), runs whose tool is down.
 * Then TWO drain processes at once (test/fixtures/distributed-drain.ts, the world fixed) drain the
 * tool DLQ. At each stage every message is in exactly one terminal place — the one its plan says —,
 * no side effect happened twice for one run + step, nothing is lost; the PostgreSQL and Redis
 * restarts (store outages) never count toward a healthy message's delivery bound; each entry is
 * completed by exactly one drain and no run step's model call is made twice by the drains.
 *
 * The PostgreSQL cluster and the Redis are the test's own (same setup as the shared ones, free
 * ports): restarting the shared services would break the tests that run beside this one.
 * `CHAOS_TEST_DUMP=<file>` writes every worker process's output lines there (for a reproduction).
 */
import { writeFileSync } from 'node:fs';
import { Queue } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStores } from '../src/stores/postgres/index.ts';
import { enqueueRun, requeueRunRequests } from '../src/queues/bullmq/index.ts';
import { toJobId } from '../src/queues/bullmq/job-id.ts';
import type { DrainReport, MessageFailureEntry, ResumableEntry, Stores } from '../src/index.ts';
import { runClaimKey } from '../src/ground/ports/run-journal.ts';
import { createSideEffectTables } from './fixtures/distributed-agent.ts';
import { createTestPool, uniqueName } from './fixtures/distributed-services.ts';
import { seededRandom, spawnFixture, type FixtureProcess } from './fixtures/distributed-processes.ts';
import { startPrivatePostgres, startPrivateRedis, type PrivateService } from './fixtures/distributed-private-services.ts';
import type { DistributedWorkerConfig } from './fixtures/distributed-worker.ts';
import type { DistributedDrainConfig } from './fixtures/distributed-drain.ts';

const MESSAGE_COUNT = 1_000;
const WORKER_COUNT = 4;
const SEED = 20_261_129;
/**
 * Bounds against a hang, not speed targets: the test fails when no message was acknowledged for
 * `STALL_MS`, or when the messages are not all done after `DEADLINE_MS` (generous: on a slow or
 * loaded machine the same work takes many times longer).
 */
const STALL_MS = 120_000;
const DEADLINE_MS = 900_000;
/** The test's own timeout (`it`'s), in ms: the deadline, the drains and the checks after it. */
const TIMEOUT = 1_020_000;
/**
 * Messages acknowledged between two kills, drawn uniformly: the kills follow the work done, not the
 * clock, so a faster worker or a slower machine gets about the same number of kills (up to 30 over the
 * 1,000 messages).
 */
const KILL_EVERY_ACKNOWLEDGED = [20, 50] as const;
/** A process is killed only after it consumed for this long, in ms (times the pace). */
const MIN_LIFETIME_MS = 1_000;
/**
 * How long the first processes take to start on a quiet machine, in ms. A process is killed only
 * after `MIN_LIFETIME_MS` times the pace, the measured start over this (at least 1): on a machine
 * where a process needs many seconds to start, processes would otherwise be killed before they did
 * anything, over and over (each kill strands the jobs in hand for a lock), and the test would
 * measure the machine, not the worker.
 */
const QUIET_START_MS = 2_000;
const MALFORMED_BODIES = ['{not json', '{"input": 5}', '[]', '', '{"input":"x","extra":true}'];

/** The delivery bound of the workers (the default). */
const MAX_DELIVERIES = 5;
/** Bound of the two drains (they are killed, and the test fails, past it). */
const DRAIN_BUDGET_MS = 60_000;
/** Every plan's model failure is its run's own: the shared model breaker, which a rejected key opens for every run, is kept closed (its opening is covered by test/reliability.test.ts). */
const SHARED_BREAKER = { failureThreshold: 1_000_000 };

/** `effects` runs: plain (`twist` undefined), or with a model that fails once at `step`, rejects its key from `step`, or a poison answer at `step`. */
type Expected = { kind: 'effects'; count: number; twist?: 'flaky' | 'model-down' | 'poison'; step: number } | { kind: 'malformed' } | { kind: 'down' };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('chaos: 4 worker processes on BullMQ + PostgreSQL', () => {
  let postgres: PrivateService | undefined;
  let redis: PrivateService | undefined;
  afterAll(() => {
    postgres?.stop();
    redis?.stop();
  });

  it(`puts each of ${MESSAGE_COUNT} messages in exactly one terminal place through kills and service restarts`, { timeout: TIMEOUT }, async () => {
    const random = seededRandom(SEED);
    postgres = await startPrivatePostgres();
    redis = await startPrivateRedis();
    const services = { TOOLRUN_TEST_POSTGRES_URL: postgres.url, TOOLRUN_TEST_REDIS_URL: redis.url };
    const pool = createTestPool({ connectionString: postgres.url });
    const schema = uniqueName('toolrun_chaos_');
    const queueName = uniqueName('toolrun-chaos-');
    const stores = await createPostgresStores({ pool, schema });
    await createSideEffectTables(pool, schema);
    const queue = new Queue(queueName, { connection: { url: redis.url } });
    queue.on('error', () => undefined);
    const workers: FixtureProcess[] = [];
    try {
      // 1,000 messages: effect runs of 1 to 3 steps (some with a flaky model, a rejected key, a
      // poison answer), malformed bodies, runs whose tool is down
      const expected = new Map<string, Expected>();
      for (let index = 0; index < MESSAGE_COUNT; index++) {
        const draw = random();
        const id = index % 10 === 0 ? `chaos:${index}` : `chaos-${index}`;
        if (draw < 0.06) {
          expected.set(id, { kind: 'malformed' });
          await enqueueRun(queue, MALFORMED_BODIES[index % MALFORMED_BODIES.length]!, id, { outbox: stores.queue });
        } else if (draw < 0.12) {
          expected.set(id, { kind: 'down' });
          await enqueueRun(queue, JSON.stringify({ input: 'down' }), id, { outbox: stores.queue });
        } else {
          const count = 1 + Math.floor(random() * 3);
          const twist = draw < 0.16 ? 'model-down' : draw < 0.18 ? 'poison' : draw < 0.26 ? 'flaky' : undefined;
          // the model's step of trouble: any step (the final answer included); a poison one after a side effect
          const step = twist === 'poison' ? 1 + Math.floor(random() * count) : twist !== undefined ? Math.floor(random() * (count + 1)) : 0;
          expected.set(id, { kind: 'effects', count, ...(twist ? { twist } : {}), step });
          await enqueueRun(queue, JSON.stringify({ input: twist ? `effects ${count} ${twist} ${step}` : `effects ${count}` }), id, { outbox: stores.queue });
        }
      }

      const config: DistributedWorkerConfig = {
        schema,
        queueName,
        concurrency: 4,
        lockDurationMs: 5_000,
        stalledIntervalMs: 1_000,
        breakers: 'postgres',
        outbox: true,
        workMs: [5, 50],
        retryBackoff: { baseMs: 200, maxMs: 2_000 },
        modelPolicy: { backoff: { baseDelayMs: 20, jitterMs: 5 }, minDelayMs: 1 },
        maxDeliveries: MAX_DELIVERIES,
        sharedBreaker: SHARED_BREAKER,
        rejectNul: true,
        reportDeliveries: true,
      };
      // every process ever started (their output lines outlive them)
      const started: FixtureProcess[] = [];
      const spawnWorker = () => {
        const worker = spawnFixture('test/fixtures/distributed-worker.ts', [JSON.stringify(config)], services);
        started.push(worker);
        return worker;
      };
      const spawnedAt = Date.now();
      for (let slot = 0; slot < WORKER_COUNT; slot++) workers.push(spawnWorker());
      await Promise.all(workers.map((worker) => worker.ready));
      const startMs = Date.now() - spawnedAt;
      const pace = Math.max(1, startMs / QUIET_START_MS);

      const startedAt = Date.now();
      let kills = 0;
      let respawnsAfterCrash = 0;
      let postgresRestartedAt: number | undefined;
      let redisRestartedAt: number | undefined;
      let requeue = { pending: 0, requeued: 0 };
      let nextKillAtAcknowledged = KILL_EVERY_ACKNOWLEDGED[0];
      let leastPending = MESSAGE_COUNT;
      let progressAt = startedAt;
      const killLog: string[] = [];
      for (;;) {
        const pending = await stores.queue.size().catch(() => undefined);
        if (pending === 0) break;
        if (pending !== undefined && pending < leastPending) {
          leastPending = pending;
          progressAt = Date.now();
        }
        if (Date.now() - startedAt > DEADLINE_MS || Date.now() - progressAt > STALL_MS) {
          // what is left, and what became of it: the job, the run, the worker lines that name it
          const left = await stores.queue.pending({ limit: 20 });
          const details = await Promise.all(
            left.map(async ({ id, body }) => {
              const job = await queue.getJob(toJobId(id));
              const state = job ? await job.getState() : 'no job';
              const run = await stores.runs.get(`run_${id}`);
              const said = started.flatMap((worker) => worker.lines).filter((line) => line.split(' ').includes(id) || line.split(' ').includes(`run_${id}`));
              return `${id} ${body}: job ${state} (attempts ${job?.attemptsMade}, stalls ${job?.stalledCounter}, data ${JSON.stringify(job?.data)}), run ${run?.status} at ${run?.stepIndex}; ${said.join(' | ')}`;
            }),
          );
          throw new Error(
            `not done after ${Date.now() - startedAt} ms (none acknowledged in the last ${Date.now() - progressAt} ms): ${pending} messages pending, ` +
              `${kills} kills, PostgreSQL restarted at ${postgresRestartedAt} ms, ` +
              `Redis at ${redisRestartedAt} ms:\n${details.join('\n')}\nstderr of the workers: ${workers.map((worker) => worker.stderr().slice(-500)).join('\n')}`,
          );
        }
        const acknowledged = pending === undefined ? 0 : MESSAGE_COUNT - pending;
        if (postgresRestartedAt === undefined && acknowledged >= MESSAGE_COUNT * 0.25) {
          postgresRestartedAt = Date.now() - startedAt;
          await postgres.restart();
        }
        if (redisRestartedAt === undefined && acknowledged >= MESSAGE_COUNT * 0.55) {
          redisRestartedAt = Date.now() - startedAt;
          await redis.restart();
          // let the workers reconnect and finish the runs they had in hand, then recover the lost jobs
          await sleep(3_000);
          requeue = await requeueRunRequests(queue, stores.queue);
        }
        if (acknowledged >= nextKillAtAcknowledged) {
          // a random process among those that got going — handled a message and lived MIN_LIFETIME_MS
          // (one still warming up has nothing to lose but the jobs it just took: killing it again and
          // again would only run their stall counts up to the delivery bound); when none has, the
          // kill waits for one, so the number of kills does not depend on luck
          const gotGoing = (worker: FixtureProcess) =>
            worker.readyAt !== undefined && Date.now() - worker.readyAt >= MIN_LIFETIME_MS * pace && worker.lines.some((line) => line.startsWith('done '));
          const eligible = workers.flatMap((worker, slot) => (gotGoing(worker) ? [slot] : []));
          if (eligible.length > 0) {
            const slot = eligible[Math.floor(random() * eligible.length)]!;
            const victim = workers[slot]!;
            victim.child.kill('SIGKILL');
            await victim.exited;
            kills += 1;
            killLog.push(`killed ${victim.child.pid} ${Date.now()}`);
            workers[slot] = spawnWorker();
            nextKillAtAcknowledged =
              acknowledged + KILL_EVERY_ACKNOWLEDGED[0] + Math.floor(random() * (KILL_EVERY_ACKNOWLEDGED[1] - KILL_EVERY_ACKNOWLEDGED[0]));
          }
        }
        for (let slot = 0; slot < WORKER_COUNT; slot++) {
          if (!workers[slot]!.alive) {
            // died on its own (e.g. it started while PostgreSQL was restarting): start it again
            respawnsAfterCrash += 1;
            workers[slot] = spawnWorker();
          }
        }
        await sleep(100);
      }
      const elapsedMs = Date.now() - startedAt;
      for (const worker of workers) worker.child.kill('SIGKILL');
      await Promise.all(workers.map((worker) => worker.exited));

      const workerLines = started.flatMap((worker) => worker.lines);
      if (process.env.CHAOS_TEST_DUMP)
        writeFileSync(
          process.env.CHAOS_TEST_DUMP,
          [...killLog, ...started.map((worker) => `process ${worker.child.pid}\n${worker.lines.join('\n')}`)].join('\n'),
        );

      // Every message is in exactly one terminal place, the one its plan says.
      const before = await placesOf(pool, schema, stores, expected);
      const beforeProblems = checkPlaces(before, expected, 'worker phase');
      expect(beforeProblems).toEqual([]);
      expect(before.messageEntries).toHaveLength([...expected.values()].filter((wanted) => wanted.kind === 'malformed').length);
      // a run is left `running` only under a poison entry (resumable from its checkpoint)
      expect(
        [...before.runs]
          .filter(([, status]) => status === 'running')
          .map(([runId]) => runId)
          .sort(),
      ).toEqual(
        before.toolEntries
          .filter((entry) => entry.kind === 'run')
          .map((entry) => entry.runId)
          .sort(),
      );
      expect(await stores.queue.size()).toBe(0);
      expect((await queue.getJobCounts('failed')).failed).toBe(0);

      // The outages never counted toward a healthy message's bound: only poison deliveries count.
      const failed = workerLines.filter((line) => line.startsWith('failed ')).map((line) => line.split(' '));
      const counted = failed.filter((parts) => parts[3] === '1');
      const isPoison = (id: string) => {
        const wanted = expected.get(id);
        return wanted?.kind === 'effects' && wanted.twist === 'poison';
      };
      expect(
        counted.filter((parts) => !isPoison(parts[1]!)).map((parts) => parts.join(' ')),
        'counted failed deliveries of healthy messages',
      ).toEqual([]);
      // a poison run's conversation was rejected at most maxDeliveries times per life of the BullMQ job
      // (a Redis that lost its jobs lost their delivery counts with them: the outbox re-enqueues afresh)
      const refToRun = new Map(before.checkpoints.map((checkpoint) => [checkpoint.conversationRef, checkpoint.runId]));
      const rejections = countBy(workerLines.filter((line) => line.startsWith('rejected ')).map((line) => refToRun.get(line.slice(9)) ?? line.slice(9)));
      const poisonIds = [...expected.keys()].filter(isPoison);
      const rejectionLimit = MAX_DELIVERIES * 2;
      expect(
        [...rejections.keys()].filter((runId) => !isPoison(runId.slice(4))),
        'conversations rejected for runs that are not poison',
      ).toEqual([]);
      expect(
        poisonIds
          .filter(
            (id) =>
              before.toolDlqBy.get(id)?.kind === 'run' && !((rejections.get(`run_${id}`) ?? 0) >= 1 && (rejections.get(`run_${id}`) ?? 0) <= rejectionLimit),
          )
          .map((id) => `${id}: ${rejections.get(`run_${id}`) ?? 0}`),
      ).toEqual([]);
      // a healthy message in the tool DLQ as a `run` entry (a crash) is one whose job stalled past the
      // bound: every delivery it is charged with was a stall (a worker killed holding it), none an outage.
      // A stall is printed by the worker that detects it, which may be killed itself before it prints:
      // one unprinted stall per entry is tolerated (an outage counted would be several).
      const stalls = countBy(workerLines.filter((line) => line.startsWith('stalled ')).map((line) => line.split(' ')[1]!));
      const stalledPastTheBound = before.toolEntries.filter((entry) => entry.kind === 'run' && entry.lastError.kind === 'crash');
      expect(
        stalledPastTheBound
          .filter((entry) => (stalls.get(toJobId(entry.originalMessageId)) ?? 0) + 1 < (entry as { deliveries: number }).deliveries)
          .map(
            (entry) =>
              `${entry.originalMessageId}: ${(entry as { deliveries: number }).deliveries} deliveries charged, ${stalls.get(toJobId(entry.originalMessageId)) ?? 0} stalls`,
          ),
        'dead-lettered as crashes without as many stalls',
      ).toEqual([]);
      const flakyFailures = new Set(workerLines.filter((line) => line.startsWith('model flaky ')).map((line) => line.split(' ')[2]));
      const flakyCompleted = [...expected].filter(
        ([id, wanted]) => wanted.kind === 'effects' && wanted.twist === 'flaky' && before.runs.get(`run_${id}`) === 'completed',
      );
      expect(
        flakyCompleted.filter(([id]) => !flakyFailures.has(`run_${id}`)).map(([id]) => id),
        'flaky runs whose model never failed',
      ).toEqual([]);

      // No side effect twice for one run + step, and none twice for one idempotency key.
      const checkDuplicates = async () => {
        const duplicates = await pool.query(
          `SELECT run_id, step_index, count(*) FROM "${schema}".side_effects GROUP BY run_id, step_index HAVING count(*) > 1`,
        );
        expect(duplicates.rows).toEqual([]);
        const duplicateKeys = await pool.query(`SELECT idempotency_key FROM "${schema}".side_effects GROUP BY idempotency_key HAVING count(*) > 1`);
        expect(duplicateKeys.rows).toEqual([]);
      };
      await checkDuplicates();
      const invocations = Number((await pool.query<{ count: string }>(`SELECT count(*) FROM "${schema}".tool_invocations`)).rows[0]!.count);
      const repeatedKeys = Number(
        (
          await pool.query<{ count: string }>(
            `SELECT count(*) FROM (SELECT idempotency_key FROM "${schema}".tool_invocations GROUP BY idempotency_key HAVING count(*) > 1) AS repeated`,
          )
        ).rows[0]!.count,
      );
      expect(kills).toBeGreaterThanOrEqual(10);
      expect(postgresRestartedAt).toBeDefined();
      expect(redisRestartedAt).toBeDefined();

      // Two drains at once, the world fixed, once the claims killed workers held on dead-lettered runs have lapsed.
      await claimsLapsed(stores, before.toolEntries, config.lockDurationMs + 2_000);
      const drainConfig: DistributedDrainConfig = { schema, concurrency: 4, sharedBreaker: SHARED_BREAKER };
      const drainStartedAt = Date.now();
      const drains = [0, 1].map(() => spawnFixture('test/fixtures/distributed-drain.ts', [JSON.stringify(drainConfig)], services));
      await Promise.all(drains.map((drain) => drain.ready));
      for (const drain of drains) drain.child.stdin.end('go\n');
      const drainTimer = setTimeout(() => drains.forEach((drain) => drain.child.kill('SIGKILL')), DRAIN_BUDGET_MS);
      const drainExits = await Promise.all(drains.map((drain) => drain.exited));
      clearTimeout(drainTimer);
      const drainMs = Date.now() - drainStartedAt;
      expect(
        drainExits.map((exit) => exit.code),
        drains.map((drain) => drain.stderr()).join('\n'),
      ).toEqual([0, 0]);
      const drained = drains.map((drain) => drain.events[0] as { pid: number; report: DrainReport; modelCalls: Record<string, number> });

      // Each entry was completed by exactly one drain; the other found it in progress or completed.
      const completedBy = countBy(drained.flatMap(({ report }) => report.entries.filter((entry) => entry.status === 'completed').map((entry) => entry.id)));
      const outcomes = countBy(drained.flatMap(({ report }) => report.entries.map((entry) => entry.status)));
      expect(
        [...outcomes.keys()].filter((status) => !['completed', 'in_progress', 'already_completed'].includes(status)),
        JSON.stringify(drained.map(({ report }) => report.entries.filter((entry) => entry.error))),
      ).toEqual([]);
      expect(before.toolRecordIds.filter((id) => completedBy.get(id) !== 1).map((id) => `${id}: completed ${completedBy.get(id) ?? 0} times`)).toEqual([]);
      expect(drained[0]!.report.removed + drained[1]!.report.removed).toBe(before.toolRecordIds.length);
      // ... and called the model only for the remaining steps, each step once
      const drainCalls = new Map<string, number>();
      for (const { modelCalls } of drained) for (const [key, calls] of Object.entries(modelCalls)) drainCalls.set(key, (drainCalls.get(key) ?? 0) + calls);
      expect(
        [...drainCalls].filter(([, calls]) => calls > 1).map(([key, calls]) => `${key}: ${calls}`),
        'a model call repeated by the drains',
      ).toEqual([]);
      const firstDrainStep = new Map<string, number>();
      for (const key of drainCalls.keys()) {
        const at = key.lastIndexOf(':');
        const runId = key.slice(0, at);
        firstDrainStep.set(runId, Math.min(firstDrainStep.get(runId) ?? Number.POSITIVE_INFINITY, Number(key.slice(at + 1))));
      }
      // (the step after a failed tool's; a crashed run's own step, or the next one when it died inside a tool step)
      const resumesAt = (entry: ResumableEntry) =>
        entry.kind === 'tool'
          ? [entry.stepIndex + 1]
          : entry.kind === 'run' && entry.lastError.kind === 'crash'
            ? [entry.stepIndex, entry.stepIndex + 1]
            : [entry.stepIndex];
      expect(
        before.toolEntries
          .filter((entry) => !resumesAt(entry).includes(firstDrainStep.get(entry.runId) ?? -1))
          .map((entry) => `${entry.runId} (${entry.kind} at ${entry.stepIndex}): first drain call at ${firstDrainStep.get(entry.runId)}`),
      ).toEqual([]);

      // After the drains: the tool DLQ is empty, every run that is not malformed completed, with each effect once.
      const after = await placesOf(pool, schema, stores, expected);
      expect(after.toolEntries, 'left in the tool DLQ after the drains').toEqual([]);
      expect(checkPlaces(after, expected, 'after the drains')).toEqual([]);
      await checkDuplicates();

      const plans = countBy([...expected.values()].map((wanted) => (wanted.kind === 'effects' ? (wanted.twist ?? 'effects') : wanted.kind)));
      console.info(
        `[chaos] ${MESSAGE_COUNT} messages (${[...plans].map(([plan, count]) => `${count} ${plan}`).join(', ')}), ${WORKER_COUNT} processes, seed ${SEED}: done in ${(elapsedMs / 1000).toFixed(1)} s; ` +
          `${kills} SIGKILLs at pace ${pace.toFixed(1)} (start ${startMs} ms) (+${respawnsAfterCrash} restarts after a process died on its own), PostgreSQL restarted at ${((postgresRestartedAt ?? 0) / 1000).toFixed(1)} s, ` +
          `Redis restarted at ${((redisRestartedAt ?? 0) / 1000).toFixed(1)} s (outbox: ${requeue.pending} pending, ${requeue.requeued} re-enqueued). ` +
          `Terminal places: ${before.completed} completed, ${before.messageEntries.length} message DLQ, ${before.toolEntries.length} tool DLQ (${[...countBy(before.toolEntries.map((entry) => entry.kind))].map(([kind, count]) => `${count} ${kind}`).join(', ')}; ` +
          `${before.effectRunsDeadLettered} effect runs dead-lettered while the effect store was down, ${before.deadLetteredByCrashes} by stalls past the bound` +
          `${stalledPastTheBound.length > 0 ? ` (${stalledPastTheBound.map((entry) => `${entry.originalMessageId} after ${stalls.get(toJobId(entry.originalMessageId))} stalls`).join(', ')})` : ''}). ` +
          `Failed deliveries: ${failed.length}, ${counted.length} counted (all poison); poison conversations rejected ${[...rejections.values()].reduce((sum, count) => sum + count, 0)} times (at most ${Math.max(0, ...rejections.values())} per run). ` +
          `Two drains in ${(drainMs / 1000).toFixed(1)} s: ${[...outcomes].map(([status, count]) => `${count} ${status}`).join(', ')}; removed ${drained.map(({ report }) => report.removed).join(' + ')}; ${drainCalls.size} model calls, none twice. ` +
          `After: ${after.completed} completed, ${after.messageEntries.length} message DLQ, 0 tool DLQ. ` +
          `Side effects: ${after.effects} rows, 0 duplicates; ${invocations} tool invocations before the drains, ${repeatedKeys} idempotency keys invoked more than once (a crash after the effect, before the ledger write; absorbed by the key).`,
      );
    } finally {
      for (const worker of workers) if (worker.alive) worker.child.kill('SIGKILL');
      await Promise.all(workers.map((worker) => worker.exited));
      await queue.close();
      await stores.close();
      await pool.end();
    }
  });
});

function countBy(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

type Snapshot = Awaited<ReturnType<typeof placesOf>>;

/** Where every message is now: run statuses and checkpoints, the DLQ entries by message id, the effects by run. */
async function placesOf(
  pool: ReturnType<typeof createTestPool>,
  schema: string,
  stores: Awaited<ReturnType<typeof createPostgresStores>>,
  expected: ReadonlyMap<string, Expected>,
) {
  const checkpoints = (await pool.query<{ checkpoint: string }>(`SELECT checkpoint FROM "${schema}".runs`)).rows.map(
    (row) => JSON.parse(row.checkpoint) as { runId: string; status: string; conversationRef: string },
  );
  const runs = new Map(checkpoints.map((checkpoint) => [checkpoint.runId, checkpoint.status]));
  const messageEntries = (await stores.messageDlq.list()).map((record) => record.entry as MessageFailureEntry);
  const toolRecords = await stores.toolDlq.list();
  const toolEntries = toolRecords.map((record) => record.entry as ResumableEntry);
  const effects = (await pool.query<{ run_id: string; step_index: number }>(`SELECT run_id, step_index FROM "${schema}".side_effects`)).rows;
  const effectsBy = new Map<string, number[]>();
  for (const row of effects) effectsBy.set(row.run_id, [...(effectsBy.get(row.run_id) ?? []), row.step_index]);
  const toolDlqBy = new Map<string, ResumableEntry>();
  const toolDlqCount = countBy(toolEntries.map((entry) => entry.originalMessageId));
  for (const entry of toolEntries) toolDlqBy.set(entry.originalMessageId, entry);
  let effectRunsDeadLettered = 0;
  let deadLetteredByCrashes = 0;
  for (const [id, wanted] of expected) {
    const entry = toolDlqBy.get(id);
    if (wanted.kind !== 'effects' || !entry) continue;
    if (entry.kind === 'tool' && entry.toolName === 'record_effect') effectRunsDeadLettered += 1;
    if (entry.kind === 'run' && entry.lastError.kind === 'crash') deadLetteredByCrashes += 1;
  }
  return {
    checkpoints,
    runs,
    messageEntries,
    messageDlqBy: countBy(messageEntries.map((entry) => entry.messageId ?? '')),
    toolEntries,
    toolRecordIds: toolRecords.map((record) => record.id),
    toolDlqBy,
    toolDlqCount,
    effectsBy,
    effects: effects.length,
    completed: [...runs.values()].filter((status) => status === 'completed').length,
    effectRunsDeadLettered,
    deadLetteredByCrashes,
  };
}

/**
 * What is wrong with where the messages are: each in exactly one terminal place, and the one its
 * plan says. Besides the plan's place, an effect run may be in the tool DLQ as a `record_effect`
 * failure (its effect store was down past the run's retry budget: a tool failure, not the delivery
 * bound) or as a `run` entry whose last error is a crash (its job stalled past the bound: killed
 * workers). After the drains every run that is not malformed has completed.
 */
function checkPlaces(snapshot: Snapshot, expected: ReadonlyMap<string, Expected>, stage: 'worker phase' | 'after the drains'): string[] {
  const problems: string[] = [];
  for (const [id, wanted] of expected) {
    const runId = `run_${id}`;
    const status = snapshot.runs.get(runId);
    const entry = snapshot.toolDlqBy.get(id);
    const inMessageDlq = snapshot.messageDlqBy.get(id) ?? 0;
    const inToolDlq = snapshot.toolDlqCount.get(id) ?? 0;
    const places = inMessageDlq + inToolDlq + (status === 'completed' ? 1 : 0);
    const where = `run ${status}, message DLQ ${inMessageDlq}, tool DLQ ${inToolDlq}${entry ? ` (${entry.kind} at step ${entry.stepIndex}: ${entry.lastError.message})` : ''}`;
    if (places !== 1) problems.push(`${id}: in ${places} terminal places (${where})`);
    if (wanted.kind === 'malformed') {
      if (inMessageDlq !== 1 || status !== undefined) problems.push(`${id}: malformed but ${where}`);
      continue;
    }
    const stalledPastTheBound = entry?.kind === 'run' && entry.lastError.kind === 'crash' && !(wanted.kind === 'effects' && wanted.twist === 'poison');
    if (stage === 'after the drains') {
      if (status !== 'completed') problems.push(`${id}: ${where} after the drains`);
    } else if (wanted.kind === 'down') {
      if (!stalledPastTheBound && (entry?.kind !== 'tool' || entry.toolName !== 'always_down' || status !== 'tool_failed'))
        problems.push(`${id}: tool down but ${where}`);
    } else {
      const explained = (entry?.kind === 'tool' && entry.toolName === 'record_effect' && status === 'tool_failed') || stalledPastTheBound;
      if (wanted.twist === 'model-down' && !explained) {
        if (
          entry?.kind !== 'model' ||
          status !== 'model_failed' ||
          entry.stepIndex !== wanted.step ||
          entry.lastError.status !== 401 ||
          entry.reason !== 'model-not-retryable'
        )
          problems.push(`${id}: model down from step ${wanted.step} but ${where}`);
      } else if (wanted.twist === 'poison' && !explained) {
        if (
          entry?.kind !== 'run' ||
          status !== 'running' ||
          entry.stepIndex !== wanted.step ||
          entry.deliveries < MAX_DELIVERIES ||
          !entry.lastError.message.includes('unsupported Unicode escape sequence')
        ) {
          problems.push(`${id}: poison at step ${wanted.step} but ${where}`);
        }
      } else if (wanted.twist !== 'model-down' && wanted.twist !== 'poison' && !explained && status !== 'completed') {
        problems.push(`${id}: ${wanted.twist ?? 'effect'} run ended ${where}`);
      }
    }
    if (wanted.kind === 'effects') {
      const steps = [...(snapshot.effectsBy.get(runId) ?? [])].sort();
      const all = Array.from({ length: wanted.count }, (_, step) => step);
      if (new Set(steps).size !== steps.length || steps.some((step) => step >= wanted.count)) problems.push(`${id}: effects ${JSON.stringify(steps)}`);
      if (status === 'completed' && JSON.stringify(steps) !== JSON.stringify(all))
        problems.push(`${id}: completed with effects ${JSON.stringify(steps)}, expected ${JSON.stringify(all)}`);
    }
  }
  return problems;
}

/** Waits until no entry's run is claimed (a worker killed while it held the claim leaves it until its lease ends); throws after `timeoutMs`. */
async function claimsLapsed(stores: Pick<Stores, 'claims'>, entries: readonly ResumableEntry[], timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const held = (await Promise.all(entries.map(async (entry) => ((await stores.claims?.get(runClaimKey(entry.runId))) ? entry.runId : undefined)))).filter(
      (runId) => runId !== undefined,
    );
    if (held.length === 0) return;
    if (Date.now() > until) throw new Error(`runs still claimed after ${timeoutMs} ms: ${held.join(', ')}`);
    await sleep(200);
  }
}
