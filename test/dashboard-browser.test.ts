/**
 * `toolrun dashboard` end to end in headless Chromium (Debian's `chromium`, driven by
 * playwright-core with `executablePath`; no browser download): the command is spawned as a user runs
 * it, over a SQLite store and over a PostgreSQL store, each seeded by real runs of the test config
 * (book_flight failing; the dashboard's process runs with it healed). Checked: the overview's numbers
 * equal `toolrun stats --json`; filter → detail → replay one → the entry leaves the list and the
 * side effect happened once; bulk replay dry run → run; an action without the token is refused; no
 * canary secret in any page or API response; keyboard use and labels. And over the store the main
 * job leaves (the airline workload, its first 40 conversations): the entry page leads with the
 * failed call, and a replay from the page reaches an airline service the config starts itself.
 * Screenshots of the overview and of an entry go to a temporary folder; with
 * TOOLRUN_UPDATE_SCREENSHOTS=1 they replace docs/images/ (no test run changes a tracked file otherwise).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteFailureLog, createSqliteStores } from '../src/stores/sqlite/index.ts';
import { createPostgresFailureLog, createPostgresPool, createPostgresStores } from '../src/stores/postgres/index.ts';
import { DASHBOARD_TEST_EMAIL, seedDashboardStores } from './fixtures/dashboard-config.ts';
import { createTestPool, dropSchema, POSTGRES_URL, uniqueName } from './fixtures/distributed-services.ts';
import { leakedCanaries } from './observability-redaction-inputs.ts';
import { findSharedDataDir } from '../examples/shared-data.ts';
import { loadAirlineRuns, loadAirlineTrajectories } from '../examples/airline/trajectories.ts';
import { MALFORMED_QUEUE_MESSAGES } from '../examples/airline/workload/queue-messages.ts';
import { runAirlineWorkload } from '../examples/airline/workload/run-airline-workload.ts';
import { AIRLINE_TEST_CONVERSATIONS, AIRLINE_TEST_SETTINGS, airlineDataPresent } from './fixtures/airline-test-workload.ts';

const CHROMIUM = '/usr/bin/chromium';
const CONFIG = 'test/fixtures/dashboard-config.ts';
const TOKEN = 'browser-test-token-0123456789';
const BOOK_GROUP = 'retry-budget-exhausted · server 503 · book_flight';
const hasChromium = existsSync(CHROMIUM);
const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Where screenshots go: docs/images/ only when asked to, a temporary folder otherwise. */
const screenshots = process.env.TOOLRUN_UPDATE_SCREENSHOTS === '1' ? join(projectRoot, 'docs', 'images') : mkdtempSync(join(tmpdir(), 'toolrun-screenshots-'));

interface Spawned {
  child: ChildProcess;
  url: string;
  /** What the command printed so far (stdout and stderr). */
  output(): string;
  stop(): Promise<void>;
}

/** The CLI commands still running: a test that ended before its command did leaves none behind (see the last afterAll). */
const commands = new Set<ChildProcess>();

/** Runs a `toolrun` command to its end; no wall-clock bound of its own (the test's timeout ends a hang). */
function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], {
      env: { ...process.env, TOOLRUN_DB: '', TOOLRUN_CONFIG: '', ...env },
    });
    commands.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      commands.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Spawns `toolrun dashboard …` and waits (bounded) for the line with its address. */
function startDashboardCli(args: string[], env: NodeJS.ProcessEnv): Promise<Spawned> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'dashboard', '--port', '0', '--token', TOKEN, ...args], {
      env: { ...process.env, TOOLRUN_DB: '', TOOLRUN_CONFIG: '', ...env },
    });
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the dashboard did not start in 90 s: ${output}`));
    }, 90_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /toolrun dashboard: (http:\/\/\S+\/)/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      resolve({
        child,
        url: match[1]!,
        output: () => output,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
            child.once('exit', () => {
              clearTimeout(kill);
              done();
            });
            child.kill('SIGTERM');
          }),
      });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the dashboard exited with ${code}: ${output}`));
    });
  });
}

