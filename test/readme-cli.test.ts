/**
 * The README's first run of the CLI, as written: enqueue with `--init`, the worker until the queue is
 * empty on the README's config module (examples/readme/toolrun.config.mjs, offline without
 * OPENAI_API_KEY), then stats. In process, on a SQLite file of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { toolrunInProcess } from './fixtures/toolrun-in-process.ts';

const folder = mkdtempSync(join(tmpdir(), 'toolrun-readme-cli-'));
const db = join(folder, 'toolrun.db');
const config = resolve(import.meta.dirname, '../examples/readme/toolrun.config.mjs');

afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe("the README's CLI run", () => {
  it('enqueues, runs the message to completion with the offline model, and stats count it', async () => {
    const enqueued = await toolrunInProcess(['enqueue', '--db', db, '--init', '{"input": "Where is order 1234?"}']);
    expect(enqueued.code).toBe(0);

    const worker = await toolrunInProcess(['worker', '--until-empty', '--db', db, '--config', config], { OPENAI_API_KEY: '' });
    expect(worker.code).toBe(0);
    expect(worker.stdout + worker.stderr).toMatch(/where they went: 1 completed; 0 to the tool DLQ/);

    const stats = await toolrunInProcess(['stats', '--db', db, '--json']);
    expect(stats.code).toBe(0);
    const counted = JSON.parse(stats.stdout) as { runs: Record<string, number> | null; queue: { size: number } };
    expect(counted.runs).toEqual({ completed: 1 });
    expect(counted.queue.size).toBe(0);
  });
});
