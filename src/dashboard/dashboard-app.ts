/**
 * The dashboard's HTTP application (Hono): a static page with its script and styles served as
 * files, uPlot from node_modules, and a JSON API over the stores. Security (dashboard-http.ts):
 * - a strict Content-Security-Policy (no inline script or style, nothing from another origin);
 * - every POST (the actions) needs the token in `Authorization: Bearer …`, an `Origin` (when the
 *   browser sends one) equal to the address the request was sent to, no cross-site
 *   `Sec-Fetch-Site`, and a JSON body; actions are POST only;
 * - on a non-loopback address every API request needs the token too; on loopback the `Host` header
 *   must name the loopback address (no DNS rebinding);
 * - `readOnly`: every action is refused;
 * - every JSON body goes through the source's redactor whole before it is sent.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import { systemClock, type Clock } from '../ground/ports/clock.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';
import type { DeadLetterRecord, Stores } from '../ground/ports/stores.ts';
import type { ResumableEntry } from '../ground/dead-letter-entries.ts';
import {
  isFiltering,
  matchesMessageFilter,
  matchesToolFilter,
  planMessageList,
  planToolList,
  readEntryPage,
  type MessageEntryFilter,
} from './dashboard-entries.ts';
import { messageEntryDetail, messageEntryRows, toolEntryDetail, toolEntryRows } from './dashboard-detail.ts';
import { ApiError, installGuards, intParam, jsonBody, jsonSender, tokenCheck, toolFilterOf, toolFilterOfBody, type SendJson } from './dashboard-http.ts';
import { estimateReplay, MIN_REPLAY_RATE_PER_SECOND, runReplayJob, type ReplayJob } from './dashboard-jobs.ts';
import { createDashboardReads, type DashboardReads } from './dashboard-reads.ts';
import { redriveMessageEntry } from './dashboard-redrive.ts';
import type { QueueSample } from './dashboard-overview.ts';
import type { DashboardSource } from './dashboard-source.ts';

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

const require = createRequire(import.meta.url);

function assetDirectory(): string {
  const beside = fileURLToPath(new URL('./assets/', import.meta.url));
  if (existsSync(beside)) return beside;
  // a build that did not copy the assets next to the compiled module: the source tree's
  return fileURLToPath(new URL('../../src/dashboard/assets/', import.meta.url));
}

/** Serves the page, its script, styles and icon, and uPlot, read once. */
function serveStaticFiles(app: Hono): void {
  const directory = assetDirectory();
  const read = (path: string) => readFileSync(path, 'utf8');
  const files: Record<string, { body: string; type: string }> = {
    '/': { body: read(`${directory}index.html`), type: 'text/html; charset=utf-8' },
    '/assets/dashboard.js': { body: read(`${directory}dashboard.js`), type: 'text/javascript; charset=utf-8' },
    '/assets/dashboard.css': { body: read(`${directory}dashboard.css`), type: 'text/css; charset=utf-8' },
    '/assets/favicon.svg': { body: read(`${directory}favicon.svg`), type: 'image/svg+xml' },
    // browsers that ask for /favicon.ico before reading the page's icon link
    '/favicon.ico': { body: read(`${directory}favicon.svg`), type: 'image/svg+xml' },
    '/vendor/uPlot.iife.min.js': { body: read(require.resolve('uplot/dist/uPlot.iife.min.js')), type: 'text/javascript; charset=utf-8' },
    '/vendor/uPlot.min.css': { body: read(require.resolve('uplot/dist/uPlot.min.css')), type: 'text/css; charset=utf-8' },
  };
  for (const [path, file] of Object.entries(files)) {
    app.get(path, (c) => c.body(file.body, 200, { 'content-type': file.type, 'cache-control': path === '/' ? 'no-store' : 'max-age=300' }));
  }
}

/** How a replay job runs: how many at once, how fast, and whether expired entries are removed. */
interface JobSettings {
  concurrency: number;
  ratePerSecond: number | null;
  removeExpired: boolean;
}

/** A job's settings from an action body. @throws ApiError 400 for a value out of range. */
function jobSettings(body: Record<string, unknown>, defaults: { concurrency: number }): JobSettings {
  const concurrency = body.concurrency === undefined ? defaults.concurrency : Number(body.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 100)
    throw new ApiError(400, 'INVALID_INPUT', 'concurrency must be an integer from 1 to 100');
  const rate = body.ratePerSecond === undefined || body.ratePerSecond === null || body.ratePerSecond === '' ? null : Number(body.ratePerSecond);
  if (rate !== null && !(Number.isFinite(rate) && rate >= MIN_REPLAY_RATE_PER_SECOND && rate <= 10_000))
    throw new ApiError(400, 'INVALID_INPUT', 'ratePerSecond must be a number from 0.1 (one replay every 10 s) to 10000');
  if (body.removeExpired !== undefined && typeof body.removeExpired !== 'boolean')
    throw new ApiError(400, 'INVALID_INPUT', 'removeExpired must be true or false');
  return { concurrency, ratePerSecond: rate, removeExpired: body.removeExpired === true };
}

