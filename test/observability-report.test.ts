/**
 * `toolrun report`: exact numbers on fixed inputs (a helpdesk tool whose `priority` scale the model
 * keeps misreading), the same report from the SQLite store and from the pino log file, and the
 * τ-bench airline workload's recorded refusals replayed through the runtime, whose report matches
 * both the store and the data.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { destination, pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToolRuntime, defineTool, runAgent, ToolError, type ModelResponse } from '../src/index.ts';
import { createObservability, type FailureReport } from '../src/observability/index.ts';
import { runReportCommand } from '../src/observability/report/run-report-command.ts';
import { createSqliteStores, type SqliteStores } from '../src/stores/sqlite/sqlite-stores.ts';
import { createSqliteFailureLog } from '../src/stores/sqlite/sqlite-failure-log.ts';
import { createAutoAdvancingClock } from '../src/testing/auto-advancing-clock.ts';
import { createScriptedModel } from '../src/testing/scripted-model.ts';
import { hasSharedData } from '../examples/shared-data.ts';
import { createAirlineDatabase, type AirlineDatabase } from '../examples/airline/database.ts';
import { AIRLINE_TOOL_NAMES, airlineOperations } from '../examples/airline/operations.ts';
import { loadAirlineToolSchemas } from '../examples/airline/tool-schemas.ts';
import { loadAirlineTrajectories, trajectoryKeyOf } from '../examples/airline/trajectories.ts';

const directory = mkdtempSync(join(tmpdir(), 'toolrun-report-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

async function report(options: { db?: string; fromLog?: string; json?: boolean; top?: number }) {
  let output = '';
  let errors = '';
  const result = await runReportCommand({ ...options, write: (text) => (output += text), writeError: (text) => (errors += text) });
  return { ...result, output, errors };
}

/** A helpdesk whose `priority` (1 = lowest … 5 = highest) the model keeps misreading. */
const createTicket = defineTool({
  name: 'create_ticket',
  description: 'Opens a support ticket',
  inputSchema: {
    type: 'object',
    properties: {
      title: { type: 'string' },
      priority: { type: 'integer', minimum: 1, maximum: 5, description: 'priority' },
      due_date: { type: 'string', format: 'date' },
      assignee_id: { type: 'string' },
    },
    required: ['title', 'priority', 'assignee_id'],
  },
  execute: (args) => ({ ticket: 'T-1', ...args }),
});
const lookupCustomer = defineTool({
  name: 'lookup_customer',
  description: 'Finds a customer',
  inputSchema: { type: 'object', properties: { customer_id: { type: 'string' } }, required: ['customer_id'] },
  execute: ({ customer_id }) => {
    if (customer_id === 'c404') throw new ToolError({ kind: 'not_found', status: 404, message: 'customer c404 not found' });
    return { customer_id, name: 'Mia Li' };
  },
});

const ticket = (fields: Record<string, unknown>) => ({ title: 'Printer on fire', due_date: '2024-05-20', assignee_id: 'u1', ...fields });
const turn = (name: string, args: Record<string, unknown>, id: string): ModelResponse => ({
  toolCalls: [{ id, name, args: JSON.stringify(args) }],
  usage: { input: 10, output: 2 },
});
const answer: ModelResponse = { text: 'Done.', usage: { input: 5, output: 1 } };

