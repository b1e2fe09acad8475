/**
 * `toolrun report` on the workload's SQLite file, run the way a user does (its own process): which
 * tools and argument fields failed most, and how, from the failure log the worker and the drain
 * wrote.
 */
import { relative } from 'node:path';
import type { FailureReport } from '../../../src/observability/index.ts';
import { spawnToolrun } from './toolrun-cli.ts';

/** Options of {@link runFailureReportLikeAUser}. */
export interface FailureReportOptions {
  projectRoot: string;
  dbPath: string;
  env: Record<string, string | undefined>;
  /** `--json`: the report as JSON (parsed into `report`). @defaultValue false (text) */
  json?: boolean;
  /** `--top N`: fields listed first in the text. @defaultValue the command's (10) */
  top?: number;
}

/** How the report went: the command as typed, its exit code, its output and, with `json`, the parsed report. */
export interface FailureReportOutcome {
  command: string;
  exitCode: number;
  /** stdout (the report). */
  stdout: string;
  stderr: string;
  /** With `json` and exit code 0. */
  report?: FailureReport;
  durationMs: number;
}

/** The `toolrun` arguments of the report (the path relative to the project root, as a user types it). */
export function failureReportArguments(options: Pick<FailureReportOptions, 'projectRoot' | 'dbPath' | 'json' | 'top'>): string[] {
  return [
    'report',
    '--db',
    relative(options.projectRoot, options.dbPath) || options.dbPath,
    ...(options.top !== undefined ? ['--top', String(options.top)] : []),
    ...(options.json ? ['--json'] : []),
  ];
}

/**
 * Runs `toolrun report --db <file> [--top N] [--json]` in `projectRoot` and waits for it.
 *
 * @returns the outcome; a non-zero exit code is data, not a throw.
 * @throws when the child process cannot be started, or its `--json` output is not JSON.
 */
export async function runFailureReportLikeAUser(options: FailureReportOptions): Promise<FailureReportOutcome> {
  const startedAt = Date.now();
  const args = failureReportArguments(options);
  const { exitCode, stdout, stderr } = await spawnToolrun(args, { projectRoot: options.projectRoot, env: options.env, timeoutMs: 60_000 });
  return {
    command: `toolrun ${args.join(' ')}`,
    exitCode,
    stdout,
    stderr,
    ...(options.json && exitCode === 0 ? { report: JSON.parse(stdout) as FailureReport } : {}),
    durationMs: Date.now() - startedAt,
  };
}