/** The replay jobs of one dashboard: one runs at a time; the last 20 are kept. */
interface JobRunner {
  readonly jobs: Map<string, ReplayJob>;
  /** Starts a job over `records`. @throws ApiError 409 without a config, or while another job runs. */
  start(type: ReplayJob['type'], records: DeadLetterRecord<unknown>[], settings: JobSettings): { job: ReplayJob; run: Promise<unknown> };
  /** Asks a running job to stop. */
  cancel(job: ReplayJob): void;
  /** Cancels every running job and waits for the one in flight. */
  close(): Promise<void>;
}

function createJobRunner(source: DashboardSource, clock: Clock, onProgress: () => void): JobRunner {
  const jobs = new Map<string, ReplayJob>();
  let runningJob: Promise<unknown> | undefined;
  let cancelRequested = new Set<string>();
  /** Aborted to cancel the running job: its wait between batches ends at once. */
  const jobAborts = new Map<string, AbortController>();
  const requireReplay = () => {
    if (!source.replay)
      throw new ApiError(409, 'NO_CONFIG', 'this dashboard was started without a config (--config FILE): it cannot replay; purge still works');
    return source.replay;
  };
  return {
    jobs,
    start(type, records, settings) {
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
        dlq: source.stores.toolDlq,
        replay,
        // read from the tool DLQ, whose entries are resumable by the port's type
        records: records as DeadLetterRecord<ResumableEntry>[],
        concurrency: settings.concurrency,
        ratePerSecond: settings.ratePerSecond,
        removeExpired: settings.removeExpired,
        clock,
        onProgress,
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
          onProgress();
          runningJob = undefined;
          jobAborts.delete(job.id);
          cancelRequested = new Set([...cancelRequested].filter((id) => id !== job.id));
        });
      runningJob = run;
      return { job, run };
    },
    cancel(job) {
      if (job.state !== 'running') return;
      cancelRequested.add(job.id);
      jobAborts.get(job.id)?.abort();
    },
    async close() {
      for (const job of jobs.values()) if (job.state === 'running') cancelRequested.add(job.id);
      for (const abort of jobAborts.values()) abort.abort();
      await runningJob;
    },
  };
}