/** The fixed inputs: three runs, 12 failed calls (see the expectations below for the tally). */
const RUNS: Array<{ runId: string; maxSteps: number; turns: ModelResponse[] }> = [
  {
    runId: 'run_1',
    maxSteps: 10,
    turns: [
      turn('create_ticket', ticket({ priority: 'high' }), 'a0'), // INVALID_TYPE /priority
      turn('create_ticket', { title: 'x', priority: 3 }, 'a1'), // MISSING_REQUIRED /assignee_id
      turn('create_ticket', ticket({ priority: 10 }), 'a2'), // OUT_OF_RANGE /priority
      turn('create_ticket', ticket({ priority: 5 }), 'a3'), // success: recovered after 3 steps, 3 failures
      answer,
    ],
  },
  {
    runId: 'run_2',
    maxSteps: 10,
    turns: [
      turn('create_ticket', ticket({ priority: 'urgent', due_date: '20/05/2024' }), 'b0'), // SCHEMA_VALIDATION_FAILED: /priority type + /due_date format
      turn('lookup_customer', { customer_id: 'c404' }, 'b1'), // NOT_FOUND
      turn('lookup_customer', { customer_id: 'c1' }, 'b2'), // success: recovered after 2 steps, 2 failures
      turn('create_ticket', ticket({ priority: 0 }), 'b3'), // OUT_OF_RANGE /priority
      turn('create_ticket', ticket({ priority: 1 }), 'b4'), // success: recovered after 1 step, 1 failure
      answer,
    ],
  },
  {
    // the same wrong value four times: the session breaker opens, two refusals follow, max_steps
    runId: 'run_3',
    maxSteps: 6,
    turns: [turn('create_ticket', ticket({ priority: 'low' }), 'c')],
  },
];

async function runFixedInputs(stores: SqliteStores, logFile: string) {
  const logger = pino({ level: 'info' }, destination({ dest: logFile, sync: true }));
  const observability = createObservability({ logger, tracer: false, meter: false, failureLog: createSqliteFailureLog(stores.database) });
  const runtime = createToolRuntime({
    tools: [createTicket, lookupCustomer],
    clock: createAutoAdvancingClock(Date.UTC(2024, 4, 15)),
    onCallEnd: observability.onCallEnd,
  });
  const statuses: string[] = [];
  for (const run of RUNS) {
    const result = await runAgent({
      model: createScriptedModel(run.turns),
      runtime,
      messages: [{ role: 'user', content: 'help' }],
      runId: run.runId,
      maxSteps: run.maxSteps,
      hooks: observability.runHooks,
    });
    statuses.push(result.status);
  }
  await observability.flush();
  logger.flush();
  return statuses;
}

