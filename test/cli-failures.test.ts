/**
 * `toolrun` against failures outside the tool call, spawned as a user runs it
 * (`node --import tsx src/cli/index.ts …`) on temporary SQLite files, with the test config
 * test/fixtures/cli-config.ts:
 * - a config whose tool cannot be built fails `worker` and `dlq replay|drain` at start-up (exit 2,
 *   one line naming the tool), before a message is taken; the new options are checked;
 * - the worker prints one line per dead letter (queue, kind, reason, run, tool or model, the last
 *   error redacted), warnings on stderr, and a summary of where every message went (exit 0);
 * - a consumer that crashes on a message every time: past `maxDeliveries` its run is dead-lettered
 *   (`kind: 'run'`) and the worker goes on;
 * - `dlq list|show` of the three tool-DLQ kinds, `stats` with kinds and bytes;
 * - a replay or drain of a run someone else holds is `in_progress` (nothing done), and two drains
 *   at once over the same file run each of 20 entries once.
 * Plus, in process, the worker's output on events the CLI cannot provoke on demand (a failed
 * delivery, a dead-letter queue that refuses an entry).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createRedactor,
  handleMessage,
  ToolrunError,
  type DeadLetterMetrics,
  type DeadLetterRecord,
  type DrainReport,
  type HandleMessageResult,
  type ModelFailureEntry,
  type RunFailureEntry,
  type WorkerEvent,
} from '../src/index.ts';
import { assertToolrunConfig, resolveToolrunConfig } from '../src/worker/worker-config.ts';
import { createSqliteStores } from '../src/stores/sqlite/index.ts';
import { createWorkerOutput, guardConfigOnEvent } from '../src/cli/worker-output.ts';
import configInput from './fixtures/cli-config.ts';

const CONFIG = 'test/fixtures/cli-config.ts';
const directory = mkdtempSync(join(tmpdir(), 'toolrun-cli-failures-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  pid: number | undefined;
}

function cli(args: readonly string[], env: Record<string, string> = {}, onSpawn?: (child: ChildProcess) => void): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], {
      env: { ...process.env, TOOLRUN_DB: '', TOOLRUN_CONFIG: '', TOOLRUN_DEBUG: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, pid: child.pid }));
    onSpawn?.(child);
  });
}

/** A one-line error on stderr, no stack, and exit code 2. */
function expectUsageError(result: CliResult, text: RegExp): void {
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^toolrun: error: /);
  expect(lines[0]).toMatch(text);
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

/** Opens the SQLite stores of `db` in this process for `work`, then closes them. */
async function withStores<T>(db: string, work: (stores: ReturnType<typeof createSqliteStores>) => Promise<T>): Promise<T> {
  const stores = createSqliteStores({ path: db });
  try {
    return await work(stores);
  } finally {
    await stores.close();
  }
}

async function enqueue(db: string, messages: ReadonlyArray<{ id: string; body: string }>): Promise<void> {
  await withStores(db, async (stores) => {
    for (const message of messages) await stores.queue.enqueue(message);
  });
}

function runsByStatus(stores: ReturnType<typeof createSqliteStores>): Record<string, number> {
  const rows = stores.database.prepare('SELECT status, COUNT(*) AS count FROM runs GROUP BY status').all() as Array<{ status: string; count: number }>;
  return Object.fromEntries(rows.map((row) => [row.status, row.count]));
}

const SECRET_KEY = 'sk-proj-CliTestKey0123456789abcdefABCDEF';

