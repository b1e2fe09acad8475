/**
 * The dashboard on a large tool DLQ: time to first byte of the page and of the first list page,
 * and time until Chromium has rendered the list (50 rows), on `TOOLRUN_DASHBOARD_BENCH_ENTRIES`
 * tool-DLQ entries (default 1,000,000), on SQLite (seeded by one `INSERT … SELECT` of a recursive
 * series, the entries built in SQL) and on PostgreSQL
 * (when `TOOLRUN_TEST_POSTGRES_URL` or the local test server answers; seeded by `INSERT … SELECT
 * generate_series` in chunks, the entries built in SQL with the columns the store writes). Also
 * reported: a deep keyset page (`after`), a filter on the cause of the last 100 entries (an
 * indexed store filter), a group filter (its exact total from the group counts), the cause groups
 * and the overview (both from the stores' counts: no scan of the queue).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRedactor } from '../src/core/redact.ts';
import type { DeadLetterQueue, Stores } from '../src/ground/ports/stores.ts';
import { readEntryGroups } from '../src/dashboard/dashboard-entries.ts';
import { migrateSqliteSchema } from '../src/stores/sqlite/sqlite-migrations.ts';
import BetterSqlite3 from 'better-sqlite3';
import { createSqliteStores } from '../src/stores/sqlite/index.ts';
import { createPostgresStores } from '../src/stores/postgres/index.ts';
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

/** The cause of entry `index` of `count`: the last 100 are the only ones of theirs (a rare filter). */
const RARE_CAUSE = { toolName: 'send_certificate', reason: 'misconfiguration', kind: 'auth', status: 403 } as const;

/** A backend seeded with the entries, its stores open, the last entry's id, and how to drop it. */
interface SeededBackend {
  name: string;
  stores: Stores;
  label: string;
  seedMs: number;
  lastId: number;
  close(): Promise<void>;
}

/** Seeds `count` tool-DLQ entries (and the conversations of the first 1,000) into a SQLite file in one transaction. */
async function seedSqlite(directory: string, count: number): Promise<SeededBackend> {
  const path = join(directory, 'large.db');
  const started = performance.now();
  const seeding = createSqliteStores({ path });
  const { database } = seeding;
  const nowMs = Date.now();
  const literal = (value: string | number | null) => (value === null ? 'NULL' : typeof value === 'number' ? String(value) : `'${value}'`);
  const causes = [...CAUSES, RARE_CAUSE].map(
    (cause, index) => `(${index}, ${[cause.toolName, cause.reason, cause.kind, cause.status].map(literal).join(', ')})`,
  );
  // the entries built by SQLite itself (json_object writes JSON as JSON.stringify does), in one
  // transaction: the store's triggers keep the totals and counts of every row as on a push
  database
    .prepare(
      `WITH RECURSIVE
         causes (k, tool, reason, kind, status) AS (VALUES ${causes.join(', ')}),
         series (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM series WHERE i < ? - 1)
       INSERT INTO dead_letters (queue, entry, added_at_ms)
       SELECT 'tool', json_object(
           'kind', 'tool', 'runId', 'run_' || i, 'stepIndex', i % 7, 'toolName', tool,
           'toolArgs', json_object('reservation_id', 'R' || i, 'user_id', 'mia_li_3668'), 'attempts', 3,
           'lastError', json_object('kind', kind, 'status', status, 'message', tool || ' failed (' || kind || ')'),
           'conversationRef', printf('conv_%012x', i), 'tokensSpent', json_object('input', 1000 + i % 900, 'output', 40),
           'firstSeenAt', strftime('%Y-%m-%dT%H:%M:%fZ', (? - (? - i) * 10) / 1000.0, 'unixepoch'),
           'originalMessageId', 'msg_' || i, 'reason', reason),
         ? - (? - i) * 10
       FROM series JOIN causes ON causes.k = CASE WHEN i >= ? - 100 THEN ${CAUSES.length} ELSE i % ${CAUSES.length} END
       ORDER BY i`,
    )
    .run(count, nowMs, count, nowMs, count, count);
  // the conversations behind the first 1,000 entries, through the store (its layout is its own)
  for (let index = 0; index < Math.min(count, 1_000); index += 1) {
    await seeding.conversations.put(`conv_${index.toString(16).padStart(12, '0')}`, [{ role: 'user', content: 'change my flight' }]);
  }
  const lastId = Number((database.prepare("SELECT MAX(id) AS id FROM dead_letters WHERE queue = 'tool'").get() as { id: number }).id);
  await seeding.close();
  const seedMs = performance.now() - started;
  const stores = createSqliteStores({ path });
  return { name: 'SQLite', stores, label: `sqlite:${path}`, seedMs, lastId, close: () => stores.close() };
}

