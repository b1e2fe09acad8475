import { InvalidArgumentError, Option, type Command } from 'commander';

/** A commander parser for an integer ≥ `minimum` (1 by default) and, when `maximum` is given, ≤ `maximum`. */
export function integerOption(minimum = 1, maximum?: number): (value: string) => number {
  const expected = `expected an integer ≥ ${minimum}${maximum === undefined ? '' : ` and ≤ ${maximum}`}`;
  return (value: string) => {
    const parsed = Number(value);
    if (!/^\s*-?\d+\s*$/.test(value) || !Number.isSafeInteger(parsed) || parsed < minimum || (maximum !== undefined && parsed > maximum)) {
      throw new InvalidArgumentError(expected);
    }
    return parsed;
  };
}

/**
 * A commander parser for a TCP port: an integer from `minimum` (0 by default: a free port) to 65535.
 * Anything else is a usage error (exit code 2) naming the range, never Node's own listen error.
 */
export function portOption(minimum = 0): (value: string) => number {
  return (value: string) => {
    const parsed = Number(value);
    if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(parsed) || parsed < minimum || parsed > 65_535) {
      throw new InvalidArgumentError(`expected an integer ≥ ${minimum} and ≤ 65535 (a TCP port${minimum === 0 ? '; 0: a free one' : ''})`);
    }
    return parsed;
  };
}

/** The options every command that opens the stores shares. */
export interface StoreOptions {
  db?: string;
  store?: string;
  /** `--queue URL`: the run queue, when it is not the stores' own. */
  queue?: string;
}

/** What `--store` takes, for help texts. */
export const STORE_URL_HELP = 'stores URL: sqlite:PATH, postgres://user@host:5432/db?schema=toolrun, or memory: (instead of --db)';

/** What `--queue` takes, for help texts: on every command it is a run-queue URL. */
export const QUEUE_URL_HELP = "run-queue URL when it is not the stores' own: sqlite:PATH, postgres://… or memory:";

/**
 * Adds `--db FILE` and `--store URL`, and `--queue URL` (a run-queue URL: the same meaning on every
 * command) when the command reads or writes the run queue.
 */
export function addStoreOptions(command: Command, options: { queueUrl: boolean }): Command {
  command.option('--db <file>', 'SQLite database file (default: $TOOLRUN_DB or .toolrun/toolrun.db)').option('--store <url>', STORE_URL_HELP);
  if (options.queueUrl) command.option('--queue <url>', QUEUE_URL_HELP);
  return command;
}

/**
 * Adds `--init` to a command that writes (`worker`, `enqueue`): without it, a `--db`, `--store` or
 * `$TOOLRUN_DB` that names no existing database is an error; only the default `.toolrun/toolrun.db`
 * is created on first use.
 */
export function addInitOption(command: Command): Command {
  return command.option(
    '--init',
    'create the database (SQLite file, PostgreSQL schema) if it does not exist; only the default .toolrun/toolrun.db is created without it',
  );
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
