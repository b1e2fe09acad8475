/**
 * `toolrun report` over 10^3, 10^5 and 10^6 failure records (capped by `TOOLRUN_SCALE_MAX`), each
 * run in a child process (`bench/report-scale-child.ts`) whose peak RSS is the row's note: from a
 * SQLite stores file (`--db`), from a PostgreSQL schema (`--store postgres://…`, when the local
 * test server answers; `TOOLRUN_SCALE_POSTGRES=0` skips it) and from a pino log file
 * (`--from-log`, written line by line as the logger would). The target: peak RSS ≤ 256 MB at 10^6,
 * flat with size. The baseline, in the same run: what the report did before it streamed (every
 * record read into one array by `offset` pages, then the report built), from the same SQLite file
 * (and the same PostgreSQL schema at up to 10^5 — at 10^6 it pages by offset for minutes).
 *
 * Seeding (not a committed file): the synthetic records of `bench/failure-records.ts`, inserted
 * in one SQLite transaction; into PostgreSQL by `unnest` of 10,000-row arrays; written to the log
 * file as the `tool_call` / `tool_recovery` / `breaker_open` lines the logger writes.
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { once } from 'node:events';
import type { FailureLogRecord } from '../src/ground/ports/failure-log.ts';
import { createPostgresStores } from '../src/stores/postgres/index.ts';
import { createSqliteStores } from '../src/stores/sqlite/index.ts';
import { syntheticFailureRecord } from './failure-records.ts';
import type { BenchRow } from './measure.ts';

const ALL_SIZES = [1_000, 100_000, 1_000_000];
const RSS_BOUND_MB = 256;

function sizesToRun(): number[] {
  const max = Number(process.env.TOOLRUN_SCALE_MAX ?? Number.POSITIVE_INFINITY);
  const sizes = ALL_SIZES.filter((size) => size <= max);
  return sizes.length > 0 ? sizes : [Math.max(1, Math.floor(max))];
}

interface ChildResult {
  ms: number;
  maxRssKb: number;
}

/** Runs the child with `args`; its last stderr line is the measurement. */
function runChild(args: readonly string[]): Promise<ChildResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', resolve('bench/report-scale-child.ts'), ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, TOOLRUN_DB: '', TOOLRUN_CONFIG: '' },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const last = stderr.trimEnd().split('\n').pop() ?? '';
      if (code !== 0 || !last.startsWith('{')) reject(new Error(`report child ${args.join(' ')} exited ${code}: ${stderr.slice(-2_000)}`));
      else resolvePromise(JSON.parse(last) as ChildResult);
    });
  });
}

/** The pino line the tool-call logger writes for `record` (what `--from-log` reads back). */
function logLine(record: FailureLogRecord): string {
  const base = { level: 30, time: Date.parse(record.at), tool_name: record.toolName, run_id: record.runId, session_id: record.sessionId };
  switch (record.kind) {
    case 'tool-failure':
      return JSON.stringify({
        ...base,
        event: 'tool_call',
        status: 'failed',
        trace_id: record.traceId,
        call_id: record.callId,
        step_index: record.stepIndex,
        error_type: record.type,
        error_code: record.code,
        message: record.message,
        fields: record.fields,
        attempts: record.attempts,
        duration_ms: record.durationMs,
      });
    case 'recovery':
      return JSON.stringify({
        ...base,
        event: 'tool_recovery',
        recovered_with: record.recoveredWith,
        failed_at_step: record.failedAtStep,
        recovered_at_step: record.recoveredAtStep,
        rounds: record.rounds,
        failures: record.failures,
      });
    default:
      return JSON.stringify({ ...base, event: 'breaker_open', scope: record.scope });
  }
}

interface Source {
  name: string;
  /** Grows the source from `from` to `to` records; returns the ms it took. */
  seed(from: number, to: number): Promise<number>;
  /** The child's arguments for `toolrun report`. */
  reportArgs: string[];
  /** The child's arguments for the report as it was before it streamed, when measured at `size`. */
  beforeArgs?: (size: number) => string[] | undefined;
  close(): Promise<void>;
}

function sqliteSource(directory: string): Source {
  const path = join(directory, 'report.db');
  const stores = createSqliteStores({ path });
  stores.database.exec(
    'CREATE TABLE IF NOT EXISTS failure_log (id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, tool_name TEXT NOT NULL, run_id TEXT, at TEXT NOT NULL, record TEXT NOT NULL)',
  );
  const insert = stores.database.prepare('INSERT INTO failure_log (kind, tool_name, run_id, at, record) VALUES (?, ?, ?, ?, ?)');
  return {
    name: 'SQLite --db',
    async seed(from, to) {
      const started = performance.now();
      stores.database.transaction(() => {
        for (let index = from; index < to; index += 1) {
          const record = syntheticFailureRecord(index);
          insert.run(record.kind, record.toolName, record.runId, record.at, JSON.stringify(record));
        }
      })();
      return performance.now() - started;
    },
    reportArgs: ['cli', 'report', '--db', path, '--json'],
    beforeArgs: () => ['before', 'sqlite', path],
    close: () => stores.close(),
  };
}

