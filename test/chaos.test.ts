/**
 * The chaos test of issue 6: 4 toolrun worker processes on one Redis (BullMQ) and one PostgreSQL
 * (every store) work through 1,000 run messages whose tools have side effects, while processes are
 * SIGKILLed and restarted at random (seeded), PostgreSQL is restarted once mid-run and Redis — which
 * keeps nothing on disk, as in CI — is restarted once too, losing every job it held; the requests are
 * re-enqueued from the PostgreSQL outbox. At the end every message is in exactly one terminal place,
 * no side effect happened twice for one run + step, and nothing is lost.
 *
 * The PostgreSQL cluster and the Redis are the test's own (same setup as the shared ones, free
 * ports): restarting the shared services would break the tests that run beside this one.
 */
import { Queue } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStores } from '../src/stores/postgres/index.ts';
import { enqueueRun, requeueRunRequests } from '../src/queues/bullmq/index.ts';
import type { MessageFailureEntry, ToolFailureEntry } from '../src/index.ts';
import { createSideEffectTables } from './fixtures/distributed-agent.ts';
import { createTestPool, uniqueName } from './fixtures/distributed-services.ts';
import { seededRandom, spawnFixture, type FixtureProcess } from './fixtures/distributed-processes.ts';
import { startPrivatePostgres, startPrivateRedis, type PrivateService } from './fixtures/distributed-private-services.ts';
import type { DistributedWorkerConfig } from './fixtures/distributed-worker.ts';

const MESSAGE_COUNT = 1_000;
const WORKER_COUNT = 4;
const SEED = 20_261_129;
const DEADLINE_MS = 150_000;
/** Wait between two kills, drawn uniformly, in ms. */
const KILL_INTERVAL_MS = [500, 1_500] as const;
/** A process is killed only after it consumed for this long, in ms. */
const MIN_LIFETIME_MS = 1_000;
const MALFORMED_BODIES = ['{not json', '{"input": 5}', '[]', '', '{"input":"x","extra":true}'];

