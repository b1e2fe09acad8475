/**
 * The operator's reads on a large tool DLQ, at 10^3, 10^5 and 10^6 entries (capped by
 * `TOOLRUN_SCALE_MAX`, e.g. `TOOLRUN_SCALE_MAX=100000` for a quick run): `dlq list`'s first page, a
 * page deep in the queue via `after` (and via `offset`, for comparison), a filtered first page (a
 * cause of 0.1 % of the entries) and a filtered page deep via `after`, `size()` + `bytes()` +
 * `oldest()`, `countByCause()` with them (what `stats` needs), `stats` (`readDeadLetterMetrics`, as
 * `toolrun stats` calls it) and `dlq show` (`get`).
 * Each row is the median of several calls, with its ratio to the same read at the smallest size.
 *
 * SQLite: one file grown from one size to the next, seeded through SQL in one transaction per
 * size (the store's own schema: its generated cause columns, indexes and totals triggers do the
 * rest). PostgreSQL (when `TOOLRUN_TEST_POSTGRES_URL` or the local test server answers): a schema
 * of its own, seeded with one `INSERT … SELECT FROM generate_series` per size that writes the cause
 * columns as the store does; dropped afterwards.
 *
 * `TOOLRUN_SCALE_SQLITE=0` or `TOOLRUN_SCALE_POSTGRES=0` leaves that backend out.
 *
 * `stats` may scan the queue (when it does not read `countByCause`): it runs once per size, and is
 * stopped (reported as over the bound) when it has not finished within
 * `TOOLRUN_SCALE_STATS_BOUND_MS` (default 60 s).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DeadLetterListOptions, DeadLetterQueue } from '../src/ground/ports/stores.ts';
import { createPostgresStores } from '../src/stores/postgres/index.ts';
import { createSqliteStores } from '../src/stores/sqlite/index.ts';
import { readDeadLetterMetrics } from '../src/worker/dead-letter-metrics.ts';
import type { BenchRow } from './measure.ts';

const ALL_SIZES = [1_000, 100_000, 1_000_000];
const PAGE = 50;
/** Every 1,000th entry is of this cause: the rare filter. */
const RARE_TOOL = 'send_certificate';
const CAUSES = [
  { toolName: 'search_flights', reason: 'circuit-open', kind: 'circuit_open', status: null },
  { toolName: 'book_reservation', reason: 'retry-budget-exhausted', kind: 'server', status: 503 },
  { toolName: 'update_reservation_flights', reason: 'retry-budget-exhausted', kind: 'rate_limit', status: 429 },
  { toolName: 'get_user_details', reason: 'misconfiguration', kind: 'auth', status: 401 },
  { toolName: 'cancel_reservation', reason: 'session-breaker-open', kind: 'precondition', status: 409 },
] as const;
const RARE_CAUSE = { toolName: RARE_TOOL, reason: 'misconfiguration', kind: 'auth', status: 403 } as const;

function causeOf(index: number) {
  return index % 1_000 === 999 ? RARE_CAUSE : CAUSES[index % CAUSES.length]!;
}

/** A tool-DLQ entry as the worker writes it (about 480 bytes of JSON). */
function toolEntry(index: number, nowMs: number) {
  const cause = causeOf(index);
  return {
    kind: 'tool',
    runId: `run_${index}`,
    stepIndex: index % 7,
    toolName: cause.toolName,
    toolArgs: { reservation_id: `R${index}`, user_id: 'mia_li_3668' },
    attempts: 3,
    lastError: { kind: cause.kind, status: cause.status, message: `${cause.toolName} failed (${cause.kind})` },
    conversationRef: `conv_${index.toString(16).padStart(12, '0')}`,
    tokensSpent: { input: 1_000 + (index % 900), output: 40 },
    firstSeenAt: new Date(nowMs - 1e9 + index).toISOString(),
    originalMessageId: `msg_${index}`,
    reason: cause.reason,
  };
}