/** Seeds `count` tool-DLQ entries into a new PostgreSQL schema, or says why it cannot. */
async function seedPostgres(count: number): Promise<SeededBackend | string> {
  const url = process.env.TOOLRUN_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `toolrun_dashboard_bench_${process.pid}_${Date.now().toString(36)}`;
  let stores: Awaited<ReturnType<typeof createPostgresStores>>;
  try {
    stores = await createPostgresStores({ connectionString: url, schema, maxConnections: 4 });
  } catch (error) {
    return `no PostgreSQL at ${url.replace(/\/\/[^@]*@/, '//…@')}: ${(error as Error).message}`;
  }
  const { pool } = stores;
  const started = performance.now();
  const nowMs = Date.now();
  const array = (values: readonly unknown[]) =>
    values.map((value) => (value === null ? 'NULL' : typeof value === 'number' ? String(value) : `'${String(value)}'`)).join(',');
  const pick = (field: 'toolName' | 'reason' | 'kind' | 'status', cast = '') =>
    `CASE WHEN i >= $2::bigint - 100 THEN ${array([RARE_CAUSE[field]])}${cast} ELSE (ARRAY[${array(CAUSES.map((cause) => cause[field]))}]${cast ? `${cast}[]` : ''})[i % ${CAUSES.length} + 1] END`;
  // toolEntry(i) of the SQLite seed built in SQL, with every cause and group column the store writes for it
  const seedSql = `
    WITH rows AS (
      SELECT i, ${pick('toolName')} AS tool, ${pick('reason')} AS reason, ${pick('kind')} AS error_kind, ${pick('status', '::int')} AS status
      FROM generate_series($1::bigint, LEAST($1::bigint + 250000, $2::bigint) - 1) AS i
    )
    INSERT INTO ${schema}.dead_letters (queue, entry, added_at_ms, cause_kind, cause_tool_name, cause_reason, cause_error_kind, cause_error_status, tokens_input, tokens_output)
    SELECT 'tool', json_build_object(
        'kind', 'tool', 'runId', 'run_' || i, 'stepIndex', i % 7, 'toolName', tool,
        'toolArgs', json_build_object('reservation_id', 'R' || i, 'user_id', 'mia_li_3668'), 'attempts', 3,
        'lastError', json_build_object('kind', error_kind, 'status', status, 'message', tool || ' failed (' || error_kind || ')'),
        'conversationRef', 'conv_' || lpad(to_hex(i), 12, '0'), 'tokensSpent', json_build_object('input', 1000 + i % 900, 'output', 40),
        'firstSeenAt', to_char(to_timestamp(($3::bigint - ($2::bigint - i) * 10) / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'originalMessageId', 'msg_' || i, 'reason', reason)::text,
      $3::bigint - ($2::bigint - i) * 10, 'tool', tool, reason, error_kind, status::text, 1000 + i % 900, 40
    FROM rows ORDER BY i`;
  for (let start = 0; start < count; start += 250_000) await pool.query(seedSql, [start, count, nowMs]);
  await pool.query(`ANALYZE ${schema}.dead_letters`);
  for (let index = 0; index < Math.min(count, 1_000); index += 1) {
    await stores.conversations.put(`conv_${index.toString(16).padStart(12, '0')}`, [{ role: 'user', content: 'change my flight' }]);
  }
  const { rows } = await pool.query<{ id: string }>(`SELECT MAX(id)::text AS id FROM ${schema}.dead_letters WHERE queue = 'tool'`);
  return {
    name: 'PostgreSQL',
    stores,
    label: `postgres (schema ${schema})`,
    seedMs: performance.now() - started,
    lastId: Number(rows[0]!.id),
    async close() {
      await pool.query(`DROP SCHEMA ${schema} CASCADE`);
      await stores.close();
    },
  };
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

/** The dashboard's numbers on one seeded backend. */
async function measureBackend(backend: SeededBackend, count: number): Promise<BenchRow[]> {
  const { stores, name } = backend;
  const rows: BenchRow[] = [];
  const running = await startDashboard({
    source: { stores, label: backend.label, redactor: createRedactor({ maxNodes: 1_000_000 }), conversationExpiry: backendConversationExpiry(stores) },
    port: 0,
    sampleIntervalMs: 3_600_000,
  });
  const n = count.toLocaleString('en-US');
  const rare = `${RARE_CAUSE.reason} · ${RARE_CAUSE.kind} ${RARE_CAUSE.status} · ${RARE_CAUSE.toolName}`;
  try {
    const page = await median(7, async () => (await timeRequest(running.url)).firstByteMs);
    const listFirstByte = await median(7, async () => (await timeRequest(`${running.url}api/tool/entries?limit=50`)).firstByteMs);
    const after = String(Math.max(0, backend.lastId - 50));
    const deepPage = await median(5, async () => (await timeRequest(`${running.url}api/tool/entries?limit=50&after=${after}`)).totalMs);
    const rareTool = await median(5, async () => (await timeRequest(`${running.url}api/tool/entries?limit=50&tool=${RARE_CAUSE.toolName}`)).totalMs);
    const rareGroup = await median(5, async () => (await timeRequest(`${running.url}api/tool/entries?limit=50&group=${encodeURIComponent(rare)}`)).totalMs);
    const groups = await median(5, async () => (await timeRequest(`${running.url}api/tool/groups?fresh=1`)).totalMs);
    const overview = await median(5, async () => (await timeRequest(`${running.url}api/overview?fresh=1`)).totalMs);
    rows.push({ name: `${name}: seed ${n} tool-DLQ entries`, medianNs: backend.seedMs * 1e6, note: 'once' });
    rows.push({ name: `${name}: page, time to first byte`, medianNs: page * 1e6 });
    rows.push({
      name: `${name}: list API, first page of 50, time to first byte`,
      medianNs: listFirstByte * 1e6,
      note: 'one list({limit}) + size() + one expiry query + ledger probes',
    });
    rows.push({ name: `${name}: list API, last page (after=${after}), whole response`, medianNs: deepPage * 1e6, note: 'keyset: an id range' });
    rows.push({
      name: `${name}: list API, tool of the last 100 entries, whole response`,
      medianNs: rareTool * 1e6,
      note: 'store filter on the indexed cause_tool_name',
    });
    rows.push({ name: `${name}: list API, group of the last 100 entries, whole response`, medianNs: rareGroup * 1e6, note: 'exact total from countByGroup' });
    rows.push({ name: `${name}: cause groups API (fresh)`, medianNs: groups * 1e6, note: 'countByGroup: no scan' });
    // the same groups read as before the group counts (a store without countByGroup): one scan of the queue
    const { countByGroup: _counts, ...scanned } = stores.toolDlq as DeadLetterQueue<unknown>;
    const scanStarted = performance.now();
    await readEntryGroups({ toolDlq: scanned, messageDlq: stores.messageDlq as DeadLetterQueue<unknown> }, new Date().toISOString());
    rows.push({
      name: `${name}: cause groups by a scan of the queue (a store without countByGroup)`,
      medianNs: (performance.now() - scanStarted) * 1e6,
      baseline: `${name}: cause groups API (fresh)`,
      ratio: (performance.now() - scanStarted) / groups,
      note: 'once',
    });
    rows.push({ name: `${name}: overview API (fresh)`, medianNs: overview * 1e6, note: 'countByCause + countByGroup + oldest(): no scan' });
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
        rows.push({ name: `${name}: Chromium, navigation to a rendered list of 50 rows`, medianNs: rendered * 1e6 });
      } finally {
        await browser.close();
      }
    } else rows.push({ name: `${name}: Chromium, rendered list`, medianNs: 0, note: `skipped: no ${CHROMIUM}` });
  } finally {
    await running.close();
  }
  return rows;
}

