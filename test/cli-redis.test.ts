/**
 * `--store postgres://… --queue redis://…` on the commands that read and act on the dead-letter
 * queues (`stats`, `dlq`, `dashboard`): the DLQs, breakers and claims come from Redis (toolrun/redis,
 * one key prefix per test), the run queue and the rest from PostgreSQL. A command that needs a run
 * queue there (`worker`, `enqueue`) still refuses it; a Redis that does not answer is one error line.
 * Real PostgreSQL and Redis (`TOOLRUN_TEST_POSTGRES_URL`, `TOOLRUN_TEST_REDIS_URL`).
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolrunInProcess } from './fixtures/toolrun-in-process.ts';
import { createPostgresStores } from '../src/stores/postgres/postgres-stores.ts';
import { createRedisDeadLetterQueues } from '../src/stores/redis/index.ts';
import { createTestPool, createTestRedis, deleteRedisKeys, dropSchema, POSTGRES_URL, REDIS_URL, uniqueName } from './fixtures/distributed-services.ts';

const toolrun = toolrunInProcess;

const schema = uniqueName('toolrun_cli_redis_');
const prefix = `${uniqueName('toolrun-cli-redis-')}:`;
const storeUrl = `${POSTGRES_URL}?schema=${schema}`;
const queueUrl = `${REDIS_URL}?prefix=${encodeURIComponent(prefix)}`;
const pool = createTestPool({ max: 2 });
const redis = createTestRedis();
const TOOL_ENTRY = {
  kind: 'tool',
  runId: 'run_redis_1',
  stepIndex: 0,
  toolName: 'book_flight',
  reason: 'retry-budget-exhausted',
  attempts: 3,
  lastError: { kind: 'server', status: 503, message: 'down' },
  firstSeenAt: '2026-01-01T00:00:00.000Z',
  conversationRef: 'conv_missing',
  tokensSpent: { input: 100, output: 10 },
};
const MESSAGE_ENTRY = { kind: 'message', rawBody: '{', reason: { code: 'MALFORMED_JSON', detail: 'not JSON' }, receivedAt: '2026-01-01T00:00:00.000Z' };
let toolIds: string[] = [];

beforeAll(async () => {
  // PostgreSQL holds one tool entry of its own: the commands must not read it
  const stores = await createPostgresStores({ pool, schema });
  await stores.toolDlq.push({ ...TOOL_ENTRY, runId: 'run_postgres', toolName: 'postgres_tool' } as never);
  await stores.close();
  const queues = await createRedisDeadLetterQueues({ redis, prefix });
  toolIds = [await queues.toolDlq.push(TOOL_ENTRY as never), await queues.toolDlq.push({ ...TOOL_ENTRY, runId: 'run_redis_2' } as never)];
  await queues.messageDlq.push(MESSAGE_ENTRY as never);
});

afterAll(async () => {
  await deleteRedisKeys(redis, prefix);
  await dropSchema(pool, schema);
  await pool.end();
  redis.disconnect();
});

describe('--store postgres://… --queue redis://…', () => {
  it('stats counts the Redis dead-letter queues, and says where they are without credentials', async () => {
    const result = await toolrun(['stats', '--json', '--store', storeUrl, '--queue', queueUrl]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const stats = JSON.parse(result.stdout) as {
      store: string;
      deadLetters: { tool: { depth: number; entriesByTool: Record<string, number> }; message: { depth: number } };
    };
    expect(stats.deadLetters.tool.depth).toBe(2);
    expect(stats.deadLetters.tool.entriesByTool).toEqual({ book_flight: 2 });
    expect(stats.deadLetters.message.depth).toBe(1);
    expect(stats.store).toContain(`schema ${schema}`);
    expect(stats.store).toContain(`prefix ${prefix}`);
  });

  it('dlq list and show read the Redis entries (ids need no --dlq)', async () => {
    const list = await toolrun(['dlq', 'list', '--dlq', 'tool', '--json', '--store', storeUrl, '--queue', queueUrl]);
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    const records = JSON.parse(list.stdout) as Array<{ id: string; entry: { runId: string } }>;
    expect(records.map((record) => record.entry.runId)).toEqual(['run_redis_1', 'run_redis_2']);
    const show = await toolrun(['dlq', 'show', toolIds[1]!, '--json', '--store', storeUrl, '--queue', queueUrl]);
    expect(show.code).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({ id: toolIds[1], entry: { runId: 'run_redis_2' } });
  });

  it('the dashboard serves the Redis dead-letter queues: overview numbers equal stats, groups and lists from Redis', async () => {
    const stats = JSON.parse((await toolrun(['stats', '--json', '--store', storeUrl, '--queue', queueUrl])).stdout) as { deadLetters: Record<string, unknown> };
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'dashboard', '--port', '0', '--store', storeUrl, '--queue', queueUrl], {
      env: { ...process.env, TOOLRUN_DB: '', TOOLRUN_CONFIG: '' },
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let output = '';
        const timer = setTimeout(() => reject(new Error(`the dashboard did not start in 25 s: ${output}`)), 25_000);
        const onData = (chunk: Buffer) => {
          output += chunk.toString();
          const match = /toolrun dashboard: (http:\/\/\S+\/)/.exec(output);
          if (match) {
            clearTimeout(timer);
            resolve(match[1]!);
          }
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
        child.on('exit', (code) => reject(new Error(`the dashboard exited with ${code}: ${output}`)));
      });
      const get = async (path: string) => (await (await fetch(new URL(path, url))).json()) as Record<string, unknown>;
      const overview = (await get('api/overview?fresh=1')) as {
        deadLetters: { tool: Record<string, unknown>; message: Record<string, unknown> };
        store: string;
      };
      const withoutAge = (queue: Record<string, unknown>) => ({ ...queue, oldestAgeMs: null });
      const expected = stats.deadLetters as { tool: Record<string, unknown>; message: Record<string, unknown> };
      expect(withoutAge(overview.deadLetters.tool)).toEqual(withoutAge(expected.tool));
      expect(withoutAge(overview.deadLetters.message)).toEqual(withoutAge(expected.message));
      expect(overview.store).toContain(`prefix ${prefix}`);
      const groups = (await get('api/tool/groups?fresh=1')) as { tool: Array<{ group: string; count: number }>; source: { tool: string } };
      expect(groups.tool).toEqual([expect.objectContaining({ group: 'retry-budget-exhausted · server 503 · book_flight', count: 2 })]);
      expect(groups.source.tool).toBe('scan');
      const entries = (await get('api/tool/entries?tool=book_flight')) as { total: number; rows: Array<{ runId: string }> };
      expect(entries.total).toBe(2);
      expect(entries.rows.map((row) => row.runId)).toEqual(['run_redis_1', 'run_redis_2']);
    } finally {
      await new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
        child.once('exit', () => {
          clearTimeout(kill);
          done();
        });
        child.kill('SIGTERM');
      });
    }
  }, 40_000);

  it('a command that needs a run queue there (enqueue) still refuses Redis, with one error line', async () => {
    const result = await toolrun(['enqueue', '{"input": "hi"}', '--store', storeUrl, '--queue', queueUrl]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^toolrun: error: unsupported backend "redis:" for --queue/);
    expect(result.stderr).toContain('createBullMqWorker');
  });

  it('a Redis that does not answer is one error line, without the password', async () => {
    const result = await toolrun(['stats', '--store', storeUrl, '--queue', 'redis://user:s3cret-pass@127.0.0.1:1?prefix=x:']);
    expect(result.code).not.toBe(0);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^toolrun: error: .*Redis does not answer/);
    expect(result.stderr).not.toContain('s3cret-pass');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  }, 30_000);
});
