import { existsSync } from 'node:fs';
import type { FailurePatternLibrary } from '../../core/failure-patterns.ts';
import type { FailureLog, FailureLogRecord } from '../../ground/ports/failure-log.ts';
import type { Redactor } from '../../core/redact.ts';
import { buildFailureReport, type FailureReport } from './build-failure-report.ts';
import { formatFailureReport } from './format-failure-report.ts';
import { readFailureLogFile } from './read-failure-log-file.ts';

/** Options of {@link runReportCommand} (`toolrun report [--json] [--db FILE] [--from-log FILE]`). */
export interface ReportCommandOptions {
  /** The SQLite stores file whose failure log to read. Exactly one of `db` and `fromLog`. */
  db?: string;
  /** A pino log file (NDJSON) written by `createToolCallLogger`. */
  fromLog?: string;
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

/** Reads a failure log page by page, oldest first. */
export async function readAllFailures(log: FailureLog, pageSize = 1000): Promise<FailureLogRecord[]> {
  const records: FailureLogRecord[] = [];
  for (let offset = 0; ; offset += pageSize) {
    const page = await log.list({ limit: pageSize, offset });
    records.push(...page);
    if (page.length < pageSize) return records;
  }
}

/**
 * `toolrun report`: reads the recorded failures from the embedded store (`db`) or from a log file
 * (`fromLog`) and prints, per tool and per argument field, how often and how it failed, the
 * failure-type distribution, mean recovery rounds, breaker trips and the fields whose errors
 * dominate with a hint to fix their descriptions (SPEC.md §4). Never throws: problems are the exit
 * code plus a line on `writeError`.
 */
export async function runReportCommand(options: ReportCommandOptions): Promise<ReportCommandResult> {
  const write = options.write ?? ((text: string) => void process.stdout.write(text));
  const writeError = options.writeError ?? ((text: string) => void process.stderr.write(text));
  if ((options.db === undefined) === (options.fromLog === undefined)) {
    writeError('toolrun report: give exactly one source: --db <file> or --from-log <file>\n');
    return { exitCode: 2 };
  }
  let records: FailureLogRecord[];
  let source: string;
  try {
    if (options.fromLog !== undefined) {
      const contents = await readFailureLogFile(options.fromLog);
      records = contents.records;
      source = `log ${options.fromLog} (${contents.lines} lines${contents.skipped > 0 ? `, ${contents.skipped} unreadable` : ''})`;
    } else {
      const path = options.db as string;
      if (path !== ':memory:' && !existsSync(path)) {
        writeError(`toolrun report: no toolrun database at ${path}\n`);
        return { exitCode: 1 };
      }
      const { openSqliteFailureLog } = await import('../../stores/sqlite/sqlite-failure-log.ts');
      const log = openSqliteFailureLog({ path });
      try {
        records = await readAllFailures(log);
      } finally {
        log.close();
      }
      source = `sqlite ${path}`;
    }
  } catch (error) {
    writeError(`toolrun report: cannot read ${options.fromLog ?? options.db}: ${error instanceof Error ? error.message : String(error)}\n`);
    return { exitCode: 1 };
  }
  const report = buildFailureReport(records, {
    source,
    ...(options.patterns ? { patterns: options.patterns } : {}),
    ...(options.redactor ? { redactor: options.redactor } : {}),
  });
  write(options.json ? `${JSON.stringify(report, null, 2)}\n` : formatFailureReport(report, options.top !== undefined ? { topFields: options.top } : {}));
  return { exitCode: 0, report };
}