/**
 * What the group counts cost each write: ms to insert `entries` tool-DLQ entries (one transaction)
 * into a file without the group-count triggers (dropped from the schema) and into one with them,
 * alternating A/B rounds on fresh files, best of each.
 */
function groupCountWriteCost(directory: string, entries: number, rounds: number): { before: number; after: number } {
  const best = { before: Number.POSITIVE_INFINITY, after: Number.POSITIVE_INFINITY };
  const entryText = (index: number) =>
    JSON.stringify({
      kind: 'tool',
      runId: `run_${index}`,
      stepIndex: 1,
      toolName: CAUSES[index % CAUSES.length]!.toolName,
      reason: CAUSES[index % CAUSES.length]!.reason,
      lastError: { kind: CAUSES[index % CAUSES.length]!.kind, status: CAUSES[index % CAUSES.length]!.status, message: 'failed' },
      tokensSpent: { input: 1_000 + index, output: 40 },
    });
  for (let round = 0; round < rounds; round += 1) {
    const order: Array<'before' | 'after'> = ['before', 'after'];
    if (round % 2 === 1) order.reverse();
    for (const key of order) {
      const path = join(directory, `write-${key}-${round}.db`);
      const database = new BetterSqlite3(path);
      migrateSqliteSchema(database, Date.now());
      if (key === 'before') {
        for (const event of ['add', 'remove', 'change']) database.exec(`DROP TRIGGER dead_letters_${event}_group_count`);
      }
      const insert = database.prepare("INSERT INTO dead_letters (queue, entry, added_at_ms) VALUES ('tool', ?, ?)");
      const started = performance.now();
      database.transaction(() => {
        for (let index = 0; index < entries; index += 1) insert.run(entryText(index), index);
      })();
      best[key] = Math.min(best[key], performance.now() - started);
      database.close();
      rmSync(path, { force: true });
    }
  }
  return best;
}

