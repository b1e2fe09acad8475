/**
 * The failure log on every backend (memory, SQLite, PostgreSQL): one contract with keyset paging,
 * and `toolrun report` reading it page by page — the same report from a stream of pages as from every record at once,
 * and from PostgreSQL (`--store postgres://…`) as from SQLite.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { toolrunInProcess } from './fixtures/toolrun-in-process.ts';
import type { FailureLogRecord } from '../src/ground/ports/failure-log.ts';
import { buildFailureReport, createFailureReportBuilder, readAllFailures } from '../src/observability/index.ts';
import { runReportCommand, streamFailureLog } from '../src/observability/report/run-report-command.ts';
import { createMemoryFailureLog } from '../src/stores/memory/memory-failure-log.ts';
import { createPostgresFailureLog, createPostgresStores } from '../src/stores/postgres/index.ts';
import { createSqliteFailureLog, createSqliteStores } from '../src/stores/sqlite/index.ts';
import { describeFailureLogContract } from '../src/testing/contract/index.ts';
import { resolveStores } from '../src/cli/resolve-stores.ts';
import { seedDashboardStores } from './fixtures/dashboard-config.ts';
import { createTestPool, dropSchema, POSTGRES_URL, uniqueName } from './fixtures/distributed-services.ts';

const directory = mkdtempSync(join(tmpdir(), 'toolrun-failure-log-backends-'));
const admin = createTestPool({ max: 4 });
afterAll(async () => {
  rmSync(directory, { recursive: true, force: true });
  await admin.end();
});

let files = 0;
describeFailureLogContract('memory', async () => ({ log: createMemoryFailureLog(), cleanup: async () => undefined }));
describeFailureLogContract('sqlite', async () => {
  files += 1;
  const stores = createSqliteStores({ path: join(directory, `contract-${files}.db`) });
  return { log: createSqliteFailureLog(stores.database), cleanup: () => stores.close() };
});
describeFailureLogContract('postgres (a schema per test)', async () => {
  const schema = uniqueName('toolrun_flog_');
  const stores = await createPostgresStores({ pool: admin, schema });
  return {
    log: createPostgresFailureLog(stores.pool, { schema }),
    cleanup: async () => {
      await stores.close();
      await dropSchema(admin, schema);
    },
  };
});

const TOOLS = ['book_reservation', 'update_reservation_flights', 'search_direct_flight', 'cancel_reservation'];
const TYPES = ['invalid_parameter', 'environment', 'permission', 'logic'] as const;

/** A varied record: the three kinds, several tools, types, codes, fields (array items folded), runs. */
function record(index: number): FailureLogRecord {
  const base = {
    at: new Date(Date.UTC(2024, 4, 15) + ((index * 7919) % 100_000) * 1000).toISOString(),
    toolName: TOOLS[index % 4]!,
    runId: `run_${index % 37}`,
    sessionId: null,
  };
  if (index % 11 === 5) {
    const rounds = 1 + (index % 3);
    return {
      ...base,
      kind: 'recovery',
      recoveredWith: TOOLS[(index + 1) % 4]!,
      failedAtStep: 1,
      recoveredAtStep: 1 + rounds,
      rounds,
      failures: 1 + (index % 4),
    };
  }
  if (index % 13 === 7) return { ...base, kind: 'breaker-open', scope: index % 2 === 0 ? 'session' : 'shared' };
  const type = TYPES[index % 4]!;
  return {
    ...base,
    kind: 'tool-failure',
    traceId: `trace_${index}`,
    callId: `call_${index}`,
    stepIndex: index % 5,
    type,
    code: type === 'invalid_parameter' ? (index % 3 === 0 ? 'INVALID_TYPE' : 'MISSING_REQUIRED') : type === 'logic' ? 'PRECONDITION_FAILED' : 'UPSTREAM_ERROR',
    message: `failure ${index % 9} of ${TOOLS[index % 4]}`,
    fields:
      type === 'invalid_parameter'
        ? [
            { path: `/passengers/${index % 3}/dob`, problem: 'format', expected: 'YYYY-MM-DD', received: `"${index % 5}/20"` },
            { path: '/cabin', problem: index % 2 === 0 ? 'enum' : 'type', expected: 'economy|business' },
          ]
        : [],
    attempts: 1 + (index % 3),
    durationMs: index % 100,
  };
}