describe('start-up checks of the config', () => {
  const model = async () => ({ text: 'hi', usage: { input: 1, output: 1 } });

  it('a tool that cannot be built fails worker and dlq drain with exit 2 and one line naming it; no message is taken', async () => {
    const db = join(directory, 'startup.db');
    await enqueue(db, [{ id: 'waiting-1', body: JSON.stringify({ input: 'lookup O-1' }) }]);
    const badPattern = join(directory, 'bad-pattern.config.mjs');
    writeFileSync(
      badPattern,
      `const lookup = { name: 'lookup_order', description: 'Looks an order up', inputSchema: { type: 'object' }, execute: async () => ({}) };
const search = { name: 'search_flights', description: 'Searches flights', inputSchema: { type: 'object', properties: { from: { type: 'string', pattern: '([A-Z]{3}' } } }, execute: async () => ({}) };
export default { model: async () => { throw new Error('the model must not be called'); }, tools: [lookup, search] };
`,
    );
    const worker = await cli(['worker', '--db', db, '--config', badPattern, '--until-empty']);
    expectUsageError(
      worker,
      /bad-pattern\.config\.mjs: tool "search_flights" \(tools\[1\]\) is invalid \(INVALID_SCHEMA\): .*Invalid regular expression.*no message was taken/,
    );
    await withStores(db, async (stores) => {
      expect(await stores.queue.size()).toBe(1); // still waiting: nothing was consumed
      expect(runsByStatus(stores)).toEqual({});
    });

    // A record of tools, one without execute: named by its key; checked before the database is opened.
    const noExecute = join(directory, 'no-execute.config.mjs');
    writeFileSync(
      noExecute,
      `export default { model: async () => ({ text: 'x', usage: { input: 1, output: 1 } }), tools: { lookup: async () => ({}), refund: { name: 'refund', description: 'Refunds', inputSchema: { type: 'object' } } } };\n`,
    );
    const missing = join(directory, 'never-created.db');
    expectUsageError(
      await cli(['dlq', 'drain', '--db', missing, '--config', noExecute]),
      /no-execute\.config\.mjs: tool "refund" \(tools\.refund\) is invalid \(INVALID_DEFINITION\): execute must be a function.*no entry was replayed/,
    );
    expect(existsSync(missing)).toBe(false);
  });

  it('checks the new worker options in one message, through the CLI and in process', async () => {
    const badOptions = join(directory, 'bad-options.config.mjs');
    writeFileSync(
      badOptions,
      `export default { model: async () => ({ text: 'x', usage: { input: 1, output: 1 } }), tools: [], maxDeliveries: 0, maxDeadLetterBytes: -1, redeliveryBackoff: { baseMs: 10 }, modelPolicy: 'fast', modelName: 7, claimLeaseMs: 3000000000 };\n`,
    );
    expectUsageError(
      await cli(['worker', '--db', join(directory, 'options.db'), '--config', badOptions, '--until-empty']),
      /`maxDeadLetterBytes` must be an integer ≥ 1, received -1; `maxDeliveries` must be an integer ≥ 1, received 0; `claimLeaseMs` must be an integer ≥ 1 \(of ms, at most 2147483647\), received 3000000000; `redeliveryBackoff` must be \{ baseMs, maxMs \}.*received \{ baseMs: 10, maxMs: undefined \}; `modelPolicy` must be an object.*received the string "fast"; `modelName` must be a non-empty string, received 7/,
    );

    const problems = (value: Record<string, unknown>) => {
      try {
        assertToolrunConfig({ model, tools: [], ...value });
        return 'accepted';
      } catch (error) {
        return ToolrunError.is(error) ? `${error.code}: ${error.message}` : String(error);
      }
    };
    expect(
      problems({
        maxDeliveries: 3,
        maxDeadLetterBytes: 1_000_000,
        redeliveryBackoff: { baseMs: 0, maxMs: 10 },
        modelPolicy: { maxAttempts: 2, timeoutMs: 5_000 },
        modelName: 'gpt-4o-mini',
        claimLeaseMs: 60_000,
      }),
    ).toBe('accepted');
    expect(problems({ maxDeliveries: 1.5 })).toBe('INVALID_CONFIG: config: `maxDeliveries` must be an integer ≥ 1, received 1.5');
    expect(problems({ redeliveryBackoff: { baseMs: 100, maxMs: 10 } })).toMatch(
      /`redeliveryBackoff` must be \{ baseMs, maxMs \} with 0 ≤ baseMs ≤ maxMs ≤ 2147483647 \(ms\) and maxMs > 0, received \{ baseMs: 100, maxMs: 10 \}/,
    );
    expect(problems({ redeliveryBackoff: { baseMs: 1, maxMs: 10, jitter: 1 } })).toMatch(/unknown `jitter`/);
    expect(problems({ modelPolicy: { maxAttempts: 0 } })).toMatch(/`modelPolicy` is invalid: .*maxAttempts/);
    expect(problems({ modelPolicy: { timeoutMs: 2 ** 31 } })).toMatch(/`modelPolicy` is invalid: .*timeoutMs/);
    expect(problems({ modelName: '  ' })).toMatch(/`modelName` must be a non-empty string/);
    expect(problems({ deadlineMs: 2 ** 31 })).toMatch(/`deadlineMs` must be a positive number \(of ms, at most 2147483647\)/);
  });
});

