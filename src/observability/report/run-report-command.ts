import { existsSync } from 'node:fs';
import type { FailurePatternLibrary } from '../../core/failure-patterns.ts';
import type { FailureLog, FailureLogPage, FailureLogRecord } from '../../ground/ports/failure-log.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import type { Redactor } from '../../core/redact.ts';
import { createFailureReportBuilder, type FailureReport } from './build-failure-report.ts';
import { formatFailureReport } from './format-failure-report.ts';
import { scanFailureLogFile } from './read-failure-log-file.ts';

/** Records read per page of a failure log by {@link runReportCommand}. */
const REPORT_PAGE_SIZE = 1_000;

/** Options of {@link runReportCommand} (`toolrun report [--json] [--db FILE] [--from-log FILE]`). */
export interface ReportCommandOptions {
  /** The SQLite stores file whose failure log to read. Exactly one of `db`, `fromLog` and `failureLog`. */
  db?: string;
  /** A pino log file (NDJSON) written by `createToolCallLogger`. */
  fromLog?: string;
  /**
   * A failure log opened by the caller (e.g. `createPostgresFailureLog`), with `source` naming it
   * in the report; the caller closes it.
   */
  failureLog?: FailureLog;
  /** How the report names `failureLog` (`postgres://host/db (schema toolrun)`). @defaultValue `'failure log'` */
  source?: string;
  /** Print the report as JSON (for machines) instead of text. @defaultValue false */
  json?: boolean;
  /** Fields listed first in the text report. @defaultValue 10 */
  top?: number;
  /** Groups failures. @defaultValue the default patterns */
  patterns?: FailurePatternLibrary;
  /** Redacts every record again before it is shown (the config's). @defaultValue `createRedactor()` */
  redactor?: Redactor;
  /** @defaultValue writes to `process.stdout` */
  write?: (text: string) => void;
  /** @defaultValue writes to `process.stderr` */
  writeError?: (text: string) => void;
}

/** The outcome of {@link runReportCommand}: the exit code and, when one was built, the report. */
export interface ReportCommandResult {
  /** 0: printed; 1: the source could not be read; 2: wrong options. */
  exitCode: 0 | 1 | 2;
  report?: FailureReport;
}

/**
 * The records of a failure log, oldest first, a page at a time (`pageSize` records, default
 * 1,000): by keyset (`listPage`) when the log has it, so every page costs the same at any depth;
 * else by `list` with an `offset`. Yields each page as it is read: a reader that keeps only counts
 * reads a log of any size in bounded memory. Records appended while it reads may or may not be
 * included.
 *
 * @throws ToolrunError `INVALID_OPTIONS` when `pageSize` is not an integer ≥ 1; whatever the log's reads throw.
 */
export async function* streamFailureLog(log: FailureLog, pageSize = REPORT_PAGE_SIZE): AsyncGenerator<FailureLogRecord[], void, undefined> {
  if (!Number.isInteger(pageSize) || pageSize < 1) throw new ToolrunError('INVALID_OPTIONS', `pageSize must be an integer ≥ 1, received ${String(pageSize)}`);
  if (log.listPage) {
    let after: string | null = null;
    for (;;) {
      const page: FailureLogPage = await log.listPage({ limit: pageSize, after });
      if (page.records.length > 0) yield page.records;
      if (page.records.length < pageSize) return;
      after = page.next;
    }
  }
  for (let offset = 0; ; offset += pageSize) {
    const page = await log.list({ limit: pageSize, offset });
    if (page.length > 0) yield page;
    if (page.length < pageSize) return;
  }
}

/** Reads a failure log page by page, oldest first (see {@link streamFailureLog}), and returns every record. */
export async function readAllFailures(log: FailureLog, pageSize = REPORT_PAGE_SIZE): Promise<FailureLogRecord[]> {
  const records: FailureLogRecord[] = [];
  for await (const page of streamFailureLog(log, pageSize)) {
    for (const record of page) records.push(record);
  }
  return records;
}

/**
 * `toolrun report`: reads the recorded failures from the embedded store (`db`), a failure log the
 * caller opened (`failureLog`, e.g. PostgreSQL's) or a log file (`fromLog`) and prints, per tool
 * and per argument field, how often and how it failed, the failure-type distribution, mean
 * recovery rounds, breaker trips and the fields whose errors dominate with a hint to fix their
 * descriptions (SPEC.md §4). The records are counted as they are read (a page of the log, a line
 * of the file at a time) and never held all at once, so memory stays bounded on a log of millions
 * of records. Never throws: problems are the exit code plus a line on `writeError`.
 */
export async function runReportCommand(options: ReportCommandOptions): Promise<ReportCommandResult> {
  const write = options.write ?? ((text: string) => void process.stdout.write(text));
  const writeError = options.writeError ?? ((text: string) => void process.stderr.write(text));
  const sources = [options.db, options.fromLog, options.failureLog].filter((source) => source !== undefined).length;
  if (sources !== 1) {
    writeError('toolrun report: give exactly one source: --db <file> or --from-log <file>\n');
    return { exitCode: 2 };
  }
  let source: string;
  // the source's name (a log file's line counts) is known only once it is read: set on the report at the end
  const builder = createFailureReportBuilder({
    ...(options.patterns ? { patterns: options.patterns } : {}),
    ...(options.redactor ? { redactor: options.redactor } : {}),
  });
  const countLog = async (log: FailureLog) => {
    for await (const page of streamFailureLog(log)) for (const record of page) builder.add(record);
  };
  try {
    if (options.fromLog !== undefined) {
      const contents = await scanFailureLogFile(options.fromLog, (record) => builder.add(record));
      source = `log ${options.fromLog} (${contents.lines} lines${contents.skipped > 0 ? `, ${contents.skipped} unreadable` : ''})`;
    } else if (options.failureLog !== undefined) {
      source = options.source ?? 'failure log';
      await countLog(options.failureLog);
    } else {
      const path = options.db as string;
      if (path !== ':memory:' && !existsSync(path)) {
        writeError(`toolrun report: no toolrun database at ${path}\n`);
        return { exitCode: 1 };
      }
      const { openSqliteFailureLog } = await import('../../stores/sqlite/sqlite-failure-log.ts');
      const log = openSqliteFailureLog({ path });
      try {
        await countLog(log);
      } finally {
        log.close();
      }
      source = `sqlite ${path}`;
    }
  } catch (error) {
    const name = options.fromLog ?? options.db ?? options.source ?? 'the failure log';
    writeError(`toolrun report: cannot read ${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return { exitCode: 1 };
  }
  const report: FailureReport = { ...builder.build(), source };
  write(options.json ? `${JSON.stringify(report, null, 2)}\n` : formatFailureReport(report, options.top !== undefined ? { topFields: options.top } : {}));
  return { exitCode: 0, report };
}
