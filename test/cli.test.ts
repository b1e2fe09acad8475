/**
 * The `toolrun` command, spawned as a user runs it in development
 * (`node --import tsx src/cli/index.ts …`) on a temporary SQLite file, with the test config
 * test/fixtures/cli-config.ts.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createMemoryStores,
  defineConfig,
  readDeadLetterMetrics,
  ToolrunError,
  type DeadLetterMetrics,
  type DeadLetterRecord,
  type DrainReport,
  type MessageFailureEntry,
  type ToolFailureEntry,
  type ToolrunConfig,
} from '../src/index.ts';
import { resolveToolrunConfig } from '../src/worker/worker-config.ts';
import { createFakeClock } from '../src/testing/index.ts';
import type { DeadLetterQueue } from '../src/ground/ports/stores.ts';

const CONFIG = 'test/fixtures/cli-config.ts';

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface CliOptions {
  input?: string;
  env?: Record<string, string>;
  /** Called with the child as soon as it runs (to signal it). */
  onSpawn?: (child: ReturnType<typeof spawn>) => void;
}

function cli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, TOOLRUN_DB: '', TOOLRUN_CONFIG: '', ...options.env };
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
    options.onSpawn?.(child);
  });
}

/** Waits (bounded) until `check` holds, polling a real event such as a file appearing. */
async function waitFor(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const startedAt = Date.now();
  while (!check()) {
    if (Date.now() - startedAt > timeoutMs) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const directory = mkdtempSync(join(tmpdir(), 'toolrun-cli-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** A one-line error on stderr, no stack, and exit code 2. */
function expectUsageError(result: CliResult, text: string | RegExp): void {
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^toolrun: error: /);
  expect(lines[0]).toMatch(text);
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

describe('toolrun enqueue → worker → stats → dlq', () => {
  const db = join(directory, 'flow.db');

  it('enqueues from an argument, a file, stdin and JSON lines', async () => {
    const file = join(directory, 'message.json');
    writeFileSync(file, JSON.stringify({ input: 'lookup O-2' }));
    expect(await cli(['enqueue', '{"input": "lookup O-1"}', '--id', 'lookup-1', '--db', db, '--init'])).toMatchObject({ code: 0, stdout: 'lookup-1\n' });
    expect(await cli(['enqueue', '--file', file, '--id', 'lookup-2', '--db', db])).toMatchObject({ code: 0, stdout: 'lookup-2\n' });
    expect(await cli(['enqueue', '--id', 'book-1', '--db', db], { input: '{"input": "book HAT001, mail me at mia.li3818@example.com"}' })).toMatchObject({
      code: 0,
      stdout: 'book-1\n',
    });
    const lines = ['{"input": "book HAT002"}', '', '{"input": "lookup O-3"}'].join('\n');
    const jsonl = await cli(['enqueue', '--jsonl', '--id', 'batch', '--json', '--db', db], { input: lines });
    expect(jsonl.code).toBe(0);
    expect(JSON.parse(jsonl.stdout)).toEqual({ ids: ['batch-1', 'batch-3'] });
    // A body that is not a run request is refused unless asked for; then it goes to the message DLQ.
    expectUsageError(await cli(['enqueue', '{"prompt": "hi"}', '--db', db]), /not a run request.*nothing was enqueued/);
    expect(await cli(['enqueue', '{"prompt": "hi"}', '--no-validate', '--id', 'bad-1', '--db', db])).toMatchObject({ code: 0, stdout: 'bad-1\n' });
    // The same id again is a no-op, and says so (a warning: exit code 0, nothing on stdout).
    expect(await cli(['enqueue', '{"input": "lookup O-1"}', '--id', 'lookup-1', '--db', db])).toMatchObject({
      code: 0,
      stdout: '',
      stderr: 'toolrun: warning: message id lookup-1 was enqueued before (the queue never takes an id twice): nothing was done for it\n',
    });
  });

  it('works the queue off with --until-empty and reports where everything went', async () => {
    const worker = await cli(['worker', '--db', db, '--config', CONFIG, '--until-empty', '--concurrency', '2']);
    expect(worker.stderr).toBe('');
    expect(worker.code).toBe(0);
    expect(worker.stdout).toMatch(/handled 6 messages \(completed 3, rejected 1, tool_failed 2\)/);
    expect(worker.stdout).toContain('toolrun worker: where they went: 3 completed; 2 to the tool DLQ (tool 2, model 0, run 0); 1 to the message DLQ\n');
    expect(
      worker.stdout.match(
        / warn dead-letter-add queue=tool kind=tool reason=retry-budget-exhausted run=run_(book-1|batch-1) tool=book_flight message=(book-1|batch-1): server 503: booking service unavailable \(the last failure of an earlier call; this one was not made\)\n/g,
      ),
    ).toHaveLength(2);
    expect(worker.stdout).toMatch(/ warn dead-letter-add queue=message kind=message reason=INVALID_MESSAGE message=bad-1: /);
    expect(worker.stdout).not.toContain('mia.li3818@example.com');

    const stats = await cli(['stats', '--json', '--db', db]);
    expect(stats.code).toBe(0);
    const numbers = JSON.parse(stats.stdout) as { queue: { size: number }; deadLetters: DeadLetterMetrics; runs: Record<string, number> };
    expect(numbers.queue.size).toBe(0);
    expect(numbers.runs).toEqual({ completed: 3, tool_failed: 2 });
    expect(numbers.deadLetters.message).toMatchObject({ depth: 1, entriesByReason: { INVALID_MESSAGE: 1 } });
    expect(numbers.deadLetters.tool).toMatchObject({
      depth: 2,
      entriesByTool: { book_flight: 2 },
      entriesByKind: { tool: 2, model: 0, run: 0 },
      entriesByModel: {},
    });
    expect(numbers.deadLetters.tool.bytes).toBeGreaterThan(0);
    expect(numbers.deadLetters.tool.oldestAgeMs).toBeGreaterThanOrEqual(0);

    const human = await cli(['stats', '--db', db]);
    expect(human.stdout).toMatch(/tool DLQ: 2 \(oldest \d+(ms|s)\) — book_flight 2/);
    expect(human.stdout).toMatch(/runs: completed 3, tool_failed 2/);
  });

  it('lists and shows entries; the tool entry holds no PII', async () => {
    const list = await cli(['dlq', 'list', '--json', '--db', db]);
    expect(list.code).toBe(0);
    const both = JSON.parse(list.stdout) as { message: DeadLetterRecord<MessageFailureEntry>[]; tool: DeadLetterRecord<ToolFailureEntry>[] };
    expect(both.message.map((record) => record.entry.messageId)).toEqual(['bad-1']);
    expect(both.tool.map((record) => record.entry.originalMessageId).sort()).toEqual(['batch-1', 'book-1']);

    const toolId = both.tool[0]!.id;
    const show = await cli(['dlq', 'show', toolId, '--dlq', 'tool', '--json', '--db', db]);
    expect(show.code).toBe(0);
    const record = JSON.parse(show.stdout) as DeadLetterRecord<ToolFailureEntry>;
    expect(record.entry).toMatchObject({ kind: 'tool', toolName: 'book_flight', attempts: 3, lastError: { status: 503 } });
    expect(show.stdout).not.toContain('mia.li3818@example.com');

    const table = await cli(['dlq', 'list', '--dlq', 'tool', '--db', db]);
    expect(table.stdout).toMatch(/^tool DLQ: 2 entries\n/);
    expect(table.stdout).toMatch(/book_flight\s+run_book-1\s+step 1\s+retry-budget-exhausted\s+server 503/);
    expectUsageError(await cli(['dlq', 'show', '999', '--dlq', 'tool', '--db', db]), /no entry "999" in the tool DLQ/);
    // Ids are unique across the two DLQs: show finds the entry without --dlq.
    const found = await cli(['dlq', 'show', toolId, '--json', '--db', db]);
    expect(found.code).toBe(0);
    expect(JSON.parse(found.stdout)).toMatchObject({ id: toolId, queue: 'tool', kind: 'tool' });
  });

  it('replays one entry and drains the rest once the tool works again', async () => {
    const list = JSON.parse((await cli(['dlq', 'list', '--dlq', 'tool', '--json', '--db', db])).stdout) as DeadLetterRecord<ToolFailureEntry>[];
    const [first, second] = list;
    // Still broken: the replay fails again, exit code 1. It failed at a later step (the model called
    // the tool again), so the new entry replaces the old one: dlq list shows where the run fails now.
    const failed = await cli(['dlq', 'replay', first!.id, '--config', CONFIG, '--db', db]);
    expect(failed.code).toBe(1);
    const replaced = /tool_failed at step (\d+) .*; entry (\d+) \(step (\d+)\) replaces it in the tool DLQ/.exec(failed.stdout);
    expect(replaced).not.toBeNull();
    const [, failedStep, newId, newStep] = replaced!;
    expect(newStep).toBe(failedStep);
    expect(Number(failedStep)).toBeGreaterThan(first!.entry.stepIndex);
    const after = JSON.parse((await cli(['dlq', 'list', '--dlq', 'tool', '--json', '--db', db])).stdout) as DeadLetterRecord<ToolFailureEntry>[];
    expect(after.map((record) => [record.id, record.entry.stepIndex])).toEqual([
      [second!.id, second!.entry.stepIndex],
      [newId, Number(newStep)],
    ]);

    const healed = { CLI_TEST_BOOKING_HEALED: '1' };
    const replayed = await cli(['dlq', 'replay', newId!, '--config', CONFIG, '--json', '--db', db], { env: healed });
    expect(replayed.code).toBe(0);
    expect(JSON.parse(replayed.stdout)).toMatchObject({ id: newId, status: 'completed', removed: true });

    const drain = await cli(['dlq', 'drain', '--config', CONFIG, '--json', '--db', db], { env: healed });
    expect(drain.code).toBe(0);
    const report = JSON.parse(drain.stdout) as DrainReport;
    expect(report).toMatchObject({ total: 1, removed: 1, outcomes: { completed: 1 } });
    expect(report.entries).toEqual([expect.objectContaining({ id: second!.id, status: 'completed' })]);

    const empty = await cli(['dlq', 'drain', '--config', CONFIG, '--db', db], { env: healed });
    expect(empty).toMatchObject({ code: 0, stdout: 'drained 0 entries: none; removed 0, 0 left in the tool DLQ\n' });
  });

  it('purges only with --yes', async () => {
    expectUsageError(await cli(['dlq', 'purge', '--dlq', 'message', '--db', db]), /deletes all 1 entry of the message DLQ.*--yes/);
    expect(await cli(['dlq', 'purge', '--dlq', 'message', '--yes', '--db', db])).toMatchObject({ code: 0, stdout: 'purged 1 entry from the message DLQ\n' });
    expect(JSON.parse((await cli(['stats', '--json', '--db', db])).stdout).deadLetters.message.depth).toBe(0);
  });

  it('finds the database through TOOLRUN_DB', async () => {
    const stats = await cli(['stats', '--json'], { env: { TOOLRUN_DB: db } });
    expect(stats.code).toBe(0);
    expect(JSON.parse(stats.stdout).runs).toEqual({ completed: 5 });
  });
});

describe('toolrun worker shutdown', () => {
  it('on SIGTERM takes no new message, finishes the run in flight, closes the store and exits 0', async () => {
    const db = join(directory, 'shutdown.db');
    const started = join(directory, 'started');
    const release = join(directory, 'release');
    expect((await cli(['enqueue', '--jsonl', '--db', db, '--init'], { input: '{"input": "slow one"}\n{"input": "lookup after"}\n' })).code).toBe(0);
    const result = await cli(['worker', '--db', db, '--config', CONFIG], {
      env: { CLI_TEST_STARTED_FILE: started, CLI_TEST_RELEASE_FILE: release },
      onSpawn: (child) => {
        void waitFor(() => existsSync(started)).then(() => {
          child.kill('SIGTERM');
          // Let the in-flight run end only after the signal was handled.
          setTimeout(() => writeFileSync(release, 'go'), 200);
        });
      },
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/SIGTERM: finishing in-flight runs/);
    expect(result.stdout).toMatch(/handled 1 message \(completed 1\)/);
    const stats = JSON.parse((await cli(['stats', '--json', '--db', db])).stdout) as { queue: { size: number }; runs: Record<string, number> };
    expect(stats.runs).toEqual({ completed: 1 });
    expect(stats.queue.size).toBe(1); // the message after the signal was not taken
  });
});

describe('toolrun bad input', () => {
  const db = join(directory, 'errors.db');

  it('exits 2 with one line for usage errors', async () => {
    expect((await cli(['enqueue', '{"input": "x"}', '--db', db, '--init'])).code).toBe(0);
    const badFile = join(directory, 'bad.json');
    writeFileSync(badFile, '{"input": "unterminated');
    expectUsageError(await cli(['enqueue', '--file', badFile, '--db', db]), /bad\.json is not valid JSON/);
    expectUsageError(await cli(['enqueue', '--file', join(directory, 'missing.json'), '--db', db]), /cannot read .*missing\.json: no such file/);
    expectUsageError(await cli(['worker', '--bogus', '--db', db]), /unknown option '--bogus'/);
    expectUsageError(await cli(['stats', '--db', join(directory, 'nothing-here.db')]), /no toolrun database at/);
    expect(existsSync(join(directory, 'nothing-here.db'))).toBe(false);
  });

  it('refuses a --lease-ms a worker would refuse, as a usage error', async () => {
    expectUsageError(await cli(['worker', '--db', db, '--lease-ms', '214748365']), /--lease-ms <ms>.*expected an integer ≥ 1 and ≤ 214748364/);
    expectUsageError(await cli(['worker', '--db', db, '--lease-ms', '0']), /--lease-ms <ms>.*expected an integer ≥ 1 and ≤ 214748364/);
  });

  it('refuses a --concurrency a worker or a drain would refuse, as a usage error', async () => {
    expectUsageError(await cli(['worker', '--db', db, '--concurrency', '10001']), /--concurrency <n>.*expected an integer ≥ 1 and ≤ 10000/);
    expectUsageError(await cli(['dlq', 'drain', '--db', db, '--concurrency', '10001']), /--concurrency <n>.*expected an integer ≥ 1 and ≤ 10000/);
  });

  it('names what is wrong with the config', async () => {
    expectUsageError(await cli(['worker', '--db', db, '--until-empty'], { env: {} }), /missing config: pass --config FILE/);
    const invalid = join(directory, 'invalid.config.mjs');
    writeFileSync(invalid, 'export default { model: "gpt-4o", toolRetryBudget: -1, tool: [] };\n');
    expectUsageError(
      await cli(['worker', '--db', db, '--config', invalid, '--until-empty']),
      /`model` must be a function.*`tools` is missing.*`toolRetryBudget` must be an integer ≥ 0.*unknown option `tool`/,
    );
    const noDefault = join(directory, 'no-default.config.mjs');
    writeFileSync(noDefault, 'export const config = {};\n');
    expectUsageError(await cli(['dlq', 'drain', '--db', db, '--config', noDefault]), /has no default export/);
    const throwing = join(directory, 'throwing.config.mjs');
    writeFileSync(throwing, 'export default () => { throw new Error("OPENAI_API_KEY is not set"); };\n');
    expectUsageError(await cli(['worker', '--db', db, '--config', throwing, '--until-empty']), /the config factory failed: OPENAI_API_KEY is not set/);
  });

  it('refuses backends it does not have, without echoing credentials', async () => {
    const result = await cli(['stats', '--store', 'mysql://toolrun:s3cret@db.internal:3306/toolrun']);
    expectUsageError(result, /unsupported backend "mysql:" for --store/);
    expect(result.stderr).not.toContain('s3cret');
    expectUsageError(await cli(['worker', '--config', CONFIG, '--db', db, '--queue', 'redis://localhost:6379']), /unsupported backend "redis:" for --queue/);
    const memory = await cli(['stats', '--store', 'memory:', '--json']);
    expect(memory.code).toBe(0);
    expect(JSON.parse(memory.stdout)).toMatchObject({ queue: { size: 0 }, runs: null });
  });

  it('exits 1, in one line, when the store cannot be reached; 2 when --db names a file that is not a database', async () => {
    const unreachable = await cli(['stats', '--store', 'postgres://toolrun:secret-pw@127.0.0.1:1/test?schema=cli_unreachable']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(unreachable.stderr).toMatch(/^toolrun: error: cannot open the PostgreSQL store/);
    expect(unreachable.stderr).not.toContain('secret-pw');
    const notADatabase = join(directory, 'not-a-database.db');
    writeFileSync(notADatabase, 'this is not SQLite'.repeat(100));
    const result = await cli(['stats', '--db', notADatabase]);
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^toolrun: error: .*not-a-database\.db is not a toolrun database \(not a SQLite file\)/);
  });
});

describe('the config module format and the dead-letter metrics behind toolrun stats (in process)', () => {
  const model = async () => ({ text: 'hi', usage: { input: 1, output: 1 } });

  it('defineConfig checks an object at once; resolveToolrunConfig calls a (possibly async) factory with the environment', async () => {
    const config = defineConfig({ model, tools: [], maxSteps: 3 });
    expect(await resolveToolrunConfig(config, { env: {} })).toBe(config);
    const factory = defineConfig(async ({ env }) => ({ model, tools: {}, toolRetryBudget: Number(env.BUDGET) }));
    expect(await resolveToolrunConfig(factory, { env: { BUDGET: '0' } })).toMatchObject({ toolRetryBudget: 0 });
    const invalid = (value: unknown) => {
      try {
        defineConfig(value as ToolrunConfig);
      } catch (error) {
        return ToolrunError.is(error) ? `${error.code}: ${error.message}` : String(error);
      }
      return 'accepted';
    };
    expect(invalid({ tools: [] })).toBe('INVALID_CONFIG: config: `model` is missing (a function (request) => Promise<response>)');
    expect(invalid({ model, tools: [], maxSteps: 0, deadlineMs: -5, onEvent: 'log' })).toMatch(
      /`maxSteps` must be an integer ≥ 1.*`deadlineMs` must be a positive number.*`onEvent` must be a function/,
    );
    expect(invalid([])).toMatch(/^INVALID_CONFIG: config: expected an object/);
    await expect(resolveToolrunConfig(() => ({ model }), { env: {} }, 'my.config.ts')).rejects.toThrow('my.config.ts: `tools` is missing');
  });

  it('reads depth, bytes, oldest-entry age (from firstSeenAt / receivedAt), entries per kind, tool and model, across pages', async () => {
    const clock = createFakeClock(Date.UTC(2026, 0, 1));
    const stores = createMemoryStores({ clock });
    const entry = (toolName: string, firstSeenAt: string) => ({ kind: 'tool', toolName, firstSeenAt, runId: 'r', stepIndex: 1 });
    const toolEntries: unknown[] = [
      entry('book_flight', '2025-12-31T23:00:00.000Z'),
      entry('book_flight', '2025-12-31T22:00:00.000Z'), // added later, seen earlier
      entry('get_user', 'not a date'), // falls back to addedAt
      { kind: 'tool' },
      { kind: 'model', modelName: 'gpt-4o-mini', runId: 'r2', stepIndex: 0, firstSeenAt: '2025-12-31T23:10:00.000Z' },
      { kind: 'model', modelName: 'gpt-4o-mini', runId: 'r3', stepIndex: 2, firstSeenAt: '2025-12-31T23:20:00.000Z' },
      { kind: 'run', runId: 'r4', stepIndex: 1, deliveries: 5, firstSeenAt: '2025-12-31T23:40:00.000Z' },
      { runId: 'old', toolName: 'get_user', stepIndex: 0 }, // written without a kind: a tool failure
    ];
    for (const toolEntry of toolEntries) await (stores.toolDlq as DeadLetterQueue<unknown>).push(toolEntry);
    const messageEntry = { kind: 'message', rawBody: '{', reason: { code: 'MALFORMED_JSON', detail: '' }, receivedAt: '2025-12-31T23:30:00.000Z' };
    await (stores.messageDlq as DeadLetterQueue<unknown>).push(messageEntry);
    await clock.advance(60_000);
    const metrics = await readDeadLetterMetrics(stores, { clock, pageSize: 3 });
    const bytesOf = (values: unknown[]) => values.reduce<number>((sum, value) => sum + new TextEncoder().encode(JSON.stringify(value)).length, 0);
    expect(metrics.tool).toEqual({
      depth: 8,
      bytes: bytesOf(toolEntries),
      oldestAgeMs: 2 * 3_600_000 + 60_000,
      oldestAt: '2025-12-31T22:00:00.000Z',
      entriesByKind: { tool: 5, model: 2, run: 1 },
      entriesByTool: { book_flight: 2, get_user: 2, unknown: 1 },
      entriesByModel: { 'gpt-4o-mini': 2 },
    });
    expect(metrics.message).toEqual({
      depth: 1,
      bytes: bytesOf([messageEntry]),
      oldestAgeMs: 30 * 60_000 + 60_000,
      oldestAt: '2025-12-31T23:30:00.000Z',
      entriesByReason: { MALFORMED_JSON: 1 },
    });
    expect(metrics.measuredAt).toBe('2026-01-01T00:01:00.000Z');
    await (stores.toolDlq as DeadLetterQueue<unknown>).push({ kind: 'something-else', runId: 'r5' });
    expect((await readDeadLetterMetrics(stores, { clock })).tool.entriesByKind).toEqual({ tool: 5, model: 2, run: 1, unknown: 1 });
    await stores.toolDlq.purge();
    expect((await readDeadLetterMetrics(stores, { clock })).tool).toEqual({
      depth: 0,
      bytes: 0,
      oldestAgeMs: null,
      oldestAt: null,
      entriesByKind: { tool: 0, model: 0, run: 0 },
      entriesByTool: {},
      entriesByModel: {},
    });
    // A custom DLQ without bytes(): the size is unknown, not 0.
    const withoutBytes = { size: () => stores.messageDlq.size(), list: (options?: { limit?: number; offset?: number }) => stores.messageDlq.list(options) };
    const custom = await readDeadLetterMetrics({ messageDlq: withoutBytes as unknown as typeof stores.messageDlq, toolDlq: stores.toolDlq }, { clock });
    expect(custom.message).toMatchObject({ depth: 1, bytes: null, entriesByReason: { MALFORMED_JSON: 1 } });
  });
});
