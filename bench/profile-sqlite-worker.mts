/**
 * Profiling helper for the SQLite worker (not part of `npm run bench`): runs the worker bench's
 * 3-step run `runs` times on the compiled package (`TOOLRUN_BENCH_DIST` or `dist/`) with every
 * better-sqlite3 statement and transaction wrapped and timed, and prints µs per run of each
 * (transactions with the statements inside them, autocommit statements alone), against the run's
 * total. The timing wrappers add about 0.3 µs a call.
 * `node --import tsx bench/profile-sqlite-worker.mts [runs] [concurrency]` (the worker's `concurrency`, 1 by default).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { distEntry } from './runtime.bench.ts';
import { LOOKUP_TOOL, THREE_STEP_TURNS } from './three-step-run.ts';
import type * as Toolrun from '../src/index.ts';
import type * as ToolrunSqlite from '../src/stores/sqlite/index.ts';
import type * as ToolrunTesting from '../src/testing/index.ts';

type Timed = { calls: number; ns: number };
const timings = new Map<string, Timed>();
let measuring = false;
let depth = 0;
const record = (name: string, ns: number) => {
  const entry = timings.get(name) ?? { calls: 0, ns: 0 };
  entry.calls += 1;
  entry.ns += ns;
  timings.set(name, entry);
};
const timed = <A extends unknown[], R>(name: () => string, call: (...args: A) => R) =>
  function (this: unknown, ...args: A): R {
    if (!measuring) return call.apply(this, args);
    const start = process.hrtime.bigint();
    try {
      return call.apply(this, args);
    } finally {
      record(name(), Number(process.hrtime.bigint() - start));
    }
  };
type Prototype = { prepare(sql: string): Record<string, unknown>; transaction(fn: (...args: unknown[]) => unknown): Record<string, unknown> };
const prototype = Database.prototype as unknown as Prototype;
const prepare = prototype.prepare;
prototype.prepare = function (this: unknown, sql: string) {
  const statement = prepare.call(this, sql);
  const text = sql.replace(/\s+/g, ' ').slice(0, 80);
  for (const method of ['run', 'get', 'all'] as const) {
    statement[method] = timed(
      () => `${depth > 0 ? '  in a transaction:' : 'autocommit:'} ${method} ${text}`,
      statement[method] as (...args: unknown[]) => unknown,
    );
  }
  return statement;
};
const transaction = prototype.transaction;
prototype.transaction = function (this: unknown, fn: (...args: unknown[]) => unknown) {
  const text = `transaction ${String(fn).replace(/\s+/g, ' ').slice(0, 70)}`;
  const nested = (...args: unknown[]) => {
    depth += 1;
    try {
      return fn(...args);
    } finally {
      depth -= 1;
    }
  };
  const wrapped = transaction.call(this, nested);
  const result = timed(() => text, wrapped as unknown as (...args: unknown[]) => unknown) as unknown as Record<string, unknown>;
  for (const mode of ['immediate', 'deferred', 'exclusive'] as const) result[mode] = timed(() => text, wrapped[mode] as (...args: unknown[]) => unknown);
  return result;
};

const { createWorker, defineTool } = (await import(distEntry())) as typeof Toolrun;
const { createSqliteStores } = (await import(distEntry('stores/sqlite/index.js'))) as typeof ToolrunSqlite;
const { createScriptedModel } = (await import(distEntry('testing/index.js'))) as typeof ToolrunTesting;
const runs = Number(process.argv[2] ?? 5_000);
const concurrency = Number(process.argv[3] ?? 1);
const lookup = defineTool({ ...LOOKUP_TOOL, execute: async ({ id }) => ({ id, status: 'ok' }) });
const threeSteps = () => createScriptedModel(THREE_STEP_TURNS);
const folder = mkdtempSync(join(tmpdir(), 'toolrun-profile-'));
const stores = createSqliteStores({ path: join(folder, 'profile.db') });
try {
  for (let index = 0; index < runs; index++) await stores.queue.enqueue({ body: JSON.stringify({ input: `run ${index}` }), id: `m${index}` });
  // a fresh scripted model per run (by its id): with a concurrency above 1 runs interleave
  const models = new Map<string, ReturnType<typeof threeSteps>>();
  const worker = createWorker({
    stores,
    tools: [lookup],
    concurrency,
    model: (request) => {
      let model = models.get(request.runId);
      if (model === undefined) models.set(request.runId, (model = threeSteps()));
      if (model.calls === THREE_STEP_TURNS.length - 1) models.delete(request.runId);
      return model(request);
    },
  });
  measuring = true;
  const start = process.hrtime.bigint();
  await worker.runUntilEmpty();
  const totalNs = Number(process.hrtime.bigint() - start);
  measuring = false;
  let inSqlite = 0;
  let statements = 0;
  let transactions = 0;
  for (const [name, { ns, calls }] of timings) {
    if (!name.startsWith('  ')) inSqlite += ns;
    if (name.startsWith('transaction')) transactions += calls;
    else statements += calls;
  }
  console.log(
    `${(totalNs / runs / 1000).toFixed(0)} µs per run; in SQLite calls ${(inSqlite / runs / 1000).toFixed(0)} µs; ` +
      `${(transactions / runs).toFixed(2)} transactions and ${(statements / runs).toFixed(2)} statements per run`,
  );
  for (const [name, { calls, ns }] of [...timings].sort((a, b) => b[1].ns - a[1].ns).slice(0, 20)) {
    console.log(
      `${(ns / runs / 1000).toFixed(1).padStart(7)} µs/run ${(calls / runs).toFixed(1).padStart(4)}×  ${(ns / calls / 1000).toFixed(1).padStart(6)} µs each  ${name}`,
    );
  }
} finally {
  await stores.close();
  rmSync(folder, { recursive: true, force: true });
}