function sizesToRun(): number[] {
  const max = Number(process.env.TOOLRUN_SCALE_MAX ?? Number.POSITIVE_INFINITY);
  const sizes = ALL_SIZES.filter((size) => size <= max);
  return sizes.length > 0 ? sizes : [Math.max(1, Math.floor(max))];
}

/** Median ms of `times` calls of `run`. */
async function medianMs(times: number, run: () => Promise<unknown>): Promise<number> {
  await run();
  const values: number[] = [];
  for (let index = 0; index < times; index += 1) {
    const started = performance.now();
    await run();
    values.push(performance.now() - started);
  }
  values.sort((a, b) => a - b);
  return values[Math.floor(values.length / 2)]!;
}

/** The same queue, whose `list` throws once `deadlineMs` (performance.now) has passed: a scan stops there. */
function bounded<T>(queue: DeadLetterQueue<T>, deadlineMs: number): DeadLetterQueue<T> {
  return {
    ...queue,
    list: async (options?: DeadLetterListOptions) => {
      if (performance.now() > deadlineMs) throw new Error('over the bound');
      return queue.list(options);
    },
  };
}

interface Backend {
  name: string;
  toolDlq: DeadLetterQueue<unknown>;
  messageDlq: DeadLetterQueue<unknown>;
  /** Grows the tool DLQ from `from` to `to` entries; returns the ms it took. */
  seed(from: number, to: number): Promise<number>;
  close(): Promise<void>;
}

async function sqliteBackend(directory: string): Promise<Backend> {
  const stores = createSqliteStores({ path: join(directory, 'scale.db') });
  const insert = stores.database.prepare("INSERT INTO dead_letters (queue, entry, added_at_ms) VALUES ('tool', ?, ?)");
  const nowMs = Date.now();
  return {
    name: 'SQLite',
    toolDlq: stores.toolDlq as DeadLetterQueue<unknown>,
    messageDlq: stores.messageDlq as DeadLetterQueue<unknown>,
    async seed(from, to) {
      const started = performance.now();
      stores.database.transaction(() => {
        for (let index = from; index < to; index += 1) insert.run(JSON.stringify(toolEntry(index, nowMs)), nowMs - 1e9 + index);
      })();
      return performance.now() - started;
    },
    close: () => stores.close(),
  };
}

