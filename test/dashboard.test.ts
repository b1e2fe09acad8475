/**
 * The dashboard's server, in process (`app.fetch`), over a SQLite store seeded by real runs
 * (handleMessage with the test config, observed like the worker): the overview equals
 * readDeadLetterMetrics, lists group and filter, the detail joins conversation, envelope, developer
 * record and ledger, replays go through the claimed replay code, and the security rules hold.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedactor, readDeadLetterMetrics } from '../src/index.ts';
import { createSqliteFailureLog, createSqliteStores, type SqliteStores } from '../src/stores/sqlite/index.ts';
import { backendConversationExpiry, createDashboardApp, type DashboardApp, type DashboardSource } from '../src/dashboard/index.ts';
import { createDashboardTestConfig, seedDashboardStores, DASHBOARD_TEST_EMAIL } from './fixtures/dashboard-config.ts';
import { leakedCanaries } from './observability-redaction-inputs.ts';

const TOKEN = 'test-token-0123456789abcdef';
const directory = mkdtempSync(join(tmpdir(), 'toolrun-dashboard-'));
const effectsFile = join(directory, 'effects.log');
let stores: SqliteStores;
let dashboard: DashboardApp;
const bodies: string[] = [];

function source(options: { replay: boolean }): DashboardSource {
  const config = createDashboardTestConfig({ DASHBOARD_TEST_HEALED: '1', DASHBOARD_TEST_EFFECTS_FILE: effectsFile });
  return {
    stores,
    label: `sqlite:${stores.path}`,
    redactor: createRedactor({ maxNodes: 1_000_000, maxItems: 100_000 }),
    failureLog: createSqliteFailureLog(stores.database),
    conversationExpiry: backendConversationExpiry(stores),
    replay: options.replay
      ? {
          model: config.model,
          tools: config.tools,
          stores,
          runtimeOptions: config.runtimeOptions!,
          toolRetryBudget: 2,
          maxSteps: 6,
          modelName: config.modelName!,
          sharedBreaker: config.sharedBreaker!,
        }
      : undefined,
    maxSteps: 6,
    toolNames: ['lookup_order', 'book_flight', 'cancel_trip'],
    modelName: config.modelName,
  };
}

async function call(path: string, init: RequestInit & { token?: string | false; origin?: string; host?: string; app?: DashboardApp } = {}) {
  const headers = new Headers(init.headers);
  headers.set('host', init.host ?? '127.0.0.1:4319');
  if (init.token !== false) headers.set('authorization', `Bearer ${init.token ?? TOKEN}`);
  if (init.origin) headers.set('origin', init.origin);
  if (init.body !== undefined) headers.set('content-type', 'application/json');
  const response = await (init.app ?? dashboard).app.fetch(new Request(`http://127.0.0.1:4319${path}`, { ...init, headers }));
  const text = await response.text();
  bodies.push(text);
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) };
}

beforeAll(async () => {
  stores = createSqliteStores({ path: join(directory, 'demo.db') });
  await seedDashboardStores(stores, { bookings: 5, cancels: 4, lookups: 2, malformed: 3 }, createSqliteFailureLog(stores.database));
  dashboard = createDashboardApp({ source: source({ replay: true }), token: TOKEN, sampleIntervalMs: 60_000 });
});

afterAll(async () => {
  await dashboard.close();
  await stores.close();
  rmSync(directory, { recursive: true, force: true });
});

describe('the dashboard server over a seeded SQLite store', () => {
  it('gives the overview with the same DLQ numbers as readDeadLetterMetrics, the groups, breakers, alerts and failure mix', async () => {
    const overview = (await call('/api/overview?fresh=1')).json();
    const metrics = await readDeadLetterMetrics(stores);
    const strip = (value: typeof metrics) => ({
      message: { ...value.message, oldestAgeMs: undefined },
      tool: { ...value.tool, oldestAgeMs: undefined },
    });
    expect(strip(overview.deadLetters)).toEqual(strip(metrics));
    expect(metrics.tool.depth).toBe(9);
    expect(metrics.message.depth).toBe(3);
    expect(overview.groups.tool.map((group: { group: string; count: number }) => [group.group, group.count])).toEqual([
      ['retry-budget-exhausted · server 503 · book_flight', 5],
      ['circuit-open · circuit_open · cancel_trip', 2],
      ['misconfiguration · auth 401 · cancel_trip', 2],
    ]);
    const breaker = overview.breakers.find((item: { key: string }) => item.key === 'cancel_trip');
    expect(breaker.state).toBe('open');
    expect(overview.alerts.map((alert: { type: string; subject: string }) => `${alert.type}:${alert.subject}`)).toEqual(['breaker-open:cancel_trip']);
    expect(overview.failures.available).toBe(true);
    expect(overview.failures.report.totals.failures).toBeGreaterThan(0);
    expect(Object.keys(overview.failures.series.byTool)).toEqual(expect.arrayContaining(['book_flight', 'cancel_trip']));
    expect(overview.samples.length).toBeGreaterThan(0);
    expect(overview.bounds).toEqual({ maxEntries: 10_000, maxBytes: 268_435_456, source: 'default' });
  });

  it('lists the tool DLQ filtered by group, paginated, with step, type/code, tokens and expiry per row', async () => {
    const group = 'retry-budget-exhausted · server 503 · book_flight';
    const first = (await call(`/api/tool/entries?limit=2&group=${encodeURIComponent(group)}`)).json();
    expect(first.rows).toHaveLength(2);
    expect(first.hasMore).toBe(true);
    const second = (await call(`/api/tool/entries?limit=2&offset=2&group=${encodeURIComponent(group)}`)).json();
    const third = (await call(`/api/tool/entries?limit=2&offset=4&group=${encodeURIComponent(group)}`)).json();
    expect(third).toMatchObject({ total: 5, totalExact: true, hasMore: false });
    const ids = [...first.rows, ...second.rows, ...third.rows].map((row: { id: string }) => row.id);
    expect(new Set(ids).size).toBe(5);
    const row = first.rows[0];
    expect(row).toMatchObject({ tool: 'book_flight', kind: 'tool', type: 'environment', code: 'UNAVAILABLE', step: { index: 2, of: 6 }, expiry: 'stored' });
    expect(row.tokens.input).toBeGreaterThan(0);
    expect(row.expiresInMs).toBeGreaterThan(6 * 24 * 3_600_000);
    const unfiltered = (await call('/api/tool/entries?limit=50')).json();
    expect(unfiltered.total).toBe(9);
    expect((await call('/api/tool/entries?limit=0')).status).toBe(400);
  });

  it('shows an entry with its redacted conversation, the failed call highlighted, the envelope, the developer record and the ledger', async () => {
    const { rows } = (await call('/api/tool/entries?tool=book_flight&limit=1')).json();
    const detail = (await call(`/api/tool/entries/${rows[0].id}`)).json();
    const highlighted = detail.conversation.messages.filter((message: { highlighted: boolean }) => message.highlighted);
    // the envelope the model last saw (step 1), then the call the run stopped at (step 2: its retry budget was spent)
    expect(highlighted.map((message: { role: string; step: number }) => `${message.role}@${message.step}`)).toEqual(['tool@1', 'assistant@2']);
    expect(highlighted[1].toolCalls[0]).toMatchObject({ name: 'book_flight', highlighted: true });
    expect(JSON.stringify(detail)).not.toContain(DASHBOARD_TEST_EMAIL);
    expect(detail.envelope.parsed).toMatchObject({ status: 'failed', tool_name: 'book_flight', error: { code: 'UNAVAILABLE' } });
    expect(detail.developerRecord).toMatchObject({ kind: 'tool-failure', traceId: detail.envelope.parsed.trace_id, toolName: 'book_flight' });
    expect(detail.ledger.map((call: { toolName: string; outcome: string }) => `${call.toolName}:${call.outcome}`)).toEqual([
      'lookup_order:applied',
      'book_flight:failed',
      'book_flight:not-recorded',
    ]);
    expect(detail.breakers).toEqual([]);
    const cancel = (await call('/api/tool/entries?group=' + encodeURIComponent('circuit-open · circuit_open · cancel_trip'))).json().rows[0];
    const cancelDetail = (await call(`/api/tool/entries/${cancel.id}`)).json();
    expect(cancelDetail.breakers[0]).toMatchObject({ key: 'cancel_trip', state: 'open' });
    expect((await call('/api/tool/entries/999999')).status).toBe(404);
  });

  it('shows a message-DLQ entry with its field-level reason and the raw body redacted', async () => {
    const { rows } = (await call('/api/message/entries')).json();
    expect(rows.map((row: { code: string }) => row.code).sort()).toEqual(['INVALID_MESSAGE', 'INVALID_MESSAGE', 'MALFORMED_JSON']);
    const invalid = rows.find((row: { group: string }) => row.group === 'INVALID_MESSAGE · /note unknown');
    const detail = (await call(`/api/message/entries/${invalid.id}`)).json();
    expect(detail.reason.fields).toEqual(expect.arrayContaining([expect.objectContaining({ path: '/input', problem: 'type', received: '5' })]));
    expect(detail.rawBody).toContain('"input": 5');
    expect(detail.rawBody).not.toContain('Pw9canaryXz');
  });

  it('refuses actions without the token, from another origin, across sites, with another Host, and when read-only', async () => {
    const id = (await call('/api/tool/entries?limit=1')).json().rows[0].id;
    const noToken = await call(`/api/tool/entries/${id}/replay`, { method: 'POST', body: '{}', token: false });
    expect(noToken.status).toBe(401);
    expect(noToken.json().error.code).toBe('TOKEN_REQUIRED');
    expect((await call(`/api/tool/entries/${id}/replay`, { method: 'POST', body: '{}', token: 'wrong-token-0123456789' })).status).toBe(401);
    expect((await call(`/api/tool/entries/${id}/replay`, { method: 'POST', body: '{}', origin: 'http://evil.example' })).status).toBe(403);
    expect((await call(`/api/tool/entries/${id}/replay`, { method: 'POST', body: '{}', headers: { 'sec-fetch-site': 'cross-site' } })).status).toBe(403);
    expect((await call('/api/overview', { host: 'evil.example:4319', token: false })).status).toBe(403);
    expect((await call('/api/tool/purge', { method: 'PUT', body: '{}' })).status).toBe(403);
    expect((await call('/api/tool/purge', { method: 'POST', body: '{}' })).json().error.code).toBe('CONFIRMATION_REQUIRED');
    expect(await stores.toolDlq.size()).toBe(9);
    const readOnly = createDashboardApp({ source: source({ replay: true }), token: TOKEN, readOnly: true });
    expect((await call(`/api/tool/entries/${id}/replay`, { method: 'POST', body: '{}', app: readOnly })).status).toBe(403);
    const remote = createDashboardApp({ source: source({ replay: true }), token: TOKEN, loopback: false });
    expect((await call('/api/overview', { app: remote, token: false, host: '10.0.0.5:4319' })).status).toBe(401);
    expect((await call('/api/session', { app: remote, host: '10.0.0.5:4319' })).json().tokenValid).toBe(true);
    expect(existsSync(effectsFile)).toBe(false);
  });

  it('serves a strict Content-Security-Policy, the script and styles as files, and uPlot from node_modules', async () => {
    const page = await call('/', { token: false });
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    expect(page.text).not.toMatch(/<script>(?!<)/);
    expect(page.text).not.toMatch(/\s(style|on[a-z]+)=/);
    expect((await call('/assets/dashboard.js', { token: false })).headers.get('content-type')).toContain('javascript');
    expect((await call('/vendor/uPlot.iife.min.js', { token: false })).text).toContain('uPlot');
  });

  it('replays one entry through the claimed replay: completed, removed, one side effect; a second replay finds nothing', async () => {
    const { rows } = (await call('/api/tool/entries?tool=book_flight&limit=1')).json();
    const job = (await call(`/api/tool/entries/${rows[0].id}/replay`, { method: 'POST', body: '{}' })).json();
    expect(job).toMatchObject({ state: 'done', total: 1, removed: 1, entries: [{ id: rows[0].id, status: 'completed', stillQueued: false }] });
    expect(readFileSync(effectsFile, 'utf8').trim().split('\n')).toEqual([rows[0].runId]);
    expect((await call(`/api/tool/entries/${rows[0].id}/replay`, { method: 'POST', body: '{}' })).status).toBe(404);
  });

  it('estimates a bulk replay by filter (entries × tokens), then runs it rate-limited with per-entry outcomes', async () => {
    const filter = { group: 'retry-budget-exhausted · server 503 · book_flight' };
    const listed = (await call(`/api/tool/entries?group=${encodeURIComponent(filter.group)}`)).json().rows;
    const estimate = (await call('/api/tool/replays', { method: 'POST', body: JSON.stringify({ filter, dryRun: true }) })).json();
    expect(estimate.entries).toBe(4);
    // a mistyped dry-run flag or bad settings start nothing (a bulk replay has side effects)
    for (const body of [
      { filter, dryRun: 'yes' },
      { filter, dryRun: 1 },
      { filter, dryRun: true, concurrency: 1e9 },
      { filter, removeExpired: 'no' },
    ]) {
      const refused = await call('/api/tool/replays', { method: 'POST', body: JSON.stringify(body) });
      expect(refused.status).toBe(400);
      expect(refused.json().error.code).toBe('INVALID_INPUT');
    }
    expect((await call('/api/jobs')).json().jobs.filter((job: { type: string }) => job.type !== 'replay')).toEqual([]);
    // an action's body is a few fields: a 1 MB one is refused before it is read
    const huge = await call('/api/tool/replays', { method: 'POST', body: JSON.stringify({ filter: { text: 'x'.repeat(1_000_000) }, dryRun: true }) });
    expect(huge.status).toBe(413);
    expect(huge.json().error.code).toBe('BODY_TOO_LARGE');
    expect(estimate.tokensSpent.input).toBe(listed.reduce((sum: number, row: { tokens: { input: number } }) => sum + row.tokens.input, 0));
    expect(await stores.toolDlq.size()).toBe(8);
    const started = await call('/api/tool/replays', { method: 'POST', body: JSON.stringify({ filter, concurrency: 2, ratePerSecond: 20 }) });
    expect(started.status).toBe(202);
    let job = started.json();
    const deadline = Date.now() + 15_000;
    while (job.state === 'running' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      job = (await call(`/api/jobs/${job.id}`)).json();
    }
    expect(job).toMatchObject({ state: 'done', type: 'bulk', total: 4, done: 4, removed: 4, outcomes: { completed: 4 } });
    const effects = readFileSync(effectsFile, 'utf8').trim().split('\n');
    expect(effects).toHaveLength(5);
    expect(new Set(effects).size).toBe(5);
    expect(await stores.toolDlq.size()).toBe(4);
    // the cancel_trip entries fail again (401, breaker open): outcomes shown, entries kept
    const again = (await call('/api/tool/replays', { method: 'POST', body: JSON.stringify({ filter: { tool: 'cancel_trip' } }) })).json();
    while (again.state === 'running') {
      await new Promise((resolve) => setTimeout(resolve, 50));
      Object.assign(again, (await call(`/api/jobs/${again.id}`)).json());
    }
    expect(again.entries.every((entry: { status: string; stillQueued: boolean }) => entry.status === 'tool_failed' && entry.stillQueued)).toBe(true);
    expect(await stores.toolDlq.size()).toBe(4);
  });

  it('purges with the confirmation', async () => {
    expect((await call('/api/message/purge', { method: 'POST', body: JSON.stringify({ confirm: 'purge message' }) })).json()).toEqual({
      queue: 'message',
      purged: 3,
    });
    expect(await stores.messageDlq.size()).toBe(0);
  });

  it('sent no canary secret in any response', () => {
    const leaked = bodies.flatMap((body) => leakedCanaries(body));
    expect(leaked).toEqual([]);
    expect(bodies.some((body) => body.includes(DASHBOARD_TEST_EMAIL))).toBe(false);
  });
});
