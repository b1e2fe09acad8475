/**
 * Profiling helper for the SQLite worker (not part of `npm run bench`): what its time per run is
 * made of. Captures every statement the SQLite worker runs for `runs` 3-step runs at concurrency 1
 * (the worker bench's run, these sources), with the transaction each ran in, then replays them
 * on a new file of the same schema straight on better-sqlite3, with no toolrun code around them:
 * - as the worker ran them (its write transactions and its autocommit reads),
 * - the same without the autocommit reads,
 * - in one transaction per run (what the run's writes cost with one commit),
 * - in one transaction for all the runs (the statements alone, almost no commit).
 * In the same rounds: the worker bench's bare loop (17 single-statement writes per run), the SQLite
 * worker and the memory worker (the floor: the worker's own work, no storage). Prints the CPU time
 * per run (user + system, all threads; the best of the rounds) of each against the bare loop's.
 * The replays checkpoint the WAL inline (SQLite's automatic checkpoint, as the bare loop does);
 * the worker on a thread of its own.
 * `npx tsx bench/sqlite-replay.mts [runs] [rounds]` (2,000 and 3 by default).
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import { createSqliteStores } from '../src/stores/sqlite/index.ts';
import { bareRunsPerSecond, workerRunsPerSecond } from './worker.bench.ts';

/** One captured statement call: its SQL, method, arguments, and the transaction it ran in (0: autocommit). */
interface Call {
  sql: string;
  method: 'run' | 'get' | 'all';
  args: unknown[];
  pluck: boolean;
  transaction: number;
}

const runs = Number(process.argv[2] ?? 2_000);
const rounds = Number(process.argv[3] ?? 3);
const folder = mkdtempSync(join(tmpdir(), 'toolrun-replay-'));

type Prototype = {
  prepare(sql: string): Statement & Record<string, unknown>;
  transaction(fn: (...args: unknown[]) => unknown): unknown;
};
const prototype = Database.prototype as unknown as Prototype;

/** Runs `runs` worker runs on a new file with every statement call recorded, then puts the driver back as it was. */
async function capture(): Promise<Call[]> {
  const calls: Call[] = [];
  const { prepare, transaction } = prototype;
  let depth = 0;
  let current = 0;
  let transactions = 0;
  let capturing = false;
  prototype.prepare = function (this: unknown, sql: string) {
    const statement = prepare.call(this, sql);
    let plucked = false;
    const pluck = statement.pluck;
    statement.pluck = function (this: Statement, on?: boolean) {
      plucked = on !== false;
      return pluck.call(this, on ?? true);
    } as never;
    for (const method of ['run', 'get', 'all'] as const) {
      const call = statement[method] as (...args: unknown[]) => unknown;
      statement[method] = function (this: unknown, ...args: unknown[]) {
        if (capturing) calls.push({ sql, method, args, pluck: plucked, transaction: depth > 0 ? current : 0 });
        return call.apply(this, args);
      } as never;
    }
    return statement;
  };
  prototype.transaction = function (this: unknown, fn: (...args: unknown[]) => unknown) {
    return transaction.call(this, (...args: unknown[]) => {
      if (depth === 0) current = ++transactions;
      depth += 1;
      try {
        return fn(...args);
      } finally {
        depth -= 1;
      }
    });
  };
  try {
    capturing = true;
    await workerRunsPerSecond(runs, 'sqlite', false);
    // the file's migrations and the bench's enqueues come before the first reservation: the
    // replay starts from the schema with its queue filled, untimed
    return calls.slice(calls.findIndex(isReservation));
  } finally {
    capturing = false;
    prototype.prepare = prepare;
    prototype.transaction = transaction;
  }
}

type Mode = 'as the worker ran them' | 'without the autocommit reads' | 'one transaction per run' | 'one transaction for all runs';

/** The reservation of a run's message: a run's calls start with it. */
const isReservation = (call: Call) => call.sql.includes('FROM queue_messages') && call.sql.includes('ORDER BY seq LIMIT 1');

