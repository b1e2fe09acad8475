/**
 * `toolrun report` on the airline workload's recorded failures (issue 5): the main job's pipeline
 * (service with faults, SQLite worker observed by toolrun/otel, `toolrun dlq drain` in its own
 * process, the parked conversations) on the first 40 conversations with seed 42 and the settings of
 * test/airline-workload.test.ts, then `toolrun report --db <file> --json` and `--from-log <file>`
 * in their own processes. The report's numbers must match the store, counted two other ways:
 * - SQL over the file's `failure_log` table (per tool, per failure type, per code; recoveries and
 *   breaker trips), for every row;
 * - the worker's own count of the failed envelopes it handed to the model (`onToolCall`, a channel
 *   that does not go through toolrun/otel), phase by phase, against the rows of that phase.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { findSharedDataDir } from '../examples/shared-data.ts';
import { loadAirlineRuns, loadAirlineTrajectories } from '../examples/airline/trajectories.ts';
import { DEMO_UNAUTHORIZED_TOOL, type AirlineDemoSettings } from '../examples/airline/workload/demo-settings.ts';
import { runFailureReportLikeAUser } from '../examples/airline/workload/failure-report.ts';
import { MALFORMED_QUEUE_MESSAGES } from '../examples/airline/workload/queue-messages.ts';
import { runAirlineWorkload } from '../examples/airline/workload/run-airline-workload.ts';
import { formatWorkloadSummary } from '../examples/airline/workload/summary.ts';
import { spawnToolrun } from '../examples/airline/workload/toolrun-cli.ts';
import type { FailureReport } from '../src/observability/index.ts';
import { AIRLINE_TEST_CONVERSATIONS, AIRLINE_TEST_SETTINGS, airlineDataPresent } from './fixtures/airline-test-workload.ts';

const dataPresent = airlineDataPresent;
const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CONVERSATIONS = AIRLINE_TEST_CONVERSATIONS;

const settings: AirlineDemoSettings = AIRLINE_TEST_SETTINGS;

const workDir = mkdtempSync(join(tmpdir(), 'toolrun-airline-report-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

interface Row {
  id: number;
  kind: 'tool-failure' | 'recovery' | 'breaker-open';
  toolName: string;
  runId: string | null;
  type: string | null;
  code: string | null;
  scope: string | null;
  rounds: number | null;
  /** JSON array of `{ path, problem }`, for failures. */
  fields: string | null;
}

/** Every failure-log row, read with SQL straight from the file (not through toolrun). */
function readRows(dbPath: string): Row[] {
  const database = new Database(dbPath, { readonly: true });
  try {
    return database
      .prepare(
        `SELECT id, kind, tool_name AS toolName, run_id AS runId,
                json_extract(record, '$.type') AS type, json_extract(record, '$.code') AS code,
                json_extract(record, '$.scope') AS scope, json_extract(record, '$.rounds') AS rounds,
                json_extract(record, '$.fields') AS fields
         FROM failure_log ORDER BY id`,
      )
      .all() as Row[];
  } finally {
    database.close();
  }
}

const increment = (record: Record<string, number>, key: string) => (record[key] = (record[key] ?? 0) + 1);

/** `tool /path` → failed calls with an error on that field (array indices folded to `*`). */
function fieldFailuresOf(failures: readonly Row[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const row of failures) {
    const paths = new Set((JSON.parse(row.fields ?? '[]') as Array<{ path: string }>).map((field) => field.path.replace(/\/\d+(?=\/|$)/g, '/*')));
    for (const path of paths) increment(counts, `${row.toolName} ${path}`);
  }
  return counts;
}

