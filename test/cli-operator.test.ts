/**
 * The `toolrun` command as an operator meets it, one test per surprise a new user found: one error
 * convention (exit code, exactly one `toolrun: error:` line on stderr, never a stack), one
 * vocabulary (`--queue` is a run-queue URL everywhere, `--dlq` picks a dead-letter queue), no
 * silent new database, a worker heartbeat, a redrive of a message-DLQ entry, the conversation
 * behind a tool-DLQ entry, and a replay that fails at a new step.
 *
 * Most commands run in process through the CLI's entry (`runToolrun`, what `bin/toolrun.js`
 * calls), with stdout and stderr captured; the few things only a real process shows (a config
 * with a syntax error loaded by Node or tsx, two redrives racing, the airline demo's data folder)
 * are spawned as a user runs them (`node --import tsx …`).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { toolrunInProcess, type CliResult } from './fixtures/toolrun-in-process.ts';
import { redriveMessageId } from '../src/worker/redrive-message.ts';
import { formatHeartbeat } from '../src/cli/worker-heartbeat.ts';
import { createSqliteStores } from '../src/stores/sqlite/index.ts';
import { locateTauBenchData } from '../examples/airline/fetch-tau-bench.ts';

const directory = mkdtempSync(join(tmpdir(), 'toolrun-cli-operator-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const toolrun = toolrunInProcess;

/** Spawns `node --import tsx SCRIPT ARGS` (bounded: killed after 60 s). */
function spawnNode(script: string, args: readonly string[], env: Record<string, string> = {}, cwd = process.cwd()): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(script), ...args], {
      cwd,
      env: { ...process.env, TOOLRUN_DB: '', TOOLRUN_CONFIG: '', TOOLRUN_DEBUG: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

/** The convention: this exit code, nothing on stdout, exactly one `toolrun: error:` line on stderr, no stack. */
function expectError(result: CliResult, code: 1 | 2, text: RegExp): void {
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code, stdout: '' });
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^toolrun: error: /);
  expect(lines[0]).toMatch(text);
  expect(result.stderr).not.toMatch(/\n\s+at |Error: |ERR_|ENOENT/);
}

/** Exactly one `toolrun: warning:` line on stderr. */
function expectOneWarning(result: CliResult, text: RegExp): void {
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^toolrun: warning: /);
  expect(lines[0]).toMatch(text);
}

/**
 * A config module written as a user would, self-contained but for toolrun itself. The model is
 * scripted from the user's input:
 * - `"slow …"`: calls `slow_tool` (120 ms) once, then answers;
 * - `"two-step …"`: calls `first_tool`, then `second_tool`, then answers; each fails with a 503
 *   unless `OPERATOR_TEST_HEAL_FIRST=1` / `OPERATOR_TEST_HEAL_SECOND=1`.
 */
const CONFIG = join(directory, 'operator.config.mjs');
writeFileSync(
  CONFIG,
  `import { defineConfig, defineTool, ToolError } from ${JSON.stringify(pathToFileURL(resolve('src/index.ts')).href)};
const succeeded = (messages) => messages.filter((m) => m.role === 'tool' && JSON.parse(m.content).status === 'success').length;
export default defineConfig(({ env }) => {
  const failing = (name, healed) => defineTool({
    name, description: 'Fails with a 503 until healed', inputSchema: { type: 'object', properties: { email: { type: 'string' } } },
    execute: async () => { if (!healed) throw new ToolError({ kind: 'server', status: 503, message: name + ' unavailable' }); return { ok: true }; },
  });
  const slow = defineTool({ name: 'slow_tool', description: 'Takes 120 ms', inputSchema: { type: 'object' }, execute: () => new Promise((r) => setTimeout(() => r({ ok: true }), 120)) });
  const model = async (request) => {
    const input = request.messages.find((m) => m.role === 'user')?.content ?? '';
    const usage = { input: 1, output: 1 };
    const done = succeeded(request.messages);
    const id = 'call_' + request.runId + '_' + request.stepIndex;
    if (input.startsWith('slow')) return done === 0 ? { toolCalls: [{ id, name: 'slow_tool', args: '{}' }], usage } : { text: 'slow done', usage };
    if (done >= 2) return { text: 'two steps done', usage };
    const args = JSON.stringify({ email: 'mia.li3818@example.com' });
    return { toolCalls: [{ id, name: done === 0 ? 'first_tool' : 'second_tool', args }], usage };
  };
  return {
    model,
    tools: [failing('first_tool', env.OPERATOR_TEST_HEAL_FIRST === '1'), failing('second_tool', env.OPERATOR_TEST_HEAL_SECOND === '1'), slow],
    toolRetryBudget: 1,
    maxSteps: 6,
    runtimeOptions: { retry: { backoff: { baseDelayMs: 1, jitterMs: 0 }, minDelayMs: 1 } },
    modelName: 'operator-test-model',
  };
});
`,
);

