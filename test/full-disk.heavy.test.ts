/**
 * A full disk under a running worker, on real file systems: a small tmpfs holds a private
 * PostgreSQL instance (started here, on its own port) and a SQLite file; a worker on each runs
 * messages whose tools take 50 ms and 400 ms while the tmpfs is filled (a file the size of the free
 * space) for 20 s, then for 60 s, and freed. Afterwards a history check: every message in exactly
 * one place (its run completed, nothing dead-lettered: every message was healthy), each side effect
 * at most once per (run, step, call), and no claim held once the runs ended.
 *
 * Needs root (mount, and initdb as the postgres user) and PostgreSQL's binaries: where either is
 * missing the suite is skipped, and says why.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker, defineTool, type Model, type Stores, type Worker } from '../src/index.ts';
import { createPostgresStores } from '../src/stores/postgres/index.ts';
import { createSqliteStores } from '../src/stores/sqlite/index.ts';

const PORT = 55_000 + (process.pid % 400);
const MESSAGES_PER_PHASE = 24;
const pgBin = (() => {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const version = readdirSync(root).sort((a, b) => Number(b) - Number(a))[0];
  return version !== undefined && existsSync(join(root, version, 'bin', 'initdb')) ? join(root, version, 'bin') : undefined;
})();

/** Why the suite cannot run here, or undefined. */
function unavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root: cannot mount a tmpfs';
  if (pgBin === undefined) return 'no PostgreSQL binaries under /usr/lib/postgresql';
  const probe = mkdtempSync(join(tmpdir(), 'toolrun-mount-probe-'));
  try {
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe]);
    if (mounted.status !== 0) return `mounting a tmpfs is not allowed here: ${String(mounted.stderr).trim()}`;
    spawnSync('umount', [probe]);
    return undefined;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}
const skipReason = unavailable();
if (skipReason !== undefined) console.warn(`full-disk heavy test skipped: ${skipReason}`);

const mountPoint = mkdtempSync(join(tmpdir(), 'toolrun-full-disk-'));
const dataDir = join(mountPoint, 'pg');
const fillerPath = join(mountPoint, 'filler');
const asPostgres = (command: string, args: string[]) => execFileSync('runuser', ['-u', 'postgres', '--', join(pgBin!, command), ...args], { stdio: 'pipe' });
const pgCtl = (...args: string[]) => spawnSync('runuser', ['-u', 'postgres', '--', join(pgBin!, 'pg_ctl'), '-D', dataDir, ...args], { encoding: 'utf8' });
/** The server's log, outside the tmpfs: it says when a write found no space. */
const pgLog = `${mountPoint}-pg.log`;
const startPostgres = () =>
  pgCtl(
    '-l',
    pgLog,
    '-w',
    '-t',
    '60',
    '-o',
    `-p ${PORT} -k ${mountPoint} -c listen_addresses=127.0.0.1 -c shared_buffers=16MB -c min_wal_size=4MB -c max_wal_size=16MB`,
    'start',
  );

/** Fills the tmpfs: a file the size of its free space, then pages until none fits. Returns the blocks left (0). */
let crumbs = 0;

/**
 * Fills the file system: one big file, then 4 KB crumbs until a write fails. The databases running
 * on it free space at times (a WAL segment recycled, a temporary file removed), so the crumbs go on
 * until a look finds no free block, a few times at most; returns the free blocks then.
 */
function fillDisk(): number {
  const { bavail, bsize } = statfsSync(mountPoint);
  spawnSync('fallocate', ['-l', String(Number(bavail) * Number(bsize)), fillerPath]);
  for (let round = 0; round < 20 && Number(statfsSync(mountPoint).bavail) > 0; round++) {
    for (let index = 0; index < 10_000; index++) {
      try {
        writeFileSync(join(mountPoint, `crumb-${crumbs++}`), 'x'.repeat(4096));
      } catch {
        break;
      }
    }
  }
  return Number(statfsSync(mountPoint).bavail);
}

function freeDisk(): void {
  for (const name of readdirSync(mountPoint)) if (name === 'filler' || name.startsWith('crumb-')) rmSync(join(mountPoint, name), { force: true });
}

/** A model that calls the tool its input names once, then answers. */
const model: Model = async (request) => {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === 'tool') return { text: 'done', usage: { input: 1, output: 1 } };
  const first = request.messages.find((message) => message.role === 'user');
  const tool = String(first?.content).includes('slow') ? 'charge_slow' : 'charge_fast';
  return { toolCalls: [{ id: 'c0', name: tool, args: '{"amountCents":100}' }], usage: { input: 1, output: 1 } };
};

interface Backend {
  name: string;
  stores: Stores & { close(): Promise<void> };
  worker: Worker;
  running: Promise<void>;
  /** Executions per idempotency key (run, step, call). */
  effects: Map<string, number>;
  ids: string[];
}