async function postgresSource(): Promise<Source | string> {
  const url = process.env.TOOLRUN_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `toolrun_report_scale_${process.pid}`;
  let stores: Awaited<ReturnType<typeof createPostgresStores>>;
  try {
    stores = await createPostgresStores({ connectionString: url, schema, maxConnections: 2 });
  } catch (error) {
    return `no PostgreSQL at ${url.replace(/\/\/[^@]*@/, '//…@')}: ${(error as Error).message}`;
  }
  const { pool } = stores;
  const insert = `INSERT INTO "${schema}".failure_log (kind, tool_name, run_id, at, record)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])`;
  return {
    name: 'PostgreSQL --store',
    async seed(from, to) {
      const started = performance.now();
      for (let start = from; start < to; start += 10_000) {
        const columns: string[][] = [[], [], [], [], []];
        for (let index = start; index < Math.min(to, start + 10_000); index += 1) {
          const record = syntheticFailureRecord(index);
          columns[0]!.push(record.kind);
          columns[1]!.push(record.toolName);
          columns[2]!.push(record.runId!);
          columns[3]!.push(record.at);
          columns[4]!.push(JSON.stringify(record));
        }
        await pool.query(insert, columns);
      }
      await pool.query(`ANALYZE "${schema}".failure_log`);
      return performance.now() - started;
    },
    reportArgs: ['cli', 'report', '--store', `${url}${url.includes('?') ? '&' : '?'}schema=${schema}`, '--json'],
    beforeArgs: (size) => (size <= 100_000 ? ['before', 'postgres', url, schema] : undefined),
    async close() {
      await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
      await stores.close();
    },
  };
}

function logFileSource(directory: string): Source {
  const path = join(directory, 'toolrun.log');
  const out = createWriteStream(path, { flags: 'a' });
  return {
    name: 'log file --from-log',
    async seed(from, to) {
      const started = performance.now();
      for (let index = from; index < to; index += 1) {
        if (!out.write(`${logLine(syntheticFailureRecord(index))}\n`)) await once(out, 'drain');
      }
      await new Promise<void>((done, fail) => out.write('', (error) => (error ? fail(error) : done())));
      return performance.now() - started;
    },
    reportArgs: ['cli', 'report', '--from-log', path, '--json'],
    async close() {
      out.end();
      await once(out, 'close');
    },
  };
}

const mb = (kb: number) => kb / 1024;

async function runSource(source: Source): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  let seeded = 0;
  let firstRss: number | undefined;
  for (const size of sizesToRun()) {
    const n = size.toLocaleString('en-US');
    const seedMs = await source.seed(seeded, size);
    rows.push({ name: `${source.name}: seed ${seeded.toLocaleString('en-US')} → ${n} records`, medianNs: seedMs * 1e6, note: 'once' });
    seeded = size;
    const report = await runChild(source.reportArgs);
    firstRss ??= report.maxRssKb;
    const reportRow: BenchRow = {
      name: `${source.name} ${n}: toolrun report --json, peak RSS ${mb(report.maxRssKb).toFixed(0)} MB (${(report.maxRssKb / firstRss).toFixed(2)}× the smallest size; ${size === 1_000_000 ? (mb(report.maxRssKb) <= RSS_BOUND_MB ? 'within' : 'OVER') + ` the ${RSS_BOUND_MB} MB bound` : 'target ≤ 256 MB at 10^6'}; ${((size / report.ms) * 1000).toFixed(0)} records/s)`,
      medianNs: report.ms * 1e6,
      note: 'once, in a child process',
    };
    const beforeArgs = source.beforeArgs?.(size);
    if (beforeArgs) {
      const before = await runChild(beforeArgs);
      rows.push({
        name: `${source.name} ${n}: before (all records in one array, offset pages), peak RSS ${mb(before.maxRssKb).toFixed(0)} MB`,
        medianNs: before.ms * 1e6,
        note: 'once, in a child process',
      });
      reportRow.baseline = `before: RSS ${(report.maxRssKb / before.maxRssKb).toFixed(2)}× of it; time`;
      reportRow.ratio = report.ms / before.ms;
    }
    rows.push(reportRow);
  }
  return rows;
}

/** Runs the report scale benchmark; see the module comment. */
export async function runReportScaleBench(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const directory = mkdtempSync(join(tmpdir(), 'toolrun-report-scale-'));
  try {
    for (const make of [() => sqliteSource(directory), () => logFileSource(directory)]) {
      const source = make();
      try {
        rows.push(...(await runSource(source)));
      } finally {
        await source.close();
      }
    }
    if (process.env.TOOLRUN_SCALE_POSTGRES !== '0') {
      const postgres = await postgresSource();
      if (typeof postgres === 'string') rows.push({ name: 'PostgreSQL', medianNs: 0, note: `skipped: ${postgres}` });
      else {
        try {
          rows.push(...(await runSource(postgres)));
        } finally {
          await postgres.close();
        }
      }
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  return rows;
}