/**
 * A database with one message-DLQ entry (`bad-1`) and one tool-DLQ entry: run `run_two-1`, whose
 * `first_tool` failed at step 0 and again at step 1 (the model's one retry), dead-lettered at step 1.
 */
async function seededDatabase(name: string): Promise<{ db: string; messageId: string; toolId: string }> {
  const db = join(directory, name);
  expect((await toolrun(['enqueue', '{"input": "two-step for mia.li3818@example.com"}', '--id', 'two-1', '--db', db, '--init'])).code).toBe(0);
  expect((await toolrun(['enqueue', '{"prompt": "hi"}', '--no-validate', '--id', 'bad-1', '--db', db])).code).toBe(0);
  const worker = await toolrun(['worker', '--db', db, '--config', CONFIG, '--until-empty']);
  expect(worker.code).toBe(0);
  const list = JSON.parse((await toolrun(['dlq', 'list', '--json', '--db', db])).stdout) as Record<'message' | 'tool', Array<{ id: string }>>;
  expect(list.message).toHaveLength(1);
  expect(list.tool).toHaveLength(1);
  return { db, messageId: list.message[0]!.id, toolId: list.tool[0]!.id };
}

describe('one convention for errors', () => {
  it('a missing database: exit 2 and the same one line for stats, dlq list, metrics and report', async () => {
    const missing = join(directory, 'typo.db');
    for (const args of [['stats'], ['dlq', 'list'], ['metrics', '--port', '0'], ['report']]) {
      expectError(await toolrun([...args, '--db', missing]), 2, /^toolrun: error: no toolrun database at .*typo\.db \(/);
    }
    expect(existsSync(missing)).toBe(false);
  });

  it('a --db that names a file that is not SQLite: exit 2 and one line for stats, dlq list, dashboard and report; the file is untouched', async () => {
    const notes = join(directory, 'notes.md');
    const text = '# notes\n\nnot a database, but longer than a SQLite header\n';
    writeFileSync(notes, text);
    for (const args of [['stats'], ['dlq', 'list'], ['dashboard', '--port', '0'], ['report']]) {
      expectError(await toolrun([...args, '--db', notes]), 2, /^toolrun: error: .*notes\.md is not a toolrun database \(not a SQLite file\)/);
    }
    expect(readFileSync(notes, 'utf8')).toBe(text);
    for (const args of [['stats'], ['report'], ['mcp-proxy', '--init', '--', 'node', '-e', '0']]) {
      expectError(await toolrun([...args.slice(0, 1), '--db', directory, ...args.slice(1)]), 2, /^toolrun: error: .* is a directory, not a toolrun database/);
    }
  });

  it('a reader that goes away (| head -1) ends nothing with a stack: the command finishes and exits 0', async () => {
    const db = join(directory, 'many.db');
    const stores = createSqliteStores({ path: db });
    for (let index = 0; index < 3_000; index++) {
      await stores.messageDlq.push({ rawBody: `{"prompt":"${index}"}`, reason: { code: 'INVALID_INPUT', message: 'a run request needs "input"' } } as never);
    }
    await stores.close();
    const result = await new Promise<CliResult>((resolvePromise, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', resolve('src/cli/index.ts'), 'dlq', 'list', '--db', db], {
        env: { ...process.env, TOOLRUN_DB: '', TOOLRUN_CONFIG: '', TOOLRUN_DEBUG: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      // like `head -1`: read the first chunk, then close the pipe while the command is still writing
      child.stdout.once('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        child.stdout.destroy();
      });
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolvePromise({ code, stdout, stderr });
      });
    });
    expect(result.stdout.length).toBeGreaterThan(0);
    expect(result.stderr).not.toMatch(/EPIPE|\n\s+at |Unhandled/);
    expect(result.code).toBe(0);
  });

  it('dashboard --read-only on 127.0.0.1 prints no token (nothing needs one); without it the token URL is printed', async () => {
    const db = join(directory, 'read-only.db');
    createSqliteStores({ path: db }).database.close();
    const startLines = (args: readonly string[]) =>
      new Promise<string>((resolvePromise, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', resolve('src/cli/index.ts'), 'dashboard', '--db', db, '--port', '0', ...args], {
          env: { ...process.env, TOOLRUN_DB: '', TOOLRUN_CONFIG: '', TOOLRUN_DEBUG: '', TOOLRUN_DASHBOARD_TOKEN: '' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          // the start lines end with the read-only line or the no-config line
          if (/read-only: every action is refused|no config/.test(stdout)) child.kill('SIGTERM');
        });
        child.on('error', reject);
        child.on('close', () => {
          clearTimeout(timer);
          resolvePromise(stdout);
        });
      });
    const readOnly = await startLines(['--read-only']);
    expect(readOnly).toMatch(/^toolrun dashboard: http:\/\/127\.0\.0\.1:\d+\//);
    expect(readOnly).toMatch(/read-only: every action is refused/);
    expect(readOnly).not.toMatch(/token/);
    expect(await startLines([])).toMatch(/actions need the token: open http:\/\/127\.0\.0\.1:\d+\/#token=/);
  });

  it('enqueue --id with an empty id is a usage error; nothing is enqueued', async () => {
    const db = join(directory, 'empty-id.db');
    for (const id of ['', '  '])
      expectError(await toolrun(['enqueue', '{"input": "hi"}', '--id', id, '--db', db, '--init']), 2, /--id needs a non-empty message id/);
    expect(existsSync(db)).toBe(false);
  });

  it('enqueue --id over 1,024 UTF-8 bytes is a usage error; nothing is enqueued', async () => {
    const db = join(directory, 'long-id.db');
    expectError(
      await toolrun(['enqueue', '{"input": "hi"}', '--id', 'x'.repeat(1_025), '--db', db, '--init']),
      2,
      /--id needs a message id of at most 1024 UTF-8 bytes/,
    );
    expect(existsSync(db)).toBe(false);
    const lines = join(directory, 'two.jsonl');
    writeFileSync(lines, '{"input": "a"}\n{"input": "b"}\n');
    expectError(
      await toolrun(['enqueue', '--jsonl', '--file', lines, '--id', 'x'.repeat(1_023), '--db', db, '--init']),
      2,
      /--id with --jsonl .* shorten --id/,
    );
    expect(existsSync(db)).toBe(false);
  });

  it('metrics --port 99999 is a usage error naming the range, not a Node RangeError', async () => {
    const db = join(directory, 'ports.db');
    createSqliteStores({ path: db }).database.close();
    expectError(await toolrun(['metrics', '--port', '99999', '--db', db]), 2, /--port <n>.*'99999'.*≤ 65535/);
    expectError(await toolrun(['worker', '--metrics-port', '70000', '--db', db, '--config', CONFIG]), 2, /--metrics-port <n>.*≤ 65535/);
  });

  it('report --from-log: a missing file and a file that is not a toolrun log are errors; a real log is read', async () => {
    expectError(await toolrun(['report', '--from-log', join(directory, 'nothing.log')]), 2, /no log file at .*nothing\.log/);
    const notALog = join(directory, 'notes.txt');
    writeFileSync(notALog, 'shopping list\n{"eggs": 12}\n');
    expectError(await toolrun(['report', '--from-log', notALog]), 2, /notes\.txt is not a toolrun log: none of its first 2 lines/);
    expectError(await toolrun(['report', '--from-log', directory]), 2, /is not a file/);
    const log = join(directory, 'worker.log');
    const line = {
      level: 50,
      time: Date.UTC(2026, 0, 1),
      event: 'tool_call',
      tool_name: 'book_flight',
      status: 'failed',
      error_type: 'environment',
      error_code: 'UPSTREAM_5XX',
    };
    writeFileSync(log, `${JSON.stringify(line)}\n`);
    const report = await toolrun(['report', '--from-log', log, '--json']);
    expect(report).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(report.stdout)).toMatchObject({ totals: { failures: 1 } });
  });

  it('report takes --store like the other commands; a store without a failure log says so', async () => {
    const { db } = await seededDatabase('report-store.db');
    const viaStore = await toolrun(['report', '--store', `sqlite:${db}`, '--json']);
    expect(viaStore).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(viaStore.stdout).totals.failures).toBeGreaterThan(0);
    expectError(await toolrun(['report', '--store', 'memory:']), 2, /the SQLite and PostgreSQL stores keep \(memory: .*keeps none\).*--from-log/);
    expectError(await toolrun(['report', '--store', `sqlite:${db}`, '--from-log', db]), 2, /pass either --store URL or --from-log FILE/);
  });
});