/** Replays `calls` on a copy of `template` (its queue filled as the worker's was, not timed); CPU µs per run and the calls that failed. */
function replay(calls: readonly Call[], template: string, mode: Mode): { cpuUsPerRun: number; failed: number } {
  const path = join(folder, `replay-${Math.random().toString(36).slice(2)}.db`);
  copyFileSync(template, path);
  const database = new Database(path);
  try {
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    const insert = database.prepare('INSERT INTO queue_messages (id, body, enqueued_at_ms) VALUES (?, ?, ?)');
    database.transaction(() => {
      for (let index = 0; index < runs; index++) insert.run(`m${index}`, JSON.stringify({ input: `run ${index}` }), Date.now());
    })();
    database.pragma('wal_checkpoint(TRUNCATE)');
    const statements = new Map<string, Statement>();
    const statementOf = (call: Call) => {
      const key = `${call.pluck ? 'pluck:' : ''}${call.sql}`;
      let statement = statements.get(key);
      if (statement === undefined) {
        statement = database.prepare(call.sql);
        if (call.pluck) statement.pluck();
        statements.set(key, statement);
      }
      return statement;
    };
    for (const call of calls) statementOf(call);
    const begin = database.prepare('BEGIN IMMEDIATE');
    const commit = database.prepare('COMMIT');
    let failed = 0;
    let open = 0;
    const cpu = process.cpuUsage();
    if (mode === 'one transaction for all runs') begin.run();
    for (const call of calls) {
      if (mode === 'without the autocommit reads' && call.transaction === 0) continue;
      if (mode === 'as the worker ran them' || mode === 'without the autocommit reads') {
        if (call.transaction !== open) {
          if (open !== 0) commit.run();
          if (call.transaction !== 0) begin.run();
          open = call.transaction;
        }
      } else if (mode === 'one transaction per run' && isReservation(call)) {
        if (open !== 0) commit.run();
        begin.run();
        open = 1;
      }
      try {
        (statementOf(call)[call.method] as (...args: unknown[]) => unknown)(...call.args);
      } catch {
        failed += 1;
      }
    }
    if (open !== 0 || mode === 'one transaction for all runs') commit.run();
    const { user, system } = process.cpuUsage(cpu);
    return { cpuUsPerRun: (user + system) / runs, failed };
  } finally {
    database.close();
  }
}

try {
  // the writes the bare loop makes, counted on the memory worker (as the worker bench does)
  const naive = await workerRunsPerSecond(400, 'memory', true);
  const calls = await capture();
  const template = join(folder, 'template.db');
  await createSqliteStores({ path: template, backgroundCheckpoint: false }).close();
  const transactions = new Set(calls.map((call) => call.transaction).filter((id) => id !== 0)).size;
  const autocommit = calls.filter((call) => call.transaction === 0).length;
  console.log(
    `${runs} runs captured: ${(calls.length / runs).toFixed(2)} statements, ${(transactions / runs).toFixed(2)} transactions, ` +
      `${(autocommit / runs).toFixed(2)} autocommit statements per run; ${calls.filter(isReservation).length} reservations`,
  );
  const readsBySql = new Map<string, number>();
  for (const call of calls) if (call.transaction === 0) readsBySql.set(call.sql, (readsBySql.get(call.sql) ?? 0) + 1);
  for (const [sql, count] of readsBySql) console.log(`  autocommit ${(count / runs).toFixed(2)}/run: ${sql.replace(/\s+/g, ' ')}`);
  const modes: Mode[] = ['as the worker ran them', 'without the autocommit reads', 'one transaction per run', 'one transaction for all runs'];
  const best = new Map<string, number>();
  const keep = (name: string, cpuUsPerRun: number) => best.set(name, Math.min(best.get(name) ?? Infinity, cpuUsPerRun));
  let failed = 0;
  await workerRunsPerSecond(Math.ceil(runs / 4), 'memory', false); // warm-up (the capture warmed the SQLite worker)
  for (let round = 0; round < rounds; round++) {
    keep('bare loop', bareRunsPerSecond(runs, naive.writesPerRun, naive.bytesPerRun).cpuUsPerRun);
    keep('SQLite worker, concurrency 1', (await workerRunsPerSecond(runs, 'sqlite', false)).cpuUsPerRun);
    keep('memory worker, concurrency 1 (the floor)', (await workerRunsPerSecond(runs, 'memory', false)).cpuUsPerRun);
    for (const mode of modes) {
      const result = replay(calls, template, mode);
      failed = Math.max(failed, result.failed);
      keep(`its statements replayed, ${mode}`, result.cpuUsPerRun);
    }
  }
  const bare = best.get('bare loop')!;
  for (const [name, cpuUsPerRun] of best) {
    console.log(`${cpuUsPerRun.toFixed(0).padStart(6)} µs/run  ${(cpuUsPerRun / bare).toFixed(2).padStart(5)}× the bare loop  ${name}`);
  }
  if (failed > 0) console.log(`${failed} replayed statements failed (constraint or missing row): the replay is not exact`);
} finally {
  rmSync(folder, { recursive: true, force: true });
}
