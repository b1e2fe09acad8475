/**
 * Profiling helper for the SQLite worker (not part of `npm run bench`): where the bytes of each
 * commit go. Runs the worker bench's 3-step run `runs` times at concurrency 1 on the compiled
 * package (`TOOLRUN_BENCH_DIST` or `dist/`), with the WAL never checkpointed (no background
 * checkpoint, `wal_autocheckpoint = 0`), then reads the WAL file: each commit's frames (one per page
 * it wrote) and, through `dbstat`, the table or index each page belongs to. Prints the page size,
 * the commits and frames per run, and the commits grouped by the b-trees they wrote, with the
 * sizes of the rows a run leaves (checkpoint JSON, ledger values, conversation chunks).
 * `node --import tsx bench/sqlite-wal-pages.mts [runs]` (200 by default).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distEntry } from './runtime.bench.ts';
import { LOOKUP_TOOL, THREE_STEP_TURNS } from './three-step-run.ts';
import type * as Toolrun from '../src/index.ts';
import type * as ToolrunSqlite from '../src/stores/sqlite/index.ts';
import type * as ToolrunTesting from '../src/testing/index.ts';

const { createWorker, defineTool } = (await import(distEntry())) as typeof Toolrun;
const { createSqliteStores } = (await import(distEntry('stores/sqlite/index.js'))) as typeof ToolrunSqlite;
const { createScriptedModel } = (await import(distEntry('testing/index.js'))) as typeof ToolrunTesting;
const runs = Number(process.argv[2] ?? 200);
const warmup = 100;
const lookup = defineTool({ ...LOOKUP_TOOL, execute: async ({ id }) => ({ id, status: 'ok' }) });
const folder = mkdtempSync(join(tmpdir(), 'toolrun-wal-'));
const path = join(folder, 'wal.db');
const stores = createSqliteStores({ path, backgroundCheckpoint: false });
try {
  const database = stores.database;
  const pageSize = database.pragma('page_size', { simple: true }) as number;
  const worker = (count: number) => {
    const models = new Map<string, ReturnType<typeof createScriptedModel>>();
    return createWorker({
      stores,
      tools: [lookup],
      model: (request) => {
        let model = models.get(request.runId);
        if (model === undefined) models.set(request.runId, (model = createScriptedModel(THREE_STEP_TURNS)));
        return model(request);
      },
      onResult: (result) => {
        if (result.status !== 'completed') throw new Error(`run ended ${result.status} (${count})`);
      },
    });
  };
  let next = 0;
  const enqueue = async (count: number) => {
    for (let index = 0; index < count; index++, next++) await stores.queue.enqueue({ body: JSON.stringify({ input: `run ${next}` }), id: `m${next}` });
  };
  // warm-up runs (the file's first pages, the first sweeps), then the WAL emptied
  await enqueue(warmup);
  await worker(warmup).runUntilEmpty();
  await enqueue(runs);
  database.pragma('wal_checkpoint(TRUNCATE)');
  database.pragma('wal_autocheckpoint = 0');
  await worker(runs).runUntilEmpty();
  const wal = readFileSync(`${path}-wal`);
  const owners = new Map<number, string>();
  for (const { name, pageno } of database.prepare('SELECT name, pageno FROM dbstat').all() as { name: string; pageno: number }[]) owners.set(pageno, name);
  const commits: number[][] = [];
  let frames: number[] = [];
  for (let offset = 32; offset + 24 + pageSize <= wal.length; offset += 24 + pageSize) {
    frames.push(wal.readUInt32BE(offset));
    if (wal.readUInt32BE(offset + 4) !== 0) {
      commits.push(frames);
      frames = [];
    }
  }
  const totalFrames = commits.reduce((sum, each) => sum + each.length, 0);
  console.log(`page_size ${pageSize}; ${runs} runs: ${(commits.length / runs).toFixed(2)} commits and ${(totalFrames / runs).toFixed(2)} frames per run`);
  console.log(
    `${((totalFrames * (pageSize + 24)) / runs / 1024).toFixed(1)} KiB of WAL per run, ${(totalFrames / commits.length).toFixed(2)} frames per commit`,
  );
  const kinds = new Map<string, { commits: number; frames: number }>();
  for (const pages of commits) {
    const names = pages.map((page) => owners.get(page) ?? `page ${page === 1 ? 1 : '?'}`);
    const key = [...names].sort().join(', ');
    const entry = kinds.get(key) ?? { commits: 0, frames: 0 };
    entry.commits += 1;
    entry.frames += pages.length;
    kinds.set(key, entry);
  }
  for (const [key, { commits: count, frames: pages }] of [...kinds].sort((a, b) => b[1].commits - a[1].commits)) {
    console.log(`${(count / runs).toFixed(2).padStart(6)} per run  ${(pages / count).toFixed(1)} frames: ${key}`);
  }
  const size = (sql: string) => (database.prepare(sql).get() as { bytes: number | null }).bytes ?? 0;
  console.log(
    `per run: checkpoint JSON ${size('SELECT AVG(length(checkpoint)) AS bytes FROM runs').toFixed(0)} B, ledger value ${size('SELECT AVG(length(value)) AS bytes FROM ledger').toFixed(0)} B × ${(size('SELECT COUNT(*) AS bytes FROM ledger') / (runs + warmup)).toFixed(1)}, conversation chunk ${size('SELECT AVG(length(messages)) AS bytes FROM conversation_messages').toFixed(0)} B × ${(size('SELECT COUNT(*) AS bytes FROM conversation_messages') / (runs + warmup)).toFixed(1)}`,
  );
} finally {
  await stores.close();
  rmSync(folder, { recursive: true, force: true });
}