describe('toolrun worker: a line per dead letter, and where every message went', () => {
  const db = join(directory, 'places.db');

  it('prints each dead letter with its queue, kind, reason, run, tool or model and redacted last error; exits 0', async () => {
    await enqueue(db, [
      { id: 'lookup-1', body: JSON.stringify({ input: 'lookup O-1' }) },
      { id: 'book-1', body: JSON.stringify({ input: 'book HAT001' }) },
      { id: 'down-1', body: JSON.stringify({ input: 'model-down, mail me at mia.li3818@example.com' }) },
      { id: 'flaky-1', body: JSON.stringify({ input: 'model-flaky' }) },
      { id: 'bad-1', body: '{not json' },
    ]);
    const worker = await cli(['worker', '--db', db, '--config', CONFIG, '--until-empty', '--concurrency', '2']);
    expect(worker.stderr).toBe('');
    expect(worker.code).toBe(0);
    const lines = worker.stdout.trimEnd().split('\n');
    const deadLetters = lines.filter((line) => / warn dead-letter-add /.test(line));
    expect(deadLetters).toHaveLength(3);
    expect(deadLetters).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          / dead-letter-add queue=tool kind=tool reason=retry-budget-exhausted run=run_book-1 tool=book_flight message=book-1: server 503: booking service unavailable \(the last failure of an earlier call; this one was not made\)$/,
        ),
        expect.stringMatching(
          / dead-letter-add queue=tool kind=model reason=model-not-retryable run=run_down-1 model=cli-test-model message=down-1: auth 401: Incorrect API key provided: \S+$/,
        ),
        expect.stringMatching(/ dead-letter-add queue=message kind=message reason=MALFORMED_JSON message=bad-1: The body is not valid JSON/),
      ]),
    );
    expect(worker.stdout).not.toContain(SECRET_KEY);
    expect(worker.stdout).not.toContain('CliTestKey');
    expect(lines).toContain('toolrun worker: handled 5 messages (completed 2, model_failed 1, rejected 1, tool_failed 1)');
    expect(lines).toContain('toolrun worker: where they went: 2 completed; 2 to the tool DLQ (tool 1, model 1, run 0); 1 to the message DLQ');
    expect(lines).toContain(
      'toolrun worker: dead letters are handled outcomes (exit code 0): inspect them with `toolrun dlq list`; resume tool-DLQ entries with `toolrun dlq replay ID` or `toolrun dlq drain` once the cause is fixed',
    );
    // The flaky model (a 503 once) was retried in-band, not dead-lettered: the run completed.
    await withStores(db, async (stores) => {
      expect(runsByStatus(stores)).toEqual({ completed: 2, model_failed: 1, tool_failed: 1 });
      expect((await stores.runs.get('run_flaky-1'))?.status).toBe('completed');
    });

    const help = await cli(['worker', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(
      /Exit codes:\n\s+0\s+every message taken was handled: its run completed, or it was dead-lettered \(a dead letter\n\s+is a handled outcome/,
    );
    expect(help.stdout).toMatch(
      /2\s+a usage error or an invalid config, including a tool whose definition or schema cannot be\n\s+built \(checked at start-up, before any message is taken\)/,
    );
  });

  it('stats counts the tool DLQ by kind and model and reports bytes; list and show know the kinds', async () => {
    const stored = await withStores(db, async (stores) => ({ toolBytes: await stores.toolDlq.bytes(), messageBytes: await stores.messageDlq.bytes() }));
    expect(stored.toolBytes).toBeGreaterThan(0);
    const stats = await cli(['stats', '--json', '--db', db]);
    expect(stats.code).toBe(0);
    const { deadLetters } = JSON.parse(stats.stdout) as { deadLetters: DeadLetterMetrics };
    expect(deadLetters.tool).toMatchObject({
      depth: 2,
      bytes: stored.toolBytes,
      entriesByKind: { tool: 1, model: 1, run: 0 },
      entriesByTool: { book_flight: 1 },
      entriesByModel: { 'cli-test-model': 1 },
    });
    expect(deadLetters.message).toMatchObject({ depth: 1, bytes: stored.messageBytes, entriesByReason: { MALFORMED_JSON: 1 } });
    const human = await cli(['stats', '--db', db]);
    expect(human.stdout).toMatch(/^tool DLQ: 2 \(oldest \d+(ms|s)\) — book_flight 1 · kinds: tool 1, model 1, run 0 · models: cli-test-model 1 · \d+ B$/m);
    expect(human.stdout).toMatch(/^message DLQ: 1 \(oldest \d+(ms|s)\) — MALFORMED_JSON 1 · \d+ B$/m);

    const table = await cli(['dlq', 'list', '--dlq', 'tool', '--db', db]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/ID\s+AGE\s+KIND\s+TRIES\s+TOOL\/MODEL\s+RUN\s+STEP\s+REASON\s+LAST ERROR/);
    expect(table.stdout).toMatch(/\s+tool\s+3 attempts\s+book_flight\s+run_book-1\s+step 1\s+retry-budget-exhausted\s+server 503: booking service unavailable/);
    expect(table.stdout).toMatch(/\s+model\s+1 attempt\s+cli-test-model\s+run_down-1\s+step 0\s+model-not-retryable\s+auth 401: Incorrect API key provided/);
    expect(table.stdout).not.toContain(SECRET_KEY);
    const modelId = /^\s+(\d+)\s+\S+\s+model\s/m.exec(table.stdout)![1]!;

    const show = await cli(['dlq', 'show', modelId, '--dlq', 'tool', '--db', db]);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(new RegExp(`^tool-DLQ entry ${modelId} \\(kind model\\):\\n\\{\\n`));
    const json = show.stdout.slice(show.stdout.indexOf('{'), show.stdout.lastIndexOf('}') + 1);
    expect((JSON.parse(json) as DeadLetterRecord<ModelFailureEntry>).entry).toMatchObject({
      kind: 'model',
      modelName: 'cli-test-model',
      stepIndex: 0,
      reason: 'model-not-retryable',
      lastError: { kind: 'auth', status: 401 },
    });
    expect(show.stdout).toMatch(
      /\nreplay: a replay calls the model cli-test-model again at step 0 with the stored conversation \(conv_\w+\), then goes on with the run/,
    );
    expect(show.stdout).not.toContain(SECRET_KEY);
    expect(show.stdout).not.toContain('mia.li3818@example.com');

    const message = await cli(['dlq', 'list', '--dlq', 'message', '--json', '--db', db]);
    const [messageRecord] = JSON.parse(message.stdout) as DeadLetterRecord<unknown>[];
    const shown = await cli(['dlq', 'show', messageRecord!.id, '--dlq', 'message', '--json', '--db', db]);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      entry: { rawBody: '{not json', rawBodyRedacted: false },
      rawBodyRedacted: false,
      notice: expect.stringMatching(/rawBody is the message body AS RECEIVED, NOT REDACTED/),
    });
  });

  it('a replay of the model entry calls the model again once it works; --json results say where each message went', async () => {
    const entries = await withStores(db, (stores) => stores.toolDlq.list());
    const model = entries.find((record) => (record.entry as { kind?: string }).kind === 'model')!;
    const replay = await cli(['dlq', 'replay', model.id, '--config', CONFIG, '--json', '--db', db], { CLI_TEST_MODEL_HEALED: '1' });
    expect(replay.code).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ id: model.id, status: 'completed', removed: true, modelCalls: 1 });

    await enqueue(db, [
      { id: 'lookup-2', body: JSON.stringify({ input: 'lookup O-2' }) },
      { id: 'bad-2', body: '{"input": 3}' },
    ]);
    const worker = await cli(['worker', '--db', db, '--config', CONFIG, '--until-empty', '--json']);
    expect(worker.code).toBe(0);
    const lines = worker.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.filter((line) => line.type === 'result')).toEqual(
      expect.arrayContaining([
        { type: 'result', status: 'completed', runId: 'run_lookup-2', messageId: 'lookup-2', deadLetter: null },
        { type: 'result', status: 'rejected', runId: null, messageId: 'bad-2', deadLetter: { queue: 'message', kind: 'message' } },
      ]),
    );
    expect(lines.at(-1)).toEqual({
      type: 'summary',
      handled: 2,
      byStatus: { completed: 1, rejected: 1 },
      paused: false,
      failedDeliveries: 0,
      placed: { completed: 1, toolDlq: { tool: 0, model: 0, run: 0 }, messageDlq: 1, other: {} },
    });
  });
});