describe('toolrun report on fixed inputs', () => {
  let stores: SqliteStores;
  let dbPath: string;
  let logFile: string;
  let fromDb: FailureReport;

  beforeAll(async () => {
    dbPath = join(directory, 'helpdesk.db');
    logFile = join(directory, 'helpdesk.log');
    stores = createSqliteStores({ path: dbPath });
    expect(await runFixedInputs(stores, logFile)).toEqual(['completed', 'completed', 'max_steps']);
    const result = await report({ db: dbPath, json: true });
    expect(result.exitCode).toBe(0);
    fromDb = JSON.parse(result.output) as FailureReport;
  });
  afterAll(async () => stores.close());

  it('counts failures, runs, tools and the failure-type distribution exactly', () => {
    expect(fromDb.totals).toEqual({ records: 16, failures: 12, runsWithFailures: 3, tools: 2, recoveries: 3, breakerTrips: 1 });
    expect(fromDb.types).toEqual([
      { type: 'invalid_parameter', count: 9, share: 0.75 },
      { type: 'environment', count: 0, share: 0 },
      { type: 'permission', count: 0, share: 0 },
      { type: 'logic', count: 1, share: 0.0833 },
      { type: 'circuit_breaker', count: 2, share: 0.1667 },
    ]);
  });

  it('puts the misread priority field at the top, with what was sent and a hint to fix its description', () => {
    expect(fromDb.fields.map((field) => [field.toolName, field.path, field.failures])).toEqual([
      ['create_ticket', '/priority', 8],
      ['create_ticket', '/assignee_id', 1],
      ['create_ticket', '/due_date', 1],
    ]);
    const priority = fromDb.fields[0]!;
    expect(priority.shareOfTool).toBe(0.7273);
    expect(priority.problems).toEqual([
      { problem: 'type', count: 6 },
      { problem: 'range', count: 2 },
    ]);
    expect(priority.expected).toBe('integer');
    expect(priority.received).toEqual(['"low"', '"high"', '"urgent"']);
    expect(priority.hint).toBe(
      'Say which JSON type "priority" takes (integer), e.g. "an integer, not a word or a string"; the model sent "low", "high", "urgent".',
    );
    expect(fromDb.fields[1]!.hint).toBe(
      'Say in the description that "assignee_id" is required and where its value comes from (which tool returns it, or ask the user).',
    );
  });

  it('per tool: how often and how it failed, its fields, recovery and breaker trips', () => {
    expect(fromDb.tools).toEqual([
      {
        toolName: 'create_ticket',
        failures: 11,
        share: 0.9167,
        types: [
          { type: 'invalid_parameter', count: 9 },
          { type: 'circuit_breaker', count: 2 },
        ],
        codes: [
          { code: 'INVALID_TYPE', count: 5 },
          { code: 'OUT_OF_RANGE', count: 2 },
          { code: 'TOO_MANY_FAILURES', count: 2 },
          { code: 'MISSING_REQUIRED', count: 1 },
          { code: 'SCHEMA_VALIDATION_FAILED', count: 1 },
        ],
        fields: [
          {
            path: '/priority',
            failures: 8,
            problems: [
              { problem: 'type', count: 6 },
              { problem: 'range', count: 2 },
            ],
          },
          { path: '/assignee_id', failures: 1, problems: [{ problem: 'required', count: 1 }] },
          { path: '/due_date', failures: 1, problems: [{ problem: 'format', count: 1 }] },
        ],
        recovery: { episodes: 3, meanRounds: 2 },
        breakerTrips: { session: 1, shared: 0 },
      },
      {
        toolName: 'lookup_customer',
        failures: 1,
        share: 0.0833,
        types: [{ type: 'logic', count: 1 }],
        codes: [{ code: 'NOT_FOUND', count: 1 }],
        fields: [],
        recovery: { episodes: 0, meanRounds: null },
        breakerTrips: { session: 0, shared: 0 },
      },
    ]);
  });

  it('groups failures by pattern; recovery rounds and breaker trips', () => {
    expect(fromDb.patterns.map((pattern) => [pattern.id, pattern.count])).toEqual([
      ['wrong-type', 5],
      ['repeated-failure', 2],
      ['scale-misread', 2],
      ['missing-required-id', 1],
      ['record-not-found', 1],
      ['unmatched', 1],
    ]);
    expect(fromDb.recovery).toEqual({ episodes: 3, meanRounds: 2, meanFailuresPerEpisode: 2 });
    expect(fromDb.breakers).toEqual({ trips: 1, session: 1, shared: 0, byTool: [{ toolName: 'create_ticket', session: 1, shared: 0 }] });
  });

  it('reads the same report from the pino log file as from the store', async () => {
    const fromLog = await report({ fromLog: logFile, json: true });
    expect(fromLog.exitCode).toBe(0);
    const parsed = JSON.parse(fromLog.output) as FailureReport;
    expect(parsed.source).toMatch(/^log .*helpdesk\.log \(\d+ lines\)$/);
    expect({ ...parsed, source: '' }).toEqual({ ...fromDb, source: '' });
  });

  it('prints text for a person, the field to fix first at the top', async () => {
    const text = (await report({ db: dbPath, top: 2 })).output;
    const lines = text.split('\n');
    expect(lines[0]).toBe('toolrun report — 12 failed tool calls in 3 runs, 2 tools');
    expect(lines[3]).toBe('Fields whose errors dominate (fix their descriptions first)');
    expect(lines[4]).toBe("   1. create_ticket /priority — 8 failed calls (72.7% of the tool's failures): type 6, range 2");
    expect(lines[5]).toBe('      expected integer; received "low", "high", "urgent"');
    expect(text).toContain('  … 1 more field(s) (--json lists all)');
    expect(text).toContain('\n  invalid_parameter  9   75.0%\n');
    expect(text).toContain('  create_ticket: 11 failed calls (91.7%) — invalid_parameter 9, circuit_breaker 2\n');
    expect(text).toContain(
      'Recovery: 3 episodes, mean 2.00 rounds (steps from a failure to the next success of the run), mean 2.00 failed calls per episode\n',
    );
    expect(text.endsWith('Breaker trips: 1 (session 1, shared 0): create_ticket (session 1, shared 0)\n')).toBe(true);
  });
});

