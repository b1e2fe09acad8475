/**
 * The `toolrun` commands that make failures visible, spawned as a user runs them
 * (`node --import tsx src/cli/index.ts …`): `report` on a seeded SQLite file (text and `--json`),
 * `metrics --port 0` (Prometheus text with the DLQ gauges), `worker --metrics-port 0 --log-file`
 * (the worker's own tool-call counters; the failure log and the log file read by `report`), and
 * `dlq drain` recording its runs like the worker. Plus, in process, the `runHooks` option of
 * `replayToolFailure` / `drainToolDlq`.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createMemoryStores,
  createToolRuntime,
  defineTool,
  drainToolDlq,
  handleMessage,
  runAgent,
  ToolError,
  type AgentRunHooks,
  type ModelRequest,
  type ModelResponse,
  type ToolFailureEntry,
} from '../src/index.ts';
import { createObservability, type FailureReport } from '../src/observability/index.ts';
import { createSqliteFailureLog, createSqliteStores } from '../src/stores/sqlite/index.ts';
import { createScriptedModel } from '../src/testing/scripted-model.ts';
import type { DeadLetterQueue } from '../src/ground/ports/stores.ts';

const CONFIG = 'test/fixtures/cli-config.ts';
const directory = mkdtempSync(join(tmpdir(), 'toolrun-cli-observability-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function environment(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, TOOLRUN_DB: '', TOOLRUN_CONFIG: '', ...env };
}

function cli(args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], { env: environment(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A long-running command: its output so far, a wait for a line, and its end. */
interface RunningCli {
  child: ChildProcessWithoutNullStreams;
  output(): CliResult;
  /** Resolves with the first match of `pattern` in stdout (bounded). */
  waitForStdout(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<CliResult>;
}

function start(args: readonly string[], env: Record<string, string> = {}): RunningCli {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], { env: environment(env), stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end();
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return {
    child,
    output: () => ({ code: child.exitCode, stdout, stderr }),
    exited,
    waitForStdout: async (pattern, timeoutMs = 20_000) => {
      await waitFor(() => pattern.test(stdout) || child.exitCode !== null, timeoutMs);
      const match = pattern.exec(stdout);
      if (!match) throw new Error(`no ${String(pattern)} in stdout: ${stdout} / stderr: ${stderr}`);
      return match;
    },
  };
}

/** Waits (bounded) until `check` holds, polling a real event. */
async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const startedAt = Date.now();
  while (!(await check())) {
    if (Date.now() - startedAt > timeoutMs) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function expectUsageError(result: CliResult, text: RegExp): void {
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^toolrun: /);
  expect(lines[0]).toMatch(text);
}

/** The value of the Prometheus sample `name{…labels…}`, or undefined. */
function sample(body: string, name: string, labels: Record<string, string>): number | undefined {
  const line = body
    .split('\n')
    .find((candidate) => candidate.startsWith(`${name}{`) && Object.entries(labels).every(([key, value]) => candidate.includes(`${key}="${value}"`)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** Failure-log rows per `tool · code` for tool failures, by SQL over the file. */
function failureRowsByToolAndCode(db: string): Record<string, number> {
  const database = new Database(db, { readonly: true });
  try {
    const rows = database
      .prepare("SELECT tool_name AS tool, json_extract(record, '$.code') AS code, COUNT(*) AS count FROM failure_log WHERE kind = 'tool-failure' GROUP BY 1, 2")
      .all() as Array<{ tool: string; code: string; count: number }>;
    return Object.fromEntries(rows.map((row) => [`${row.tool} · ${row.code}`, row.count]));
  } finally {
    database.close();
  }
}

/** A helpdesk tool whose `priority` (an integer 1–5) the scripted model misreads. */
const createTicket = defineTool({
  name: 'create_ticket',
  description: 'Opens a support ticket',
  inputSchema: {
    type: 'object',
    properties: { title: { type: 'string' }, priority: { type: 'integer', minimum: 1, maximum: 5 } },
    required: ['title', 'priority'],
    additionalProperties: false,
  },
  execute: ({ title }) => ({ ticket: `T-${String(title).length}` }),
});

const usage = { input: 1, output: 1 };
const ticketCall = (id: string, args: Record<string, unknown>): ModelResponse => ({
  toolCalls: [{ id, name: 'create_ticket', args: JSON.stringify(args) }],
  usage,
});

/**
 * Seeds a SQLite stores file the way the worker does (createObservability → the file's failure
 * log): run A misreads `priority` twice (a word, then 9) and succeeds at its third step; run B
 * leaves `title` out once. Plus two tool-DLQ entries and one message-DLQ entry for the gauges.
 */
async function seedDatabase(path: string): Promise<void> {
  const stores = createSqliteStores({ path });
  try {
    const observability = createObservability({ logger: false, tracer: false, meter: false, failureLog: createSqliteFailureLog(stores.database) });
    const runs = [
      {
        runId: 'run_a',
        script: [
          ticketCall('a1', { title: 'VPN down', priority: 'high' }),
          ticketCall('a2', { title: 'VPN down', priority: 9 }),
          ticketCall('a3', { title: 'VPN down', priority: 5 }),
          { text: 'opened', usage },
        ],
      },
      { runId: 'run_b', script: [ticketCall('b1', { priority: 2 }), ticketCall('b2', { title: 'Printer', priority: 2 }), { text: 'opened', usage }] },
    ];
    for (const run of runs) {
      const result = await runAgent({
        model: createScriptedModel(run.script),
        runtime: createToolRuntime({ tools: [createTicket], onCallEnd: observability.onCallEnd }),
        runId: run.runId,
        messages: [{ role: 'user', content: 'open a ticket' }],
        hooks: observability.runHooks,
      });
      expect(result.status).toBe('completed');
    }
    await observability.flush();
    const firstSeenAt = new Date(Date.now() - 60_000).toISOString();
    await (stores.toolDlq as DeadLetterQueue<unknown>).push({ runId: 'run_x', toolName: 'create_ticket', stepIndex: 0, firstSeenAt });
    await (stores.toolDlq as DeadLetterQueue<unknown>).push({ runId: 'run_y', toolName: 'create_ticket', stepIndex: 1, firstSeenAt });
    await (stores.messageDlq as DeadLetterQueue<unknown>).push({ reason: { code: 'MALFORMED_JSON' }, rawBody: '{', receivedAt: firstSeenAt });
  } finally {
    await stores.close();
  }
}

describe('toolrun report', () => {
  const db = join(directory, 'seeded.db');
  beforeAll(() => seedDatabase(db));

  it('prints, as text, the fields to fix first, the failure types, the tools and the recoveries', async () => {
    const result = await cli(['report', '--db', db]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('toolrun report — 3 failed tool calls in 2 runs, 1 tool');
    expect(lines[1]).toMatch(new RegExp(`^source: sqlite ${db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(`));
    // /priority failed in 2 of the 3 failed calls, /title in 1: /priority first, with a hint.
    const fieldsAt = lines.indexOf('Fields whose errors dominate (fix their descriptions first)');
    expect(lines[fieldsAt + 1]).toMatch(/^ {3}1\. create_ticket \/priority — 2 failed calls \(66\.7% of the tool's failures\): range 1, type 1$/);
    expect(lines[fieldsAt + 3]).toMatch(/^ {6}hint: /);
    expect(result.stdout).toMatch(/^ {3}2\. create_ticket \/title — 1 failed call \(33\.3% of the tool's failures\): required 1$/m);
    expect(result.stdout).toMatch(/^ {2}invalid_parameter\s+3\s+100\.0%$/m);
    expect(result.stdout).toMatch(/^ {2}create_ticket: 3 failed calls \(100\.0%\) — invalid_parameter 3$/m);
    expect(result.stdout).toMatch(/^Recovery: 2 episodes, mean 1\.50 rounds/m);

    const top = await cli(['report', '--db', db, '--top', '1']);
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('1. create_ticket /priority');
    expect(top.stdout).not.toContain('2. create_ticket /title');
    expect(top.stdout).toContain('… 1 more field(s) (--json lists all)');
  });

  it('prints the same numbers as JSON, from --db or from $TOOLRUN_DB', async () => {
    const result = await cli(['report', '--db', db, '--json']);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as FailureReport;
    expect(report.totals).toEqual({ records: 5, failures: 3, runsWithFailures: 2, tools: 1, recoveries: 2, breakerTrips: 0 });
    expect(report.types.find((entry) => entry.type === 'invalid_parameter')).toEqual({ type: 'invalid_parameter', count: 3, share: 1 });
    expect(report.fields.map((field) => [field.toolName, field.path, field.failures, field.problems.map((problem) => problem.problem).sort()])).toEqual([
      ['create_ticket', '/priority', 2, ['range', 'type']],
      ['create_ticket', '/title', 1, ['required']],
    ]);
    expect(report.tools).toHaveLength(1);
    expect(report.tools[0]).toMatchObject({ toolName: 'create_ticket', failures: 3, recovery: { episodes: 2, meanRounds: 1.5 } });
    expect(report.recovery).toEqual({ episodes: 2, meanRounds: 1.5, meanFailuresPerEpisode: 1.5 });
    // The file's own rows, by SQL: the same 3 failures, one per code.
    expect(failureRowsByToolAndCode(db)).toEqual(Object.fromEntries(report.tools[0]!.codes.map((entry) => [`create_ticket · ${entry.code}`, entry.count])));
    expect(report.tools[0]!.codes.map((entry) => entry.code).sort()).toEqual(['INVALID_TYPE', 'MISSING_REQUIRED', 'OUT_OF_RANGE']);

    const fromEnvironment = await cli(['report', '--json'], { TOOLRUN_DB: db });
    expect(fromEnvironment.code).toBe(0);
    expect(JSON.parse(fromEnvironment.stdout)).toEqual(report);
  });

  it('says what is wrong: both sources, a bad --top or a missing file is a usage error (2), one line like every command', async () => {
    expectUsageError(await cli(['report', '--db', db, '--from-log', join(directory, 'x.log')]), /pass either --db FILE or --from-log FILE, not both/);
    expectUsageError(await cli(['report', '--db', db, '--top', '0']), /--top <n>.*expected an integer ≥ 1/);
    expectUsageError(await cli(['report', '--db', db, '--format', 'csv']), /unknown option '--format'/);
    // A missing source is the same condition as for stats / dlq / metrics: exit 2, `toolrun: error: …` (it was exit 1, `toolrun report: …`).
    const missing = await cli(['report', '--db', join(directory, 'nothing-here.db')]);
    expectUsageError(missing, /^toolrun: error: no toolrun database at .*nothing-here\.db/);
    expect(existsSync(join(directory, 'nothing-here.db'))).toBe(false);
    const missingLog = await cli(['report', '--from-log', join(directory, 'nothing-here.log')]);
    expectUsageError(missingLog, /^toolrun: error: no log file at .*nothing-here\.log/);
    expect(missingLog.stderr).not.toContain('ENOENT');
  });
});

describe('toolrun metrics', () => {
  const db = join(directory, 'metrics.db');
  beforeAll(() => seedDatabase(db));

  it('serves the DLQ depth and oldest-entry age in Prometheus text on 127.0.0.1 until SIGTERM', async () => {
    const metrics = start(['metrics', '--port', '0', '--db', db]);
    try {
      const [, url] = await metrics.waitForStdout(/at (http:\/\/127\.0\.0\.1:\d+\/metrics) \(Ctrl-C to stop\)/);
      const response = await fetch(url!);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
      const body = await response.text();
      expect(body).toContain('# TYPE toolrun_dlq_depth gauge');
      expect(sample(body, 'toolrun_dlq_depth', { toolrun_dlq_queue: 'tool' })).toBe(2);
      expect(sample(body, 'toolrun_dlq_depth', { toolrun_dlq_queue: 'message' })).toBe(1);
      expect(sample(body, 'toolrun_dlq_oldest_age_seconds', { toolrun_dlq_queue: 'tool' })).toBeGreaterThanOrEqual(60);
      // A standalone metrics process has no tool calls of its own.
      expect(body).not.toMatch(/^toolrun_tool_calls_total\{/m);
    } finally {
      metrics.child.kill('SIGTERM');
    }
    const result = await metrics.exited;
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
  });

  it('exits 1 with one line when the port is taken, and 2 for a bad port or a missing database', async () => {
    const first = start(['metrics', '--port', '0', '--db', db]);
    try {
      const [, port] = await first.waitForStdout(/127\.0\.0\.1:(\d+)\/metrics/);
      const second = await cli(['metrics', '--port', port!, '--db', db]);
      expect(second.code).toBe(1);
      expect(second.stderr.trimEnd().split('\n')).toEqual([
        expect.stringMatching(new RegExp(`^toolrun: error: cannot serve metrics on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`)),
      ]);
    } finally {
      first.child.kill('SIGTERM');
    }
    expect((await first.exited).code).toBe(0);
    expectUsageError(await cli(['metrics', '--port', '-1', '--db', db]), /--port <n>.*expected an integer ≥ 0/);
    expectUsageError(await cli(['metrics', '--port', '0', '--db', join(directory, 'nothing-here.db')]), /no toolrun database at/);
  });
});

describe('toolrun worker and dlq drain, observed', () => {
  const db = join(directory, 'worker.db');
  const logFile = join(directory, 'logs', 'worker.log');
  const started = join(directory, 'started');
  const release = join(directory, 'release');

  it('the worker serves its tool-call counters with --metrics-port, and records failures in the file and the log', async () => {
    for (const input of ['lookup O-1', 'book HAT001', 'slow one'])
      expect((await cli(['enqueue', JSON.stringify({ input }), '--db', db, '--init'])).code).toBe(0);
    const worker = start(['worker', '--db', db, '--config', CONFIG, '--until-empty', '--concurrency', '3', '--metrics-port', '0', '--log-file', logFile], {
      CLI_TEST_STARTED_FILE: started,
      CLI_TEST_RELEASE_FILE: release,
    });
    let body = '';
    try {
      const [, url] = await worker.waitForStdout(/toolrun worker: metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)/);
      await waitFor(() => existsSync(started));
      // The lookup and the booking end while the slow run waits for the release file.
      await waitFor(async () => {
        body = await (await fetch(url!)).text();
        return (
          (sample(body, 'toolrun_runs_total', { toolrun_run_status: 'completed' }) ?? 0) +
            (sample(body, 'toolrun_runs_total', { toolrun_run_status: 'tool_failed' }) ?? 0) >=
          2
        );
      });
    } finally {
      writeFileSync(release, 'go');
    }
    const result = await worker.exited;
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/handled 3 messages \(completed 2, tool_failed 1\)/);

    expect(sample(body, 'toolrun_tool_calls_total', { gen_ai_tool_name: 'lookup_order', toolrun_status: 'success' })).toBe(1);
    expect(sample(body, 'toolrun_runs_total', { toolrun_run_status: 'completed' })).toBe(1);
    expect(sample(body, 'toolrun_runs_total', { toolrun_run_status: 'tool_failed' })).toBe(1);
    expect(sample(body, 'toolrun_dlq_depth', { toolrun_dlq_queue: 'tool' })).toBe(1);
    expect(sample(body, 'toolrun_dlq_entries_added_total', { toolrun_dlq_queue: 'tool' })).toBe(1);
    expect(sample(body, 'toolrun_tool_retries_total', { gen_ai_tool_name: 'book_flight' })).toBeGreaterThan(0);
    // The counter of failed booking calls equals the failure log's rows: two channels, one count.
    const failedBookings = sample(body, 'toolrun_tool_calls_total', { gen_ai_tool_name: 'book_flight', toolrun_status: 'failed' });
    expect(failedBookings).toBeGreaterThan(0);
    const rows = failureRowsByToolAndCode(db);
    expect(Object.keys(rows).every((key) => key.startsWith('book_flight · '))).toBe(true);
    expect(Object.values(rows).reduce((sum, count) => sum + count, 0)).toBe(failedBookings);

    // The log file holds one JSON line per failed call (level info: no success lines), redacted,
    // and `report --from-log` reads the same numbers as `report --db`.
    const logLines = readFileSync(logFile, 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const callLines = logLines.filter((line) => line.event === 'tool_call');
    expect(callLines).toHaveLength(failedBookings!);
    expect(callLines.every((line) => line.status === 'failed' && line.tool_name === 'book_flight' && typeof line.step_index === 'number')).toBe(true);
    expect(readFileSync(logFile, 'utf8')).not.toContain('mia.li3818@example.com');
    const fromDb = JSON.parse((await cli(['report', '--db', db, '--json'])).stdout) as FailureReport;
    const fromLog = JSON.parse((await cli(['report', '--from-log', logFile, '--json'])).stdout) as FailureReport;
    expect(fromLog.tools).toEqual(fromDb.tools);
    expect(fromLog.totals).toEqual(fromDb.totals);
  });

  it('dlq drain records the replayed runs in the same failure log, with their steps', async () => {
    const entry = JSON.parse((await cli(['dlq', 'list', '--dlq', 'tool', '--json', '--db', db])).stdout) as Array<{ id: string; entry: ToolFailureEntry }>;
    expect(entry).toHaveLength(1);
    const before = failureRowsByToolAndCode(db);
    // Still broken: the replay fails again, and says so on stderr (--log-level warn) and in the file.
    const failing = await cli(['dlq', 'drain', '--db', db, '--config', CONFIG, '--log-level', 'warn']);
    expect(failing.code).toBe(0);
    expect(failing.stdout).toMatch(/drained 1 entry: tool_failed 1; removed 0, 1 left/);
    const logged = failing.stderr
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.event === 'tool_call');
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.every((line) => line.run_id === entry[0]!.entry.runId && line.step_index === entry[0]!.entry.stepIndex)).toBe(true);
    const after = failureRowsByToolAndCode(db);
    const added = Object.values(after).reduce((sum, count) => sum + count, 0) - Object.values(before).reduce((sum, count) => sum + count, 0);
    expect(added).toBe(logged.length);

    const database = new Database(db, { readonly: true });
    const drainRows = database.prepare("SELECT record FROM failure_log WHERE kind = 'tool-failure' ORDER BY id DESC LIMIT ?").all(added) as Array<{
      record: string;
    }>;
    database.close();
    for (const row of drainRows)
      expect(JSON.parse(row.record)).toMatchObject({ runId: entry[0]!.entry.runId, stepIndex: entry[0]!.entry.stepIndex, toolName: 'book_flight' });

    // Healed: the replay completes; nothing more is recorded, and no log line (successes are debug).
    const healed = await cli(['dlq', 'drain', '--db', db, '--config', CONFIG, '--log-level', 'warn'], { CLI_TEST_BOOKING_HEALED: '1' });
    expect(healed.code).toBe(0);
    expect(healed.stdout).toMatch(/drained 1 entry: completed 1; removed 1, 0 left/);
    expect(healed.stderr).toBe('');
    expect(failureRowsByToolAndCode(db)).toEqual(after);
  });

  it('rejects a bad --metrics-port or --log-level with exit code 2', async () => {
    expectUsageError(await cli(['worker', '--db', db, '--config', CONFIG, '--metrics-port', 'abc']), /--metrics-port <n>.*expected an integer ≥ 0/);
    expectUsageError(
      await cli(['worker', '--db', db, '--config', CONFIG, '--log-level', 'loud']),
      /--log-level.*Allowed choices are trace, debug, info, warn, error, fatal/,
    );
    expectUsageError(await cli(['dlq', 'drain', '--db', db, '--config', CONFIG, '--log-level', 'loud']), /Allowed choices/);
  });
});

describe('replayToolFailure / drainToolDlq runHooks', () => {
  it('passes the hooks to the resumed run: it starts resumed at its failed step and ends completed', async () => {
    const stores = createMemoryStores();
    let healed = false;
    const book = defineTool({
      name: 'book_flight',
      description: 'Books a flight',
      inputSchema: { type: 'object', properties: { flight: { type: 'string' } }, required: ['flight'] },
      execute: ({ flight }) => {
        if (!healed) throw new ToolError({ kind: 'server', status: 503, message: 'down' });
        return { flight };
      },
    });
    const model = async (request: ModelRequest): Promise<ModelResponse> => {
      const last = request.messages[request.messages.length - 1];
      if (last?.role === 'tool' && JSON.parse(last.content ?? '{}').status === 'success') return { text: 'booked', usage };
      return { toolCalls: [{ id: `c${request.stepIndex}`, name: 'book_flight', args: '{"flight":"HAT001"}' }], usage };
    };
    const options = { model, tools: [book], stores, runtimeOptions: { retry: { backoff: { baseDelayMs: 1, jitterMs: 0 }, minDelayMs: 1 } } };
    const handled = await handleMessage(
      { body: JSON.stringify({ input: 'book', runId: 'run_hooks' }), id: 'm-1' },
      { ...options, queues: { messageDlq: stores.messageDlq, toolDlq: stores.toolDlq } },
    );
    expect(handled.status).toBe('tool_failed');
    const [record] = await stores.toolDlq.list();
    const failedStep = (record!.entry as ToolFailureEntry).stepIndex;

    healed = true;
    const calls: string[] = [];
    const runHooks: AgentRunHooks = {
      onRunStart: (info) => void calls.push(`start ${info.runId} step ${info.stepIndex} resumed ${info.resumed}`),
      onRunEnd: (result) => void calls.push(`end ${result.runId} ${result.status}`),
    };
    const report = await drainToolDlq({ ...options, runHooks });
    expect(report.outcomes).toEqual({ completed: 1 });
    expect(calls).toEqual([`start run_hooks step ${failedStep} resumed true`, 'end run_hooks completed']);
  });
});