describe('a consumer that crashes on a message every time', () => {
  it('past maxDeliveries the run is dead-lettered resumable from its checkpoint (kind run), on stderr as an alert; the worker goes on', async () => {
    const db = join(directory, 'poison.db');
    await enqueue(db, [
      { id: 'crash-1', body: JSON.stringify({ input: 'crash the worker' }) },
      { id: 'after-1', body: JSON.stringify({ input: 'lookup O-9' }) },
    ]);
    const env = { CLI_TEST_MAX_DELIVERIES: '1' };
    const crashed = await cli(['worker', '--db', db, '--config', CONFIG, '--until-empty', '--lease-ms', '300'], env);
    expect(crashed.signal).toBe('SIGKILL'); // the tool killed its consumer mid-run
    await withStores(db, async (stores) => expect(await stores.queue.size()).toBe(2));
    await new Promise((resolve) => setTimeout(resolve, 450)); // the dead consumer's lease (300 ms) runs out

    const worker = await cli(['worker', '--db', db, '--config', CONFIG, '--until-empty', '--lease-ms', '300'], env);
    expect(worker.code).toBe(0);
    expect(worker.stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(
        / ALERT delivery-limit-exceeded message=crash-1 run=run_crash-1 deliveries=1 queue=tool: every delivery ended without a result \(the consumer crashed/,
      ),
    ]);
    expect(worker.stdout).toMatch(
      / warn dead-letter-add queue=tool kind=run reason=delivery-limit-exceeded run=run_crash-1 deliveries=1 message=crash-1: every delivery ended without a result/,
    );
    expect(worker.stdout).toContain('toolrun worker: handled 2 messages (completed 1, delivery_limit_exceeded 1)');
    expect(worker.stdout).toContain('toolrun worker: where they went: 1 completed; 1 to the tool DLQ (tool 0, model 0, run 1); 0 to the message DLQ');

    const table = await cli(['dlq', 'list', '--dlq', 'tool', '--db', db]);
    expect(table.stdout).toMatch(/\s+run\s+1 delivery\s+-\s+run_crash-1\s+step 0\s+delivery-limit-exceeded\s+crash: every delivery ended/);
    const [record] = await withStores(db, (stores) => stores.toolDlq.list());
    const show = await cli(['dlq', 'show', record!.id, '--dlq', 'tool', '--json', '--db', db]);
    const shown = JSON.parse(show.stdout) as DeadLetterRecord<RunFailureEntry> & { kind: string; replay: { action: string; stepIndex: number; text: string } };
    expect(shown.entry).toMatchObject({ kind: 'run', runId: 'run_crash-1', deliveries: 1, reason: 'delivery-limit-exceeded', lastError: { kind: 'crash' } });
    expect(shown.kind).toBe('run');
    expect(shown.replay).toMatchObject({
      action: 'resume-from-checkpoint',
      stepIndex: 0,
      text: expect.stringMatching(/^a replay resumes run run_crash-1 from its checkpoint at step 0 \(1 delivery of its message failed/),
    });

    // Fixed: the drain resumes the run from its checkpoint and it completes.
    const drain = await cli(['dlq', 'drain', '--db', db, '--config', CONFIG], { CLI_TEST_CRASH_HEALED: '1' });
    expect(drain.code).toBe(0);
    expect(drain.stdout).toBe('drained 1 entry: completed 1; removed 1, 0 left in the tool DLQ\n');
  });
});

/** Seeds `count` tool-DLQ entries the way the worker does: handleMessage with book_flight down. */
async function seedToolFailures(db: string, count: number): Promise<void> {
  const config = await resolveToolrunConfig(configInput, { env: {} });
  await withStores(db, async (stores) => {
    for (let index = 1; index <= count; index += 1) {
      const result = await handleMessage(
        { body: JSON.stringify({ input: `book HAT${index}` }), id: `book-${index}` },
        { ...config, stores, queues: { messageDlq: stores.messageDlq, toolDlq: stores.toolDlq } },
      );
      expect(result.status).toBe('tool_failed');
    }
    expect(await stores.toolDlq.size()).toBe(count);
  });
}

function effects(file: string): Array<{ runId: string; pid: number }> {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [runId, pid] = line.split(' ');
      return { runId: runId!, pid: Number(pid) };
    });
}