describe('the report, built page by page', () => {
  const records = Array.from({ length: 2_000 }, (_unused, index) => record(index));

  it('gives the same report as from every record at once, whatever the page size', async () => {
    const whole = buildFailureReport(records, { source: 's' });
    expect(whole.totals).toMatchObject({ records: 2_000, recoveries: 182 });
    for (const pageSize of [1, 7, 1_000, 5_000]) {
      const log = createMemoryFailureLog();
      for (const item of records) await log.append(item);
      const builder = createFailureReportBuilder({ source: 's' });
      let pages = 0;
      for await (const page of streamFailureLog(log, pageSize)) {
        pages += 1;
        for (const item of page) builder.add(item);
      }
      expect(pages).toBe(Math.ceil(2_000 / pageSize));
      expect(builder.build()).toEqual(whole);
    }
  });

  it('reads by cursor when the log has listPage, and by offset when it has not', async () => {
    const log = createMemoryFailureLog();
    for (const item of records.slice(0, 10)) await log.append(item);
    const listPage = vi.spyOn(log, 'listPage');
    const list = vi.spyOn(log, 'list');
    expect(await readAllFailures(log, 4)).toEqual(records.slice(0, 10));
    expect(listPage).toHaveBeenCalledTimes(3);
    expect(list).not.toHaveBeenCalled();
    const { listPage: _omitted, ...withoutKeyset } = log;
    expect(await readAllFailures(withoutKeyset, 4)).toEqual(records.slice(0, 10));
    expect(list).toHaveBeenCalledTimes(3);
    await expect(readAllFailures(log, 0)).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
  });

  it('a memory log at its bound: a cursor whose next records were dropped goes on from the oldest kept', async () => {
    const log = createMemoryFailureLog({ maxRecords: 4 });
    for (const item of records.slice(0, 2)) await log.append(item);
    const first = await log.listPage!({ limit: 2 });
    for (const item of records.slice(2, 10)) await log.append(item);
    expect((await log.listPage!({ limit: 10, after: first.next })).records).toEqual(records.slice(6, 10));
    expect(await readAllFailures(log)).toEqual(records.slice(6, 10));
  });

  it('a --from-log file gives the same report as the store, line by line', async () => {
    const path = join(directory, 'lines.log');
    // tool_call lines as the logger writes them, for the tool-failure records
    const failures = records.filter((item): item is Extract<FailureLogRecord, { kind: 'tool-failure' }> => item.kind === 'tool-failure').slice(0, 300);
    const lines = failures.map((item) =>
      JSON.stringify({
        event: 'tool_call',
        status: 'failed',
        timestamp: item.at,
        tool_name: item.toolName,
        run_id: item.runId,
        session_id: item.sessionId,
        trace_id: item.traceId,
        call_id: item.callId,
        step_index: item.stepIndex,
        error_type: item.type,
        error_code: item.code,
        message: item.message,
        fields: item.fields,
        attempts: item.attempts,
        duration_ms: item.durationMs,
      }),
    );
    writeFileSync(path, `${lines.join('\n')}\nnot json\n`);
    let output = '';
    const result = await runReportCommand({ fromLog: path, json: true, write: (text) => (output += text), writeError: () => undefined });
    expect(result.exitCode).toBe(0);
    const { source, ...rest } = JSON.parse(output);
    expect(source).toBe(`log ${path} (301 lines, 1 unreadable)`);
    const { source: _source, ...expected } = buildFailureReport(failures);
    expect(rest).toEqual(JSON.parse(JSON.stringify(expected)));
  });
});

describe('the PostgreSQL failure log', () => {
  it('is where the CLI records the failures of runs on --store postgres://, and what report reads back', async () => {
    const schema = uniqueName('toolrun_flog_');
    const url = `${POSTGRES_URL}?schema=${schema}`;
    try {
      const resolved = await resolveStores({ store: url, env: {} }, { mustExist: false });
      try {
        expect(resolved.openFailureLog).toBeTypeOf('function');
        // the worker's path: runs observed by createCliObservability over the backend's failure log
        await seedDashboardStores(resolved.stores, { bookings: 3, cancels: 2, lookups: 1, malformed: 1 }, resolved.openFailureLog!());
        const recorded = await readAllFailures(resolved.openFailureLog!());
        expect(recorded.filter((item) => item.kind === 'tool-failure').length).toBeGreaterThan(0);
        const report = await toolrun(['report', '--store', url, '--json']);
        expect(report).toMatchObject({ code: 0, stderr: '' });
        expect(JSON.parse(report.stdout).totals.records).toBe(recorded.length);
      } finally {
        await resolved.stores.close();
      }
    } finally {
      await dropSchema(admin, schema);
    }
  });

  it('toolrun report --store postgres://… prints the same report as from a SQLite file with the same records', async () => {
    const schema = uniqueName('toolrun_flog_');
    const db = join(directory, 'same.db');
    const records = Array.from({ length: 1_234 }, (_unused, index) => record(index));
    const sqlite = createSqliteStores({ path: db });
    const sqliteLog = createSqliteFailureLog(sqlite.database);
    for (const item of records) await sqliteLog.append(item);
    await sqlite.close();
    const stores = await createPostgresStores({ pool: admin, schema });
    const log = createPostgresFailureLog(stores.pool, { schema });
    for (const item of records) await log.append(item);
    await stores.close();
    try {
      const url = `${POSTGRES_URL}?schema=${schema}`;
      const fromPostgres = await toolrun(['report', '--store', url, '--json']);
      expect(fromPostgres).toMatchObject({ code: 0, stderr: '' });
      const fromSqlite = await toolrun(['report', '--db', db, '--json']);
      expect(fromSqlite).toMatchObject({ code: 0, stderr: '' });
      const { source, ...report } = JSON.parse(fromPostgres.stdout);
      expect(source).toMatch(new RegExp(`\\(schema ${schema}\\)$`));
      expect(source).not.toMatch(/postgres@/);
      const { source: _source, ...expected } = JSON.parse(fromSqlite.stdout);
      expect(report).toEqual(expected);
      expect(report.totals.records).toBe(1_234);
      const text = await toolrun(['report', '--store', url]);
      expect(text.code).toBe(0);
      expect(text.stdout).toContain('/passengers/*/dob');
      const missing = await toolrun(['report', '--store', `${POSTGRES_URL}?schema=${uniqueName('toolrun_none_')}`]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/^toolrun: error: no toolrun schema/);
    } finally {
      await dropSchema(admin, schema);
    }
  });
});