/** What the report must say, counted from rows. */
function expectedFromRows(rows: readonly Row[]) {
  const failures = rows.filter((row) => row.kind === 'tool-failure');
  const byTool: Record<
    string,
    { failures: number; types: Record<string, number>; codes: Record<string, number>; recoveries: number[]; session: number; shared: number }
  > = {};
  const tool = (name: string) => (byTool[name] ??= { failures: 0, types: {}, codes: {}, recoveries: [], session: 0, shared: 0 });
  const types: Record<string, number> = {};
  for (const row of failures) {
    tool(row.toolName).failures += 1;
    increment(tool(row.toolName).types, row.type!);
    increment(tool(row.toolName).codes, row.code!);
    increment(types, row.type!);
  }
  for (const row of rows.filter((item) => item.kind === 'recovery')) tool(row.toolName).recoveries.push(row.rounds!);
  for (const row of rows.filter((item) => item.kind === 'breaker-open')) tool(row.toolName)[row.scope === 'shared' ? 'shared' : 'session'] += 1;
  const mean = (values: number[]) => (values.length === 0 ? null : Math.round((values.reduce((sum, value) => sum + value, 0) / values.length) * 100) / 100);
  return {
    totals: {
      records: rows.length,
      failures: failures.length,
      runsWithFailures: new Set(failures.map((row) => row.runId).filter((runId) => runId !== null)).size,
      tools: Object.keys(byTool).length,
      recoveries: rows.filter((row) => row.kind === 'recovery').length,
      breakerTrips: rows.filter((row) => row.kind === 'breaker-open').length,
    },
    types,
    tools: Object.fromEntries(
      Object.entries(byTool).map(([name, entry]) => [
        name,
        {
          failures: entry.failures,
          types: entry.types,
          codes: entry.codes,
          recovery: { episodes: entry.recoveries.length, meanRounds: mean(entry.recoveries) },
          breakerTrips: { session: entry.session, shared: entry.shared },
        },
      ]),
    ),
    fields: fieldFailuresOf(failures),
  };
}

/** The same numbers, read from the report. */
function numbersOfReport(report: FailureReport) {
  const toCounts = <K extends string>(entries: ReadonlyArray<Record<K, string> & { count: number }>, key: K) =>
    Object.fromEntries(entries.map((entry) => [entry[key], entry.count]));
  return {
    totals: report.totals,
    types: Object.fromEntries(report.types.filter((entry) => entry.count > 0).map((entry) => [entry.type, entry.count])),
    tools: Object.fromEntries(
      report.tools.map((entry) => [
        entry.toolName,
        {
          failures: entry.failures,
          types: toCounts(entry.types, 'type'),
          codes: toCounts(entry.codes, 'code'),
          recovery: entry.recovery,
          breakerTrips: entry.breakerTrips,
        },
      ]),
    ),
    fields: Object.fromEntries(report.fields.map((field) => [`${field.toolName} ${field.path}`, field.failures])),
  };
}

/** Failed calls by tool, then code, from rows (the shape of the worker's own `failedByTool`). */
function failedByToolOf(rows: readonly Row[]): Record<string, Record<string, number>> {
  const counts: Record<string, Record<string, number>> = {};
  for (const row of rows) if (row.kind === 'tool-failure') increment((counts[row.toolName] ??= {}), row.code!);
  return counts;
}