/** Every response body the page received, and its HTML at each check, for the canary scan. */
function recordResponses(page: Page): string[] {
  const texts: string[] = [];
  page.on('response', (response) => {
    void response.text().then(
      (text) => texts.push(text),
      () => undefined,
    );
  });
  return texts;
}

/**
 * A record of what a page did, for the message of a failed check: its console and errors, each
 * request with its status (and the body of each API answer), each navigation, with the time since
 * the record started.
 */
function watchPage(page: Page): string[] {
  const lines: string[] = [];
  const startedMs = Date.now();
  const note = (text: string) => lines.push(`+${Date.now() - startedMs} ms ${text}`);
  page.on('console', (message) => note(`console.${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => note(`page error: ${error.message}`));
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) note(`navigated to ${frame.url()}`);
  });
  page.on('request', (request) => note(`request ${request.method()} ${request.url()}`));
  page.on('requestfailed', (request) => note(`request failed: ${request.method()} ${request.url()}: ${request.failure()?.errorText ?? '?'}`));
  page.on('requestfinished', (request) => {
    void request.response().then(async (response) => {
      const isApi = new URL(request.url()).pathname.startsWith('/api/');
      const body = isApi && response ? await response.text().catch((error: Error) => `(no body: ${error.message})`) : '';
      note(`finished ${request.method()} ${request.url()}: ${response?.status() ?? 'no response'}${body ? ` ${body.slice(0, 600)}` : ''}`);
    });
  });
  return lines;
}

/** Which of the page's requests a test waits for: the method, the path, and the query parameters it must have. */
function call(method: 'GET' | 'POST', path: string | RegExp, params: Record<string, string> = {}) {
  return (url: URL, requestMethod: string) =>
    requestMethod === method &&
    (typeof path === 'string' ? url.pathname === path : path.test(url.pathname)) &&
    Object.entries(params).every(([name, value]) => url.searchParams.get(name) === value);
}

/**
 * Does `action` and waits for the answer to the page's request that `wanted` matches (and, when
 * given, whose body `done` accepts); returns the answer's body. The wait has no wall-clock bound of
 * its own: the answer is the progress it waits for, however slow the machine (the test's timeout
 * still ends a hang). What the page shows from the answer is then checked with the usual bounds.
 */
async function answered<T = Record<string, unknown>>(
  page: Page,
  wanted: (url: URL, method: string) => boolean,
  action: () => Promise<unknown>,
  done: (body: T) => boolean = () => true,
): Promise<T> {
  let body: T | undefined;
  const answer = page.waitForResponse(
    async (response) => {
      if (!wanted(new URL(response.url()), response.request().method())) return false;
      const read = (await response.json().catch(() => undefined)) as T | undefined;
      if (read === undefined || !done(read)) return false;
      body = read;
      return true;
    },
    { timeout: 0 },
  );
  await action();
  await answer;
  return body!;
}

/** Runs a test's checks; when one fails, its message carries the page's record, its view and status, and the dashboard's output. */
async function explained(page: Page, record: string[], dashboard: Spawned, checks: () => Promise<void>): Promise<void> {
  try {
    await checks();
  } catch (error) {
    const shown = await page
      .evaluate<string>(
        `'url ' + location.href + ' · status: ' + document.getElementById('status').textContent + ' · view: ' + document.getElementById('view').innerText.slice(0, 1500)`,
      )
      .catch((failure: Error) => `(the page could not be read: ${failure.message})`);
    const detail = [`the page's record:`, ...record, `the page now: ${shown}`, `the dashboard's output:`, dashboard.output().slice(-3_000)].join('\n');
    if (error instanceof Error) {
      error.message = `${error.message}\n${detail}`;
      throw error;
    }
    throw new Error(`${String(error)}\n${detail}`);
  }
}

function withoutAges(deadLetters: { message: Record<string, unknown>; tool: Record<string, unknown> }) {
  return { message: { ...deadLetters.message, oldestAgeMs: null }, tool: { ...deadLetters.tool, oldestAgeMs: null } };
}

function effectsOf(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : [];
}

async function expectOverviewEqualsStats(page: Page, url: string, stats: { deadLetters: never; queue: { size: number }; runs: unknown }) {
  const api = (await page.evaluate(async (address) => (await fetch(`${address}api/overview?fresh=1`)).json(), url)) as {
    deadLetters: { message: Record<string, unknown>; tool: Record<string, unknown> };
    queue: unknown;
    runs: unknown;
  };
  expect(withoutAges(api.deadLetters)).toEqual(withoutAges(stats.deadLetters));
  expect(api.queue).toEqual(stats.queue);
  expect(api.runs).toEqual(stats.runs);
  const deadLetters = stats.deadLetters as unknown as { tool: { depth: number; bytes: number }; message: { depth: number; bytes: number } };
  await expect.poll(() => page.getByTestId('tool-depth').textContent()).toBe(String(deadLetters.tool.depth));
  expect(await page.getByTestId('message-depth').textContent()).toBe(String(deadLetters.message.depth));
  expect(await page.getByTestId('tool-bytes').getAttribute('data-bytes')).toBe(String(deadLetters.tool.bytes));
}

/** Filter the tool DLQ by the book_flight group, open the first entry, replay it; returns its id and run. */
async function replayOneFromTheList(page: Page, url: string, effectsFile: string, screenshot?: string): Promise<{ id: string; runId: string }> {
  // the list and its cause groups: asked for when the page goes there (already shown when it is there)
  if (page.url() !== `${url}#/tool`) await answered(page, call('GET', '/api/tool/groups'), () => page.goto(`${url}#/tool`));
  await page.getByLabel('Cause').selectOption(BOOK_GROUP);
  await answered(page, call('GET', '/api/tool/entries', { group: BOOK_GROUP }), () => page.getByRole('button', { name: 'Apply filter' }).click());
  await expect.poll(() => page.getByTestId('list-summary').textContent()).toContain('of 5');
  const first = page.getByTestId('tool-entries').locator('tbody tr').first();
  const id = (await first.locator('td').nth(0).textContent())!;
  const runId = (await first.locator('td').nth(1).textContent())!;
  await answered(page, call('GET', `/api/tool/entries/${encodeURIComponent(id)}`), () => first.getByRole('link').click());
  await page.getByRole('heading', { name: `Tool-DLQ entry ${id}` }).waitFor();
  await expectLeadsWithTheFailedCall(page, 'book_flight');
  expect(await page.locator('ol.conversation li.failed').count()).toBeGreaterThanOrEqual(1);
  expect(await page.getByTestId('envelope').textContent()).toContain('"code": "UNAVAILABLE"');
  expect(await page.getByTestId('ledger').textContent()).toContain('applied — a replay will not redo it');
  expect(await page.getByTestId('applied-count').textContent()).toBe('1');
  if (screenshot) await page.screenshot({ path: screenshot, fullPage: true });
  expect(effectsOf(effectsFile).filter((line) => line === runId)).toHaveLength(0);
  await page.getByTestId('replay-one').click();
  // a confirmation first, saying what the replay costs; nothing runs before it is confirmed
  await page.getByTestId('replay-confirmation').waitFor();
  expect(await page.getByTestId('replay-cost').textContent()).toMatch(/at least 1 model call ≈ [\d,]+ input tokens/);
  expect(effectsOf(effectsFile).filter((line) => line === runId)).toHaveLength(0);
  await answered(page, call('POST', `/api/tool/entries/${encodeURIComponent(id)}/replay`), () => page.getByTestId('replay-confirm').click());
  await expect.poll(() => page.getByTestId('replay-status').textContent(), { timeout: 15_000 }).toContain('completed');
  expect(effectsOf(effectsFile).filter((line) => line === runId)).toHaveLength(1);
  // back to the filtered list: the entry left it
  await answered(page, call('GET', '/api/tool/entries', { group: BOOK_GROUP }), () => page.goto(`${url}#/tool?group=${encodeURIComponent(BOOK_GROUP)}`));
  await expect.poll(() => page.getByTestId('list-summary').textContent()).toContain('of 4');
  expect(
    await page
      .getByTestId('tool-entries')
      .getByRole('link', { name: new RegExp(`^entry ${id} `) })
      .count(),
  ).toBe(0);
  return { id, runId };
}

/**
 * The entry page leads with the failed call: right under the heading, before the facts and the
 * (folded) conversation, naming the tool; the page stays short however long the conversation is.
 */
async function expectLeadsWithTheFailedCall(page: Page, toolName: string): Promise<void> {
  const order = await page.evaluate<string[]>(
    `[...document.querySelectorAll('#view > section, #view > dl, #view > details')].map((node) => node.getAttribute('data-testid') || node.getAttribute('aria-labelledby') || node.tagName)`,
  );
  expect(order[0]).toBe('failed-call');
  expect(order.indexOf('failed-call')).toBeLessThan(order.indexOf('conversation-fold'));
  expect(await page.getByTestId('failed-call-tool').textContent()).toBe(toolName);
  expect(await page.getByTestId('conversation-fold').getAttribute('open')).toBeNull();
  const height = await page.evaluate<number>('document.documentElement.scrollHeight');
  expect(height).toBeLessThan(4_000);
}

let browser: Browser;

beforeAll(async () => {
  if (hasChromium) browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});

afterAll(async () => {
  await browser?.close();
  for (const child of commands) child.kill('SIGKILL');
});

describe.skipIf(!hasChromium)('toolrun dashboard in Chromium over the embedded SQLite store', () => {
  const directory = mkdtempSync(join(tmpdir(), 'toolrun-dashboard-browser-'));
  const db = join(directory, 'demo.db');
  const effectsFile = join(directory, 'effects.log');
  let dashboard: Spawned;
  let page: Page;
  let record: string[];
  let responses: string[];

  beforeAll(async () => {
    const stores = createSqliteStores({ path: db });
    await seedDashboardStores(stores, { bookings: 5, cancels: 4, lookups: 3, malformed: 3 }, createSqliteFailureLog(stores.database));
    await stores.close();
    dashboard = await startDashboardCli(['--db', db, '--config', CONFIG, '--sample-interval-ms', '250'], {
      DASHBOARD_TEST_HEALED: '1',
      DASHBOARD_TEST_EFFECTS_FILE: effectsFile,
    });
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    record = watchPage(page);
    responses = recordResponses(page);
  }, 120_000);

  afterAll(async () => {
    await page?.close();
    await dashboard?.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  it('shows the overview with the numbers of toolrun stats --json', () =>
    explained(page, record, dashboard, async () => {
      const stats = await cli(['stats', '--json', '--db', db]);
      expect(stats.code).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // a few depth and age samples for the sparklines
      await answered(page, call('GET', '/api/overview'), () => page.goto(`${dashboard.url}#token=${TOKEN}`));
      await expectOverviewEqualsStats(page, dashboard.url, JSON.parse(stats.stdout));
      expect(page.url()).not.toContain(TOKEN);
      expect(await page.getByTestId('fields').textContent()).toContain('/order');
      expect(await page.getByTestId('alerts').textContent()).toContain('breaker-open: the shared breaker of cancel_trip is open');
      await page.getByTestId('tool-groups').getByRole('link', { name: BOOK_GROUP }).waitFor();
      await page.locator('.spark canvas').first().waitFor();
      await page.locator('figure.chart canvas').first().waitFor();
      mkdirSync(screenshots, { recursive: true });
      await page.screenshot({ path: join(screenshots, 'dashboard-overview.png'), fullPage: true });
    }));

  it('is usable with the keyboard, and every control has a label', () =>
    explained(page, record, dashboard, async () => {
      await page.goto(`${dashboard.url}#/overview`);
      await page.getByTestId('tool-depth').waitFor();
      await page.keyboard.press('Tab');
      expect(await page.evaluate<string | null>('document.activeElement && document.activeElement.textContent')).toBe('Skip to content');
      for (let presses = 0; presses < 10; presses += 1) {
        if ((await page.evaluate<string | null>('document.activeElement && document.activeElement.textContent')) === 'Tool DLQ') break;
        await page.keyboard.press('Tab');
      }
      // the rows, then the cause groups the filter offers (asked for once the rows are shown)
      await answered(page, call('GET', '/api/tool/groups'), () => page.keyboard.press('Enter'));
      await page.getByTestId('list-summary').waitFor();
      expect(page.url()).toContain('#/tool');
      const unlabelled = await page.evaluate<string[]>(`[...document.querySelectorAll('input, select, button')]
      .filter((control) => !(control.labels && control.labels.length > 0) && !control.getAttribute('aria-label') && !(control.textContent || '').trim())
      .map((control) => control.outerHTML)`);
      expect(unlabelled).toEqual([]);
    }));

  it('filter → detail → replay one: the entry leaves the list and its side effect happened once', () =>
    explained(page, record, dashboard, async () => {
      await replayOneFromTheList(page, dashboard.url, effectsFile, join(screenshots, 'dashboard-entry.png'));
    }));

  it('bulk replay by filter: dry run (entries × tokens), then the run with per-entry outcomes', () =>
    explained(page, record, dashboard, async () => {
      await page.goto(`${dashboard.url}#/tool?group=${encodeURIComponent(BOOK_GROUP)}`);
      await answered(page, call('POST', '/api/tool/replays'), () => page.getByRole('button', { name: 'Dry run: estimate' }).click());
      await expect.poll(() => page.getByTestId('estimate').textContent()).toMatch(/Dry run: 4 entries \(tool 4\) × tokens: [\d,]+ input/);
      await page.getByLabel('At most per second').fill('20');
      // the job page asks for the job until it is no longer running
      await answered(
        page,
        call('GET', /^\/api\/jobs\/[^/]+$/),
        () => page.getByRole('button', { name: 'Replay the matching entries' }).click(),
        (job: { state?: string }) => job.state !== 'running',
      );
      await expect.poll(() => page.getByTestId('job-state').getAttribute('data-state'), { timeout: 20_000 }).toBe('done');
      expect(await page.getByTestId('job-state').textContent()).toContain('completed 4');
      expect(await page.getByTestId('job-entries').locator('tbody tr').count()).toBe(4);
      const effects = effectsOf(effectsFile);
      expect(effects).toHaveLength(5);
      expect(new Set(effects).size).toBe(5);
    }));

  it('refuses an action without the token, on the page and from a script', () =>
    explained(page, record, dashboard, async () => {
      await page.evaluate('sessionStorage.clear()');
      const cancelTrips = call('GET', '/api/tool/entries', { tool: 'cancel_trip' });
      await answered(page, cancelTrips, () => page.goto(`${dashboard.url}#/tool?tool=cancel_trip`));
      await answered(page, cancelTrips, () => page.reload());
      await answered(page, call('GET', /^\/api\/tool\/entries\/[^/]+$/), () =>
        page.getByTestId('tool-entries').locator('tbody tr').first().getByRole('link').click(),
      );
      await page.getByTestId('replay-one').click();
      await answered(page, call('POST', /^\/api\/tool\/entries\/[^/]+\/replay$/), () => page.getByTestId('replay-confirm').click());
      await expect.poll(() => page.locator('#status').textContent()).toContain('Refused: every action needs the dashboard token');
      const status = await page.evaluate(
        async (address) =>
          (await fetch(`${address}api/tool/purge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"confirm": "purge tool"}' }))
            .status,
        dashboard.url,
      );
      expect(status).toBe(401);
      const stats = JSON.parse((await cli(['stats', '--json', '--db', db])).stdout);
      expect(stats.deadLetters.tool.depth).toBe(4);
    }));

  it('sent no canary secret in any page or API response', () =>
    explained(page, record, dashboard, async () => {
      const views: Array<[string, string, string]> = [
        ['#/overview', 'tool-depth', '/api/overview'],
        ['#/tool', 'list-summary', '/api/tool/entries'],
        ['#/message', 'message-entries', '/api/message/entries'],
      ];
      for (const [path, ready, read] of views) {
        await answered(page, call('GET', read), () => page.goto(`${dashboard.url}${path}`));
        await page.getByTestId(ready).waitFor();
        responses.push(await page.content());
      }
      await answered(page, call('GET', /^\/api\/message\/entries\/[^/]+$/), () => page.getByTestId('message-entries').locator('tbody tr a').first().click());
      await page.getByTestId('raw-body').waitFor();
      responses.push(await page.content());
      expect(responses.length).toBeGreaterThan(20);
      expect(responses.flatMap((text) => leakedCanaries(text))).toEqual([]);
      expect(responses.some((text) => text.includes(DASHBOARD_TEST_EMAIL))).toBe(false);
    }));
});

describe.skipIf(!hasChromium)('toolrun dashboard in Chromium over a PostgreSQL store', () => {
  const schema = uniqueName('toolrun_dashboard_');
  const url = `${POSTGRES_URL}?schema=${schema}`;
  const directory = mkdtempSync(join(tmpdir(), 'toolrun-dashboard-pg-'));
  const effectsFile = join(directory, 'effects.log');
  const admin = createTestPool({ max: 1 });
  let dashboard: Spawned;
  let page: Page;
  let record: string[];
  let responses: string[];

  beforeAll(async () => {
    const pool = await createPostgresPool(POSTGRES_URL, { maxConnections: 4 });
    const stores = await createPostgresStores({ pool, schema });
    await seedDashboardStores(stores, { bookings: 5, cancels: 3, lookups: 2, malformed: 2 }, createPostgresFailureLog(pool, { schema }));
    await stores.close();
    await pool.end();
    dashboard = await startDashboardCli(['--store', url, '--config', CONFIG], { DASHBOARD_TEST_HEALED: '1', DASHBOARD_TEST_EFFECTS_FILE: effectsFile });
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    record = watchPage(page);
    responses = recordResponses(page);
  }, 120_000);

  afterAll(async () => {
    await page?.close();
    await dashboard?.stop();
    await dropSchema(admin, schema);
    await admin.end();
    rmSync(directory, { recursive: true, force: true });
  });

  it('shows the overview with the numbers of toolrun stats --json', () =>
    explained(page, record, dashboard, async () => {
      const stats = await cli(['stats', '--json', '--store', url]);
      expect(stats.code).toBe(0);
      await answered(page, call('GET', '/api/overview'), () => page.goto(`${dashboard.url}#token=${TOKEN}`));
      await expectOverviewEqualsStats(page, dashboard.url, JSON.parse(stats.stdout));
      // PostgreSQL keeps a failure log in the schema: the failure mix and the field report are shown
      expect(await page.getByText('this backend keeps no failure log').count()).toBe(0);
      expect(await page.getByText('Fields that fail most, with the suggested fix').count()).toBe(1);
    }));

  it('filter → detail → replay one: the entry leaves the list and its side effect happened once; no canary in any response', () =>
    explained(page, record, dashboard, async () => {
      await replayOneFromTheList(page, dashboard.url, effectsFile);
      expect(effectsOf(effectsFile)).toHaveLength(1);
      const stats = JSON.parse((await cli(['stats', '--json', '--store', url])).stdout);
      expect(stats.deadLetters.tool.depth).toBe(7);
      expect(responses.flatMap((text) => leakedCanaries(text))).toEqual([]);
      expect(responses.some((text) => text.includes(DASHBOARD_TEST_EMAIL))).toBe(false);
    }));
});

describe.skipIf(!hasChromium || !airlineDataPresent)("toolrun dashboard in Chromium over the main job's store", () => {
  const directory = mkdtempSync(join(tmpdir(), 'toolrun-dashboard-demo-'));
  const db = join(directory, 'airline-demo.db');
  let dashboard: Spawned;
  let page: Page;
  let record: string[];

  beforeAll(async () => {
    // what `npm start` leaves, on its first 40 conversations with the tests' scaled-down settings
    const report = await runAirlineWorkload({
      runs: loadAirlineRuns(loadAirlineTrajectories().slice(0, AIRLINE_TEST_CONVERSATIONS)),
      settings: AIRLINE_TEST_SETTINGS,
      projectRoot,
      dbPath: db,
      configPath: join(projectRoot, 'examples', 'airline', 'toolrun.config.ts'),
      env: { ...process.env, TOOLRUN_DATA_DIR: findSharedDataDir() },
      workerEnv: { TOOLRUN_AIRLINE_BREAKER_COOL_DOWN_MS: '600000' },
      drainEnv: { TOOLRUN_AIRLINE_BREAKER_COOL_DOWN_MS: '1' },
      malformedMessages: MALFORMED_QUEUE_MESSAGES,
      log: () => undefined,
      quiet: true,
    });
    expect(report.toolDlqAtEnd).toBeGreaterThan(0);
    // as the README says it: no TOOLRUN_AIRLINE_URL, no airline service started by hand
    dashboard = await startDashboardCli(['--db', db, '--config', 'examples/airline/toolrun.config.ts'], {
      TOOLRUN_AIRLINE_URL: '',
      TOOLRUN_DATA_DIR: findSharedDataDir(),
    });
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    record = watchPage(page);
  }, 240_000);

  afterAll(async () => {
    await page?.close();
    await dashboard?.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  it('opens an entry that leads with the failed call, and replays it from the page', { timeout: 120_000 }, () =>
    explained(page, record, dashboard, async () => {
      // the page has its session and has asked for the overview before it is sent to the list: what
      // it shows is the answer to the list's read, whichever of the two reads is answered last
      const overviewAsked = page.waitForRequest((request) => new URL(request.url()).pathname === '/api/overview', { timeout: 0 });
      await page.goto(`${dashboard.url}#token=${TOKEN}`);
      await overviewAsked;
      const list = await answered<{ rows: Array<{ id: string; tool: string }> }>(page, call('GET', '/api/tool/entries'), () =>
        page.goto(`${dashboard.url}#/tool`),
      );
      expect(list.rows.length).toBeGreaterThan(0);
      const first = page.getByTestId('tool-entries').locator('tbody tr').first();
      await first.waitFor();
      const id = (await first.locator('td').nth(0).textContent())!;
      const tool = (await first.locator('td').nth(3).textContent())!;
      expect([id, tool]).toEqual([list.rows[0]!.id, list.rows[0]!.tool]);
      await answered(page, call('GET', `/api/tool/entries/${encodeURIComponent(id)}`), () => first.getByRole('link').click());
      await page.getByRole('heading', { name: `Tool-DLQ entry ${id}` }).waitFor();
      await expectLeadsWithTheFailedCall(page, tool);
      await page.getByTestId('replay-one').click();
      await answered(page, call('POST', `/api/tool/entries/${encodeURIComponent(id)}/replay`), () => page.getByTestId('replay-confirm').click());
      // the replay ran against the airline service the config started: an outcome, not an error
      await expect.poll(() => page.getByTestId('replay-status').textContent(), { timeout: 30_000 }).toMatch(/^Replay of \S+: [a-z_]+/);
      const outcome = (await page.getByTestId('replay-status').textContent())!;
      expect(outcome).not.toMatch(/: (error|invalid_entry|expired|in_progress)\b/);
      expect(outcome).not.toMatch(/NETWORK|TOOLRUN_AIRLINE_URL/);
    }),
  );
});