async function postgresBackend(): Promise<Backend | string> {
  const url = process.env.TOOLRUN_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `toolrun_scale_${process.pid}_${Date.now().toString(36)}`;
  let stores: Awaited<ReturnType<typeof createPostgresStores>>;
  try {
    stores = await createPostgresStores({ connectionString: url, schema, maxConnections: 2 });
  } catch (error) {
    return `no PostgreSQL at ${url.replace(/\/\/[^@]*@/, '//…@')}: ${(error as Error).message}`;
  }
  const { pool } = stores;
  const nowMs = Date.now();
  const tools = CAUSES.map((cause) => `'${cause.toolName}'`).join(',');
  const reasons = CAUSES.map((cause) => `'${cause.reason}'`).join(',');
  const kinds = CAUSES.map((cause) => `'${cause.kind}'`).join(',');
  const statuses = CAUSES.map((cause) => (cause.status === null ? 'NULL' : String(cause.status))).join(',');
  // the entry of toolEntry(i) built in SQL, with the cause columns the store writes for it
  const seedSql = `
    WITH rows AS (
      SELECT i,
        CASE WHEN i % 1000 = 999 THEN '${RARE_CAUSE.toolName}' ELSE (ARRAY[${tools}])[i % 5 + 1] END AS tool,
        CASE WHEN i % 1000 = 999 THEN '${RARE_CAUSE.reason}' ELSE (ARRAY[${reasons}])[i % 5 + 1] END AS reason,
        CASE WHEN i % 1000 = 999 THEN '${RARE_CAUSE.kind}' ELSE (ARRAY[${kinds}])[i % 5 + 1] END AS error_kind,
        CASE WHEN i % 1000 = 999 THEN ${RARE_CAUSE.status} ELSE (ARRAY[${statuses}]::int[])[i % 5 + 1] END AS status
      FROM generate_series($1::bigint, $2::bigint - 1) AS i
    )
    INSERT INTO ${schema}.dead_letters (queue, entry, added_at_ms, cause_kind, cause_tool_name, cause_reason)
    SELECT 'tool', json_build_object(
        'kind', 'tool', 'runId', 'run_' || i, 'stepIndex', i % 7, 'toolName', tool,
        'toolArgs', json_build_object('reservation_id', 'R' || i, 'user_id', 'mia_li_3668'), 'attempts', 3,
        'lastError', json_build_object('kind', error_kind, 'status', status, 'message', tool || ' failed (' || error_kind || ')'),
        'conversationRef', 'conv_' || lpad(to_hex(i), 12, '0'), 'tokensSpent', json_build_object('input', 1000 + i % 900, 'output', 40),
        'firstSeenAt', to_char(to_timestamp(($3::bigint - 1000000000 + i) / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'originalMessageId', 'msg_' || i, 'reason', reason)::text,
      $3::bigint - 1000000000 + i, 'tool', tool, reason
    FROM rows ORDER BY i`;
  return {
    name: 'PostgreSQL',
    toolDlq: stores.toolDlq as DeadLetterQueue<unknown>,
    messageDlq: stores.messageDlq as DeadLetterQueue<unknown>,
    async seed(from, to) {
      const started = performance.now();
      for (let start = from; start < to; start += 250_000) await pool.query(seedSql, [start, Math.min(to, start + 250_000), nowMs]);
      await pool.query(`ANALYZE ${schema}.dead_letters`);
      return performance.now() - started;
    },
    async close() {
      await pool.query(`DROP SCHEMA ${schema} CASCADE`);
      await stores.close();
    },
  };
}

