/**
 * Drains the tool DLQ the way a user does: by running `toolrun dlq drain --dlq tool` in its own
 * process, against the same SQLite file and the airline config module.
 */
import { relative } from 'node:path';
import { spawnToolrun } from './toolrun-cli.ts';

/** How the drain went: the command shown to the user, its exit code and its output. */
export interface ToolDlqDrainOutcome {
  /** The command as a user would type it. */
  command: string;
  exitCode: number;
  /** What the command printed (stdout and stderr, in order of arrival). */
  output: string;
  durationMs: number;
}

/** Options of {@link drainToolDlqLikeAUser}. */
export interface DrainToolDlqOptions {
  projectRoot: string;
  dbPath: string;
  /** The config module, e.g. `examples/airline/toolrun.config.ts`. */
  configPath: string;
  /** The child's environment (the airline service URL, the data folder…). */
  env: Record<string, string | undefined>;
  /** The child is killed (by its pid) after this long. @defaultValue 120_000 */
  timeoutMs?: number;
}

/** The `toolrun` arguments of the drain (paths relative to the project root, as a user types them). */
export function toolDlqDrainArguments(options: Pick<DrainToolDlqOptions, 'projectRoot' | 'dbPath' | 'configPath'>): string[] {
  const dbArgument = relative(options.projectRoot, options.dbPath) || options.dbPath;
  const configArgument = relative(options.projectRoot, options.configPath) || options.configPath;
  return ['dlq', 'drain', '--dlq', 'tool', '--db', dbArgument, '--config', configArgument, '--concurrency', '1'];
}

/**
 * Drains the tool DLQ in `dbPath` with `toolrun dlq drain --dlq tool --db <file> --config <module>
 * --concurrency 1`, run as `process.execPath --import tsx src/cli/index.ts …` in `projectRoot`.
 * One entry at a time, so that the shared breaker's half-open probe is not raced by other replays
 * of the same tool (they would be turned away while the probe is in flight, and stay in the DLQ).
 *
 * @returns the outcome; a non-zero exit code is data, not a throw.
 * @throws when the child process cannot be started at all.
 */
export async function drainToolDlqLikeAUser(options: DrainToolDlqOptions): Promise<ToolDlqDrainOutcome> {
  const startedAt = Date.now();
  const args = toolDlqDrainArguments(options);
  const { exitCode, output } = await spawnToolrun(args, {
    projectRoot: options.projectRoot,
    env: options.env,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  });
  return { command: `toolrun ${args.join(' ')}`, exitCode, output, durationMs: Date.now() - startedAt };
}