describe('dlq replay and drain of a run someone else holds', () => {
  it('a replay that loses the claim prints the holder and exits 1 having done nothing; a drain counts it apart and leaves it', async () => {
    const db = join(directory, 'claimed.db');
    const effectsFile = join(directory, 'claimed-effects.log');
    await seedToolFailures(db, 2);
    const [first, second] = await withStores(db, (stores) => stores.toolDlq.list());
    const runId = (first!.entry as { runId: string }).runId;
    // Another consumer (here: this test) holds the first entry's run.
    await withStores(db, async (stores) => expect(await stores.claims!.acquire(`run:${runId}`, 'drain:other-host:42', 60_000)).toBe(true));
    const env = { CLI_TEST_BOOKING_HEALED: '1', CLI_TEST_EFFECTS_FILE: effectsFile };

    const replay = await cli(['dlq', 'replay', first!.id, '--config', CONFIG, '--db', db], env);
    expect(replay.code).toBe(1);
    expect(replay.stdout).toBe(
      `not replayed ${first!.id} (run ${runId}): in_progress — the run is claimed by drain:other-host:42 (another drain, replay or worker is running it); nothing was done, the entry stays in the tool DLQ: try again once it is done\n`,
    );
    expect(effects(effectsFile)).toEqual([]);

    const drain = await cli(['dlq', 'drain', '--config', CONFIG, '--db', db], env);
    expect(drain.code).toBe(0);
    expect(drain.stdout).toBe(
      `drained 2 entries: completed 1, in_progress 1; removed 1, 1 left in the tool DLQ\n  in progress elsewhere: 1 (${first!.id}) — claimed by another drain, replay or worker; not replayed here, left to it\n`,
    );
    expect(effects(effectsFile).map((effect) => effect.runId)).toEqual([(second!.entry as { runId: string }).runId]);
    await withStores(db, async (stores) => {
      expect((await stores.toolDlq.list()).map((record) => record.id)).toEqual([first!.id]);
      expect(await stores.claims!.release(`run:${runId}`, 'drain:other-host:42')).toBe(true);
    });
  });

  it('two toolrun dlq drain processes at once over 20 entries: 20 completions in all, each side effect once, nothing left', async () => {
    const db = join(directory, 'race.db');
    const effectsFile = join(directory, 'race-effects.log');
    const barrier = join(directory, 'race-barrier');
    await seedToolFailures(db, 20);
    const ids = await withStores(db, async (stores) => (await stores.toolDlq.list()).map((record) => record.id));
    expect(ids).toHaveLength(20);
    // No booking happens before both processes are booking (the fixture's barrier): both listed all
    // 20 entries before any was removed, and both tried the first entries while the other held them.
    const env = {
      CLI_TEST_BOOKING_HEALED: '1',
      CLI_TEST_EFFECTS_FILE: effectsFile,
      CLI_TEST_EFFECT_DELAY_MS: '15',
      CLI_TEST_BARRIER_DIR: barrier,
      CLI_TEST_BARRIER_COUNT: '2',
    };
    const args = ['dlq', 'drain', '--config', CONFIG, '--db', db, '--json', '--concurrency', '4'];
    const results = await Promise.all([cli(args, env), cli(args, env)]);
    for (const result of results) {
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
    }
    const reports = results.map((result) => JSON.parse(result.stdout) as DrainReport);
    const completedIds = reports.map((report) => report.entries.filter((entry) => entry.status === 'completed').map((entry) => entry.id));

    expect(completedIds[0]!.length + completedIds[1]!.length).toBe(20);
    expect(completedIds[0]!.filter((id) => completedIds[1]!.includes(id))).toEqual([]); // neither completed what the other did
    expect([...completedIds[0]!, ...completedIds[1]!].sort()).toEqual([...ids].sort());
    for (const report of reports) {
      expect(report.total).toBe(20);
      expect(report.entries.every((entry) => ['completed', 'already_completed', 'in_progress'].includes(entry.status))).toBe(true);
    }
    expect((reports[0]!.outcomes.in_progress ?? 0) + (reports[1]!.outcomes.in_progress ?? 0)).toBeGreaterThan(0);

    // The side effect ran 20 times, once per run, in the process that reported the run completed.
    const ran = effects(effectsFile);
    expect(ran).toHaveLength(20);
    expect(new Set(ran.map((effect) => effect.runId)).size).toBe(20);
    for (const [index, report] of reports.entries()) {
      const runIds = report.entries.filter((entry) => entry.status === 'completed').map((entry) => entry.runId);
      expect(ran.filter((effect) => runIds.includes(effect.runId)).every((effect) => effect.pid === results[index]!.pid)).toBe(true);
    }
    await withStores(db, async (stores) => {
      expect(await stores.toolDlq.size()).toBe(0);
      expect(runsByStatus(stores)).toEqual({ completed: 20 });
    });
  });
});

