import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startSqliteBackgroundCheckpoint } from './sqlite-background-checkpoint.ts';
import { createSqliteStores } from './sqlite-stores.ts';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const committerScript = join(projectRoot, 'test/fixtures/sqlite-step-committer.ts');
const folders: string[] = [];
const newPath = () => {
  const folder = mkdtempSync(join(tmpdir(), 'toolrun-checkpoint-'));
  folders.push(folder);
  return join(folder, 'stores.db');
};
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

const autocheckpointPages = (database: Database.Database) => database.pragma('wal_autocheckpoint', { simple: true }) as number;

/** Waits until `condition` holds, polling every 10 ms, for at most `timeoutMs`. */
async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolveWait) => setTimeout(resolveWait, 10));
  }
}

/** Writes `pages` pages or so of distinct rows, each in a commit of its own. */
function writeRows(database: Database.Database, pages: number): void {
  database.exec('CREATE TABLE IF NOT EXISTS filler (id INTEGER PRIMARY KEY, value TEXT NOT NULL)');
  const insert = database.prepare('INSERT INTO filler (value) VALUES (?)');
  for (let page = 0; page < pages; page++) insert.run('x'.repeat(3_000) + page);
}

interface Committer {
  lines: () => string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
  kill: () => void;
}

function startCommitter(path: string, ...args: string[]): Committer {
  return startCommitterIn(projectRoot, path, ...args);
}

function startCommitterIn(cwd: string, path: string, ...args: string[]): Committer {
  const child = spawn(process.execPath, ['--import', join(projectRoot, 'node_modules/tsx/dist/loader.mjs'), committerScript, path, ...args], { cwd });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return {
    lines: () => stdout.split('\n').filter((line) => line !== ''),
    exited: new Promise((resolveExit) => child.once('exit', (code, signal) => resolveExit({ code, signal, stderr }))),
    kill: () => child.kill('SIGKILL'),
  };
}

describe('startSqliteBackgroundCheckpoint', () => {
  it('copies the WAL into the database file on its own thread, with no checkpoint in the writing connection', async () => {
    const path = newPath();
    const database = new Database(path);
    database.pragma('journal_mode = WAL');
    const background = startSqliteBackgroundCheckpoint(database, { path, busyTimeoutMs: 1_000, minIntervalMs: 5, maxIntervalMs: 20 });
    try {
      // the connection's own checkpoint is now the fallback, far above what is written here
      expect(autocheckpointPages(database)).toBe(4000);
      const before = statSync(path).size;
      writeRows(database, 1_500);
      await until(() => statSync(path).size > before + 1_000 * 4096);
      // the thread counts a checkpoint once SQLite's call returned (after the copy and its fsync)
      await until(() => background.checkpoints() > 0);
      expect(background.running()).toBe(true);
    } finally {
      await background.stop();
    }
    // stopped: the connection checkpoints by itself again
    expect(background.running()).toBe(false);
    expect(autocheckpointPages(database)).toBe(1000);
    expect((database.prepare('SELECT COUNT(*) AS rows FROM filler').get() as { rows: number }).rows).toBe(1_500);
    database.close();
  });

  it('leaves the connection checkpointing by itself when the thread cannot open the file', async () => {
    const path = newPath();
    const database = new Database(path);
    database.pragma('journal_mode = WAL');
    database.exec('CREATE TABLE t (id INTEGER PRIMARY KEY)');
    unlinkSync(path); // the connection keeps its open file; the thread finds none
    const background = startSqliteBackgroundCheckpoint(database, { path, busyTimeoutMs: 1_000 });
    await until(() => !background.running());
    expect(autocheckpointPages(database)).toBe(1000);
    await background.stop();
    database.close();
  });
});

describe('createSqliteStores: background checkpoint', () => {
  it('starts after 64 conversation writes, and close() stops it', async () => {
    const path = newPath();
    const stores = createSqliteStores({ path });
    for (let write = 0; write < 63; write++) await stores.conversations.put(`c${write}`, [{ role: 'user', content: 'hello' }]);
    expect(autocheckpointPages(stores.database)).toBe(1000);
    await stores.conversations.put('c63', [{ role: 'user', content: 'hello' }]);
    expect(autocheckpointPages(stores.database)).toBe(4000);
    await stores.close();
    expect(stores.database.open).toBe(false);
    // the last connection closed checkpointed and removed the WAL, as without the thread
    expect(() => statSync(`${path}-wal`)).toThrow();
  });

  it('backgroundCheckpoint: false keeps SQLite’s automatic checkpoint', async () => {
    const stores = createSqliteStores({ path: newPath(), backgroundCheckpoint: false });
    for (let write = 0; write < 80; write++) await stores.conversations.put(`c${write}`, [{ role: 'user', content: 'hello' }]);
    expect(autocheckpointPages(stores.database)).toBe(1000);
    await stores.close();
  });

  it('a process that never closes its stores still exits', async () => {
    const committer = startCommitter(newPath(), '200', 'leave');
    const { code, stderr } = await committer.exited;
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(committer.lines().at(-1)).toBe('left');
  }, 30_000);

  it('the thread opens the file the stores opened, even after the process changed its working directory', async () => {
    const path = newPath();
    const folder = dirname(path);
    // a relative path, then a move to another folder: 400 steps (about 2,300 pages) stay under the
    // connection's own bound (4,000), so only the thread copies pages into the file
    const committer = startCommitterIn(folder, 'stores.db', '400', 'hold', tmpdir());
    try {
      await until(() => committer.lines().at(-1) === 'held', 20_000);
      // every page of the database (WAL included) is in the file: the thread copied them there
      const reader = new Database(path, { readonly: true });
      const pages = reader.pragma('page_count', { simple: true }) as number;
      reader.close();
      expect(pages).toBeGreaterThan(100);
      expect(statSync(path).size).toBe(pages * 4096);
    } finally {
      committer.kill();
      await committer.exited;
    }
  }, 30_000);

  it('a process killed while the thread checkpoints loses no committed step', async () => {
    const path = newPath();
    const committer = startCommitter(path);
    // well past the thread's start (64 writes) and past several of its checkpoints (about 6 pages a step)
    await until(() => committer.lines().length >= 1_500, 20_000);
    committer.kill();
    const { signal } = await committer.exited;
    expect(signal).toBe('SIGKILL');
    const printed = committer.lines().map((line) => Number(/^committed (\d+)$/.exec(line)![1]));
    const last = printed.at(-1)!;
    const stores = createSqliteStores({ path, backgroundCheckpoint: false });
    try {
      const checkpoint = await stores.runs.get('run');
      expect(checkpoint!.stepIndex).toBeGreaterThan(last);
      const conversation = await stores.conversations.get('conversation');
      // whole steps only: the conversation and the checkpoint agree
      expect(conversation).toHaveLength(2 * checkpoint!.stepIndex);
      for (const step of [0, Math.floor(last / 2), last]) expect(await stores.ledger.get(`run:${step}:0`)).toEqual({ step });
      expect(await stores.ledger.get(`run:${checkpoint!.stepIndex - 1}:0`)).toEqual({ step: checkpoint!.stepIndex - 1 });
      expect(stores.database.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      await stores.close();
    }
  }, 60_000);
});
