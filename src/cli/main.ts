import { CommanderError } from 'commander';
import { describeError, ERROR_PREFIX, EXIT_CODES, exitCodeOf } from './cli-error.ts';
import { createProgram } from './program.ts';

/**
 * Runs the `toolrun` command line once, as `bin/toolrun.js` does, and returns its exit code (the
 * process's `exitCode` is left as it was, so a test can call it in process).
 *
 * `argv` is shaped like `process.argv`: `[node, script, ...arguments]`. Every error ends here: one
 * line on stderr, `toolrun: error: <what is wrong>` (commander's own errors get the same prefix),
 * never a stack unless `TOOLRUN_DEBUG=1`; exit code 2 for the user's mistakes, 1 for runtime
 * failures (see `EXIT_CODES`). Commands that finish with a failed outcome (a replay that failed
 * again) set the exit code themselves and print their outcome on stdout.
 */
export async function runToolrun(argv: readonly string[]): Promise<number> {
  const previous = process.exitCode;
  process.exitCode = undefined;
  let code: number;
  try {
    await createProgram().parseAsync([...argv]);
    code = typeof process.exitCode === 'number' ? process.exitCode : EXIT_CODES.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // commander already printed its message (or the help / version)
      code = error.code === 'commander.helpDisplayed' || error.code === 'commander.version' ? EXIT_CODES.ok : EXIT_CODES.usage;
    } else {
      process.stderr.write(`${ERROR_PREFIX}${describeError(error)}\n`);
      if (process.env.TOOLRUN_DEBUG === '1' && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
      code = exitCodeOf(error);
    }
  } finally {
    process.exitCode = previous;
  }
  return code;
}
