/**
 * The dashboard's HTTP application (Hono): a static page with its script and styles served as
 * files, uPlot from node_modules, and a JSON API over the stores. Security:
 * - a strict Content-Security-Policy (no inline script or style, nothing from another origin);
 * - every POST (the actions) needs the token in `Authorization: Bearer …`, an `Origin` (when the
 *   browser sends one) equal to the address the request was sent to, no cross-site
 *   `Sec-Fetch-Site`, and a JSON body; actions are POST only;
 * - on a non-loopback address every API request needs the token too; on loopback the `Host` header
 *   must name the loopback address (no DNS rebinding);
 * - `readOnly`: every action is refused;
 * - every JSON body goes through the source's redactor whole before it is sent.
 */
import { readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { timingSafeEqual, createHash, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { systemClock } from '../ground/ports/clock.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import type { DeadLetterRecord } from '../ground/ports/stores.ts';
import type { ResumableEntry } from '../ground/dead-letter-entries.ts';
import { readDeadLetterMetrics, type DeadLetterMetrics, type ToolDeadLetterKind } from '../worker/dead-letter-metrics.ts';
import {
  isFiltering,
  matchesMessageFilter,
  matchesToolFilter,
  readEntryGroups,
  planMessageList,
  planToolList,
  readEntryPage,
  scanQueue,
  SCAN_PAGE_SIZE,
  type EntryGroups,
  type MessageEntryFilter,
  type ToolEntryFilter,
} from './dashboard-entries.ts';
import { messageEntryDetail, messageEntryRows, toolEntryDetail, toolEntryRows, type DetailContext } from './dashboard-detail.ts';
import { estimateReplay, MIN_REPLAY_RATE_PER_SECOND, runReplayJob, type ReplayJob } from './dashboard-jobs.ts';
import { alertsOf, createFailureLogCache, readBreakers, type QueueSample } from './dashboard-overview.ts';
import { backendLedgerLookup, DEFAULT_DASHBOARD_BOUNDS, type DashboardSource } from './dashboard-source.ts';

/** Options of {@link createDashboardApp}. */
export interface DashboardAppOptions {
  source: DashboardSource;
  /** The secret every action (and, off loopback, every API request) must present. At least 16 characters. */
  token: string;
  /** Whether the server listens on a loopback address only (reads then need no token). @defaultValue true */
  loopback?: boolean;
  /** Refuse every action. @defaultValue false */
  readOnly?: boolean;
  /** How often the depth and oldest-age samples are taken, in ms. @defaultValue 15_000 */
  sampleIntervalMs?: number;
  /** Samples kept (the sparklines' span is this × the interval). @defaultValue 480 */
  maxSamples?: number;
  /** How long an overview is reused before it is read again, in ms. @defaultValue 3_000 */
  overviewMaxAgeMs?: number;
}

/** The application and what it runs in the background. */
export interface DashboardApp {
  /** The Hono application (`app.fetch` serves a `Request`). */
  app: Hono;
  /** Takes one sample now (the sampler also runs on its interval once started). */
  sample(): Promise<QueueSample>;
  /** Starts the periodic sampling. */
  start(): void;
  /** Stops the sampling and waits for the replay job in flight, if any. */
  close(): Promise<void>;
}

const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The largest action body the dashboard reads, in bytes. */
const MAX_ACTION_BODY_BYTES = 65_536;

const require = createRequire(import.meta.url);

function assetDirectory(): string {
  const beside = fileURLToPath(new URL('./assets/', import.meta.url));
  if (existsSync(beside)) return beside;
  // a build that did not copy the assets next to the compiled module: the source tree's
  return fileURLToPath(new URL('../../src/dashboard/assets/', import.meta.url));
}

interface StaticFile {
  body: string;
  type: string;
}

function loadStaticFiles(): Record<string, StaticFile> {
  const directory = assetDirectory();
  const read = (path: string) => readFileSync(path, 'utf8');
  return {
    '/': { body: read(`${directory}index.html`), type: 'text/html; charset=utf-8' },
    '/assets/dashboard.js': { body: read(`${directory}dashboard.js`), type: 'text/javascript; charset=utf-8' },
    '/assets/dashboard.css': { body: read(`${directory}dashboard.css`), type: 'text/css; charset=utf-8' },
    '/vendor/uPlot.iife.min.js': { body: read(require.resolve('uplot/dist/uPlot.iife.min.js')), type: 'text/javascript; charset=utf-8' },
    '/vendor/uPlot.min.css': { body: read(require.resolve('uplot/dist/uPlot.min.css')), type: 'text/css; charset=utf-8' },
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** An error the API answers with: HTTP status, a code and a message. */
class ApiError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 500 | 503,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

function hostName(hostHeader: string): string {
  return hostHeader.startsWith('[') ? hostHeader.slice(0, hostHeader.indexOf(']') + 1) : hostHeader.split(':')[0]!;
}

function intParam(value: string | undefined, fallback: number, minimum: number, maximum: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < minimum || parsed > maximum)
    throw new ApiError(400, 'INVALID_INPUT', `${name} must be an integer from ${minimum} to ${maximum}, received ${JSON.stringify(value)}`);
  return parsed;
}

function toolFilterOf(query: Record<string, string | undefined>): ToolEntryFilter {
  const kind = query.kind;
  if (kind !== undefined && kind !== '' && !['tool', 'model', 'run', 'unknown'].includes(kind)) {
    throw new ApiError(400, 'INVALID_INPUT', `kind must be tool, model or run, received ${JSON.stringify(kind)}`);
  }
  return {
    group: query.group || undefined,
    tool: query.tool || undefined,
    reason: query.reason || undefined,
    kind: (kind || undefined) as ToolDeadLetterKind | undefined,
    text: query.text || undefined,
  };
}

function stringField(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new ApiError(400, 'INVALID_INPUT', `${name} must be a string`);
  return value;
}

function toolFilterOfBody(body: Record<string, unknown>): ToolEntryFilter {
  const filter = typeof body.filter === 'object' && body.filter !== null ? (body.filter as Record<string, unknown>) : {};
  return toolFilterOf({
    group: stringField(filter, 'group'),
    tool: stringField(filter, 'tool'),
    reason: stringField(filter, 'reason'),
    kind: stringField(filter, 'kind'),
    text: stringField(filter, 'text'),
  });
}

/**
 * Builds the dashboard over `options.source`. Nothing listens yet: serve `app.fetch` (see
 * `startDashboard`), and call `start()` for the samples.
 *
 * @throws ToolrunError `INVALID_OPTIONS` for a token shorter than 16 characters.
 */
export function createDashboardApp(options: DashboardAppOptions): DashboardApp {
  const { source } = options;
  if (typeof options.token !== 'string' || options.token.length < 16)
    throw new ToolrunError('INVALID_OPTIONS', 'the dashboard token must be a string of at least 16 characters');
  const loopback = options.loopback ?? true;
  const readOnly = options.readOnly ?? false;
  const clock = source.clock ?? systemClock;
  const stores = source.stores;
  const redactor = source.redactor;
  const bounds = source.bounds ?? DEFAULT_DASHBOARD_BOUNDS;
  const maxSteps = source.maxSteps ?? 20;
  const sampleIntervalMs = options.sampleIntervalMs ?? 15_000;
  const maxSamples = options.maxSamples ?? 480;
  const overviewMaxAgeMs = options.overviewMaxAgeMs ?? 3_000;
  const tokenDigest = digest(options.token);
  const files = loadStaticFiles();
  const failures = createFailureLogCache(source.failureLog, redactor, source.label);
  const samples: QueueSample[] = [];
  const jobs = new Map<string, ReplayJob>();
  let runningJob: Promise<unknown> | undefined;
  let cancelRequested = new Set<string>();
  /** Aborted to cancel the running job: its wait between batches ends at once. */
  const jobAborts = new Map<string, AbortController>();
  let timer: ReturnType<typeof setInterval> | undefined;
  let cachedOverview: { atMs: number; value: Promise<Record<string, unknown>> } | undefined;
  let cachedGroups: { atMs: number; value: Promise<EntryGroups> } | undefined;
  // a scan of a large queue takes a while: its result is reused for five times as long as it took
  let lastScanMs = 0;
  const reuseMs = () => Math.max(overviewMaxAgeMs, 5 * lastScanMs);

  const ledgerValues = backendLedgerLookup(stores);
  const detailContext = (): DetailContext => ({
    stores,
    nowMs: clock.now(),
    maxSteps,
    conversationExpiry: source.conversationExpiry,
    conversationTtlMs: source.conversationTtlMs,
    developerRecord: source.failureLog ? (traceId) => failures.byTraceId(traceId) : undefined,
    ledgerValues,
  });

  const send = (c: Context, payload: unknown, status: 200 | 202 | 400 | 401 | 403 | 404 | 409 | 413 | 500 | 503 = 200) =>
    c.body(JSON.stringify(redactor.value(payload)), status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });

  const hasToken = (c: Context): boolean => {
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header);
    if (!match) return false;
    return timingSafeEqual(digest(match[1]!.trim()), tokenDigest);
  };

  const entryAge = (record: DeadLetterRecord<unknown> | undefined, field: 'firstSeenAt' | 'receivedAt', nowMs: number): number | null => {
    if (!record) return null;
    const own = (record.entry as Record<string, unknown> | null)?.[field];
    const ms = typeof own === 'string' && Number.isFinite(Date.parse(own)) ? Date.parse(own) : Date.parse(record.addedAt);
    return Number.isFinite(ms) ? Math.max(0, nowMs - ms) : null;
  };

  const sample = async (): Promise<QueueSample> => {
    const [messageDepth, toolDepth, messageOldest, toolOldest] = await Promise.all([
      stores.messageDlq.size(),
      stores.toolDlq.size(),
      stores.messageDlq.oldest(),
      stores.toolDlq.oldest(),
    ]);
    const nowMs = clock.now();
    const taken: QueueSample = {
      at: nowMs,
      message: { depth: messageDepth, oldestAgeMs: entryAge(messageOldest, 'receivedAt', nowMs) },
      tool: { depth: toolDepth, oldestAgeMs: entryAge(toolOldest, 'firstSeenAt', nowMs) },
    };
    samples.push(taken);
    if (samples.length > maxSamples) samples.splice(0, samples.length - maxSamples);
    return taken;
  };

  const groups = (fresh = false): Promise<EntryGroups> => {
    const nowMs = clock.now();
    if (!fresh && cachedGroups && nowMs - cachedGroups.atMs < reuseMs()) return cachedGroups.value;
    const startedMs = Date.now();
    const value = readEntryGroups(stores, new Date(nowMs).toISOString()).then((groups) => {
      lastScanMs = Date.now() - startedMs;
      return groups;
    });
    cachedGroups = { atMs: nowMs, value };
    value.catch(() => {
      if (cachedGroups?.value === value) cachedGroups = undefined;
    });
    return value;
  };

  const readOverview = async (): Promise<Record<string, unknown>> => {
    const [metrics, queueSize, runs, failureOverview, entryGroups]: [
      DeadLetterMetrics,
      number,
      Record<string, number> | undefined,
      Awaited<ReturnType<typeof failures.overview>>,
      EntryGroups,
    ] = await Promise.all([
      readDeadLetterMetrics(stores, { clock, pageSize: SCAN_PAGE_SIZE }),
      stores.queue.size(),
      source.countRunsByStatus?.(),
      failures.overview(),
      groups(true),
    ]);
    const keys = new Set<string>(source.toolNames ?? []);
    if (source.modelName) keys.add(`model:${source.modelName}`);
    for (const name of Object.keys(metrics.tool.entriesByTool)) keys.add(name);
    for (const name of Object.keys(metrics.tool.entriesByModel)) keys.add(`model:${name}`);
    for (const tool of failureOverview.report?.tools ?? []) keys.add(tool.toolName);
    const breakers = await readBreakers(stores.breakers, keys);
    if (samples.length === 0) await sample();
    return {
      store: source.label,
      queue: { size: queueSize },
      deadLetters: metrics,
      runs: runs ?? null,
      bounds,
      alerts: alertsOf(metrics, bounds, breakers),
      breakers,
      samples,
      sampleIntervalMs,
      groups: entryGroups,
      failures: failureOverview,
    };
  };

  const overview = (fresh: boolean) => {
    const nowMs = clock.now();
    if (!fresh && cachedOverview && nowMs - cachedOverview.atMs < reuseMs()) return cachedOverview.value;
    const value = readOverview();
    cachedOverview = { atMs: nowMs, value };
    value.catch(() => {
      if (cachedOverview?.value === value) cachedOverview = undefined;
    });
    return value;
  };

  const invalidate = () => {
    cachedOverview = undefined;
    cachedGroups = undefined;
  };

  const matchingToolRecords = async (filter: ToolEntryFilter, limit?: number): Promise<DeadLetterRecord<unknown>[]> => {
    const found: DeadLetterRecord<unknown>[] = [];
    const { storeFilter } = isFiltering(filter) ? await planToolList(stores.toolDlq, filter) : { storeFilter: {} };
    await scanQueue(
      stores.toolDlq,
      (record) => {
        if (matchesToolFilter(record, filter)) found.push(record);
        return limit === undefined || found.length < limit;
      },
      storeFilter,
    );
    return found;
  };

  const requireReplay = () => {
    if (!source.replay)
      throw new ApiError(409, 'NO_CONFIG', 'this dashboard was started without a config (--config FILE): it cannot replay; purge still works');
    return source.replay;
  };

  const startJob = (
    type: ReplayJob['type'],
    records: DeadLetterRecord<unknown>[],
    settings: { concurrency: number; ratePerSecond: number | null; removeExpired: boolean },
  ) => {
    const replay = requireReplay();
    if (runningJob) throw new ApiError(409, 'JOB_RUNNING', 'a replay job is running: wait for it or cancel it first');
    const job: ReplayJob = {
      id: randomUUID(),
      type,
      state: 'running',
      total: records.length,
      done: 0,
      removed: 0,
      outcomes: {},
      entries: [],
      ratePerSecond: settings.ratePerSecond,
      concurrency: settings.concurrency,
      startedAt: new Date(clock.now()).toISOString(),
      finishedAt: null,
    };
    jobs.set(job.id, job);
    while (jobs.size > 20) jobs.delete(jobs.keys().next().value!);
    const abort = new AbortController();
    jobAborts.set(job.id, abort);
    const run = runReplayJob(job, {
      dlq: stores.toolDlq,
      replay,
      // read from the tool DLQ, whose entries are resumable by the port's type
      records: records as DeadLetterRecord<ResumableEntry>[],
      concurrency: settings.concurrency,
      ratePerSecond: settings.ratePerSecond,
      removeExpired: settings.removeExpired,
      clock,
      onProgress: invalidate,
      cancelled: () => cancelRequested.has(job.id),
      signal: abort.signal,
    })
      .catch((error: unknown) => {
        job.state = 'failed';
        job.error = error instanceof Error ? error.message : String(error);
        job.finishedAt = new Date(clock.now()).toISOString();
      })
      .finally(async () => {
        await source.afterReplays?.().catch(() => undefined);
        invalidate();
        runningJob = undefined;
        jobAborts.delete(job.id);
        cancelRequested = new Set([...cancelRequested].filter((id) => id !== job.id));
      });
    runningJob = run;
    return { job, run };
  };

  const jobSettings = (body: Record<string, unknown>, defaults: { concurrency: number }) => {
    const concurrency = body.concurrency === undefined ? defaults.concurrency : Number(body.concurrency);
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 100)
      throw new ApiError(400, 'INVALID_INPUT', 'concurrency must be an integer from 1 to 100');
    const rate = body.ratePerSecond === undefined || body.ratePerSecond === null || body.ratePerSecond === '' ? null : Number(body.ratePerSecond);
    if (rate !== null && !(Number.isFinite(rate) && rate >= MIN_REPLAY_RATE_PER_SECOND && rate <= 10_000))
      throw new ApiError(400, 'INVALID_INPUT', 'ratePerSecond must be a number from 0.1 (one replay every 10 s) to 10000');
    if (body.removeExpired !== undefined && typeof body.removeExpired !== 'boolean')
      throw new ApiError(400, 'INVALID_INPUT', 'removeExpired must be true or false');
    return { concurrency, ratePerSecond: rate, removeExpired: body.removeExpired === true };
  };

  const app = new Hono();

  app.onError((error, c) => {
    if (error instanceof ApiError) return send(c, { error: { code: error.code, message: error.message } }, error.status);
    if (ToolrunError.is(error))
      return send(c, { error: { code: error.code, message: error.message } }, error.code === 'INVALID_OPTIONS' || error.code === 'INVALID_INPUT' ? 400 : 500);
    return send(c, { error: { code: 'INTERNAL', message: error instanceof Error ? error.message : String(error) } }, 500);
  });

  app.use('*', async (c, next) => {
    c.header('content-security-policy', CONTENT_SECURITY_POLICY);
    c.header('x-content-type-options', 'nosniff');
    c.header('referrer-policy', 'no-referrer');
    c.header('x-frame-options', 'DENY');
    c.header('cross-origin-opener-policy', 'same-origin');
    c.header('cross-origin-resource-policy', 'same-origin');
    const host = c.req.header('host') ?? '';
    if (loopback && !LOOPBACK_HOSTS.has(hostName(host))) {
      throw new ApiError(403, 'FORBIDDEN_HOST', 'this dashboard answers only to 127.0.0.1, localhost or [::1] (Host header)');
    }
    // another site's page (a form, an image, a fetch) neither acts nor makes the dashboard read both DLQs
    const refuseCrossSite = (what: string) => {
      const origin = c.req.header('origin');
      if (origin !== undefined && origin !== `http://${host}` && origin !== `https://${host}`) {
        throw new ApiError(403, 'CROSS_ORIGIN', `${what} accepted from this page only (Origin ${origin} is not http://${host})`);
      }
      const fetchSite = c.req.header('sec-fetch-site');
      if (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none')
        throw new ApiError(403, 'CROSS_ORIGIN', `${what} accepted from this page only (Sec-Fetch-Site ${fetchSite})`);
    };
    if (c.req.method === 'GET' || c.req.method === 'HEAD') {
      if (c.req.path.startsWith('/api/')) {
        refuseCrossSite('reads are');
        if (!loopback && !hasToken(c)) throw new ApiError(401, 'TOKEN_REQUIRED', 'off 127.0.0.1 every request needs the token: Authorization: Bearer TOKEN');
      }
      return next();
    }
    if (c.req.method !== 'POST') throw new ApiError(403, 'METHOD_NOT_ALLOWED', 'actions are POST requests');
    refuseCrossSite('actions are');
    if (!hasToken(c)) throw new ApiError(401, 'TOKEN_REQUIRED', 'every action needs the dashboard token (printed when it started) in the Authorization header');
    if (!(c.req.header('content-type') ?? '').toLowerCase().startsWith('application/json'))
      throw new ApiError(400, 'INVALID_INPUT', 'actions take a JSON body (Content-Type: application/json)');
    if (readOnly) throw new ApiError(403, 'READ_ONLY', 'this dashboard was started with --read-only: actions are refused');
    return next();
  });

  // An action's body is a few fields: anything larger is refused before it is read.
  app.use(
    '/api/*',
    bodyLimit({
      maxSize: MAX_ACTION_BODY_BYTES,
      onError: () => {
        throw new ApiError(413, 'BODY_TOO_LARGE', `an action's body is at most ${MAX_ACTION_BODY_BYTES} bytes`);
      },
    }),
  );

  for (const [path, file] of Object.entries(files)) {
    app.get(path, (c) => c.body(file.body, 200, { 'content-type': file.type, 'cache-control': path === '/' ? 'no-store' : 'max-age=300' }));
  }

  const jsonBody = async (c: Context): Promise<Record<string, unknown>> => {
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      throw new ApiError(400, 'INVALID_INPUT', 'the body is not JSON');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiError(400, 'INVALID_INPUT', 'the body must be a JSON object');
    return body as Record<string, unknown>;
  };

  app.get('/api/session', (c) =>
    send(c, {
      store: source.label,
      readOnly,
      canReplay: source.replay !== undefined && !readOnly,
      tokenRequiredForReads: !loopback,
      tokenValid: hasToken(c),
      maxSteps,
    }),
  );

  app.get('/api/overview', async (c) => send(c, await overview(c.req.query('fresh') === '1')));

  app.get('/api/tool/entries', async (c) => {
    const query = c.req.query();
    const limit = intParam(query.limit, 50, 1, 200, 'limit');
    const offset = intParam(query.offset, 0, 0, Number.MAX_SAFE_INTEGER, 'offset');
    const filter = toolFilterOf(query);
    // with the store's group counts: the most selective store filter, and the filter's exact total (no entry read)
    const plan = isFiltering(filter) ? await planToolList(stores.toolDlq, filter) : { storeFilter: {} };
    const page = await readEntryPage(stores.toolDlq, {
      limit,
      offset,
      after: query.after || undefined,
      matches: isFiltering(filter) ? (record) => matchesToolFilter(record, filter) : undefined,
      storeFilter: plan.storeFilter,
    });
    const counted = query.after ? undefined : plan.total;
    const total = counted !== undefined && counted >= page.total ? { total: counted, totalExact: true } : { total: page.total, totalExact: page.totalExact };
    const rows = await toolEntryRows(page.records, detailContext());
    return send(c, { limit, offset, ...total, hasMore: page.hasMore, scanned: page.scanned, filter, rows });
  });

  app.get('/api/tool/groups', async (c) => send(c, await groups(c.req.query('fresh') === '1')));

  app.get('/api/tool/entries/:id', async (c) => {
    const record = await stores.toolDlq.get(c.req.param('id'));
    if (!record) throw new ApiError(404, 'NOT_FOUND', `no entry ${c.req.param('id')} in the tool DLQ (replayed, purged or never there)`);
    return send(c, await toolEntryDetail(record, detailContext()));
  });

  app.get('/api/message/entries', async (c) => {
    const query = c.req.query();
    const limit = intParam(query.limit, 50, 1, 200, 'limit');
    const offset = intParam(query.offset, 0, 0, Number.MAX_SAFE_INTEGER, 'offset');
    const filter: MessageEntryFilter = { group: query.group || undefined, text: query.text || undefined };
    const plan = isFiltering(filter) ? await planMessageList(stores.messageDlq, filter) : { storeFilter: {} };
    const page = await readEntryPage(stores.messageDlq, {
      limit,
      offset,
      matches: isFiltering(filter) ? (record) => matchesMessageFilter(record, filter) : undefined,
      storeFilter: plan.storeFilter,
    });
    const counted = plan.total;
    const total = counted !== undefined && counted >= page.total ? { total: counted, totalExact: true } : { total: page.total, totalExact: page.totalExact };
    return send(c, {
      limit,
      offset,
      ...total,
      hasMore: page.hasMore,
      scanned: page.scanned,
      filter,
      rows: messageEntryRows(page.records, clock.now()),
    });
  });

  app.get('/api/message/entries/:id', async (c) => {
    const record = await stores.messageDlq.get(c.req.param('id'));
    if (!record) throw new ApiError(404, 'NOT_FOUND', `no entry ${c.req.param('id')} in the message DLQ`);
    return send(c, messageEntryDetail(record, clock.now()));
  });

  app.get('/api/tool/estimate', async (c) => {
    const filter = toolFilterOf(c.req.query());
    const records = await matchingToolRecords(filter);
    return send(c, { filter, ...estimateReplay(records) });
  });

  app.get('/api/jobs', (c) => send(c, { jobs: [...jobs.values()].reverse() }));
  app.get('/api/jobs/:id', (c) => {
    const job = jobs.get(c.req.param('id'));
    if (!job) throw new ApiError(404, 'NOT_FOUND', `no job ${c.req.param('id')}`);
    return send(c, job);
  });

  app.post('/api/tool/entries/:id/replay', async (c) => {
    const body = await jsonBody(c);
    const record = await stores.toolDlq.get(c.req.param('id'));
    if (!record) throw new ApiError(404, 'NOT_FOUND', `no entry ${c.req.param('id')} in the tool DLQ (already replayed or purged)`);
    const { job, run } = startJob('replay', [record], { concurrency: 1, ratePerSecond: null, removeExpired: body.removeExpired === true });
    await run;
    return send(c, job);
  });

  app.post('/api/tool/replays', async (c) => {
    const body = await jsonBody(c);
    const filter = toolFilterOfBody(body);
    const limit = body.limit === undefined ? undefined : Number(body.limit);
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1)) throw new ApiError(400, 'INVALID_INPUT', 'limit must be an integer ≥ 1');
    // An action with side effects never starts because a flag was mistyped: dryRun is a boolean or absent.
    if (body.dryRun !== undefined && typeof body.dryRun !== 'boolean') throw new ApiError(400, 'INVALID_INPUT', 'dryRun must be true or false');
    // the settings are checked on a dry run too, so the run that follows it is accepted
    const settings = jobSettings(body, { concurrency: 1 });
    const records = await matchingToolRecords(filter, limit);
    if (body.dryRun === true) return send(c, { dryRun: true, filter, ...estimateReplay(records) });
    const { job } = startJob(isFiltering(filter) ? 'bulk' : 'drain', records, settings);
    return send(c, job, 202);
  });

  app.post('/api/jobs/:id/cancel', async (c) => {
    await jsonBody(c);
    const job = jobs.get(c.req.param('id'));
    if (!job) throw new ApiError(404, 'NOT_FOUND', `no job ${c.req.param('id')}`);
    if (job.state === 'running') {
      cancelRequested.add(job.id);
      jobAborts.get(job.id)?.abort();
    }
    return send(c, job);
  });

  app.post('/api/:queue/purge', async (c) => {
    const queue = c.req.param('queue');
    if (queue !== 'tool' && queue !== 'message') throw new ApiError(404, 'NOT_FOUND', 'purge /api/tool/purge or /api/message/purge');
    const body = await jsonBody(c);
    const dlq = queue === 'tool' ? stores.toolDlq : stores.messageDlq;
    const size = await dlq.size();
    if (body.confirm !== `purge ${queue}`) {
      throw new ApiError(400, 'CONFIRMATION_REQUIRED', `purge deletes all ${size} entries of the ${queue} DLQ for good: send {"confirm": "purge ${queue}"}`);
    }
    const purged = await dlq.purge();
    invalidate();
    return send(c, { queue, purged });
  });

  app.notFound((c) => send(c, { error: { code: 'NOT_FOUND', message: `no such page: ${c.req.path}` } }, 404));

  return {
    app,
    sample,
    start() {
      if (timer) return;
      void sample().catch(() => undefined);
      timer = setInterval(() => void sample().catch(() => undefined), sampleIntervalMs);
      timer.unref?.();
    },
    async close() {
      if (timer) clearInterval(timer);
      timer = undefined;
      for (const job of jobs.values()) if (job.state === 'running') cancelRequested.add(job.id);
      for (const abort of jobAborts.values()) abort.abort();
      await runningJob;
    },
  };
}
