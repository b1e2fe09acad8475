import { ToolrunError } from '../index.ts';

/**
 * The codes of the command's usage errors, none of them a library `ToolrunErrorCode` (the
 * command's `BAD_INPUT` is a file or message on its command line; the library's `INVALID_INPUT` a
 * value handed to one of its calls):
 * - `USAGE`: a bad flag or combination of flags;
 * - `NOT_FOUND`: a file, database, schema or dead-letter entry named on the command line does not exist;
 * - `BAD_INPUT`: a file or message given is not what it should be;
 * - `UNSUPPORTED_BACKEND`: a store or queue URL this command cannot open.
 */
export type CliErrorCode = 'USAGE' | 'NOT_FOUND' | 'BAD_INPUT' | 'UNSUPPORTED_BACKEND';

/** A usage error of the `toolrun` command (exit code 2): the command line or its input is wrong. */
export class CliError extends ToolrunError<CliErrorCode> {
  constructor(code: CliErrorCode, message: string) {
    super(code, message);
    this.name = 'CliError';
  }
}

/**
 * Exit codes of the `toolrun` command, the same for every command: 0 done; 1 a runtime failure
 * (a store or port that cannot be opened, a replay that failed again); 2 the user's mistake (a bad
 * flag, an unknown id, a missing database or file, a file that is not what it should be, an invalid
 * config). Every error is one line on stderr starting with {@link ERROR_PREFIX}, never a stack.
 */
export const EXIT_CODES = Object.freeze({ ok: 0, failure: 1, usage: 2 });

/** What every error line on stderr starts with. */
export const ERROR_PREFIX = 'toolrun: error: ';

/** What every warning line on stderr starts with (a warning does not change the exit code). */
export const WARNING_PREFIX = 'toolrun: warning: ';

/** Writes one warning line on stderr (`toolrun: warning: …`). */
export function warn(message: string): void {
  process.stderr.write(`${WARNING_PREFIX}${message.replaceAll('\n', ' ')}\n`);
}

/** A usage error (exit code 2): the command line or its input is wrong. */
export function usageError(message: string, code: CliErrorCode = 'USAGE'): CliError {
  return new CliError(code, message);
}

/** The exit code for an error that reached the top of the CLI: 2 for the user's mistakes (a usage error, an invalid config), 1 otherwise. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof CliError || (ToolrunError.is(error) && error.code === 'INVALID_CONFIG')) return EXIT_CODES.usage;
  return EXIT_CODES.failure;
}

/**
 * One line describing an error for the terminal: the message of a {@link ToolrunError} (and of its
 * cause, when it adds something), or `unexpected error: …` for anything else. Never a stack (set
 * `TOOLRUN_DEBUG=1` for one).
 */
export function describeError(error: unknown): string {
  if (ToolrunError.is(error)) return error.message.replaceAll('\n', ' ');
  const message = error instanceof Error ? error.message : String(error);
  return `unexpected error: ${message.replaceAll('\n', ' ')}`;
}