function startBackend(name: string, stores: Stores & { close(): Promise<void> }): Backend {
  const effects = new Map<string, number>();
  const charge = (toolName: string, ms: number) =>
    defineTool({
      name: toolName,
      description: 'charges a card',
      inputSchema: { type: 'object', properties: { amountCents: { type: 'integer' } } },
      idempotent: true,
      execute: async (_args, ctx) => {
        await new Promise((resolve) => setTimeout(resolve, ms));
        effects.set(ctx.idempotencyKey, (effects.get(ctx.idempotencyKey) ?? 0) + 1);
        return { charged: true };
      },
    });
  const backend: Partial<Backend> = { name, stores, effects, ids: [] };
  const worker = createWorker({
    stores,
    tools: [charge('charge_fast', 50), charge('charge_slow', 400)],
    model,
    concurrency: 4,
    pollIntervalMs: 50,
    redeliveryBackoff: { baseMs: 200, maxMs: 2_000 },
    // the store's failures during the outage (reads of the queue, lease renewals): expected
    onError: () => undefined,
  });
  backend.worker = worker;
  backend.running = worker.run();
  return backend as Backend;
}

async function enqueue(backend: Backend, phase: string): Promise<void> {
  for (let index = 0; index < MESSAGES_PER_PHASE; index++) {
    const id = `${phase}-${index}`;
    await backend.stores.queue.enqueue({ id, body: JSON.stringify({ input: `charge ${index % 2 === 0 ? 'fast' : 'slow'} ${id}` }) });
    backend.ids.push(id);
  }
}

async function until(what: string, check: () => Promise<boolean>, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** One phase: messages enqueued, the disk filled once some are running, held `fullForMs`, freed; every message handled. */
async function phase(backends: Backend[], name: string, fullForMs: number): Promise<void> {
  const handledBefore = backends.map((backend) => backend.worker.stats.handled);
  for (const backend of backends) await enqueue(backend, name);
  await new Promise((resolve) => setTimeout(resolve, 600));
  expect(fillDisk(), `${name}: blocks left after filling`).toBe(0);
  await new Promise((resolve) => setTimeout(resolve, fullForMs));
  freeDisk();
  // a PostgreSQL that stopped on the full disk (a PANIC whose recovery failed) is started again, as an operator would
  if (pgCtl('status').status !== 0) startPostgres();
  await until(
    `${name}: every message handled`,
    async () => backends.every((backend, index) => backend.worker.stats.handled - handledBefore[index]! >= MESSAGES_PER_PHASE),
    240_000,
  );
}

async function historyCheck(backend: Backend): Promise<void> {
  const { stores } = backend;
  // every message in exactly one place: acknowledged, its run completed, no dead letter
  expect(await stores.queue.size(), `${backend.name}: messages left in the queue`).toBe(0);
  expect(await stores.messageDlq.size(), `${backend.name}: healthy messages dead-lettered`).toBe(0);
  expect(await stores.toolDlq.size(), `${backend.name}: runs in the tool DLQ`).toBe(0);
  const statuses = await Promise.all(backend.ids.map(async (id) => (await stores.runs.get(`run_${id}`))?.status));
  expect(
    statuses.filter((status) => status !== 'completed'),
    `${backend.name}: runs not completed`,
  ).toEqual([]);
  // each side effect at most once per (run, step, call), and every run's happened
  const repeated = [...backend.effects].filter(([, count]) => count > 1);
  expect(repeated, `${backend.name}: repeated side effects`).toEqual([]);
  expect(backend.effects.size).toBe(backend.ids.length);
  // no claim held once the runs ended
  const held = (await Promise.all(backend.ids.map((id) => stores.claims?.get(`run:run_${id}`)))).filter((claim) => claim !== undefined);
  expect(held, `${backend.name}: claims still held`).toEqual([]);
}

describe.skipIf(skipReason !== undefined)('a worker whose database disk fills (tmpfs, PostgreSQL and SQLite)', () => {
  const backends: Backend[] = [];

  beforeAll(async () => {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=72m', 'tmpfs', mountPoint]);
    chmodSync(mountPoint, 0o777);
    mkdirSync(dataDir);
    chownSync(dataDir, Number(execFileSync('id', ['-u', 'postgres']).toString().trim()), Number(execFileSync('id', ['-g', 'postgres']).toString().trim()));
    asPostgres('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--wal-segsize=1', '-N']);
    const started = startPostgres();
    if (started.status !== 0) throw new Error(`pg_ctl start failed: ${started.stderr}`);
    const postgres = await createPostgresStores({ connectionString: `postgres://postgres@127.0.0.1:${PORT}/postgres`, schema: 'full_disk', maxConnections: 6 });
    const sqlite = createSqliteStores({ path: join(mountPoint, 'full-disk.db') });
    backends.push(startBackend('postgres', postgres), startBackend('sqlite', sqlite));
  }, 120_000);

  afterAll(async () => {
    for (const backend of backends) backend.worker.stop();
    await Promise.all(backends.map((backend) => backend.running.catch(() => undefined)));
    for (const backend of backends) await backend.stores.close().catch(() => undefined);
    if (pgBin !== undefined) pgCtl('-m', 'immediate', 'stop');
    spawnSync('umount', ['-l', mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
    rmSync(pgLog, { force: true });
  }, 60_000);

  it('20 s then 60 s of a full disk, with a 50 ms and a 400 ms tool: no side effect repeated, no healthy message dead-lettered', async () => {
    await phase(backends, 'full20s', 20_000);
    await phase(backends, 'full60s', 60_000);
    // the full disk did fail the store's writes (SQLite's fail alike: SQLITE_FULL, retried without a trace)
    expect(readFileSync(pgLog, 'utf8')).toMatch(/No space left on device/);
    for (const backend of backends) await historyCheck(backend);
  }, 900_000);
});