describe('runReportCommand errors', () => {
  it('needs exactly one source (exit 2), and says when it cannot read it (exit 1)', async () => {
    expect((await report({})).exitCode).toBe(2);
    expect((await report({ db: 'a.db', fromLog: 'b.log' })).exitCode).toBe(2);
    const missingDb = await report({ db: join(directory, 'nope.db') });
    expect(missingDb).toMatchObject({ exitCode: 1, output: '' });
    expect(missingDb.errors).toContain('no toolrun database at');
    expect((await report({ fromLog: join(directory, 'nope.log') })).exitCode).toBe(1);
  });

  it('skips unreadable lines of a log file, counts them, and reports an empty log as such', async () => {
    const file = join(directory, 'mixed.log');
    writeFileSync(file, ['not json', '{"level":30,"msg":"unrelated"}', '{"event":"tool_call","status":"failed"}', ''].join('\n'));
    const result = await report({ fromLog: file });
    expect(result.exitCode).toBe(0);
    expect(result.output).toContain('(3 lines, 2 unreadable)');
    expect(result.output).toContain('No failures recorded.');
  });
});

const airlineDataPresent =
  hasSharedData('tau-bench', 'gpt-4o-airline.trajectories.json') &&
  hasSharedData('tau-bench', 'tools.airline.json') &&
  hasSharedData('tau-bench', 'airline-db', 'users.json');