describe.skipIf(!dataPresent)(`toolrun report on the airline workload (seed 42, first ${CONVERSATIONS} conversations)`, () => {
  it("prints a report whose numbers match the failure log and the worker's own count of failed envelopes", async () => {
    const dbPath = join(workDir, 'airline.db');
    const logFile = join(workDir, 'airline.log');
    const env = { ...process.env, TOOLRUN_DATA_DIR: findSharedDataDir() };
    const workload = await runAirlineWorkload({
      runs: loadAirlineRuns(loadAirlineTrajectories().slice(0, CONVERSATIONS)),
      settings,
      projectRoot,
      dbPath,
      configPath: join(projectRoot, 'examples', 'airline', 'toolrun.config.ts'),
      env,
      workerEnv: { TOOLRUN_AIRLINE_BREAKER_COOL_DOWN_MS: '600000' },
      drainEnv: { TOOLRUN_AIRLINE_BREAKER_COOL_DOWN_MS: '1' },
      malformedMessages: MALFORMED_QUEUE_MESSAGES,
      logFile,
      log: () => undefined,
      quiet: true,
    });
    expect(workload.drain.exitCode).toBe(0);
    expect(workload.failureLogAppendErrors).toBe(0);

    // The text report ran at the end of the workload, and its excerpt is in the summary.
    expect(workload.failureReport.exitCode).toBe(0);
    expect(workload.failureReport.stderr).toBe('');
    const summary = formatWorkloadSummary(workload).join('\n');
    expect(summary).toContain('── what fails most (toolrun report) ──');
    expect(summary).toContain(`  $ ${workload.failureReport.command}\n`);

    const rows = readRows(dbPath);
    const { faultPhase, drain, resumePhase } = workload.failureLogRows;
    expect(rows).toHaveLength(faultPhase + drain + resumePhase);
    expect(rows.map((row) => row.id)).toEqual(rows.map((_, index) => index + 1));

    // 1. The JSON report equals the SQL count of the file, for every row.
    const json = await runFailureReportLikeAUser({ projectRoot, dbPath, env, json: true });
    expect(json.exitCode).toBe(0);
    const report = json.report!;
    const expected = expectedFromRows(rows);
    expect(numbersOfReport(report)).toEqual(expected);
    expect(report.types.reduce((sum, entry) => sum + entry.count, 0)).toBe(expected.totals.failures);
    expect(report.patterns.reduce((sum, entry) => sum + entry.count, 0)).toBe(expected.totals.failures);

    // 2. Phase by phase, the rows equal the failed envelopes the worker handed to the model.
    const faultRows = rows.filter((row) => row.id <= faultPhase);
    const resumeRows = rows.filter((row) => row.id > faultPhase + drain);
    expect(failedByToolOf(faultRows)).toEqual(workload.faultPhase.counts.toolCalls.failedByTool);
    expect(failedByToolOf(resumeRows)).toEqual(workload.resumePhase.counts.toolCalls.failedByTool);
    const typesOf = (phaseRows: Row[]) => {
      const counts: Record<string, number> = {};
      for (const row of phaseRows) if (row.kind === 'tool-failure') increment(counts, row.type!);
      return counts;
    };
    expect(typesOf(faultRows)).toEqual(workload.faultPhase.counts.toolCalls.failedByType);
    expect(typesOf(resumeRows)).toEqual(workload.resumePhase.counts.toolCalls.failedByType);

    // The shared breaker of the tool broken for everyone opened once (one alert), and the report says so.
    const alerts = workload.faultPhase.counts.breaker.filter((transition) => transition.type === 'breaker-open');
    expect(alerts.map((alert) => alert.toolName)).toEqual([DEMO_UNAUTHORIZED_TOOL]);
    expect(report.tools.find((entry) => entry.toolName === DEMO_UNAUTHORIZED_TOOL)?.breakerTrips.shared).toBe(1);
    expect(report.totals.failures).toBeGreaterThan(0);
    expect(summary).toContain(
      `│ toolrun report — ${report.totals.failures} failed tool calls in ${report.totals.runsWithFailures} runs, ${report.totals.tools} tools`,
    );

    // 3. The worker's log file (no drain in it) gives the same numbers as the rows it wrote.
    const fromLog = await spawnToolrun(['report', '--from-log', logFile, '--json'], { projectRoot, env });
    expect(fromLog.exitCode).toBe(0);
    const logReport = JSON.parse(fromLog.stdout) as FailureReport;
    const inProcessRows = rows.filter((row) => row.id <= faultPhase || row.id > faultPhase + drain);
    const expectedFromLog = expectedFromRows(inProcessRows);
    expect(numbersOfReport(logReport)).toEqual(expectedFromLog);
  }, 120_000);
});
