/**
 * A bulk replay at the lowest rate the dashboard takes: the wait between its batches ends on
 * cancel and on close, so a cancel is honoured at once (and the next replay is accepted), and the
 * dashboard closes at once with a job waiting. A rate below the bound is refused. And a read that
 * another site's page makes (which would scan both DLQs) is refused as its actions are.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedactor } from '../src/index.ts';
import { createSqliteFailureLog, createSqliteStores, type SqliteStores } from '../src/stores/sqlite/index.ts';
import { backendConversationExpiry, createDashboardApp, type DashboardApp, type DashboardSource } from '../src/dashboard/index.ts';
import { createDashboardTestConfig, seedDashboardStores } from './fixtures/dashboard-config.ts';

const TOKEN = 'test-token-0123456789abcdef';
const directory = mkdtempSync(join(tmpdir(), 'toolrun-dashboard-cancel-'));
let stores: SqliteStores;

function createApp(): DashboardApp {
  const config = createDashboardTestConfig({ DASHBOARD_TEST_HEALED: '1', DASHBOARD_TEST_EFFECTS_FILE: join(directory, 'effects.log') });
  const source: DashboardSource = {
    stores,
    label: `sqlite:${stores.path}`,
    redactor: createRedactor(),
    failureLog: createSqliteFailureLog(stores.database),
    conversationExpiry: backendConversationExpiry(stores),
    replay: {
      model: config.model,
      tools: config.tools,
      stores,
      runtimeOptions: config.runtimeOptions!,
      toolRetryBudget: 2,
      maxSteps: 6,
      modelName: config.modelName!,
      sharedBreaker: config.sharedBreaker!,
    },
    maxSteps: 6,
    toolNames: ['lookup_order', 'book_flight', 'cancel_trip'],
    modelName: config.modelName,
  };
  return createDashboardApp({ source, token: TOKEN, sampleIntervalMs: 60_000 });
}

async function call(dashboard: DashboardApp, path: string, body?: unknown) {
  const headers = new Headers({ host: '127.0.0.1:4319', authorization: `Bearer ${TOKEN}` });
  if (body !== undefined) headers.set('content-type', 'application/json');
  const response = await dashboard.app.fetch(
    new Request(`http://127.0.0.1:4319${path}`, body === undefined ? { headers } : { method: 'POST', headers, body: JSON.stringify(body) }),
  );
  return { status: response.status, json: (await response.json()) as Record<string, unknown> & { state?: string; id?: string; done?: number } };
}

/** Polls the job until `done(job)` or `withinMs` passed (a bound against a hang); returns it. */
async function waitForJob(dashboard: DashboardApp, id: string, done: (job: Record<string, unknown>) => boolean, withinMs: number) {
  const started = Date.now();
  let job = (await call(dashboard, `/api/jobs/${id}`)).json;
  while (!done(job) && Date.now() - started < withinMs) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    job = (await call(dashboard, `/api/jobs/${id}`)).json;
  }
  return { job };
}

/**
 * How long the job ran, by its own times. Its first batch starts when it does, so a job whose wait
 * after that batch ran out took at least 10 s (one replay at 0.1 a second): less is a wait that
 * ended early, on any load.
 */
function ranMs(job: Record<string, unknown>): number {
  return Date.parse(String(job.finishedAt)) - Date.parse(String(job.startedAt));
}

beforeAll(async () => {
  stores = createSqliteStores({ path: join(directory, 'cancel.db') });
  await seedDashboardStores(stores, { bookings: 4, cancels: 0, lookups: 0, malformed: 0 }, createSqliteFailureLog(stores.database));
});

afterAll(async () => {
  await stores.close();
  rmSync(directory, { recursive: true, force: true });
});

