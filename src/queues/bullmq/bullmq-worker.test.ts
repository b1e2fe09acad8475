import { Queue } from 'bullmq';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WorkerEvent } from '../../worker/worker-events.ts';
import type { ToolFailureEntry } from '../../ground/dead-letter-entries.ts';
import { createPostgresStores, type PostgresStores } from '../../stores/postgres/index.ts';
import { createRedisDeadLetterQueues } from '../../stores/redis/index.ts';
import { createStoreJournal } from '../../stores/store-journal.ts';
import { createDistributedTools, createSideEffectTables, distributedModel } from '../../../test/fixtures/distributed-agent.ts';
import { createTestPool, createTestRedis, deleteRedisKeys, dropSchema, REDIS_URL, uniqueName } from '../../../test/fixtures/distributed-services.ts';
import { createBullMqWorker, type BullMqRunWorker } from './create-bullmq-worker.ts';
import { enqueueRun } from './enqueue-run.ts';
import { fromJobId, toJobId } from './job-id.ts';
import { requeueRunRequests } from './requeue-run-requests.ts';

const pool = createTestPool();
const redis = createTestRedis();
afterAll(async () => {
  await pool.end();
  await redis.quit();
});

const connection = { url: REDIS_URL };
let schema: string;
let queueName: string;
let stores: PostgresStores;
let queue: Queue;
const workers: BullMqRunWorker[] = [];

beforeEach(async () => {
  schema = uniqueName('toolrun_test_');
  queueName = uniqueName('toolrun-test-');
  stores = await createPostgresStores({ pool, schema });
  await createSideEffectTables(pool, schema);
  queue = new Queue(queueName, { connection });
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.close()));
  await queue.obliterate({ force: true });
  await queue.close();
  await stores.close();
  await dropSchema(pool, schema);
});