describe('findByTraceId reads an index of the trace id, not the table', () => {
  const records = Array.from({ length: 3_000 }, (_unused, index) => record(index));

  it('SQLite: the lookup searches failure_log_by_trace (EXPLAIN QUERY PLAN), also in a file opened before the index existed', async () => {
    const path = join(directory, 'trace-index.db');
    // a file of an earlier version: the table without the trace index, already holding records
    const earlier = createSqliteStores({ path });
    try {
      const { database } = earlier;
      database.exec('DROP INDEX failure_log_by_trace');
      const insert = database.prepare('INSERT INTO failure_log (kind, tool_name, run_id, at, record) VALUES (?, ?, ?, ?, ?)');
      for (const item of records) insert.run(item.kind, item.toolName, item.runId, item.at, JSON.stringify(item));
      expect(database.prepare("SELECT name FROM sqlite_master WHERE name = 'failure_log_by_trace'").get()).toBeUndefined();
    } finally {
      await earlier.close();
    }
    const stores = createSqliteStores({ path }); // opening it migrates it: the index is added
    try {
      const { database } = stores;
      const prepare = vi.spyOn(database, 'prepare');
      let log: ReturnType<typeof createSqliteFailureLog>;
      let statements: string[];
      try {
        log = createSqliteFailureLog(database);
        statements = prepare.mock.calls.map((call) => String(call[0]));
      } finally {
        prepare.mockRestore();
      }
      expect(database.prepare("SELECT name FROM sqlite_master WHERE name = 'failure_log_by_trace'").get()).toEqual({ name: 'failure_log_by_trace' });
      expect(await log.findByTraceId!('trace_2999')).toEqual(records[2999]);
      expect(await log.findByTraceId!('trace_5')).toBeUndefined(); // index 5 is a recovery
      const lookup = statements.filter((statement) => statement.includes('traceId'));
      expect(lookup).toHaveLength(1);
      const plan = (database.prepare(`EXPLAIN QUERY PLAN ${lookup[0]}`).all('trace_1') as Array<{ detail: string }>).map((row) => row.detail).join('\n');
      expect(plan).toMatch(/SEARCH failure_log USING INDEX failure_log_by_trace/);
      expect(plan).not.toMatch(/SCAN failure_log/);
    } finally {
      await stores.close();
    }
  });

  it('PostgreSQL: the lookup reads the partial index failure_log_by_trace (EXPLAIN)', async () => {
    const schema = uniqueName('toolrun_flog_');
    const stores = await createPostgresStores({ pool: admin, schema });
    try {
      const queries: Array<{ text: string; values?: unknown[] }> = [];
      const spying = {
        query: ((query: { text: string; values?: unknown[] }) => {
          queries.push(query);
          return stores.pool.query(query as never);
        }) as typeof stores.pool.query,
      };
      const log = createPostgresFailureLog(spying, { schema });
      await admin.query(
        `INSERT INTO "${schema}".failure_log (kind, tool_name, run_id, at, record) SELECT * FROM json_to_recordset($1::json) AS r(kind text, tool_name text, run_id text, at text, record text)`,
        [JSON.stringify(records.map((item) => ({ kind: item.kind, tool_name: item.toolName, run_id: item.runId, at: item.at, record: JSON.stringify(item) })))],
      );
      await admin.query(`ANALYZE "${schema}".failure_log`);
      queries.length = 0;
      expect(await log.findByTraceId!('trace_2998')).toEqual(records[2998]);
      expect(await log.findByTraceId!('trace_5')).toBeUndefined();
      expect(queries).toHaveLength(2);
      const lookup = queries[0]!;
      const { rows } = await admin.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${lookup.text}`, lookup.values);
      const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/(Bitmap Index Scan on|Index Scan( Backward)? using) failure_log_by_trace/);
      expect(plan).not.toMatch(/Seq Scan/);
    } finally {
      await stores.close();
      await dropSchema(admin, schema);
    }
  });
});

const toolrun = toolrunInProcess;
