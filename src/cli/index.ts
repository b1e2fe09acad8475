/**
 * The `toolrun` command (bin/toolrun.js runs the built copy; in development:
 * `node --import tsx src/cli/index.ts …`). It uses the public API only, like any user.
 *
 * Exit codes: 0 done; 1 a runtime failure (a store that cannot be opened, a replay that failed
 * again, a store error during a drain); 2 a usage error (unknown option or id, bad JSON, missing
 * or invalid config, unsupported backend). Errors are one line; `TOOLRUN_DEBUG=1` adds the stack.
 */
import { CommanderError } from 'commander';
import { describeError, EXIT_CODES, exitCodeOf } from './cli-error.ts';
import { createProgram } from './program.ts';

async function main(argv: readonly string[]): Promise<void> {
  try {
    await createProgram().parseAsync([...argv]);
  } catch (error) {
    if (error instanceof CommanderError) {
      // commander already printed its message (or the help / version)
      process.exitCode = error.code === 'commander.helpDisplayed' || error.code === 'commander.version' ? EXIT_CODES.ok : EXIT_CODES.usage;
      return;
    }
    process.stderr.write(`toolrun: error: ${describeError(error)}\n`);
    if (process.env.TOOLRUN_DEBUG === '1' && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
    process.exitCode = exitCodeOf(error);
  }
}

await main(process.argv);