async function waitFor(what: string, condition: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function startWorker(options: Partial<Parameters<typeof createBullMqWorker>[0]> = {}): BullMqRunWorker {
  const worker = createBullMqWorker({
    connection,
    queueName,
    stores,
    model: distributedModel,
    tools: createDistributedTools({ pool, schema }),
    concurrency: 4,
    ...options,
  });
  workers.push(worker);
  return worker;
}

async function sideEffects(): Promise<{ run_id: string; step_index: number }[]> {
  return (await pool.query(`SELECT run_id, step_index FROM "${schema}".side_effects ORDER BY run_id, step_index`)).rows;
}

describe('job ids', () => {
  it('keeps ids BullMQ accepts and escapes the others one-to-one', () => {
    const ids = ['m1', 'run-7', '42', '0', 'a:b', 'a:b:c', '%41', '', 'ünï code', '12abc'];
    const jobIds = ids.map(toJobId);
    expect(jobIds.slice(0, 2)).toEqual(['m1', 'run-7']);
    expect(toJobId('12abc')).toBe('12abc');
    for (const jobId of jobIds) {
      expect(jobId.includes(':')).toBe(false);
      expect(`${Number.parseInt(jobId, 10)}`).not.toBe(jobId);
      expect(jobId.length).toBeGreaterThan(0);
    }
    expect(new Set(jobIds).size).toBe(ids.length);
    expect(jobIds.map(fromJobId)).toEqual(ids);
  });
});

describe('the BullMQ worker', () => {
  it('routes each message to exactly one terminal place, with the stores in PostgreSQL', async () => {
    const events: WorkerEvent[] = [];
    const worker = startWorker({ onEvent: (event) => events.push(event) });
    await enqueueRun(queue, JSON.stringify({ input: 'effects 2' }), 'ok');
    await enqueueRun(queue, '{not json', '42');
    await enqueueRun(queue, JSON.stringify({ input: 'down' }), 'broken:tool');
    await waitFor('three handled messages', () => worker.stats.handled === 3);

    expect(worker.stats.byStatus).toEqual({ completed: 1, rejected: 1, tool_failed: 1 });
    expect((await stores.runs.get('run_ok'))?.status).toBe('completed');
    expect(await sideEffects()).toEqual([
      { run_id: 'run_ok', step_index: 0 },
      { run_id: 'run_ok', step_index: 1 },
    ]);
    const messageEntries = (await stores.messageDlq.list()).map((record) => record.entry);
    expect(messageEntries).toMatchObject([{ kind: 'message', rawBody: '{not json', messageId: '42', reason: { code: 'MALFORMED_JSON' } }]);
    const toolEntries = (await stores.toolDlq.list()).map((record) => record.entry as ToolFailureEntry);
    expect(toolEntries).toMatchObject([{ kind: 'tool', runId: 'run_broken:tool', toolName: 'always_down', attempts: 3, originalMessageId: 'broken:tool' }]);
    expect(toolEntries[0]!.conversationRef).toMatch(/^conv_/);
    expect((await queue.getJob(toJobId('ok')))?.returnvalue).toEqual({ status: 'completed', runId: 'run_ok' });
    expect(await queue.getJobCounts('completed', 'failed', 'wait', 'active', 'delayed')).toEqual({ completed: 3, failed: 0, wait: 0, active: 0, delayed: 0 });
    expect(
      events
        .filter((event) => event.type === 'dead-letter-add')
        .map((event) => (event as { queue: string }).queue)
        .sort(),
    ).toEqual(['message', 'tool']);
  });

  it('resumes a stalled job from its checkpoint on another worker, without repeating a recorded tool call', async () => {
    // never settles: the first worker "dies" inside step 1's tool call and never comes back
    const stuck = new Promise<void>(() => {});
    let modelCalls = 0;
    const tools = createDistributedTools({ pool, schema });
    // the first worker records step 0's effect, then hangs in step 1's call, then "dies" (force-closed: no more lock renewals)
    const hangingTools = tools.map((tool) =>
      tool.name !== 'record_effect'
        ? tool
        : {
            ...tool,
            execute: async (args: { step: number }, context: Parameters<typeof tool.execute>[1]) => {
              if (args.step === 1) await stuck;
              return tool.execute(args, context);
            },
          },
    );
    const first = startWorker({
      tools: hangingTools,
      concurrency: 1,
      lockDurationMs: 1_000,
      stalledIntervalMs: 500,
      model: async (request) => {
        modelCalls += 1;
        return distributedModel(request);
      },
    });
    await enqueueRun(queue, JSON.stringify({ input: 'effects 2' }), 'resumed');
    await waitFor('the effect of step 0', async () => (await sideEffects()).length === 1);
    await waitFor('the second model call', () => modelCalls === 2);
    await first.worker.close(true);
    expect(modelCalls).toBe(2);

    let secondModelCalls = 0;
    const second = startWorker({
      tools,
      concurrency: 1,
      lockDurationMs: 1_000,
      stalledIntervalMs: 500,
      model: async (request) => {
        secondModelCalls += 1;
        return distributedModel(request);
      },
    });
    await waitFor('the redelivered run', () => second.stats.handled === 1);

    expect(second.stats.byStatus).toEqual({ completed: 1 });
    // step 1's model turn was checkpointed: the second worker only runs step 1's call and asks for the answer
    expect(secondModelCalls).toBe(1);
    expect(await sideEffects()).toEqual([
      { run_id: 'run_resumed', step_index: 0 },
      { run_id: 'run_resumed', step_index: 1 },
    ]);
    const invocations = await pool.query(`SELECT idempotency_key FROM "${schema}".tool_invocations ORDER BY idempotency_key`);
    expect(invocations.rows.map((row: { idempotency_key: string }) => row.idempotency_key)).toEqual(['run_resumed:0:0', 'run_resumed:1:0']);
  });

  it('adds no second dead letter and runs nothing twice when a handled message is delivered again', async () => {
    const jobOptions = { removeOnComplete: true };
    const worker = startWorker();
    await enqueueRun(queue, '{not json', 'bad', { jobOptions });
    await enqueueRun(queue, JSON.stringify({ input: 'effects 1' }), 'good', { jobOptions });
    await enqueueRun(queue, JSON.stringify({ input: 'down' }), 'down', { jobOptions });
    await waitFor('three handled messages', () => worker.stats.handled === 3);
    // the jobs are gone from Redis: enqueuing the same ids again delivers them a second time
    await enqueueRun(queue, '{not json', 'bad', { jobOptions });
    await enqueueRun(queue, JSON.stringify({ input: 'effects 1' }), 'good', { jobOptions });
    await enqueueRun(queue, JSON.stringify({ input: 'down' }), 'down', { jobOptions });
    await waitFor('six handled messages', () => worker.stats.handled === 6);
    expect(await stores.messageDlq.size()).toBe(1);
    expect(await stores.toolDlq.size()).toBe(1);
    expect(await sideEffects()).toEqual([{ run_id: 'run_good', step_index: 0 }]);
    expect(worker.stats.byStatus).toEqual({ rejected: 2, completed: 2, tool_failed: 2 });
  });

  it('enqueues one job per id while it is waiting', async () => {
    await enqueueRun(queue, JSON.stringify({ input: 'effects 1' }), 'same');
    await enqueueRun(queue, JSON.stringify({ input: 'other body' }), 'same');
    expect(await queue.getJobCounts('wait')).toEqual({ wait: 1 });
    expect((await queue.getJob('same'))?.data).toEqual({ body: JSON.stringify({ input: 'effects 1' }), messageId: 'same' });
  });

  it('stops taking messages at the dead-letter bound, alerts once, and resumes below it; nothing is dropped', async () => {
    const events: WorkerEvent[] = [];
    const worker = startWorker({ concurrency: 1, maxDeadLetterEntries: 1, deadLetterCheckIntervalMs: 50, onEvent: (event) => events.push(event) });
    await enqueueRun(queue, '{not json', 'bad-1');
    await waitFor('the first dead letter', () => worker.stats.handled === 1);
    await enqueueRun(queue, '{not json', 'bad-2');
    await enqueueRun(queue, JSON.stringify({ input: 'effects 1' }), 'good');
    await waitFor('the pause', () => worker.stats.paused);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(worker.stats.handled).toBe(1);
    expect(events.filter((event) => event.type === 'dead-letter-full')).toHaveLength(1);
    expect(await stores.messageDlq.size()).toBe(1);

    await stores.messageDlq.purge();
    await waitFor('the rest of the messages', () => worker.stats.handled === 3);
    expect(worker.stats.paused).toBe(false);
    expect(events.filter((event) => event.type === 'dead-letter-below-bound').length).toBeGreaterThanOrEqual(1);
    expect((await stores.messageDlq.list()).map((record) => record.entry.messageId)).toEqual(['bad-2']);
    expect((await stores.runs.get('run_good'))?.status).toBe('completed');
  });

  /** `stores` whose first `failures` checkpoint writes (`runs.put`) throw `message`. */
  const failingCheckpoints = (failures: number, message: string) => {
    let failNext = failures;
    const parts = {
      ...stores,
      runs: {
        get: stores.runs.get,
        put: async (checkpoint: Parameters<typeof stores.runs.put>[0]) => {
          if (failNext-- > 0) throw new Error(message);
          return stores.runs.put(checkpoint);
        },
      },
    };
    // the run journal over the failing run store
    return { ...parts, journal: createStoreJournal(parts) };
  };

  it('retries a job whose stores failed, and completes it once they are back', async () => {
    const errors: unknown[] = [];
    const flaky = failingCheckpoints(2, 'connection terminated');
    // no retry of the checkpoint write inside the run: the job fails, and BullMQ delivers it again
    const worker = startWorker({
      stores: flaky,
      retryBackoff: { baseMs: 10, maxMs: 20 },
      checkpointRetry: { maxAttempts: 1, baseDelayMs: 0, factor: 1, maxDelayMs: 0, jitterMs: 0 },
      onError: (error) => errors.push(error),
    });
    await enqueueRun(queue, JSON.stringify({ input: 'effects 1' }), 'flaky');
    await waitFor('the completed run', () => worker.stats.handled === 1);
    expect(errors.map((error) => (error as Error).message)).toEqual(['connection terminated', 'connection terminated']);
    // two failed attempts, then the one that completed
    expect((await queue.getJob('flaky'))?.attemptsMade).toBe(3);
    expect((await stores.runs.get('run_flaky'))?.status).toBe('completed');
  });

  it('rides out a short store outage inside the run: the checkpoint write is sent again, and the job completes at its first delivery', async () => {
    const errors: unknown[] = [];
    const flaky = failingCheckpoints(2, 'Connection terminated unexpectedly');
    const worker = startWorker({
      stores: flaky,
      retryBackoff: { baseMs: 10, maxMs: 20 },
      checkpointRetry: { maxAttempts: 5, baseDelayMs: 5, factor: 2, maxDelayMs: 20, jitterMs: 0 },
      onError: (error) => errors.push(error),
    });
    await enqueueRun(queue, JSON.stringify({ input: 'effects 1' }), 'outage');
    await waitFor('the completed run', () => worker.stats.handled === 1);
    expect(errors).toEqual([]);
    expect((await queue.getJob('outage'))?.attemptsMade).toBe(1);
    expect((await stores.runs.get('run_outage'))?.status).toBe('completed');
  });

  it('dead-letters a poison job after maxDeliveries, resumable from its checkpoint, and goes on with the next job', async () => {
    const events: WorkerEvent[] = [];
    // the store rejects the poison run's conversation once its first tool result is in it, every time
    const put = stores.conversations.put.bind(stores.conversations);
    const poisonedParts = {
      ...stores,
      conversations: {
        ...stores.conversations,
        get: stores.conversations.get.bind(stores.conversations),
        delete: stores.conversations.delete.bind(stores.conversations),
        put: async (ref: string, messages: readonly unknown[]) => {
          const poison = messages.some((message) => (message as { role?: string }).role === 'tool') && JSON.stringify(messages).includes('run_poison');
          if (poison) throw Object.assign(new Error('invalid input syntax for type json'), { code: '22P02' });
          return put(ref, messages);
        },
      },
    };
    const poisoned = { ...poisonedParts, journal: createStoreJournal(poisonedParts) };
    const worker = startWorker({
      stores: poisoned,
      concurrency: 1,
      maxDeliveries: 3,
      retryBackoff: { baseMs: 10, maxMs: 20 },
      onEvent: (event) => events.push(event),
      onError: () => undefined,
    });
    await enqueueRun(queue, JSON.stringify({ input: 'effects 1', system: 'run_poison' }), 'poison');
    await enqueueRun(queue, JSON.stringify({ input: 'effects 1' }), 'next');
    await waitFor('both jobs handled', () => worker.stats.handled === 2);
    expect(worker.stats.byStatus).toEqual({ completed: 1, delivery_limit_exceeded: 1 });
    const toolEntries = (await stores.toolDlq.list()).map((record) => record.entry as { kind: string; runId: string; deliveries: number; reason: string });
    expect(toolEntries).toEqual([expect.objectContaining({ kind: 'run', runId: 'run_poison', deliveries: 3, reason: 'delivery-limit-exceeded' })]);
    expect(await stores.messageDlq.size()).toBe(0);
    // step 0's effect of the poison run happened once, though it was delivered three times
    expect((await sideEffects()).filter((row) => row.run_id === 'run_poison')).toEqual([{ run_id: 'run_poison', step_index: 0 }]);
    expect(events.filter((event) => event.type === 'delivery-failed').map((event) => (event as { deliveries: number }).deliveries)).toEqual([1, 2]);
    expect(events.filter((event) => event.type === 'delivery-limit-exceeded')).toHaveLength(1);
    expect(await queue.getJobCounts('completed', 'failed')).toEqual({ completed: 2, failed: 0 });
  });

  it('re-enqueues from the PostgreSQL outbox what Redis lost, and only that', async () => {
    const outbox = stores.queue;
    await enqueueRun(queue, JSON.stringify({ input: 'effects 1' }), 'before', { outbox });
    const worker = startWorker({ outbox });
    await waitFor('the first run', () => worker.stats.handled === 1);
    expect(await outbox.size()).toBe(0);
    await worker.close();
    await enqueueRun(queue, JSON.stringify({ input: 'effects 1' }), 'lost-1', { outbox });
    await enqueueRun(queue, '{not json', 'lost-2', { outbox });
    await enqueueRun(queue, JSON.stringify({ input: 'effects 1' }), 'kept', { outbox });
    // Redis loses its data (a restart without persistence), except the job "kept" added again afterwards
    await queue.obliterate({ force: true });
    await enqueueRun(queue, JSON.stringify({ input: 'effects 1' }), 'kept');
    expect(await requeueRunRequests(queue, outbox)).toEqual({ pending: 3, requeued: 2 });
    expect(await requeueRunRequests(queue, outbox)).toEqual({ pending: 3, requeued: 0 });
    const restarted = startWorker({ outbox });
    await waitFor('the lost runs', () => restarted.stats.handled === 3);
    expect(await outbox.size()).toBe(0);
    expect(restarted.stats.byStatus).toEqual({ completed: 2, rejected: 1 });
    expect((await sideEffects()).map((row) => row.run_id)).toEqual(['run_before', 'run_kept', 'run_lost-1']);
  });

  it('writes dead letters to Redis-backed queues when given them', async () => {
    const prefix = uniqueName('toolrun-test:');
    const deadLetterQueues = await createRedisDeadLetterQueues({ url: REDIS_URL, prefix });
    try {
      const worker = startWorker({ deadLetterQueues });
      await enqueueRun(queue, '{not json', 'bad');
      await enqueueRun(queue, JSON.stringify({ input: 'down' }), 'down');
      await waitFor('two handled messages', () => worker.stats.handled === 2);
      expect((await deadLetterQueues.messageDlq.list()).map((record) => record.entry.rawBody)).toEqual(['{not json']);
      expect((await deadLetterQueues.toolDlq.list()).map((record) => (record.entry as ToolFailureEntry).toolName)).toEqual(['always_down']);
      expect(await stores.messageDlq.size()).toBe(0);
      expect(await stores.toolDlq.size()).toBe(0);
    } finally {
      await deadLetterQueues.close();
      await deleteRedisKeys(redis, prefix);
    }
  });
});
