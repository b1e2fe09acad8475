import { ToolrunError } from '../index.ts';

/**
 * Codes of {@link ToolrunError}s that are the user's mistake (a bad flag, an unknown id, a missing
 * or invalid config, an unsupported backend): exit code 2, one line, no stack.
 */
const USAGE_CODES: ReadonlySet<string> = new Set(['USAGE', 'NOT_FOUND', 'INVALID_CONFIG', 'INVALID_INPUT', 'UNSUPPORTED_BACKEND']);

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
export function usageError(message: string, code: 'USAGE' | 'NOT_FOUND' | 'INVALID_INPUT' | 'UNSUPPORTED_BACKEND' | 'INVALID_CONFIG' = 'USAGE'): ToolrunError {
  return new ToolrunError(code, message);
}

/** The exit code for an error that reached the top of the CLI: 2 for the user's mistakes, 1 otherwise. */
export function exitCodeOf(error: unknown): number {
  return ToolrunError.is(error) && USAGE_CODES.has(error.code) ? EXIT_CODES.usage : EXIT_CODES.failure;
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
