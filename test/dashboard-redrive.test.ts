/**
 * Redrive from the dashboard (`POST /api/message/entries/:id/redrive`), in process over a seeded
 * SQLite store: a body that is still not a run request is refused and nothing moves; a fixed body
 * goes on the run queue once, under the id the CLI's redrive gives it, and the entry leaves the
 * message DLQ; a second redrive finds nothing; the action needs the token, like every action.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedactor } from '../src/index.ts';
import { createSqliteStores, type SqliteStores } from '../src/stores/sqlite/index.ts';
import { createDashboardApp, type DashboardApp } from '../src/dashboard/index.ts';
import { seedDashboardStores } from './fixtures/dashboard-config.ts';

const TOKEN = 'test-token-0123456789abcdef';
const directory = mkdtempSync(join(tmpdir(), 'toolrun-dashboard-redrive-'));
let stores: SqliteStores;
let dashboard: DashboardApp;

async function post(path: string, body: unknown, token: string | false = TOKEN) {
  const headers = new Headers({ host: '127.0.0.1:4319', 'content-type': 'application/json' });
  if (token !== false) headers.set('authorization', `Bearer ${token}`);
  const response = await dashboard.app.fetch(new Request(`http://127.0.0.1:4319${path}`, { method: 'POST', headers, body: JSON.stringify(body) }));
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  stores = createSqliteStores({ path: join(directory, 'redrive.db') });
  await seedDashboardStores(stores, { bookings: 0, cancels: 0, lookups: 0, malformed: 2 });
  dashboard = createDashboardApp({ source: { stores, label: 'sqlite:redrive', redactor: createRedactor() }, token: TOKEN, sampleIntervalMs: 60_000 });
});

afterAll(async () => {
  await dashboard.close();
  await stores.close();
  rmSync(directory, { recursive: true, force: true });
});

describe('redrive from the dashboard', () => {
  it('refuses a body that is not a run request, then redrives a fixed one once and removes the entry', async () => {
    const [record] = await stores.messageDlq.list();
    const id = record!.id;
    const messageId = (record!.entry as { messageId?: string }).messageId;
    const queued = await stores.queue.size();

    expect((await post(`/api/message/entries/${id}/redrive`, {}, false)).status).toBe(401);
    const asReceived = await post(`/api/message/entries/${id}/redrive`, {});
    expect(asReceived.status).toBe(400);
    expect(asReceived.json).toMatchObject({ error: { code: 'INVALID_INPUT' } });
    const notJson = await post(`/api/message/entries/${id}/redrive`, { body: '{"input": ' });
    expect(notJson.json).toMatchObject({ error: { code: 'INVALID_INPUT', message: expect.stringMatching(/not valid JSON/) } });
    expect(await stores.messageDlq.get(id)).toBeDefined();
    expect(await stores.queue.size()).toBe(queued);

    const fixed = await post(`/api/message/entries/${id}/redrive`, { body: '{"input": "Book HAT001"}' });
    expect(fixed).toEqual({ status: 200, json: { id, messageId: `${messageId ?? 'message'}.redrive-${id}`, removed: true, body: 'edited' } });
    expect(await stores.messageDlq.get(id)).toBeUndefined();
    expect(await stores.queue.size()).toBe(queued + 1);
    const delivery = await stores.queue.reserve(10_000);
    expect(delivery).toMatchObject({ id: `${messageId ?? 'message'}.redrive-${id}`, body: '{"input": "Book HAT001"}' });

    expect((await post(`/api/message/entries/${id}/redrive`, { body: '{"input": "x"}' })).status).toBe(404);
    expect(await stores.messageDlq.size()).toBe(1);
  });
});