describe('one vocabulary', () => {
  it('--dlq picks a dead-letter queue; --queue message|tool or a run-queue URL there is refused', async () => {
    const { db } = await seededDatabase('vocabulary.db');
    const chosen = await toolrun(['dlq', 'list', '--dlq', 'tool', '--db', db]);
    expect(chosen).toMatchObject({ code: 0, stderr: '' });
    expect(chosen.stdout).toMatch(/^tool DLQ: 1 entry\n/);
    expectError(await toolrun(['dlq', 'list', '--queue', 'tool', '--db', db]), 2, /dlq list does not use the run queue: --queue takes a run-queue URL/);
    expectError(await toolrun(['dlq', 'list', '--queue', `sqlite:${db}`, '--db', db]), 2, /dlq list does not use the run queue: --queue takes a run-queue URL/);
    expectError(await toolrun(['dlq', 'purge', '--dlq', 'both', '--db', db]), 2, /--dlq must be "message" or "tool"/);
  });

  it('--store lists postgres:// in every help; --queue means a run-queue URL in every help', async () => {
    for (const args of [['stats'], ['worker'], ['enqueue'], ['dlq', 'list'], ['dlq', 'redrive'], ['metrics'], ['report']]) {
      const help = await toolrun([...args, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout.replace(/\s+/g, ' ')).toMatch(/--store <url> +stores URL: sqlite:PATH, postgres:\/\//);
      if (args[0] !== 'metrics' && args[0] !== 'report') expect(help.stdout.replace(/\s+/g, ' ')).toMatch(/--queue <url> +run-queue URL/);
    }
  });

  it('dlq show ID finds the entry in either DLQ without naming it', async () => {
    const { db, messageId, toolId } = await seededDatabase('show.db');
    const tool = await toolrun(['dlq', 'show', toolId, '--json', '--db', db]);
    expect(tool).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(tool.stdout)).toMatchObject({ id: toolId, queue: 'tool', kind: 'tool', entry: { toolName: 'first_tool', stepIndex: 1 } });
    const message = await toolrun(['dlq', 'show', messageId, '--json', '--db', db]);
    expect(JSON.parse(message.stdout)).toMatchObject({ id: messageId, queue: 'message', rawBodyRedacted: false, entry: { messageId: 'bad-1' } });
    expectError(await toolrun(['dlq', 'show', '999', '--db', db]), 2, /no entry "999" in either DLQ/);
    expectError(await toolrun(['dlq', 'show', toolId, '--dlq', 'message', '--db', db]), 2, new RegExp(`no entry "${toolId}" in the message DLQ`));
  });
});

describe('no silent new database; config errors name the place', () => {
  it('worker and enqueue refuse a --db that names nothing unless --init; the default path is created', async () => {
    const typo = join(directory, 'tpyo.db');
    expectError(
      await toolrun(['worker', '--db', typo, '--config', CONFIG, '--until-empty']),
      2,
      /no toolrun database at .*tpyo\.db \(check the path; pass --init/,
    );
    expectError(await toolrun(['enqueue', '{"input": "slow"}', '--db', typo]), 2, /no toolrun database at .*tpyo\.db/);
    expectError(await toolrun(['enqueue', '{"input": "slow"}'], { TOOLRUN_DB: typo }), 2, /no toolrun database at .*tpyo\.db/);
    expectError(await toolrun(['enqueue', '{"input": "slow"}', '--store', `sqlite:${typo}`]), 2, /no toolrun database/);
    expect(existsSync(typo)).toBe(false);
    expect(await toolrun(['enqueue', '{"input": "slow"}', '--id', 'first', '--db', typo, '--init'])).toMatchObject({ code: 0, stdout: 'first\n', stderr: '' });
    expect(existsSync(typo)).toBe(true);

    const project = join(directory, 'project');
    mkdirSync(project);
    const cwd = process.cwd();
    process.chdir(project);
    try {
      expect(await toolrun(['enqueue', '{"input": "slow"}', '--id', 'default-1'])).toMatchObject({ code: 0, stdout: 'default-1\n', stderr: '' });
    } finally {
      process.chdir(cwd);
    }
    expect(existsSync(join(project, '.toolrun', 'toolrun.db'))).toBe(true);
  });

  it('a config with a syntax error names its file and line, loaded by Node (.mjs) or tsx (.ts)', async () => {
    const db = join(directory, 'syntax.db');
    createSqliteStores({ path: db }).database.close();
    const mjs = join(directory, 'broken.config.mjs');
    writeFileSync(mjs, 'export default {\n  model: async () => ({}),\n  tools: [,\n};\n');
    const ts = join(directory, 'broken.config.ts');
    writeFileSync(ts, 'export default {\n  model: async () => ({}),\n  tools: [}\n};\n');
    const [fromNode, fromTsx] = await Promise.all([
      spawnNode('src/cli/index.ts', ['worker', '--db', db, '--config', mjs, '--until-empty']),
      spawnNode('src/cli/index.ts', ['worker', '--db', db, '--config', ts, '--until-empty']),
    ]);
    expectError(fromNode, 2, /cannot load config .*broken\.config\.mjs: syntax error at .*broken\.config\.mjs:4: Unexpected token '\}'/);
    expectError(fromTsx, 2, /cannot load config .*broken\.config\.ts: syntax error at .*broken\.config\.ts:3:\d+: /);
  });
});

describe('the operator at work', () => {
  it('worker --until-empty that leaves messages leased by a stopped worker says so in one warning and how to take them', async () => {
    const db = join(directory, 'leased.db');
    for (const id of ['leased-1', 'free-1']) {
      expect((await toolrun(['enqueue', '{"input": "slow"}', '--id', id, '--db', db, ...(id === 'leased-1' ? ['--init'] : [])])).code).toBe(0);
    }
    // a worker that took the oldest message and died: its lease is still running
    const stores = createSqliteStores({ path: db });
    const taken = await stores.queue.reserve(600_000);
    await stores.close();
    expect(taken?.id).toBe('leased-1');
    const worker = await toolrun(['worker', '--db', db, '--config', CONFIG, '--until-empty']);
    expect(worker.code).toBe(0);
    expect(worker.stdout).toMatch(/handled 1 message/);
    expectOneWarning(
      worker,
      /^toolrun: warning: 1 message still in the queue, leased by another worker or by one that stopped without finishing: .*run the worker again then/,
    );
  });

  it('the worker prints a heartbeat (handled, throughput, in flight, queue, DLQ depths) at --heartbeat-ms; none with --json', async () => {
    const db = join(directory, 'heartbeat.db');
    for (let index = 1; index <= 4; index += 1) {
      expect((await toolrun(['enqueue', '{"input": "slow"}', '--id', `slow-${index}`, '--db', db, ...(index === 1 ? ['--init'] : [])])).code).toBe(0);
    }
    const worker = await toolrun(['worker', '--db', db, '--config', CONFIG, '--until-empty', '--concurrency', '2', '--heartbeat-ms', '40']);
    expect(worker).toMatchObject({ code: 0, stderr: '' });
    const beats = worker.stdout.split('\n').filter((line) => line.includes(' · handled '));
    expect(beats.length).toBeGreaterThanOrEqual(2);
    for (const beat of beats) {
      expect(beat).toMatch(/^toolrun worker: up \d+s · handled [0-4] \(\+[0-4], \d+\.\d\/s\) · in flight [0-2] · queue [0-4] · DLQ: message 0, tool 0$/);
    }
    expect(beats.some((beat) => / in flight [12] /.test(beat))).toBe(true);
    expect(worker.stdout).toMatch(/handled 4 messages \(completed 4\)/);

    for (let index = 5; index <= 6; index += 1) expect((await toolrun(['enqueue', '{"input": "slow"}', '--id', `slow-${index}`, '--db', db])).code).toBe(0);
    const quiet = await toolrun(['worker', '--db', db, '--config', CONFIG, '--until-empty', '--heartbeat-ms', '40', '--json']);
    expect(quiet.code).toBe(0);
    for (const line of quiet.stdout.trimEnd().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
    expect(quiet.stdout).not.toContain(' · handled ');

    expect(
      formatHeartbeat({
        elapsedMs: 125_000,
        handled: 40,
        handledSinceLastBeat: 12,
        intervalMs: 10_000,
        inFlight: 2,
        queueSize: null,
        messageDlqDepth: 1,
        toolDlqDepth: 3,
      }),
    ).toBe('toolrun worker: up 2m 5s · handled 40 (+12, 1.2/s) · in flight 2 · queue ? · DLQ: message 1, tool 3');
  });

  it('purging an empty DLQ needs no --yes; enqueuing an existing id says nothing was done', async () => {
    const db = join(directory, 'purge.db');
    expect(await toolrun(['enqueue', '{"input": "slow"}', '--id', 'once', '--db', db, '--init'])).toMatchObject({ code: 0, stdout: 'once\n' });
    expect(await toolrun(['dlq', 'purge', '--dlq', 'tool', '--db', db])).toEqual({ code: 0, stdout: 'the tool DLQ is empty: nothing to purge\n', stderr: '' });
    expect(JSON.parse((await toolrun(['dlq', 'purge', '--dlq', 'message', '--json', '--db', db])).stdout)).toEqual({ queue: 'message', purged: 0 });

    const again = await toolrun(['enqueue', '{"input": "slow, changed"}', '--id', 'once', '--db', db]);
    expect(again).toMatchObject({ code: 0, stdout: '' });
    expectOneWarning(again, /message id once was enqueued before .*nothing was done for it/);
    const batch = await toolrun(['enqueue', '{"input": "slow"}', '--id', 'once', '--json', '--db', db]);
    expect(JSON.parse(batch.stdout)).toEqual({ ids: [], alreadyEnqueued: ['once'] });
    expect(JSON.parse((await toolrun(['stats', '--json', '--db', db])).stdout).queue.size).toBe(1);
  });

  it('a message-DLQ entry is fixed and redriven: back on the run queue, out of the message DLQ, once', async () => {
    const { db, messageId, toolId } = await seededDatabase('redrive.db');
    // As received the body is not a run request: refused, nothing changes.
    expectError(await toolrun(['dlq', 'redrive', messageId, '--db', db]), 2, /the body from the entry is not a run request.*nothing was redriven.*--body-file/);
    expectError(await toolrun(['dlq', 'redrive', toolId, '--db', db]), 2, /is a tool-DLQ entry: .*toolrun dlq replay/);
    // Another operator's redrive holds the entry: nothing is done.
    const stores = createSqliteStores({ path: db });
    try {
      expect(await stores.claims.acquire(`dlq:message:${messageId}`, 'redrive:other-operator', 60_000)).toBe(true);
      expectError(
        await toolrun(['dlq', 'redrive', messageId, '--db', db]),
        1,
        /not redriven .*another redrive holds it \(redrive:other-operator\); nothing was done/,
      );
      expect(await stores.messageDlq.size()).toBe(1);
      await stores.claims.release(`dlq:message:${messageId}`, 'redrive:other-operator');
    } finally {
      await stores.close();
    }

    const fixed = join(directory, 'fixed.json');
    writeFileSync(fixed, '{"input": "slow, fixed by hand"}');
    const redriven = await toolrun(['dlq', 'redrive', messageId, '--body-file', fixed, '--db', db]);
    const redriveId = redriveMessageId(messageId, 'bad-1');
    expect(redriven).toEqual({
      code: 0,
      stdout: `redrove ${messageId}: enqueued as message ${redriveId} (body from ${fixed}); removed from the message DLQ\n`,
      stderr: '',
    });
    expectError(
      await toolrun(['dlq', 'redrive', messageId, '--body-file', fixed, '--db', db]),
      2,
      /no entry .* in the message DLQ \(already redriven or purged/,
    );
    const worker = await toolrun(['worker', '--db', db, '--config', CONFIG, '--until-empty', '--json']);
    const results = worker.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; messageId?: string; status?: string })
      .filter((line) => line.type === 'result');
    expect(results).toEqual([expect.objectContaining({ messageId: redriveId, status: 'completed' })]);
  });

  it('a redrive that died after its enqueue is finished by the next one without a second message', async () => {
    const { db, messageId } = await seededDatabase('redrive-crash.db');
    const redriveId = redriveMessageId(messageId, 'bad-1');
    const stores = createSqliteStores({ path: db });
    try {
      await stores.queue.enqueue({ id: redriveId, body: '{"input": "slow, the first redrive"}' }); // its enqueue, then it died
      const second = join(directory, 'second-body.json');
      writeFileSync(second, '{"input": "slow, the second redrive"}');
      const result = await toolrun(['dlq', 'redrive', messageId, '--body-file', second, '--json', '--db', db]);
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({ id: messageId, messageId: redriveId, status: 'already_enqueued', removed: true, bodySource: second });
      expect(await stores.queue.size()).toBe(1);
      expect(await stores.messageDlq.size()).toBe(0);
    } finally {
      await stores.close();
    }
  });

  it('two operators redriving one entry at once: one enqueues it, the other does nothing', async () => {
    const { db, messageId } = await seededDatabase('redrive-race.db');
    const fixed = join(directory, 'fixed-race.json');
    writeFileSync(fixed, '{"input": "slow, fixed twice"}');
    const args = ['dlq', 'redrive', messageId, '--body-file', fixed, '--json', '--db', db];
    const both = await Promise.all([spawnNode('src/cli/index.ts', args), spawnNode('src/cli/index.ts', args)]);
    const enqueued = both.filter((result) => result.code === 0);
    expect(enqueued).toHaveLength(1);
    expect(JSON.parse(enqueued[0]!.stdout)).toMatchObject({ status: 'enqueued', removed: true });
    const other = both.find((result) => result.code !== 0)!;
    // it found the entry gone (2) or held by the first (1): one line, nothing done
    expectError(other, other.code === 1 ? 1 : 2, /another redrive holds it|no entry .* in the message DLQ/);
    const stores = createSqliteStores({ path: db });
    try {
      expect(await stores.messageDlq.size()).toBe(0);
      expect(await stores.queue.size()).toBe(1);
    } finally {
      await stores.close();
    }
  });

  it('dlq show --conversation prints the redacted conversation up to the failed call', async () => {
    const { db, toolId, messageId } = await seededDatabase('conversation.db');
    const shown = await toolrun(['dlq', 'show', toolId, '--conversation', '--db', db]);
    expect(shown).toMatchObject({ code: 0, stderr: '' });
    const lines = shown.stdout.split('\n');
    const at = lines.findIndex((line) => /^conversation conv_\S+ \(\d+ messages, redacted\):$/.test(line));
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toMatch(/^ {2}\[0\] user: two-step for \*\*\*$/);
    const assistant = lines.slice(at).filter((line) => line.includes('] assistant, step '));
    expect(assistant).toEqual([
      expect.stringMatching(/^ {2}\[1\] assistant, step 0: → first_tool\(\{"email":"\*\*\*"\}\) \[call_run_two-1_0\]$/),
      expect.stringMatching(/^ {2}\[3\] assistant, step 1: → first_tool\(\{"email":"\*\*\*"\}\) \[call_run_two-1_1\] {2}◀ the failed step$/),
    ]);
    expect(lines.slice(at).find((line) => line.startsWith('  [2] tool first_tool'))).toMatch(
      /\[call_run_two-1_0\]: \{"status":"failed",.*"code":"UNAVAILABLE"/,
    );
    expect(shown.stdout).not.toContain('mia.li3818@example.com');
    const json = JSON.parse((await toolrun(['dlq', 'show', toolId, '--conversation', '--json', '--db', db])).stdout) as {
      conversation: { messages: Array<{ role: string }>; redacted: boolean };
    };
    expect(json.conversation.redacted).toBe(true);
    expect(json.conversation.messages[0]).toMatchObject({ role: 'user', content: 'two-step for ***' });
    expectError(await toolrun(['dlq', 'show', messageId, '--conversation', '--db', db]), 2, /message-DLQ entry: its run never started/);
  });

  it('after a replay that fails at a new step, dlq list shows the new failing step; then it completes', async () => {
    const { db, toolId } = await seededDatabase('new-step.db');
    const replay = await toolrun(['dlq', 'replay', toolId, '--config', CONFIG, '--db', db], { OPERATOR_TEST_HEAL_FIRST: '1' });
    expect(replay.code).toBe(1);
    // first_tool works now (step 1), second_tool fails at step 2 and at its retry, step 3
    const [, newId] =
      /^replayed \d+ \(run run_two-1\): tool_failed at step 3 \(second_tool: retry-budget-exhausted\), 2 model calls; entry (\d+) \(step 3\) replaces it in the tool DLQ\n$/.exec(
        replay.stdout,
      ) ?? [undefined, undefined];
    expect(newId).toBeDefined();
    expect(newId).not.toBe(toolId);
    const table = await toolrun(['dlq', 'list', '--dlq', 'tool', '--db', db]);
    expect(table.stdout).toMatch(/^tool DLQ: 1 entry\n/);
    expect(table.stdout).toMatch(
      new RegExp(`^ {2}${newId} .*second_tool\\s+run_two-1\\s+step 3\\s+retry-budget-exhausted\\s+server 503: second_tool unavailable`, 'm'),
    );
    const healed = { OPERATOR_TEST_HEAL_FIRST: '1', OPERATOR_TEST_HEAL_SECOND: '1' };
    const completed = await toolrun(['dlq', 'replay', newId!, '--config', CONFIG, '--json', '--db', db], healed);
    expect(completed.code).toBe(0);
    expect(JSON.parse(completed.stdout)).toMatchObject({ id: newId, status: 'completed', removed: true });
    expect((await toolrun(['dlq', 'list', '--dlq', 'tool', '--db', db])).stdout).toBe('tool DLQ: 0 entries\n');
  });
});

describe('worker --retain-completed-runs-ms', () => {
  it('on SQLite deletes a run that completed longer ago (checkpoint, ledger row, acknowledged message) and keeps the rest; other stores and bad values are usage errors', async () => {
    const db = join(directory, 'retention.db');
    const dayAgoMs = Date.now() - 86_400_000;
    const past = createSqliteStores({ path: db, clock: { now: () => dayAgoMs, sleep: async () => undefined } });
    await past.queue.enqueue({ id: 'old', body: '{"input": "hi"}' });
    await past.queue.reserve(60_000);
    await past.queue.ack('old');
    const checkpoint = {
      runId: 'run_old',
      messageId: 'old',
      status: 'completed' as const,
      stepIndex: 1,
      conversationRef: 'conv_old',
      tokensSpent: { input: 1, output: 1 },
      toolAttempts: {},
      updatedAt: new Date(dayAgoMs).toISOString(),
    };
    await past.runs.put(checkpoint);
    await past.ledger.putIfAbsent('run_old:0:0', { status: 'success' });
    await past.close();

    expect((await toolrun(['enqueue', '{"input": "two-step for a new customer"}', '--id', 'new', '--db', db])).code).toBe(0);
    const worker = await toolrun(['worker', '--db', db, '--config', CONFIG, '--until-empty', '--retain-completed-runs-ms', '3600000']);
    expect(worker.code).toBe(0);
    const stores = createSqliteStores({ path: db });
    const column = (sql: string) => stores.database.prepare(sql).pluck().all();
    expect(column('SELECT run_id FROM runs')).toEqual(['run_new']);
    expect(column("SELECT key FROM ledger WHERE key LIKE 'run_old%'")).toEqual([]);
    expect(column('SELECT id FROM queue_messages')).toEqual(['new']);
    await stores.close();

    expectError(
      await toolrun(['worker', '--db', db, '--config', CONFIG, '--until-empty', '--retain-completed-runs-ms', '-5']),
      2,
      /--retain-completed-runs-ms/,
    );
    expectError(
      await toolrun(['worker', '--store', 'memory:', '--config', CONFIG, '--until-empty', '--retain-completed-runs-ms', '1000']),
      2,
      /--retain-completed-runs-ms is supported on a SQLite store \(--db FILE\) only, not memory:/,
    );
  });
});

describe('TOOLRUN_DATA_DIR', () => {
  it('one that points nowhere is an error, not a silent fall-back to another copy', async () => {
    const demo = await spawnNode('examples/airline/main.ts', [], { TOOLRUN_DATA_DIR: join(directory, 'no-such-data') });
    expectError(demo, 2, /TOOLRUN_DATA_DIR=.*no-such-data does not exist; fix it, or unset it/);
    const empty = join(directory, 'empty-data');
    mkdirSync(empty);
    const location = await locateTauBenchData({ env: { TOOLRUN_DATA_DIR: empty }, download: false });
    expect(location.ok).toBe(false);
    expect(!location.ok && location.message).toMatch(/^toolrun: error: TOOLRUN_DATA_DIR=.*empty-data lacks 5 of the τ-bench airline files \(tau-bench\//);
  });
});

describe('dlq show --conversation of a chat that went on across runs', () => {
  it('marks the run’s last assistant turn as the failed step and the turns of earlier runs as history', async () => {
    const db = join(directory, 'history.db');
    const stores = createSqliteStores({ path: db });
    let id: string;
    try {
      await stores.conversations.put('conv_history', [
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'Hi, how can I help?' },
        { role: 'user', content: 'change my flight' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'c0', name: 'get_reservation', args: '{}' }] },
        { role: 'tool', content: '{"status":"success"}', toolCallId: 'c0', name: 'get_reservation' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'update_reservation', args: '{}' }] },
      ]);
      id = await stores.toolDlq.push({
        kind: 'tool',
        runId: 'run_second',
        stepIndex: 1,
        toolName: 'update_reservation',
        toolArgs: {},
        attempts: 3,
        lastError: { kind: 'server', status: 503, message: 'unavailable' },
        conversationRef: 'conv_history',
        tokensSpent: { input: 10, output: 1 },
        firstSeenAt: new Date().toISOString(),
        originalMessageId: 'm2',
        reason: 'retry-budget-exhausted',
      });
    } finally {
      await stores.close();
    }
    const shown = await toolrun(['dlq', 'show', id, '--conversation', '--db', db]);
    expect(shown).toMatchObject({ code: 0, stderr: '' });
    const assistant = shown.stdout.split('\n').filter((line) => line.includes('] assistant, '));
    expect(assistant).toEqual([
      '  [1] assistant, earlier run: Hi, how can I help?',
      '  [3] assistant, step 0: → get_reservation({}) [c0]',
      '  [5] assistant, step 1: → update_reservation({}) [c1]  ◀ the failed step',
    ]);
  });
});
