import type { Command } from 'commander';
import { usageError } from '../cli-error.ts';
import { integerOption } from '../parse-options.ts';
import { DEFAULT_DATABASE_PATH } from '../resolve-stores.ts';

interface ReportOptions {
  db?: string;
  fromLog?: string;
  top: number;
  json?: boolean;
}

/**
 * `toolrun report [--db FILE | --from-log FILE] [--top N] [--json]`: which tools and argument
 * fields fail most, and how, from the recorded failures — the failure log of a SQLite stores file
 * (written by `toolrun worker` and `toolrun dlq replay|drain`), or a pino log file written with
 * `--log-file`. Without a source: `$TOOLRUN_DB`, else `.toolrun/toolrun.db`. Exit codes: 0 printed;
 * 1 the source cannot be read (a missing file); 2 both sources given.
 */
export function addReportCommand(program: Command): void {
  program
    .command('report')
    .description('which tools and argument fields fail most, and how (from the recorded failures)')
    .option('--db <file>', 'SQLite database file (default: $TOOLRUN_DB or .toolrun/toolrun.db)')
    .option('--from-log <file>', 'read a toolrun pino log file (NDJSON, toolrun worker --log-file) instead of the database')
    .option('--top <n>', 'fields listed first', integerOption(1), 10)
    .option('--json', 'print the report as JSON')
    .action(async (options: ReportOptions) => {
      if (options.db !== undefined && options.fromLog !== undefined) throw usageError('pass either --db FILE or --from-log FILE, not both');
      const { runReportCommand } = await import('../../observability/report/run-report-command.ts');
      const envPath = process.env.TOOLRUN_DB !== undefined && process.env.TOOLRUN_DB !== '' ? process.env.TOOLRUN_DB : undefined;
      const db = options.db ?? (options.fromLog === undefined ? (envPath ?? DEFAULT_DATABASE_PATH) : undefined);
      const { exitCode } = await runReportCommand({
        ...(db !== undefined ? { db } : {}),
        ...(options.fromLog !== undefined ? { fromLog: options.fromLog } : {}),
        ...(options.json ? { json: true } : {}),
        top: options.top,
      });
      process.exitCode = exitCode;
    });
}
