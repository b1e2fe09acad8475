/**
 * LangChain agent processes killed with SIGKILL (a child running `createAgent` with
 * `toolrunMiddleware(runtime, { deadLetter })` on SQLite stores and a checkpointer written to a
 * file, see `fixtures/langchain-crash-child.ts`):
 * - killed in the middle of a live run, while its tool runs: the next process resumes the thread
 *   from LangGraph's checkpoint, the tool runs once and the model is asked only for the remaining
 *   step; neither DLQ gets an entry;
 * - killed in the middle of a replay, while the replayed tool runs: the entry is still in the DLQ
 *   and, once the dead replay's claim lapses, the next replay completes it, applying the write once.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStores } from '../../src/stores/sqlite/index.ts';
import { spawnCrashChild } from '../fixtures/crash-child.ts';

const child = fileURLToPath(new URL('./fixtures/langchain-crash-child.ts', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'toolrun-langchain-crash-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

type LogEntry = { mode: string; model?: number; tool?: string; effect?: string; finished?: string; status?: string; modelCalls?: number; text?: string };

const readLog = (path: string): LogEntry[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as LogEntry);

/** Runs the child in `mode` to its end; with `killWhenToolStarts`, kills it once its tool has started. */
async function runChild(
  mode: string,
  paths: { database: string; checkpoints: string; log: string },
  killWhenToolStarts = false,
): Promise<'killed' | 'finished'> {
  const process = spawnCrashChild(child, [mode, paths.database, paths.checkpoints, paths.log], paths.log);
  if (!killWhenToolStarts) return process.ended;
  const watch = setInterval(() => {
    if (readLog(paths.log).some((entry) => entry.mode === mode && entry.tool === 'started')) process.kill();
  }, 20);
  try {
    return await process.ended;
  } finally {
    clearInterval(watch);
  }
}

async function dlqs(database: string) {
  const stores = createSqliteStores({ path: database });
  try {
    return { tool: await stores.toolDlq.list(), message: await stores.messageDlq.list() };
  } finally {
    await stores.close();
  }
}

function paths(name: string) {
  const log = join(directory, `${name}.log`);
  writeFileSync(log, '');
  return { database: join(directory, `${name}.db`), checkpoints: join(directory, `${name}.checkpoints.json`), log };
}

describe('LangChain host processes: killed (SIGKILL), and the example', () => {
  it('killed mid-run: the next process resumes from the checkpoint, the tool runs once, neither DLQ gets an entry', { timeout: 120_000 }, async () => {
    const files = paths('mid-run');
    expect(await runChild('run-hang', files, true)).toBe('killed');
    expect(await runChild('resume', files)).toBe('finished');
    const log = readLog(files.log);
    expect(log.filter((entry) => entry.mode === 'run-hang' && entry.model !== undefined)).toHaveLength(1);
    expect(log.some((entry) => entry.mode === 'run-hang' && entry.tool === 'started')).toBe(true);
    // the remaining step only: the tool's call, then one model turn
    expect(log.filter((entry) => entry.mode === 'resume' && entry.model !== undefined)).toHaveLength(1);
    expect(log.filter((entry) => entry.effect !== undefined)).toEqual([{ mode: 'resume', effect: 'O-1' }]);
    expect(log.find((entry) => entry.finished === 'resume')).toMatchObject({ text: 'Order O-1 handled.' });
    expect(await dlqs(files.database)).toEqual({ tool: [], message: [] });
  });

  it('killed mid-replay: the entry stays, is claimable once the lease lapses, and the next replay applies the write once', { timeout: 120_000 }, async () => {
    const files = paths('mid-replay');
    expect(await runChild('run', files)).toBe('finished');
    const before = await dlqs(files.database);
    expect(before.tool).toHaveLength(1);
    expect(before.message).toEqual([]);

    expect(await runChild('replay-hang', files, true)).toBe('killed');
    expect((await dlqs(files.database)).tool.map((record) => record.id)).toEqual(before.tool.map((record) => record.id));
    await new Promise((resolve) => setTimeout(resolve, 1200)); // the dead replay's claim (1 s lease) lapses
    expect(await runChild('replay', files)).toBe('finished');

    const log = readLog(files.log);
    expect(log.some((entry) => entry.mode === 'replay-hang' && entry.tool === 'started')).toBe(true);
    expect(log.some((entry) => entry.mode === 'replay-hang' && entry.finished !== undefined)).toBe(false);
    expect(log.find((entry) => entry.finished === 'replay')).toMatchObject({ status: 'completed', modelCalls: 1 });
    expect(log.filter((entry) => entry.mode === 'replay' && entry.model !== undefined)).toHaveLength(1);
    expect(log.filter((entry) => entry.effect !== undefined)).toEqual([{ mode: 'replay', effect: 'O-1' }]);
    expect(await dlqs(files.database)).toEqual({ tool: [], message: [] });
  });

  it('the example prints its measured counts as its last line: one entry, replayed twice at once, one write', { timeout: 120_000 }, () => {
    const example = fileURLToPath(new URL('../../examples/langchain/dead-letter-and-replay.ts', import.meta.url));
    const output = execFileSync(process.execPath, ['--import', 'tsx', example], { encoding: 'utf8', timeout: 90_000 });
    expect(JSON.parse(output.trim().split('\n').at(-1)!)).toEqual({
      host: 'langchain',
      dlqEntries: 1,
      messageDlqEntries: 0,
      replayStatus: 'completed',
      modelCallsLive: 2,
      modelCallsOnReplay: 1,
      sideEffects: 1,
    });
  });
});