describe('a bulk replay at the lowest rate', () => {
  it('refuses a rate below one replay every 10 s, and takes 0.1', async () => {
    const dashboard = createApp();
    try {
      for (const ratePerSecond of [0.0001, 0.09, 0, -1, 'fast']) {
        const refused = await call(dashboard, '/api/tool/replays', { filter: { tool: 'book_flight' }, ratePerSecond, dryRun: true });
        expect(refused.status, String(ratePerSecond)).toBe(400);
        expect(refused.json.error).toMatchObject({ code: 'INVALID_INPUT' });
      }
      expect((await call(dashboard, '/api/tool/replays', { filter: { tool: 'book_flight' }, ratePerSecond: 0.1, dryRun: true })).status).toBe(200);
    } finally {
      await dashboard.close();
    }
  });

  it('is cancelled at once while it waits between batches, and the next replay is accepted', async () => {
    const dashboard = createApp();
    let secondId: string | undefined;
    try {
      const started = await call(dashboard, '/api/tool/replays', { filter: { tool: 'book_flight' }, concurrency: 1, ratePerSecond: 0.1 });
      expect(started.status).toBe(202);
      const id = started.json.id!;
      // the first batch runs at once; the job then waits 10 s before the next
      const first = await waitForJob(dashboard, id, (job) => job.done === 1, 15_000);
      expect(first.job).toMatchObject({ state: 'running', done: 1 });
      const refused = await call(dashboard, '/api/tool/replays', { filter: { tool: 'book_flight' } });
      expect(refused.json.error).toMatchObject({ code: 'JOB_RUNNING' });

      expect((await call(dashboard, `/api/jobs/${id}/cancel`, {})).status).toBe(200);
      const cancelled = await waitForJob(dashboard, id, (job) => job.state !== 'running', 20_000);
      expect(cancelled.job).toMatchObject({ state: 'cancelled', done: 1, total: 4 });
      // the cancel ended the 10 s wait: timed by the job, not by how fast a loaded machine polls
      expect(ranMs(cancelled.job)).toBeLessThan(10_000);

      const next = await call(dashboard, '/api/tool/replays', { filter: { tool: 'book_flight' }, dryRun: true });
      expect(next.status).toBe(200);
      const again = await call(dashboard, '/api/tool/replays', { filter: { tool: 'book_flight' }, concurrency: 1, ratePerSecond: 0.1 });
      expect(again.status).toBe(202);
      secondId = again.json.id;
    } finally {
      await dashboard.close();
    }
    // close ends the second job's wait too: the job has ended, before its wait could have
    const second = (await call(dashboard, `/api/jobs/${secondId}`)).json;
    expect(second).toMatchObject({ state: 'cancelled' });
    expect(ranMs(second)).toBeLessThan(10_000);
  });
});

describe('reads from another site', () => {
  it('refuses GET /api/overview?fresh=1 from a cross-site page (Sec-Fetch-Site, Origin), serves the page itself and tools without those headers', async () => {
    const dashboard = createApp();
    const get = async (path: string, headers: Record<string, string>) =>
      dashboard.app.fetch(new Request(`http://127.0.0.1:4319${path}`, { headers: { host: '127.0.0.1:4319', ...headers } }));
    try {
      for (const headers of [{ 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }, { origin: 'https://evil.example' }]) {
        const refused = await get('/api/overview?fresh=1', headers);
        expect(refused.status, JSON.stringify(headers)).toBe(403);
        expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('CROSS_ORIGIN');
        expect((await get('/api/tool/entries', headers)).status).toBe(403);
      }
      expect((await get('/api/overview?fresh=1', { 'sec-fetch-site': 'same-origin' })).status).toBe(200);
      expect((await get('/api/overview?fresh=1', { origin: 'http://127.0.0.1:4319' })).status).toBe(200);
      expect((await get('/api/overview?fresh=1', {})).status).toBe(200);
      // the page itself may be opened from a link on another site
      expect((await get('/', { 'sec-fetch-site': 'cross-site' })).status).toBe(200);
    } finally {
      await dashboard.close();
    }
  });
});
