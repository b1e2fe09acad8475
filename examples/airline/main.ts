/**
 * `npm start`: toolrun's main job on the τ-bench airline workload, end to end, offline.
 *
 * Finds (or downloads) the data, starts the airline HTTP service with faults (seed 42), enqueues
 * every run of the 200 recorded conversations and a few malformed messages into a fresh SQLite
 * store (`.toolrun/airline-demo.db`), runs the worker with the recorded gpt-4o model, prints a
 * summary, clears the faults, runs `toolrun dlq drain`, lets the parked conversations finish and
 * checks that no write was applied twice, then runs `toolrun report` on the store (what failed most,
 * from the failure log the worker and the drain wrote; the worker's log lines go to
 * `.toolrun/airline-demo.log`, not the console). Exit code 0 when every check holds, 1 otherwise or
 * on an unexpected error, 2 when the data is missing.
 *
 * Environment (all optional): `TOOLRUN_DATA_DIR`, `TOOLRUN_CACHE_DIR` (data); `TOOLRUN_AIRLINE_SEED`,
 * `TOOLRUN_AIRLINE_CONVERSATIONS` (how many conversations, from the first); `TOOLRUN_OPENAI_MODEL`,
 * `TOOLRUN_OPENAI_BASE_URL`, `TOOLRUN_OPENAI_API_KEY` / `OPENAI_API_KEY` (a real model). See
 * docs/main-job.md.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { locateTauBenchData } from './fetch-tau-bench.ts';
import { loadAirlineRuns, loadAirlineTrajectories, type AirlineRun } from './trajectories.ts';
import { AIRLINE_DEMO_SETTINGS, describeDemoSettings, type AirlineDemoSettings } from './workload/demo-settings.ts';
import { MALFORMED_QUEUE_MESSAGES } from './workload/queue-messages.ts';
import { runAirlineWorkload, type AirlineWorkloadReport } from './workload/run-airline-workload.ts';
import { formatWorkloadSummary } from './workload/summary.ts';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

function readCount(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number ≥ 1, received "${text}"`);
  return value;
}

/** The conditions under which `npm start` succeeds; each failed one is a line of the output. */
function failedChecks(report: AirlineWorkloadReport): string[] {
  const failed: string[] = [];
  const malformed = MALFORMED_QUEUE_MESSAGES.length;
  if (report.messageDlqAtEnd !== malformed) failed.push(`the message DLQ holds ${report.messageDlqAtEnd} entries, not the ${malformed} malformed messages`);
  if (report.modelCallsOutsideRuns.length > 0) failed.push(`the model was called for messages that are no run: ${report.modelCallsOutsideRuns.join(', ')}`);
  if (report.faultPhase.counts.modelCalls !== report.faultPhase.counts.modelCallsReported) failed.push('the model made calls that no run reported');
  if (report.drain.exitCode !== 0) failed.push(`the drain exited with code ${report.drain.exitCode}`);
  if (report.queueLeft !== 0) failed.push(`${report.queueLeft} messages were left in the queue`);
  if (!report.sideEffects.ok) failed.push('a side effect was applied twice (see above)');
  if (report.faultPhase.storeErrors.length + report.resumePhase.storeErrors.length > 0)
    failed.push(`store errors: ${[...report.faultPhase.storeErrors, ...report.resumePhase.storeErrors].join('; ')}`);
  if (report.failureLogAppendErrors > 0) failed.push(`${report.failureLogAppendErrors} failure records could not be written to the failure log`);
  if (report.failureReport.exitCode !== 0) failed.push(`the failure report exited with code ${report.failureReport.exitCode}`);
  return failed;
}

async function main(): Promise<number> {
  const log = (line: string) => console.log(line);
  const location = await locateTauBenchData({ log });
  if (!location.ok) {
    console.error(location.message);
    return 2;
  }
  // The loaders (and the drain's process) read the data folder from here.
  process.env.TOOLRUN_DATA_DIR = location.dataDir;

  const settings: AirlineDemoSettings = { ...AIRLINE_DEMO_SETTINGS, seed: readCount('TOOLRUN_AIRLINE_SEED', AIRLINE_DEMO_SETTINGS.seed) };
  const trajectories = loadAirlineTrajectories();
  const conversationCount = Math.min(trajectories.length, readCount('TOOLRUN_AIRLINE_CONVERSATIONS', trajectories.length));
  const runs: AirlineRun[] = loadAirlineRuns(trajectories.slice(0, conversationCount));
  const dbPath = join(projectRoot, '.toolrun', 'airline-demo.db');
  const logFile = join(projectRoot, '.toolrun', 'airline-demo.log');

  log('toolrun · the τ-bench airline workload, end to end');
  log(
    `data      ${location.dataDir} (${location.source}${location.downloaded.length > 0 ? `, downloaded ${location.downloaded.length} files` : ''}; SHA-256 ${location.hashMismatches.length === 0 ? 'verified' : `DIFFERS for ${location.hashMismatches.join(', ')}`})`,
  );
  log(`work      ${conversationCount} conversations → ${runs.length} runs (one queue message each) + ${MALFORMED_QUEUE_MESSAGES.length} malformed messages`);
  for (const line of describeDemoSettings(settings)) log(line);
  log(`store     ${dbPath} (SQLite, fresh; its failure log feeds toolrun report)`);
  log(`log       ${logFile} (the worker's pino lines: failed calls, recoveries, breaker openings)`);

  const report = await runAirlineWorkload({
    runs,
    settings,
    projectRoot,
    dbPath,
    configPath: join(projectRoot, 'examples', 'airline', 'toolrun.config.ts'),
    env: { ...process.env },
    malformedMessages: MALFORMED_QUEUE_MESSAGES,
    logFile,
    log,
  });
  for (const line of formatWorkloadSummary(report)) log(line);

  const failed = failedChecks(report);
  log('');
  if (failed.length === 0) {
    log('✓ all checks hold');
    return 0;
  }
  for (const line of failed) log(`✗ ${line}`);
  return 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error('\ntoolrun demo: unexpected error');
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exitCode = 1;
  },
);
