/**
 * The dashboard on a large tool DLQ: time to first byte of the page and of the first list page,
 * and time until Chromium has rendered the list (50 rows), on a SQLite store holding
 * `TOOLRUN_DASHBOARD_BENCH_ENTRIES` tool-DLQ entries (default 1,000,000), seeded in one transaction.
 * Also reported, not part of the target: a filtered page whose matches are at the end (a scan of
 * the queue: the ports have no query by field) and the overview (readDeadLetterMetrics, a scan).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRedactor } from '../src/core/redact.ts';
import { createSqliteStores } from '../src/stores/sqlite/index.ts';
import { backendConversationExpiry, startDashboard } from '../src/dashboard/index.ts';
import type { BenchRow } from './measure.ts';

const CHROMIUM = '/usr/bin/chromium';
const CAUSES = [
  { toolName: 'search_flights', reason: 'circuit-open', kind: 'circuit_open', status: null },
  { toolName: 'book_reservation', reason: 'retry-budget-exhausted', kind: 'server', status: 503 },
  { toolName: 'update_reservation_flights', reason: 'retry-budget-exhausted', kind: 'rate_limit', status: 429 },
  { toolName: 'get_user_details', reason: 'misconfiguration', kind: 'auth', status: 401 },
  { toolName: 'cancel_reservation', reason: 'session-breaker-open', kind: 'precondition', status: 409 },
] as const;

/** Seeds `count` tool-DLQ entries (and the conversations of the first 1,000) in one transaction; returns the ms it took. */
async function seed(path: string, count: number): Promise<number> {
  const started = performance.now();
  const stores = createSqliteStores({ path });
  const { database } = stores;
  const insert = database.prepare("INSERT INTO dead_letters (queue, entry, added_at_ms) VALUES ('tool', ?, ?)");
  const nowMs = Date.now();
  database.transaction(() => {
    for (let index = 0; index < count; index += 1) {
      // the last 100 entries are the only ones of their cause (a rare filter: a full scan)
      const cause =
        index >= count - 100 ? { toolName: 'send_certificate', reason: 'misconfiguration', kind: 'auth', status: 403 } : CAUSES[index % CAUSES.length]!;
      const conversationRef = `conv_${index.toString(16).padStart(12, '0')}`;
      const firstSeenAt = new Date(nowMs - (count - index) * 10).toISOString();
      const entry = {
        kind: 'tool',
        runId: `run_${index}`,
        stepIndex: index % 7,
        toolName: cause.toolName,
        toolArgs: { reservation_id: `R${index}`, user_id: 'mia_li_3668' },
        attempts: 3,
        lastError: { kind: cause.kind, status: cause.status, message: `${cause.toolName} failed (${cause.kind})` },
        conversationRef,
        tokensSpent: { input: 1_000 + (index % 900), output: 40 },
        firstSeenAt,
        originalMessageId: `msg_${index}`,
        reason: cause.reason,
      };
      insert.run(JSON.stringify(entry), nowMs - (count - index) * 10);
    }
  })();
  // the conversations behind the first 1,000 entries, through the store (its layout is its own)
  for (let index = 0; index < Math.min(count, 1_000); index += 1) {
    await stores.conversations.put(`conv_${index.toString(16).padStart(12, '0')}`, [{ role: 'user', content: 'change my flight' }]);
  }
  await stores.close();
  return performance.now() - started;
}

/** ms until the first byte of the response, and until its end. */
function timeRequest(url: string): Promise<{ firstByteMs: number; totalMs: number; status: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstByteMs = 0;
    const req = request(url, (response) => {
      response.once('data', () => (firstByteMs = performance.now() - started));
      response.on('data', () => undefined);
      response.on('end', () => resolve({ firstByteMs, totalMs: performance.now() - started, status: response.statusCode ?? 0 }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function median(times: number, run: () => Promise<number>): Promise<number> {
  const values: number[] = [];
  for (let index = 0; index < times; index += 1) values.push(await run());
  values.sort((a, b) => a - b);
  return values[Math.floor(values.length / 2)]!;
}

/** Runs the dashboard benchmark; see the module comment. */
export async function runDashboardBench(): Promise<BenchRow[]> {
  const count = Number(process.env.TOOLRUN_DASHBOARD_BENCH_ENTRIES ?? 1_000_000);
  const directory = mkdtempSync(join(tmpdir(), 'toolrun-dashboard-bench-'));
  const path = join(directory, 'large.db');
  const rows: BenchRow[] = [];
  try {
    const seedMs = await seed(path, count);
    const stores = createSqliteStores({ path });
    const running = await startDashboard({
      source: { stores, label: `sqlite:${path}`, redactor: createRedactor({ maxNodes: 1_000_000 }), conversationExpiry: backendConversationExpiry(stores) },
      port: 0,
      sampleIntervalMs: 3_600_000,
    });
    const n = count.toLocaleString('en-US');
    try {
      const page = await median(7, async () => (await timeRequest(running.url)).firstByteMs);
      const listFirstByte = await median(7, async () => (await timeRequest(`${running.url}api/tool/entries?limit=50`)).firstByteMs);
      const deepPage = await median(3, async () => (await timeRequest(`${running.url}api/tool/entries?limit=50&offset=${Math.max(0, count - 50)}`)).totalMs);
      const rare = await timeRequest(`${running.url}api/tool/entries?limit=50&tool=send_certificate`);
      rows.push({ name: `seed ${n} tool-DLQ entries (one SQLite transaction)`, medianNs: seedMs * 1e6, note: 'once' });
      rows.push({ name: `page: time to first byte (${n} entries)`, medianNs: page * 1e6 });
      rows.push({
        name: `list API, first page of 50: time to first byte (${n} entries)`,
        medianNs: listFirstByte * 1e6,
        note: 'one list({limit,offset}) + size() + one expiry query + ledger probes',
      });
      rows.push({
        name: `list API, last page (offset ${Math.max(0, count - 50).toLocaleString('en-US')}): whole response`,
        medianNs: deepPage * 1e6,
        note: 'OFFSET is skipped row by row: keyset pagination would make it flat',
      });
      rows.push({
        name: 'list API, filter on a cause of the last 100 entries: whole response',
        medianNs: rare.totalMs * 1e6,
        note: 'scans the queue in pages (no query by field in the port)',
      });
      if (existsSync(CHROMIUM)) {
        const { chromium } = await import('playwright-core');
        const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
        try {
          const tab = await browser.newPage();
          const rendered = await median(3, async () => {
            const started = performance.now();
            await tab.goto(`${running.url}#/tool`);
            await tab.locator('[data-testid="tool-entries"] tbody tr').nth(49).waitFor({ timeout: 120_000 });
            const ms = performance.now() - started;
            await tab.goto('about:blank');
            return ms;
          });
          rows.push({ name: `Chromium: navigation to a rendered list of 50 rows (${n} entries)`, medianNs: rendered * 1e6 });
        } finally {
          await browser.close();
        }
      } else rows.push({ name: 'Chromium: rendered list', medianNs: 0, note: `skipped: no ${CHROMIUM}` });
      const overviewStarted = performance.now();
      const overview = await timeRequest(`${running.url}api/overview?fresh=1`);
      rows.push({
        name: `overview API (readDeadLetterMetrics + cause groups: full scans of ${n} entries)`,
        medianNs: (performance.now() - overviewStarted) * 1e6,
        note: `once; HTTP ${overview.status}`,
      });
    } finally {
      await running.close();
      await stores.close();
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  return rows;
}