/** The API's reads: the session, the overview, the pages of both DLQs, an entry, an estimate, the jobs. */
function addReadRoutes(
  app: Hono,
  context: {
    source: DashboardSource;
    reads: DashboardReads;
    runner: JobRunner;
    send: SendJson;
    clock: Clock;
    session: (c: Parameters<SendJson>[0]) => unknown;
  },
): void {
  const { reads, runner, send, clock } = context;
  const stores: Stores = context.source.stores;

  app.get('/api/session', (c) => send(c, context.session(c)));
  app.get('/api/overview', async (c) => send(c, await reads.overview(c.req.query('fresh') === '1')));

  app.get('/api/tool/entries', async (c) => {
    const query = c.req.query();
    const limit = intParam(query, 'limit', { fallback: 50, minimum: 1, maximum: 200 });
    const offset = intParam(query, 'offset', { fallback: 0, minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
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
    const rows = await toolEntryRows(page.records, reads.detailContext());
    return send(c, { limit, offset, ...total, hasMore: page.hasMore, scanned: page.scanned, filter, rows });
  });

  app.get('/api/tool/groups', async (c) => send(c, await reads.groups(c.req.query('fresh') === '1')));

  app.get('/api/tool/entries/:id', async (c) => {
    const record = await stores.toolDlq.get(c.req.param('id'));
    if (!record) throw new ApiError(404, 'NOT_FOUND', `no entry ${c.req.param('id')} in the tool DLQ (replayed, purged or never there)`);
    return send(c, await toolEntryDetail(record, reads.detailContext()));
  });

  app.get('/api/message/entries', async (c) => {
    const query = c.req.query();
    const limit = intParam(query, 'limit', { fallback: 50, minimum: 1, maximum: 200 });
    const offset = intParam(query, 'offset', { fallback: 0, minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
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
    return send(c, { limit, offset, ...total, hasMore: page.hasMore, scanned: page.scanned, filter, rows: messageEntryRows(page.records, clock.now()) });
  });

  app.get('/api/message/entries/:id', async (c) => {
    const record = await stores.messageDlq.get(c.req.param('id'));
    if (!record) throw new ApiError(404, 'NOT_FOUND', `no entry ${c.req.param('id')} in the message DLQ`);
    return send(c, messageEntryDetail(record, clock.now()));
  });

  app.get('/api/tool/estimate', async (c) => {
    const filter = toolFilterOf(c.req.query());
    const records = await reads.matchingToolRecords(filter);
    return send(c, { filter, ...estimateReplay(records) });
  });

  app.get('/api/jobs', (c) => send(c, { jobs: [...runner.jobs.values()].reverse() }));
  app.get('/api/jobs/:id', (c) => {
    const job = runner.jobs.get(c.req.param('id'));
    if (!job) throw new ApiError(404, 'NOT_FOUND', `no job ${c.req.param('id')}`);
    return send(c, job);
  });
}

/** The API's actions: replay one entry, replay or drain by filter (with a dry run), redrive a message, cancel a job, purge a DLQ. */
function addActionRoutes(app: Hono, context: { stores: Stores; reads: DashboardReads; runner: JobRunner; send: SendJson }): void {
  const { stores, reads, runner, send } = context;

  app.post('/api/tool/entries/:id/replay', async (c) => {
    const body = await jsonBody(c);
    const record = await stores.toolDlq.get(c.req.param('id'));
    if (!record) throw new ApiError(404, 'NOT_FOUND', `no entry ${c.req.param('id')} in the tool DLQ (already replayed or purged)`);
    const { job, run } = runner.start('replay', [record], { concurrency: 1, ratePerSecond: null, removeExpired: body.removeExpired === true });
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
    const records = await reads.matchingToolRecords(filter, limit);
    if (body.dryRun === true) return send(c, { dryRun: true, filter, ...estimateReplay(records) });
    const { job } = runner.start(isFiltering(filter) ? 'bulk' : 'drain', records, settings);
    return send(c, job, 202);
  });

  app.post('/api/message/entries/:id/redrive', async (c) => {
    const body = await jsonBody(c);
    if (body.body !== undefined && typeof body.body !== 'string') throw new ApiError(400, 'INVALID_INPUT', 'body must be a string (the fixed message body)');
    const outcome = await redriveMessageEntry(stores, c.req.param('id'), body.body);
    reads.invalidate();
    return send(c, outcome);
  });

  app.post('/api/jobs/:id/cancel', async (c) => {
    await jsonBody(c);
    const job = runner.jobs.get(c.req.param('id'));
    if (!job) throw new ApiError(404, 'NOT_FOUND', `no job ${c.req.param('id')}`);
    runner.cancel(job);
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
    reads.invalidate();
    return send(c, { queue, purged });
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
  const maxSteps = source.maxSteps ?? 20;
  const sampleIntervalMs = options.sampleIntervalMs ?? 15_000;
  const reads = createDashboardReads({
    source,
    clock,
    maxSteps,
    sampleIntervalMs,
    maxSamples: options.maxSamples ?? 480,
    overviewMaxAgeMs: options.overviewMaxAgeMs ?? 3_000,
  });
  const runner = createJobRunner(source, clock, () => reads.invalidate());
  const send = jsonSender(source.redactor);
  const hasToken = tokenCheck(options.token);
  let timer: ReturnType<typeof setInterval> | undefined;

  const app = new Hono();
  installGuards(app, { loopback, readOnly, hasToken, send });
  serveStaticFiles(app);
  const session = (c: Parameters<SendJson>[0]) => ({
    store: source.label,
    readOnly,
    canReplay: source.replay !== undefined && !readOnly,
    tokenRequiredForReads: !loopback,
    tokenValid: hasToken(c),
    maxSteps,
  });
  addReadRoutes(app, { source, reads, runner, send, clock, session });
  addActionRoutes(app, { stores: source.stores, reads, runner, send });
  app.notFound((c) => send(c, { error: { code: 'NOT_FOUND', message: `no such page: ${c.req.path}` } }, 404));

  return {
    app,
    sample: () => reads.sample(),
    start() {
      if (timer) return;
      void reads.sample().catch(() => undefined);
      timer = setInterval(() => void reads.sample().catch(() => undefined), sampleIntervalMs);
      timer.unref?.();
    },
    async close() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await runner.close();
    },
  };
}
