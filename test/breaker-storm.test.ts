/**
 * The breaker-storm test of issue 6: 2,000 runs across 4 worker processes (BullMQ + PostgreSQL)
 * call a tool whose API answers 401 to everyone. The shared breaker — its state in Redis, or in
 * PostgreSQL — must open once with one alert across all processes, let exactly one probe through
 * per cool-down, and keep the tool from being called while it is open.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStores } from '../src/stores/postgres/index.ts';
import { createRedisBreakerStateStore } from '../src/stores/redis/index.ts';
import { enqueueRun } from '../src/queues/bullmq/index.ts';
import type { SharedBreakerRecord, ToolFailureEntry, WorkerEvent } from '../src/index.ts';
import type { BreakerStateStore } from '../src/ground/ports/stores.ts';
import { createSharedBreaker, type SharedBreakerEvent } from '../src/policies/shared-breaker.ts';
import { createTestPool, createTestRedis, deleteRedisKeys, dropSchema, REDIS_URL, uniqueName } from './fixtures/distributed-services.ts';
import { spawnFixture, type FixtureProcess } from './fixtures/distributed-processes.ts';
import type { DistributedWorkerConfig } from './fixtures/distributed-worker.ts';

const RUN_COUNT = 2_000;
const PROCESS_COUNT = 4;
const CONCURRENCY = 4;
const FAILURE_THRESHOLD = 2;
const HALF_OPEN_AFTER_MS = 2_000;
/**
 * A call started this long after the opening cannot have been let through before it (a probe
 * starts within this long after its `breaker-half-open` event). Well under the cool-down.
 */
const STRADDLE_MARGIN_MS = 1_000;

interface ReceivedCall {
  runId: string;
  startedAt: number;
}