describe.skipIf(!airlineDataPresent)('toolrun report on the τ-bench airline workload', () => {
  let stores: SqliteStores;
  let dbPath: string;
  let fromDb: FailureReport;
  const expected = { byTool: new Map<string, number>(), episodes: [] as number[], runsWithFailures: 0, failures: 0 };

  beforeAll(async () => {
    dbPath = join(directory, 'airline.db');
    stores = createSqliteStores({ path: dbPath });
    const schemas = loadAirlineToolSchemas();
    const databases = new Map<string, AirlineDatabase>();
    // The 14 tools in process, each run on its own fresh database (era 'recorded': see docs/airline-notes.md).
    const tools = AIRLINE_TOOL_NAMES.map((name) =>
      defineTool({
        name,
        description: schemas.get(name)!.description,
        inputSchema: schemas.get(name)!.parameters,
        execute: (args, context) => airlineOperations[name](databases.get(context.runId ?? '')!, args as Record<string, unknown>),
      }),
    );
    const observability = createObservability({ logger: false, tracer: false, meter: false, failureLog: createSqliteFailureLog(stores.database) });
    // No session breaker: every recorded call reaches its tool, so the report can be checked against the recording.
    const runtime = createToolRuntime({
      tools,
      sessionBreaker: false,
      clock: createAutoAdvancingClock(Date.UTC(2024, 4, 15)),
      onCallEnd: observability.onCallEnd,
    });

    for (const trajectory of loadAirlineTrajectories()) {
      const runId = trajectoryKeyOf(trajectory);
      databases.set(runId, createAirlineDatabase({ era: 'recorded' }));
      const calls = trajectory.traj.flatMap((message) => message.tool_calls ?? []);
      const replies = trajectory.traj.filter((message) => message.role === 'tool').map((message) => message.content ?? '');
      // What the recording says, computed on its own: refusals by tool, and recovery episodes
      // (steps from a refused call to the next call that was not refused; one call per step here).
      let openedAt: number | undefined;
      let refused = 0;
      replies.forEach((reply, index) => {
        if (reply.startsWith('Error')) {
          refused += 1;
          expected.byTool.set(calls[index]!.function.name, (expected.byTool.get(calls[index]!.function.name) ?? 0) + 1);
          openedAt ??= index;
        } else if (openedAt !== undefined) {
          expected.episodes.push(index - openedAt);
          openedAt = undefined;
        }
      });
      expected.failures += refused;
      if (refused > 0) expected.runsWithFailures += 1;

      const model = createScriptedModel([
        ...calls.map((call) => turn(call.function.name, JSON.parse(call.function.arguments) as Record<string, unknown>, call.id)),
        answer,
      ]);
      const result = await runAgent({
        model,
        runtime,
        messages: [{ role: 'user', content: runId }],
        runId,
        maxSteps: calls.length + 1,
        hooks: observability.runHooks,
      });
      expect(result.status).toBe('completed');
      databases.delete(runId);
    }
    await observability.flush();
    const result = await report({ db: dbPath, json: true });
    expect(result.exitCode).toBe(0);
    fromDb = JSON.parse(result.output) as FailureReport;
  });
  afterAll(async () => stores.close());

  it('matches the recording: the 73 refusals by tool, the runs they happened in, the recovery rounds', () => {
    expect(expected.failures).toBe(73);
    expect(fromDb.totals.failures).toBe(73);
    expect(Object.fromEntries(fromDb.tools.map((tool) => [tool.toolName, tool.failures]))).toEqual(Object.fromEntries(expected.byTool));
    expect(Object.fromEntries(expected.byTool)).toEqual({ book_reservation: 30, update_reservation_flights: 42, update_reservation_baggages: 1 });
    expect(fromDb.totals.runsWithFailures).toBe(expected.runsWithFailures);
    expect(fromDb.recovery.episodes).toBe(expected.episodes.length);
    const meanRounds = Math.round((expected.episodes.reduce((sum, rounds) => sum + rounds, 0) / expected.episodes.length) * 100) / 100;
    expect(fromDb.recovery.meanRounds).toBe(meanRounds);
  });

  it('matches the store, counted with SQL', () => {
    const byToolAndCode = stores.database
      .prepare(
        "SELECT tool_name AS toolName, json_extract(record, '$.code') AS code, COUNT(*) AS count FROM failure_log WHERE kind = 'tool-failure' GROUP BY 1, 2",
      )
      .all() as Array<{ toolName: string; code: string; count: number }>;
    for (const tool of fromDb.tools) {
      expect(Object.fromEntries(tool.codes.map((entry) => [entry.code, entry.count]))).toEqual(
        Object.fromEntries(byToolAndCode.filter((row) => row.toolName === tool.toolName).map((row) => [row.code, row.count])),
      );
    }
    const kinds = stores.database.prepare('SELECT kind, COUNT(*) AS count FROM failure_log GROUP BY kind ORDER BY kind').all();
    expect(kinds).toEqual([
      { kind: 'recovery', count: fromDb.recovery.episodes },
      { kind: 'tool-failure', count: 73 },
    ]);
  });

  it('groups every refusal under a specific pattern (counts from the recorded refusal texts)', () => {
    // 24 "payment amount does not add up"; 15 "not available on date" + 9 "not enough seats";
    // 14 gift-card/balance refusals; 7 "payment method … not found"; 4 "certificate cannot be used".
    expect(fromDb.patterns.map((pattern) => [pattern.id, pattern.count])).toEqual([
      ['amount-mismatch', 24],
      ['capacity-unavailable', 24],
      ['insufficient-balance', 14],
      ['payment-method-not-found', 7],
      ['payment-method-not-allowed', 4],
    ]);
    expect(fromDb.types.map((entry) => [entry.type, entry.count])).toEqual([
      ['invalid_parameter', 24],
      ['environment', 0],
      ['permission', 0],
      ['logic', 49],
      ['circuit_breaker', 0],
    ]);
  });
});
