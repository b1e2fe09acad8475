/**
 * toolrun inside Restate, end to end on a real restate-server and a real service process (killed
 * with SIGKILL in one case): the five routing cases, a step Restate gives up on, and replay of a
 * dead-lettered run as a new Restate invocation that calls the model only for the remaining steps.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayRestateEntry, restateReplayer, sweepRestatePaused } from '../src/engines/restate/index.ts';
import { createRedactor, createToolRuntime, replayDeadLetter, type Model, type ResumableEntry, type ToolFailureEntry } from '../src/index.ts';
import { createDashboardApp } from '../src/dashboard/index.ts';
import { POSTGRES_URL } from './fixtures/distributed-services.ts';
import { toolrunInProcess } from './fixtures/toolrun-in-process.ts';
import { startRestateHarness, type RestateHarness } from './fixtures/restate-harness.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The replays' own model: a Restate run is replayed by its service process, which calls its model. */
const unusedModel: Model = async () => {
  throw new Error('a Restate run is replayed by its service, not here');
};

/** A count from Restate's admin SQL. */
async function restateCount(harness: RestateHarness, sql: string): Promise<number> {
  const response = await fetch(`${harness.server.adminUrl}/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query: sql }),
  });
  const rows = ((await response.json()) as { rows: Array<Record<string, unknown>> }).rows;
  return Number(Object.values(rows[0] ?? {})[0] ?? 0);
}

async function entriesOf(harness: RestateHarness, runId: string): Promise<{ tool: ResumableEntry[]; message: number }> {
  const tool = (await harness.stores.toolDlq.list()).map((record) => record.entry).filter((entry) => entry.runId === runId);
  const message = (await harness.stores.messageDlq.list()).filter((record) => record.entry.rawBody.includes(runId)).length;
  return { tool, message };
}

describe('toolrun in Restate: routing on a real restate-server', () => {
  let harness: RestateHarness;
  beforeAll(async () => {
    harness = await startRestateHarness({ workMs: 400, breakerThreshold: 2, invocationAttempts: 20 });
  }, 60_000);
  afterAll(async () => {
    await harness?.close();
  }, 30_000);

  it('a malformed message goes to the message DLQ at once; the model is never called', async () => {
    const before = (await harness.stores.messageDlq.list()).length;
    const { status, json } = await harness.run('malformed-1', '{not json');
    expect(status).toBe(400);
    expect(json.metadata).toMatchObject({ dlq: 'message', reason: 'MALFORMED_JSON' });
    const records = await harness.stores.messageDlq.list();
    expect(records.length).toBe(before + 1);
    expect(records.at(-1)!.entry.rawBody).toBe('{not json');
    expect((await harness.stores.toolDlq.list()).filter((record) => record.entry.runId === 'malformed-1')).toEqual([]);
    expect(await harness.count(`SELECT count(*) FROM $schema.model_calls WHERE run_id = 'malformed-1'`)).toBe(0);
  });

  it('a body naming another run than the object key goes to the message DLQ (RUN_ID_CONFLICT)', async () => {
    const { status, json } = await harness.run('conflict-1', JSON.stringify({ input: 'effects:1', runId: 'someone-else' }));
    expect(status).toBe(400);
    expect(json.metadata).toMatchObject({ dlq: 'message', reason: 'RUN_ID_CONFLICT' });
    expect(await harness.count(`SELECT count(*) FROM $schema.model_calls WHERE run_id IN ('conflict-1', 'someone-else')`)).toBe(0);
  });

  it('a transient failure with budget left stays in-band: the run completes, neither DLQ', async () => {
    const { status, json } = await harness.run('flaky-1', JSON.stringify({ input: 'flaky' }));
    expect(status).toBe(200);
    expect(json).toMatchObject({ status: 'completed', text: 'flaky done' });
    expect(await harness.count(`SELECT count(*) FROM $schema.tool_invocations WHERE run_id = 'flaky-1'`)).toBe(2);
    expect(await harness.count(`SELECT count(*) FROM $schema.side_effects WHERE run_id = 'flaky-1'`)).toBe(1);
    expect(await entriesOf(harness, 'flaky-1')).toEqual({ tool: [], message: 0 });
  });

  it('an exhausted failure is one resumable tool-DLQ entry, pointing at the Restate run', async () => {
    const { status, json } = await harness.run('down-1', JSON.stringify({ input: 'down' }));
    expect(status).toBe(409);
    expect(json.metadata).toMatchObject({ dlq: 'tool', toolrunStatus: 'tool_failed', runId: 'down-1' });
    const { tool, message } = await entriesOf(harness, 'down-1');
    expect(message).toBe(0);
    expect(tool).toHaveLength(1);
    const entry = tool[0] as ToolFailureEntry;
    expect(entry).toMatchObject({ kind: 'tool', toolName: 'always_down', attempts: 3, originalMessageId: 'restate:down-1' });
    expect(entry.stepIndex).toBeGreaterThan(0);
    expect(entry.conversationRef).toMatch(/^conv_/);
    expect(entry.tokensSpent.input).toBeGreaterThan(0);
    // the resumable state: the run's checkpoint and conversation in toolrun's stores
    const opened = await harness.stores.journal.open('down-1');
    expect(opened.claimed && opened.checkpoint).toMatchObject({ status: 'tool_failed', stepIndex: entry.stepIndex, conversationRef: entry.conversationRef });
    expect(opened.claimed && opened.messages?.length).toBeGreaterThan(2);
  });

  it('a tool misconfigured for every run: each run dead-lettered, one shared breaker, one alert', async () => {
    const runs = ['auth-1', 'auth-2', 'auth-3', 'auth-4', 'auth-5'];
    const body = JSON.stringify({ input: 'misconfigured' });
    // two runs open the shared breaker (its threshold), then three at once find it open
    const results = [await harness.run(runs[0]!, body), await harness.run(runs[1]!, body)];
    results.push(...(await Promise.all(runs.slice(2).map((runId) => harness.run(runId, body)))));
    expect(results.map((result) => result.status)).toEqual(runs.map(() => 409));
    const entries = (await harness.stores.toolDlq.list()).map((record) => record.entry).filter((entry) => runs.includes(entry.runId));
    expect(entries).toHaveLength(runs.length);
    expect(new Set(entries.map((entry) => (entry as ToolFailureEntry).toolName))).toEqual(new Set(['broken_auth']));
    expect(await harness.stores.breakers.get('broken_auth')).toMatchObject({ state: 'open' });
    const alerts = harness.events().filter((event) => event.type === 'breaker-open' && event.toolName === 'broken_auth');
    expect(alerts).toHaveLength(1);
    // the breaker spared the upstream: the runs after it opened did not call the tool
    expect(await harness.count(`SELECT count(*) FROM $schema.tool_invocations WHERE tool = 'broken_auth'`)).toBe(2);
    const reasons = entries.map((entry) => (entry as ToolFailureEntry).reason).sort();
    expect(reasons).toEqual(['circuit-open', 'circuit-open', 'circuit-open', 'misconfiguration', 'misconfiguration']);
  });

  it('the service process killed mid-run: Restate resumes the run, neither DLQ, no side effect twice', async () => {
    const runId = 'killed-1';
    const done = harness.run(runId, JSON.stringify({ input: 'effects:3' }));
    // kill it inside the second step's tool call, after its effect was applied
    const deadline = Date.now() + 20_000;
    while ((await harness.count(`SELECT count(*) FROM $schema.side_effects WHERE run_id = $1`, [runId])) < 2) {
      if (Date.now() > deadline) throw new Error('the run did not reach its second effect');
      await sleep(20);
    }
    await harness.kill();
    await harness.restart();
    const { status, json } = await done;
    expect(status).toBe(200);
    expect(json).toMatchObject({ status: 'completed', text: 'recorded 3', steps: 4 });
    expect(await harness.count(`SELECT count(*) FROM $schema.side_effects WHERE run_id = $1`, [runId])).toBe(3);
    expect(await harness.count(`SELECT count(DISTINCT idempotency_key) FROM $schema.side_effects WHERE run_id = $1`, [runId])).toBe(3);
    // every model step once: the steps before the kill came from Restate's journal
    expect(await harness.count(`SELECT count(*) FROM $schema.model_calls WHERE run_id = $1`, [runId])).toBe(4);
    expect(await entriesOf(harness, runId)).toEqual({ tool: [], message: 0 });
  }, 60_000);

  it('a Retry-After longer than the call budget is a durable Restate timer: killed during the wait, the run resumes and waits once', async () => {
    const runId = 'ratelimited-1';
    const done = harness.run(runId, JSON.stringify({ input: 'ratelimited' }));
    const deadline = Date.now() + 20_000;
    while ((await harness.count(`SELECT count(*) FROM $schema.tool_invocations WHERE run_id = $1`, [runId])) < 1) {
      if (Date.now() > deadline) throw new Error('the tool was not called');
      await sleep(20);
    }
    await sleep(300);
    await harness.kill();
    await harness.restart();
    const { status, json } = await done;
    expect(status).toBe(200);
    expect(json).toMatchObject({ status: 'completed', text: 'waited' });
    const calls = await harness.pool.query<{ at: Date }>(`SELECT at FROM "${harness.schema}".tool_invocations WHERE run_id = $1 ORDER BY at`, [runId]);
    expect(calls.rows).toHaveLength(2);
    const waitedMs = calls.rows[1]!.at.getTime() - calls.rows[0]!.at.getTime();
    expect(waitedMs).toBeGreaterThanOrEqual(2_900);
    expect(waitedMs).toBeLessThan(10_000);
    expect(await entriesOf(harness, runId)).toEqual({ tool: [], message: 0 });
  }, 60_000);

  it('a step Restate gives up on lands in the right DLQ: tool DLQ once the run started, message DLQ before', async () => {
    const started = await harness.run('poison-1', JSON.stringify({ input: 'poison:3' }));
    expect(started.status).toBe(500);
    expect(started.json.metadata).toMatchObject({ toolrunStatus: 'delivery_limit_exceeded', dlq: 'tool' });
    const afterStart = await entriesOf(harness, 'poison-1');
    expect(afterStart.message).toBe(0);
    expect(afterStart.tool).toHaveLength(1);
    expect(afterStart.tool[0]).toMatchObject({ kind: 'run', runId: 'poison-1', originalMessageId: 'restate:poison-1' });

    const never = await harness.run('poison-open-1', JSON.stringify({ input: 'effects:1' }));
    expect(never.status).toBe(500);
    expect(never.json.metadata).toMatchObject({ toolrunStatus: 'delivery_limit_exceeded', dlq: 'message' });
    const messages = (await harness.stores.messageDlq.list()).filter((record) => record.entry.reason.code === 'DELIVERY_LIMIT_EXCEEDED');
    expect(messages.filter((record) => record.entry.rawBody.includes('poison-open-1'))).toHaveLength(1);
    expect(await harness.count(`SELECT count(*) FROM $schema.model_calls WHERE run_id = 'poison-open-1'`)).toBe(0);
  }, 60_000);

  it('replay resumes from the failed step as a new invocation: the model only for the remaining steps, once', async () => {
    const runId = 'down-1';
    const [record] = (await harness.stores.toolDlq.list()).filter((candidate) => candidate.entry.runId === runId);
    const entry = record!.entry;
    const modelCallsBefore = await harness.count(`SELECT count(*) FROM $schema.model_calls WHERE run_id = $1`, [runId]);
    await harness.pool.query(`INSERT INTO "${harness.schema}".world (fixed) VALUES (true)`);
    // two operators at once, through toolrun's replay routing: Restate runs the two invocations one after the other
    const options = { model: unusedModel, tools: [], stores: harness.stores, hosts: { restate: restateReplayer({ ingressUrl: harness.server.ingressUrl }) } };
    const [first, second] = await Promise.all([replayDeadLetter(record!, options), replayDeadLetter(record!, options)]);
    expect([first.status, second.status].sort()).toEqual(['already_completed', 'completed']);
    expect(first.removed || second.removed).toBe(true);
    expect((await harness.stores.toolDlq.list()).filter((candidate) => candidate.entry.runId === runId)).toEqual([]);
    const replayed = first.status === 'completed' ? first : second;
    // the failed step's call ran again; the model was called for the remaining steps only, each step once
    const repeatedSteps = `SELECT count(*) FROM (SELECT step_index FROM $schema.model_calls WHERE run_id = $1 GROUP BY step_index HAVING count(*) > 1) AS repeated`;
    expect(await harness.count(repeatedSteps, [runId])).toBe(0);
    expect(replayed.modelCalls).toBe(4 - entry.stepIndex);
    expect(await harness.count(`SELECT count(*) FROM $schema.model_calls WHERE run_id = $1`, [runId])).toBe(modelCallsBefore + replayed.modelCalls);
    expect(await harness.count(`SELECT count(*) FROM $schema.side_effects WHERE run_id = $1`, [runId])).toBe(4 - entry.stepIndex);
    const again = await replayRestateEntry(entry, { ingressUrl: harness.server.ingressUrl });
    expect(again.status).toBe('already_completed');
    expect(await harness.count(`SELECT count(*) FROM $schema.side_effects WHERE run_id = $1`, [runId])).toBe(4 - entry.stepIndex);
  }, 60_000);

  it('`toolrun dlq replay` and `toolrun dlq drain` route Restate entries to the Restate replayer', async () => {
    await harness.pool.query(`UPDATE "${harness.schema}".world SET fixed = false`);
    for (const runId of ['down-2', 'down-3']) expect((await harness.run(runId, JSON.stringify({ input: 'down' }))).status).toBe(409);
    await harness.pool.query(`UPDATE "${harness.schema}".world SET fixed = true`);
    const store = `${POSTGRES_URL}?schema=${harness.schema}`;
    const config = fileURLToPath(new URL('./fixtures/restate-replay.config.ts', import.meta.url));
    const env = { RESTATE_INGRESS_URL: harness.server.ingressUrl };
    const [record] = (await harness.stores.toolDlq.list()).filter((candidate) => candidate.entry.runId === 'down-2');
    const replayed = await toolrunInProcess(['dlq', 'replay', record!.id, '--store', store, '--config', config, '--json'], env);
    expect(replayed.stderr).toBe('');
    expect(JSON.parse(replayed.stdout)).toMatchObject({ status: 'completed', host: 'restate', removed: true });

    const before = (await harness.stores.toolDlq.list()).map((candidate) => candidate.entry.runId).sort();
    const drained = await toolrunInProcess(['dlq', 'drain', '--store', store, '--config', config, '--json'], env);
    const report = JSON.parse(drained.stdout) as { entries: Array<{ runId: string; status: string }> };
    const statusOf = (runId: string) => report.entries.find((entry) => entry.runId === runId)?.status;
    expect(statusOf('down-3')).toBe('completed');
    // the others are still broken (the credential, the store): they stay, nothing is lost
    const after = (await harness.stores.toolDlq.list()).map((candidate) => candidate.entry.runId).sort();
    expect(after).toEqual(before.filter((runId) => runId !== 'down-3'));
    expect(await harness.count(`SELECT count(*) FROM $schema.side_effects WHERE run_id IN ('down-2', 'down-3')`)).toBe(6);
  }, 120_000);

  it('the dashboard replays a Restate entry through the same routing', async () => {
    await harness.pool.query(`UPDATE "${harness.schema}".world SET fixed = false`);
    expect((await harness.run('down-4', JSON.stringify({ input: 'down' }))).status).toBe(409);
    await harness.pool.query(`UPDATE "${harness.schema}".world SET fixed = true`);
    const [record] = (await harness.stores.toolDlq.list()).filter((candidate) => candidate.entry.runId === 'down-4');
    const token = 'restate-test-token-0123456789';
    const dashboard = createDashboardApp({
      source: {
        stores: harness.stores,
        label: 'postgres:restate',
        redactor: createRedactor(),
        replay: { model: unusedModel, tools: [], stores: harness.stores, hosts: { restate: restateReplayer({ ingressUrl: harness.server.ingressUrl }) } },
      },
      token,
      sampleIntervalMs: 60_000,
    });
    try {
      const headers = { host: '127.0.0.1:4319', authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const response = await dashboard.app.fetch(
        new Request(`http://127.0.0.1:4319/api/tool/entries/${record!.id}/replay`, { method: 'POST', headers, body: '{}' }),
      );
      expect(await response.json()).toMatchObject({
        state: 'done',
        total: 1,
        removed: 1,
        entries: [{ id: record!.id, status: 'completed', stillQueued: false }],
      });
    } finally {
      await dashboard.close();
    }
    expect(await harness.count(`SELECT count(*) FROM $schema.side_effects WHERE run_id = 'down-4'`)).toBe(3);
  }, 60_000);

  it('an invocation Restate pauses (a bug outside any step) is swept into the tool DLQ and killed', async () => {
    const runId = 'bug-1';
    await harness.send(runId, JSON.stringify({ input: 'effects:2' }));
    const paused = `SELECT count(*) FROM sys_invocation WHERE target_service_key = 'bug-1' AND status = 'paused'`;
    const deadline = Date.now() + 40_000;
    while ((await restateCount(harness, paused)) < 1) {
      if (Date.now() > deadline) throw new Error('Restate did not pause the invocation');
      await sleep(250);
    }
    const runtime = createToolRuntime({ tools: [] });
    const report = await sweepRestatePaused({ adminUrl: harness.server.adminUrl, stores: harness.stores, runtime });
    expect(report.deadLettered).toEqual([{ invocationId: expect.stringMatching(/^inv_/), runId, queue: 'tool' }]);
    const { tool, message } = await entriesOf(harness, runId);
    expect(message).toBe(0);
    expect(tool).toHaveLength(1);
    expect(tool[0]).toMatchObject({ kind: 'run', runId, originalMessageId: 'restate:bug-1' });
    expect(await restateCount(harness, paused)).toBe(0);
    // a second sweep finds nothing and adds nothing
    expect(await sweepRestatePaused({ adminUrl: harness.server.adminUrl, stores: harness.stores, runtime })).toEqual({ deadLettered: [], replaysKilled: [] });
    expect((await entriesOf(harness, runId)).tool).toHaveLength(1);
    // the tool ran once, not once per attempt: its outcome was journaled before the hook threw
    expect(await harness.count(`SELECT count(*) FROM $schema.side_effects WHERE run_id = $1`, [runId])).toBe(1);
  }, 60_000);
});

describe('examples/restate/dead-letter-and-replay.ts', () => {
  it('prints its measured counts as its last line: one entry, replayed twice at once, one write', { timeout: 120_000 }, () => {
    const example = fileURLToPath(new URL('../examples/restate/dead-letter-and-replay.ts', import.meta.url));
    const output = execFileSync(process.execPath, ['--import', 'tsx', example], { encoding: 'utf8', timeout: 90_000 });
    expect(JSON.parse(output.trim().split('\n').at(-1)!)).toEqual({
      engine: 'restate',
      dlqEntries: 1,
      messageDlqEntries: 0,
      replayStatus: 'completed',
      sideEffects: 1,
    });
  });
});