/** The reads of one size, as rows; `base` holds the smallest size's ms per read name, for the ratios. */
async function measureSize(backend: Backend, size: number, base: Map<string, number>, first: boolean): Promise<BenchRow[]> {
  const { toolDlq } = backend;
  const n = size.toLocaleString('en-US');
  const deep = Math.floor(size * 0.9);
  const [deepRecord] = await toolDlq.list({ limit: 1, offset: deep });
  const rareFirst = await toolDlq.list({ limit: 1, filter: { toolName: RARE_TOOL } });
  const [rareDeep] = await toolDlq.list({ limit: 1, offset: Math.floor(size / 1_000 / 2), filter: { toolName: RARE_TOOL } });
  const ids = (await toolDlq.list({ limit: 200, offset: Math.floor(size / 2) })).map((record) => record.id);
  let nextId = 0;
  const reads: Array<[string, number, () => Promise<unknown>]> = [
    [`dlq list: first page of ${PAGE}`, 21, () => toolDlq.list({ limit: PAGE })],
    [`dlq list: a page at 90 % via after`, 21, () => toolDlq.list({ limit: PAGE, ...(deepRecord ? { after: deepRecord.id } : {}) })],
    [`dlq list: a page at 90 % via offset (for comparison)`, 5, () => toolDlq.list({ limit: PAGE, offset: deep })],
    [`filtered first page (a cause of 0.1 %: toolName = ${RARE_TOOL})`, 21, () => toolDlq.list({ limit: PAGE, filter: { toolName: RARE_TOOL } })],
    [
      'filtered page half-way via after (same cause)',
      21,
      () => toolDlq.list({ limit: PAGE, filter: { toolName: RARE_TOOL }, ...(rareDeep ? { after: rareDeep.id } : {}) }),
    ],
    [
      'filtered first page, two members (kind = tool, reason = circuit-open: 20 %)',
      21,
      () => toolDlq.list({ limit: PAGE, filter: { kind: 'tool', reason: 'circuit-open' } }),
    ],
    ['size() + bytes() + oldest()', 21, () => Promise.all([toolDlq.size(), toolDlq.bytes(), toolDlq.oldest()])],
    [
      'countByCause() + size() + bytes() + oldest() of both queues (what stats needs)',
      21,
      () => Promise.all([toolDlq, backend.messageDlq].flatMap((queue) => [queue.countByCause?.(), queue.size(), queue.bytes(), queue.oldest()])),
    ],
    ['dlq show: get(id)', 51, () => toolDlq.get(ids[nextId++ % ids.length]!)],
  ];
  const rows: BenchRow[] = [];
  for (const [name, times, run] of reads) {
    const ms = await medianMs(times, run);
    if (first) base.set(name, ms);
    const baseMs = base.get(name);
    rows.push({
      name: `${backend.name} ${n}: ${name}`,
      medianNs: ms * 1e6,
      ...(first || baseMs === undefined ? {} : { baseline: `same at ${sizesToRun()[0]!.toLocaleString('en-US')}`, ratio: ms / baseMs }),
    });
  }
  if (rareFirst.length === 0) rows.push({ name: `${backend.name} ${n}: (the rare cause has no entry at this size)`, medianNs: 0 });
  // stats: the scan of toolrun stats, once, bounded
  const boundMs = Number(process.env.TOOLRUN_SCALE_STATS_BOUND_MS ?? 60_000);
  const started = performance.now();
  const deadline = started + boundMs;
  let note: string;
  try {
    const metrics = await readDeadLetterMetrics({ toolDlq: bounded(toolDlq, deadline), messageDlq: bounded(backend.messageDlq, deadline) });
    note = `once; depth ${metrics.tool.depth.toLocaleString('en-US')}, ${Object.keys(metrics.tool.entriesByTool).length} tools`;
  } catch (error) {
    if ((error as Error).message !== 'over the bound') throw error;
    note = `once; stopped: over the ${boundMs / 1000} s bound`;
  }
  const statsMs = performance.now() - started;
  const statsName = 'stats (readDeadLetterMetrics)';
  if (first) base.set(statsName, statsMs);
  rows.push({
    name: `${backend.name} ${n}: ${statsName}`,
    medianNs: statsMs * 1e6,
    note,
    ...(first ? {} : { baseline: `same at ${sizesToRun()[0]!.toLocaleString('en-US')}`, ratio: statsMs / base.get(statsName)! }),
  });
  return rows;
}

async function runBackend(backend: Backend): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const base = new Map<string, number>();
  let seeded = 0;
  for (const [index, size] of sizesToRun().entries()) {
    const seedMs = await backend.seed(seeded, size);
    rows.push({
      name: `${backend.name}: seed ${seeded.toLocaleString('en-US')} → ${size.toLocaleString('en-US')} entries`,
      medianNs: seedMs * 1e6,
      note: 'once',
    });
    seeded = size;
    rows.push(...(await measureSize(backend, size, base, index === 0)));
  }
  return rows;
}

/** Runs the scale benchmark; see the module comment. */
export async function runScaleBench(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  if (process.env.TOOLRUN_SCALE_SQLITE !== '0') {
    const directory = mkdtempSync(join(tmpdir(), 'toolrun-scale-bench-'));
    try {
      const sqlite = await sqliteBackend(directory);
      try {
        rows.push(...(await runBackend(sqlite)));
      } finally {
        await sqlite.close();
      }
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  }
  if (process.env.TOOLRUN_SCALE_POSTGRES !== '0') {
    const postgres = await postgresBackend();
    if (typeof postgres === 'string') rows.push({ name: 'PostgreSQL', medianNs: 0, note: `skipped: ${postgres}` });
    else {
      try {
        rows.push(...(await runBackend(postgres)));
      } finally {
        await postgres.close();
      }
    }
  }
  return rows;
}
