import { InvalidArgumentError, Option, type Command } from 'commander';

/** A commander parser for an integer ≥ `minimum` (1 by default). */
export function integerOption(minimum = 1): (value: string) => number {
  return (value: string) => {
    const parsed = Number(value);
    if (!/^\s*-?\d+\s*$/.test(value) || !Number.isSafeInteger(parsed) || parsed < minimum) {
      throw new InvalidArgumentError(`expected an integer ≥ ${minimum}`);
    }
    return parsed;
  };
}

/** The options every command that opens the stores shares. */
export interface StoreOptions {
  db?: string;
  store?: string;
  queue?: string;
}

/** Adds `--db FILE` and `--store URL` (and `--queue URL` unless the command uses `--queue` itself). */
export function addStoreOptions(command: Command, options: { queueUrl: boolean }): Command {
  command
    .option('--db <file>', 'SQLite database file (default: $TOOLRUN_DB or .toolrun/toolrun.db)')
    .option('--store <url>', 'stores URL: sqlite:PATH or memory: (instead of --db)');
  if (options.queueUrl) command.option('--queue <url>', "run-queue URL when it is not the stores' own: sqlite:PATH or memory:");
  return command;
}

/** Levels `--log-level` accepts (pino's). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;

/** The options of commands that run agents and can log their tool calls. */
export interface LogOptions {
  logLevel?: (typeof LOG_LEVELS)[number] | undefined;
  logFile?: string | undefined;
}

/**
 * Adds `--log-level LEVEL` and `--log-file FILE`: one pino line per tool call (toolrun/otel's
 * logger), to stderr or appended to the file. Off unless one of them is given; `--log-file` alone
 * logs at `info` (failures, recoveries, breaker openings; successes are `debug`).
 */
export function addLogOptions(command: Command): Command {
  command
    .addOption(
      new Option('--log-level <level>', 'log one JSON line per tool call at this level and above, to stderr (or --log-file); default: no log').choices(
        LOG_LEVELS,
      ),
    )
    .option('--log-file <file>', 'append the log lines to this file instead of stderr (level: --log-level, else info); toolrun report --from-log reads it');
  return command;
}