type Expected = { kind: 'effects'; count: number } | { kind: 'malformed' } | { kind: 'down' };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('chaos: 4 worker processes on BullMQ + PostgreSQL', () => {
  let postgres: PrivateService | undefined;
  let redis: PrivateService | undefined;
  afterAll(() => {
    postgres?.stop();
    redis?.stop();
  });

  it(`puts each of ${MESSAGE_COUNT} messages in exactly one terminal place through kills and service restarts`, { timeout: 180_000 }, async () => {
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
      // 1,000 messages: effect runs of 1 to 3 steps, malformed bodies, runs whose tool is down
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
          expected.set(id, { kind: 'effects', count });
          await enqueueRun(queue, JSON.stringify({ input: `effects ${count}` }), id, { outbox: stores.queue });
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
      };
      const spawnWorker = () => spawnFixture('test/fixtures/distributed-worker.ts', [JSON.stringify(config)], services);
      for (let slot = 0; slot < WORKER_COUNT; slot++) workers.push(spawnWorker());
      await Promise.all(workers.map((worker) => worker.ready));

      const startedAt = Date.now();
      let kills = 0;
      let respawnsAfterCrash = 0;
      let postgresRestartedAt: number | undefined;
      let redisRestartedAt: number | undefined;
      let requeue = { pending: 0, requeued: 0 };
      let nextKillAt = startedAt + KILL_INTERVAL_MS[0];
      for (;;) {
        const pending = await stores.queue.size().catch(() => undefined);
        if (pending === 0) break;
        if (Date.now() - startedAt > DEADLINE_MS) {
          throw new Error(
            `not done after ${DEADLINE_MS} ms: ${pending} messages pending, ${kills} kills, PostgreSQL restarted at ${postgresRestartedAt} ms, ` +
              `Redis at ${redisRestartedAt} ms; stderr of the workers: ${workers.map((worker) => worker.stderr().slice(-500)).join('\n')}`,
          );
        }
        const acknowledged = pending === undefined ? 0 : MESSAGE_COUNT - pending;
        if (postgresRestartedAt === undefined && acknowledged >= MESSAGE_COUNT * 0.25) {
          postgresRestartedAt = Date.now() - startedAt;
          postgres.restart();
        }
        if (redisRestartedAt === undefined && acknowledged >= MESSAGE_COUNT * 0.55) {
          redisRestartedAt = Date.now() - startedAt;
          redis.restart();
          // let the workers reconnect and finish the runs they had in hand, then recover the lost jobs
          await sleep(3_000);
          requeue = await requeueRunRequests(queue, stores.queue);
        }
        if (Date.now() >= nextKillAt) {
          // a random process among those that got going (one still starting up has nothing to lose);
          // when none has, the kill waits for one, so the number of kills does not depend on luck
          const eligible = workers.flatMap((worker, slot) => (worker.readyAt !== undefined && Date.now() - worker.readyAt >= MIN_LIFETIME_MS ? [slot] : []));
          if (eligible.length > 0) {
            const slot = eligible[Math.floor(random() * eligible.length)]!;
            const victim = workers[slot]!;
            victim.child.kill('SIGKILL');
            await victim.exited;
            kills += 1;
            workers[slot] = spawnWorker();
            nextKillAt = Date.now() + KILL_INTERVAL_MS[0] + random() * (KILL_INTERVAL_MS[1] - KILL_INTERVAL_MS[0]);
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

      // Every message is in exactly one terminal place.
      const runs = new Map<string, string>(
        (await pool.query<{ run_id: string; status: string }>(`SELECT run_id, status FROM "${schema}".runs`)).rows.map((row) => [row.run_id, row.status]),
      );
      const messageEntries = (await stores.messageDlq.list()).map((record) => record.entry as MessageFailureEntry);
      const toolEntries = (await stores.toolDlq.list()).map((record) => record.entry as ToolFailureEntry);
      const messageDlqBy = countBy(messageEntries.map((entry) => entry.messageId ?? ''));
      const toolDlqBy = countBy(toolEntries.map((entry) => entry.originalMessageId));
      const effects = (await pool.query<{ run_id: string; step_index: number }>(`SELECT run_id, step_index FROM "${schema}".side_effects`)).rows;
      const effectsBy = new Map<string, number[]>();
      for (const row of effects) effectsBy.set(row.run_id, [...(effectsBy.get(row.run_id) ?? []), row.step_index]);
      const problems: string[] = [];
      let effectRunsDeadLettered = 0;
      for (const [id, wanted] of expected) {
        const runId = `run_${id}`;
        const status = runs.get(runId);
        const places = (messageDlqBy.get(id) ?? 0) + (toolDlqBy.get(id) ?? 0) + (status === 'completed' ? 1 : 0);
        if (places !== 1) problems.push(`${id}: in ${places} terminal places (run ${status}, message DLQ ${messageDlqBy.get(id) ?? 0}, tool DLQ ${toolDlqBy.get(id) ?? 0})`);
        if (wanted.kind === 'malformed' && (messageDlqBy.get(id) !== 1 || status !== undefined)) problems.push(`${id}: malformed but run ${status}, message DLQ ${messageDlqBy.get(id)}`);
        if (wanted.kind === 'down' && (toolDlqBy.get(id) !== 1 || status !== 'tool_failed')) problems.push(`${id}: tool down but run ${status}, tool DLQ ${toolDlqBy.get(id)}`);
        if (wanted.kind === 'effects') {
          const steps = [...(effectsBy.get(runId) ?? [])].sort();
          if (status === 'completed') {
            const all = Array.from({ length: wanted.count }, (_, step) => step);
            if (JSON.stringify(steps) !== JSON.stringify(all)) problems.push(`${id}: completed with effects ${JSON.stringify(steps)}, expected ${JSON.stringify(all)}`);
          } else if (status === 'tool_failed' && toolDlqBy.get(id) === 1) {
            // the effect store was down (PostgreSQL restart) longer than the run's retry budget
            effectRunsDeadLettered += 1;
            if (new Set(steps).size !== steps.length) problems.push(`${id}: an effect twice ${JSON.stringify(steps)}`);
          } else {
            problems.push(`${id}: effect run ended ${status}`);
          }
        }
      }
      expect(problems).toEqual([]);
      expect(messageEntries).toHaveLength([...expected.values()].filter((wanted) => wanted.kind === 'malformed').length);
      expect([...runs.values()].filter((status) => status === 'running')).toEqual([]);

      // No side effect twice for one run + step, and none twice for one idempotency key.
      const duplicates = await pool.query(`SELECT run_id, step_index, count(*) FROM "${schema}".side_effects GROUP BY run_id, step_index HAVING count(*) > 1`);
      expect(duplicates.rows).toEqual([]);
      const duplicateKeys = await pool.query(`SELECT idempotency_key FROM "${schema}".side_effects GROUP BY idempotency_key HAVING count(*) > 1`);
      expect(duplicateKeys.rows).toEqual([]);
      expect(await stores.queue.size()).toBe(0);
      expect((await queue.getJobCounts('failed')).failed).toBe(0);

      const invocations = Number((await pool.query<{ count: string }>(`SELECT count(*) FROM "${schema}".tool_invocations`)).rows[0]!.count);
      const repeatedKeys = Number(
        (await pool.query<{ count: string }>(`SELECT count(*) FROM (SELECT idempotency_key FROM "${schema}".tool_invocations GROUP BY idempotency_key HAVING count(*) > 1) AS repeated`)).rows[0]!.count,
      );
      expect(kills).toBeGreaterThanOrEqual(10);
      expect(postgresRestartedAt).toBeDefined();
      expect(redisRestartedAt).toBeDefined();
      console.info(
        `[chaos] ${MESSAGE_COUNT} messages, ${WORKER_COUNT} processes, seed ${SEED}: done in ${(elapsedMs / 1000).toFixed(1)} s; ` +
          `${kills} SIGKILLs (+${respawnsAfterCrash} restarts after a process died on its own), PostgreSQL restarted at ${((postgresRestartedAt ?? 0) / 1000).toFixed(1)} s, ` +
          `Redis restarted at ${((redisRestartedAt ?? 0) / 1000).toFixed(1)} s (outbox: ${requeue.pending} pending, ${requeue.requeued} re-enqueued). ` +
          `Terminal places: ${[...runs.values()].filter((status) => status === 'completed').length} completed, ${messageEntries.length} message DLQ, ${toolEntries.length} tool DLQ ` +
          `(${effectRunsDeadLettered} effect runs dead-lettered while the effect store was down). Side effects: ${effects.length} rows, 0 duplicates; ` +
          `${invocations} tool invocations, ${repeatedKeys} idempotency keys invoked more than once (a crash after the effect, before the ledger write; absorbed by the key).`,
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