describe('the worker output (in process): events the CLI cannot provoke on demand', () => {
  const at = Date.UTC(2026, 0, 1);

  function capture(maxDeliveries = 3) {
    const out: string[] = [];
    const err: string[] = [];
    const output = createWorkerOutput({
      json: false,
      redactor: createRedactor(),
      maxDeliveries,
      writeLine: (line) => out.push(line),
      writeError: (line) => err.push(line),
    });
    return { output, out, err };
  }

  it('a failed delivery is a warning on stderr; at the bound a DLQ that refuses the entry says why; errors are redacted', () => {
    const { output, out, err } = capture(3);
    output.onError(new Error('POST https://api.example.com failed: password=hunter2hunter2'));
    output.onEvent({
      type: 'delivery-failed',
      messageId: 'm-1',
      deliveries: 1,
      maxDeliveries: 3,
      counted: true,
      retryInMs: 1000,
      error: 'TypeError: boom',
      at,
    });
    output.onEvent({
      type: 'delivery-failed',
      messageId: 'm-1',
      deliveries: 2,
      maxDeliveries: 3,
      counted: false,
      retryInMs: 2000,
      error: 'SqliteError: database is locked',
      at,
    });
    output.onError(new Error('the dead-letter queue is full: password=hunter2hunter2'));
    output.onEvent({
      type: 'delivery-failed',
      messageId: 'm-1',
      deliveries: 3,
      maxDeliveries: 3,
      counted: true,
      retryInMs: 4000,
      error: 'TypeError: boom',
      at,
    });
    output.onEvent({ type: 'lease-lost', messageId: 'm-2', deliveries: 1, at });
    expect(out).toEqual([]);
    expect(err).toEqual([
      '2026-01-01T00:00:00.000Z warn delivery-failed message=m-1 delivery=1/3: TypeError: boom; redelivered in 1s',
      '2026-01-01T00:00:00.000Z warn delivery-failed message=m-1 delivery=2/3 (store outage, not counted): SqliteError: database is locked; redelivered in 2s',
      '2026-01-01T00:00:00.000Z warn delivery-failed message=m-1 delivery=3/3: TypeError: boom; redelivered in 4s',
      expect.stringMatching(
        /^toolrun worker: message m-1 reached its delivery bound but could not be dead-lettered \(the dead-letter queue is full: password=\S+\); kept in the queue and tried again$/,
      ),
      expect.stringMatching(/^2026-01-01T00:00:00\.000Z warn lease-lost message=m-2 /),
    ]);
    expect(err.join('\n')).not.toContain('hunter2hunter2');
  });

  it('a dead letter whose result never came (its ack failed) is printed at the end; the summary counts other endings', () => {
    const { output, out } = capture();
    const add: WorkerEvent = { type: 'dead-letter-add', queue: 'tool', reason: 'delivery-limit-exceeded', runId: 'run_p', messageId: 'p-1', at };
    output.onEvent({
      type: 'delivery-limit-exceeded',
      messageId: 'p-1',
      runId: 'run_p',
      deliveries: 5,
      queue: 'tool',
      error: 'RangeError: Maximum call stack size exceeded',
      at,
    });
    output.onEvent(add);
    output.onResult({
      status: 'max_steps',
      runId: 'run_q',
      messageId: 'q-1',
      text: null,
      steps: 6,
      modelCalls: 6,
      tokensSpent: { input: 1, output: 1 },
      alreadyFinished: false,
    } as HandleMessageResult);
    expect(out).toEqual([]);
    output.flush();
    expect(out).toEqual([
      '2026-01-01T00:00:00.000Z warn dead-letter-add queue=tool kind=run reason=delivery-limit-exceeded run=run_p deliveries=5 message=p-1: RangeError: Maximum call stack size exceeded',
    ]);
    expect(output.summaryLines(1, { max_steps: 1 }, 4)).toEqual([
      'toolrun worker: handled 1 message (max_steps 1)',
      'toolrun worker: where they went: 0 completed; 0 to the tool DLQ (tool 0, model 0, run 0); 0 to the message DLQ; 1 ended otherwise (max_steps 1)',
      'toolrun worker: 4 deliveries failed and were given back to the queue (warnings on stderr)',
    ]);
  });

  it("a config's onEvent that throws is reported once and never reaches the worker", () => {
    const lines: string[] = [];
    let calls = 0;
    const guarded = guardConfigOnEvent(
      () => {
        calls += 1;
        throw new Error('webhook rejected: Bearer abcdefghijklmnopqrstuvwxyz0123456789');
      },
      createRedactor(),
      (line) => lines.push(line),
    );
    const event: WorkerEvent = { type: 'dead-letter-below-bound', queue: 'tool', size: 0, at };
    expect(() => guarded(event)).not.toThrow();
    expect(() => guarded(event)).not.toThrow();
    expect(calls).toBe(2);
    expect(lines).toEqual([
      expect.stringMatching(/^toolrun: the config's onEvent threw on a dead-letter-below-bound event \(ignored; later ones not shown\): webhook rejected: /),
    ]);
    expect(lines[0]).not.toContain('abcdefghijklmnopqrstuvwxyz0123456789');
  });
});