async function startLockedApi(): Promise<{ server: Server; url: string; calls: ReceivedCall[] }> {
  const calls: ReceivedCall[] = [];
  const server = createServer((request, response) => {
    calls.push({ runId: String(request.headers['x-run-id']), startedAt: Number(request.headers['x-started-at']) });
    request.resume();
    response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_token"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, calls };
}

describe.each(['redis', 'postgres'] as const)('breaker storm: 2,000 runs, 4 processes, breaker state in %s', (breakers) => {
  const pool = createTestPool();
  const redis = createTestRedis();
  afterAll(async () => {
    await pool.end();
    redis.disconnect();
  });

  it(
    'opens once with one alert, lets one probe through per cool-down, and calls the tool at most threshold + probes (+ calls in flight at the opening) times',
    { timeout: 170_000 },
    async () => {
      const schema = uniqueName('toolrun_storm_');
      const queueName = uniqueName('toolrun-storm-');
      const redisPrefix = uniqueName('toolrun-storm:');
      const api = await startLockedApi();
      const stores = await createPostgresStores({ pool, schema });
      const queue = new Queue(queueName, { connection: { url: REDIS_URL } });
      const workers: FixtureProcess[] = [];
      try {
        for (let index = 0; index < RUN_COUNT; index++) await enqueueRun(queue, JSON.stringify({ input: 'locked' }), `storm-${index}`);
        const config: DistributedWorkerConfig = {
          schema,
          queueName,
          concurrency: CONCURRENCY,
          lockDurationMs: 30_000,
          stalledIntervalMs: 30_000,
          breakers,
          redisPrefix,
          outbox: false,
          lockedUrl: api.url,
          sharedBreaker: { failureThreshold: FAILURE_THRESHOLD, halfOpenAfterMs: HALF_OPEN_AFTER_MS, probeTimeoutMs: 30_000 },
        };
        for (let index = 0; index < PROCESS_COUNT; index++) workers.push(spawnFixture('test/fixtures/distributed-worker.ts', [JSON.stringify(config)]));
        await Promise.all(workers.map((worker) => worker.ready));
        const startedAt = Date.now();
        while ((await stores.toolDlq.size()) < RUN_COUNT) {
          if (Date.now() - startedAt > 140_000) throw new Error(`only ${await stores.toolDlq.size()} of ${RUN_COUNT} runs dead-lettered`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const elapsedMs = Date.now() - startedAt;
        await Promise.all(
          workers.map(async (worker) => {
            worker.child.kill('SIGTERM');
            await worker.exited;
          }),
        );

        const events = workers.flatMap((worker) => worker.events as WorkerEvent[]).sort((left, right) => left.at - right.at);
        const alerts = events.filter((event) => event.type === 'breaker-open');
        const probes = events.filter((event) => event.type === 'breaker-half-open');
        const reopens = events.filter((event) => event.type === 'breaker-reopen');
        const record = (breakers === 'redis'
          ? await (async () => {
              const store = await createRedisBreakerStateStore({ redis, prefix: redisPrefix });
              return store.get('locked_api');
            })()
          : await stores.breakers.get('locked_api')) as unknown as SharedBreakerRecord;

        // one opening, one alert — across all four processes
        expect(record.openings).toBe(1);
        expect(alerts).toHaveLength(1);
        expect(events.filter((event) => event.type === 'breaker-close')).toEqual([]);
        // one probe at a time: every probe failed and re-opened the breaker before the next one
        expect(probes.length).toBeGreaterThanOrEqual(1);
        expect(reopens).toHaveLength(probes.length);
        const transitions = events.filter((event) => event.type === 'breaker-half-open' || event.type === 'breaker-reopen').map((event) => event.type);
        expect(transitions).toEqual(probes.flatMap(() => ['breaker-half-open', 'breaker-reopen']));
        for (const [index, probe] of probes.entries()) {
          const previousOpening = index === 0 ? alerts[0]!.at : reopens[index - 1]!.at;
          expect(probe.at - previousOpening).toBeGreaterThanOrEqual(HALF_OPEN_AFTER_MS);
        }

        // the tool's calls: before the opening (and those already let through when it opened), then only the probes
        const openedAt = alerts[0]!.at;
        const whileOpen = api.calls.filter((call) => call.startedAt > openedAt + STRADDLE_MARGIN_MS);
        const unmatched = whileOpen.filter((call) => !probes.some((probe) => call.startedAt >= probe.at && call.startedAt - probe.at <= STRADDLE_MARGIN_MS));
        expect(unmatched).toEqual([]);
        expect(whileOpen).toHaveLength(probes.length);
        const inFlightBound = PROCESS_COUNT * CONCURRENCY;
        expect(api.calls.length).toBeLessThanOrEqual(FAILURE_THRESHOLD - 1 + inFlightBound + probes.length);

        // every run is in the tool DLQ once; none called the tool twice
        const entries = (await stores.toolDlq.list()).map((record) => record.entry as ToolFailureEntry);
        expect(new Set(entries.map((entry) => entry.runId)).size).toBe(RUN_COUNT);
        const reasons = countBy(entries.map((entry) => entry.reason));
        expect(new Set(api.calls.map((call) => call.runId)).size).toBe(api.calls.length);
        console.info(
          `[breaker storm, state in ${breakers}] ${RUN_COUNT} runs on ${PROCESS_COUNT}×${CONCURRENCY} workers in ${(elapsedMs / 1000).toFixed(1)} s: ` +
            `${alerts.length} alert for ${record.openings} opening; tool called ${api.calls.length} times = ` +
            `${api.calls.length - whileOpen.length} before the breaker was open (threshold ${FAILURE_THRESHOLD}; in flight at most ${inFlightBound}) + ${whileOpen.length} while open, ` +
            `all of them probes (${probes.length} probes, one per ${HALF_OPEN_AFTER_MS} ms cool-down, each re-opened it); ` +
            `tool DLQ reasons: ${JSON.stringify(Object.fromEntries(reasons))}.`,
        );
      } finally {
        for (const worker of workers) if (worker.alive) worker.child.kill('SIGKILL');
        await Promise.all(workers.map((worker) => worker.exited));
        api.server.close();
        await queue.obliterate({ force: true }).catch(() => undefined);
        await queue.close();
        await deleteRedisKeys(redis, redisPrefix);
        await stores.close();
        await dropSchema(pool, schema);
      }
    },
  );
});

/**
 * Probe tokens through the real stores: two breakers (two processes) over one Redis or PostgreSQL
 * store, a model breaker key (`model:<name>`), a fake clock. In process and fast: it checks the
 * stored record round-trips the token and the stores' atomic update keeps one probe, not load.
 */
describe.each(['redis', 'postgres'] as const)('probe tokens across processes, breaker state in %s', (breakers) => {
  const pool = createTestPool();
  const redis = createTestRedis();
  afterAll(async () => {
    await pool.end();
    redis.disconnect();
  });

  it('one probe among 40 concurrent acquires; a stale release from the other process frees nothing; a released probe is grantable at once', async () => {
    const schema = uniqueName('toolrun_probe_');
    const redisPrefix = uniqueName('toolrun-probe:');
    const postgres = breakers === 'postgres' ? await createPostgresStores({ pool, schema }) : undefined;
    const store: BreakerStateStore = postgres ? postgres.breakers : await createRedisBreakerStateStore({ redis, prefix: redisPrefix });
    try {
      let nowMs = 1_700_000_000_000;
      const clock = { now: () => nowMs, sleep: () => Promise.resolve() };
      const events: SharedBreakerEvent[] = [];
      const options = { failureThreshold: 1, halfOpenAfterMs: 1_000, probeTimeoutMs: 5_000 };
      const first = createSharedBreaker({ store, clock, options, onEvent: (event) => events.push(event) });
      const second = createSharedBreaker({ store, clock, options, onEvent: (event) => events.push(event) });
      const key = 'model:gpt-4o';
      expect(await first.recordFailure(key, { message: '401 invalid_api_key' })).toEqual({ opened: true });
      nowMs += 1_000;
      const acquisitions = await Promise.all(Array.from({ length: 40 }, (_, index) => (index % 2 === 0 ? first : second).acquire(key)));
      const probes = acquisitions.filter((acquisition) => acquisition.decision === 'probe');
      expect(probes).toHaveLength(1);
      const probeId = probes[0]!.probeId!;
      expect(typeof probeId).toBe('string');
      expect((await second.state(key))?.probeId).toBe(probeId);
      // the probe is lost (never reported); after probeTimeoutMs the other process gets a new one
      nowMs += 5_000;
      const next = await second.acquire(key);
      expect(next.decision).toBe('probe');
      expect(next.probeId).not.toBe(probeId);
      // the lost probe's late release and late failure do not touch the new probe
      await first.releaseProbe(key, probeId);
      expect(await first.recordFailure(key, { message: 'late' }, probeId)).toEqual({ opened: false });
      expect(await second.state(key)).toMatchObject({ state: 'half-open', probeId: next.probeId, probeStartedAt: nowMs });
      expect((await first.acquire(key)).decision).toBe('reject');
      // the current holder releases it: grantable again at once
      await second.releaseProbe(key, next.probeId);
      const again = await first.acquire(key);
      expect(again.decision).toBe('probe');
      await first.recordSuccess(key, again.probeId);
      expect(await second.state(key)).toEqual({ state: 'closed', consecutiveFailures: 0, openedAt: null, probeStartedAt: null, openings: 1, lastError: null });
      expect(events.map((event) => event.type)).toEqual(['breaker-open', 'breaker-half-open', 'breaker-close']);
    } finally {
      if (postgres) {
        await postgres.close();
        await dropSchema(pool, schema);
      } else await deleteRedisKeys(redis, redisPrefix);
    }
  });
});

function countBy(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}