/** Runs the dashboard benchmark; see the module comment. */
export async function runDashboardBench(): Promise<BenchRow[]> {
  const count = Number(process.env.TOOLRUN_DASHBOARD_BENCH_ENTRIES ?? 1_000_000);
  const directory = mkdtempSync(join(tmpdir(), 'toolrun-dashboard-bench-'));
  const rows: BenchRow[] = [];
  try {
    const writes = groupCountWriteCost(directory, 20_000, 6);
    rows.push({ name: 'SQLite: insert 20,000 tool-DLQ entries, no group counts', medianNs: writes.before * 1e6, note: 'best of 3, A/B' });
    rows.push({
      name: 'SQLite: insert 20,000 tool-DLQ entries, group counts kept by trigger',
      medianNs: writes.after * 1e6,
      baseline: 'SQLite: insert 20,000 tool-DLQ entries, no group counts',
      ratio: writes.after / writes.before,
      note: 'best of 3, A/B',
    });
    const sqlite = await seedSqlite(directory, count);
    try {
      rows.push(...(await measureBackend(sqlite, count)));
    } finally {
      await sqlite.close();
    }
    const postgres = await seedPostgres(count);
    if (typeof postgres === 'string') rows.push({ name: 'PostgreSQL', medianNs: 0, note: `skipped: ${postgres}` });
    else {
      try {
        rows.push(...(await measureBackend(postgres, count)));
      } finally {
        await postgres.close();
      }
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  return rows;
}
