import { InvalidArgumentError, type Command } from 'commander';

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
  if (options.queueUrl) command.option('--queue <url>', 'run-queue URL when it is not the stores\' own: sqlite:PATH or memory:');
  return command;
}
