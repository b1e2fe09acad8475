import { createReadStream, existsSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { ToolrunError } from '../../index.ts';
import { usageError } from '../cli-error.ts';
import { integerOption, STORE_URL_HELP } from '../parse-options.ts';
import type { FailureLog } from '../../ground/ports/failure-log.ts';
import { checkSqliteFile, DEFAULT_DATABASE_PATH, missingDatabaseError, resolveStores, sqlitePathOf } from '../resolve-stores.ts';

interface ReportOptions {
  db?: string;
  store?: string;
  fromLog?: string;
  top: number;
  json?: boolean;
}

/** The `event` values of the lines toolrun's tool-call logger writes. */
const TOOLRUN_LOG_EVENTS: ReadonlySet<string> = new Set(['tool_call', 'tool_recovery', 'breaker_open', 'worker_event', 'dead_letter_add']);

/** Lines looked at to tell a toolrun log from another file. */
const SNIFFED_LINES = 1_000;

/**
 * Whether `path` is a toolrun log: among its first non-empty lines (up to 1 000), at least one is
 * a JSON object with a toolrun `event`. An empty file is one (a worker that made no call).
 */
async function sniffToolrunLog(path: string): Promise<{ lines: number; toolrunLines: number }> {
  const stream = createReadStream(path, { encoding: 'utf8' });
  const reader = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  let lines = 0;
  let toolrunLines = 0;
  try {
    for await (const raw of reader) {
      const line = raw.trim();
      if (line === '') continue;
      lines += 1;
      if (line.startsWith('{')) {
        try {
          const parsed = JSON.parse(line) as { event?: unknown };
          if (typeof parsed.event === 'string' && TOOLRUN_LOG_EVENTS.has(parsed.event)) toolrunLines += 1;
        } catch {
          // not JSON: not a toolrun line
        }
      }
      if (lines >= SNIFFED_LINES || toolrunLines > 0) break;
    }
  } finally {
    reader.close();
    stream.destroy();
  }
  return { lines, toolrunLines };
}

/** Checks the `--from-log` file: it exists, is a file, and holds toolrun log lines. */
async function checkLogFile(path: string): Promise<void> {
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw usageError(`no log file at ${path} (toolrun worker --log-file FILE writes one)`, 'NOT_FOUND');
    }
    throw new ToolrunError('STORE_UNAVAILABLE', `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { cause: error });
  }
  if (!isFile) throw usageError(`${path} is not a file (--from-log takes the file toolrun worker --log-file wrote)`, 'BAD_INPUT');
  const { lines, toolrunLines } = await sniffToolrunLog(path);
  if (lines > 0 && toolrunLines === 0) {
    throw usageError(
      `${path} is not a toolrun log: none of its first ${lines} line${lines === 1 ? '' : 's'} is a toolrun JSON log line (toolrun worker --log-file FILE writes one)`,
      'BAD_INPUT',
    );
  }
}

/** The SQLite file of `--db` / `--store sqlite:` / `$TOOLRUN_DB` / the default; `undefined` for a `--store` of another backend. */
function databasePath(options: ReportOptions): string | undefined {
  if (options.store !== undefined) return sqlitePathOf(options.store);
  const envPath = process.env.TOOLRUN_DB !== undefined && process.env.TOOLRUN_DB !== '' ? process.env.TOOLRUN_DB : undefined;
  return options.db ?? envPath ?? DEFAULT_DATABASE_PATH;
}

/** The failure log of a `--store` that is not SQLite (PostgreSQL keeps one in its schema), opened with its stores. */
async function openStoreFailureLog(store: string): Promise<{ failureLog: FailureLog; label: string; close(): Promise<void> }> {
  const resolved = await resolveStores({ store, env: process.env }, { mustExist: true });
  if (resolved.openFailureLog === undefined) {
    await resolved.stores.close();
    throw usageError(
      `report reads the failure log that the SQLite and PostgreSQL stores keep (${resolved.label} keeps none): pass --from-log FILE, written by toolrun worker --log-file FILE`,
      'UNSUPPORTED_BACKEND',
    );
  }
  return { failureLog: resolved.openFailureLog(), label: resolved.label, close: () => resolved.stores.close() };
}

/**
 * `toolrun report [--db FILE | --store URL | --from-log FILE] [--top N] [--json]`: which tools and
 * argument fields fail most, and how, from the recorded failures — the failure log of a SQLite
 * stores file or of a PostgreSQL schema (written by `toolrun worker` and `toolrun dlq
 * replay|drain`), or a pino log file written with `--log-file`; read a page or a line at a time,
 * in bounded memory. Without a source: `$TOOLRUN_DB`, else `.toolrun/toolrun.db`.
 * Exit codes as every command: 0 printed; 2 a missing database or log file, a file that is not a
 * toolrun log, a file that is not a SQLite database, a store without a failure log (`memory:`), a
 * PostgreSQL schema toolrun never created, two sources; 1 a source that exists but cannot be read
 * (a server that cannot be reached, a file without read permission).
 */
export function addReportCommand(program: Command): void {
  program
    .command('report')
    .description('which tools and argument fields fail most, and how (from the recorded failures)')
    .option('--db <file>', 'SQLite database file (default: $TOOLRUN_DB or .toolrun/toolrun.db)')
    .option('--store <url>', `${STORE_URL_HELP}; sqlite: and postgres:// keep a failure log`)
    .option('--from-log <file>', 'read a toolrun pino log file (NDJSON, toolrun worker --log-file) instead of the database')
    .option('--top <n>', 'fields listed first', integerOption(1), 10)
    .option('--json', 'print the report as JSON')
    .action(async (options: ReportOptions) => {
      if (options.db !== undefined && options.store !== undefined) throw usageError('pass either --store URL or --db FILE, not both');
      if ((options.db !== undefined || options.store !== undefined) && options.fromLog !== undefined) {
        throw usageError(`pass either ${options.db !== undefined ? '--db FILE' : '--store URL'} or --from-log FILE, not both`);
      }
      let db: string | undefined;
      let opened: Awaited<ReturnType<typeof openStoreFailureLog>> | undefined;
      if (options.fromLog !== undefined) await checkLogFile(options.fromLog);
      else {
        db = databasePath(options);
        if (db === undefined) opened = await openStoreFailureLog(options.store!);
        else if (db !== ':memory:' && !existsSync(db)) throw missingDatabaseError(db);
        else checkSqliteFile(db);
      }
      const { runReportCommand } = await import('../../observability/report/run-report-command.ts');
      let problem = '';
      let exitCode: 0 | 1 | 2;
      try {
        ({ exitCode } = await runReportCommand({
          ...(db !== undefined ? { db } : {}),
          ...(opened !== undefined ? { failureLog: opened.failureLog, source: opened.label } : {}),
          ...(options.fromLog !== undefined ? { fromLog: options.fromLog } : {}),
          ...(options.json ? { json: true } : {}),
          top: options.top,
          writeError: (text) => (problem += text),
        }));
      } finally {
        await opened?.close();
      }
      if (exitCode !== 0) {
        // one convention for every command: the reason as a ToolrunError, printed by the entry
        const reason = problem
          .trim()
          .replace(/^toolrun report: /, '')
          .replaceAll('\n', ' ');
        throw exitCode === 2 ? usageError(reason) : new ToolrunError('STORE_UNAVAILABLE', reason);
      }
    });
}
