/**
 * The main job with `TOOLRUN_MODEL=ai-sdk`: the recorded gpt-4o turns served by the AI SDK's
 * `MockLanguageModelV3` through `fromAiSdkModel` (in the worker and in the `toolrun dlq drain`
 * process), against the same job on the recorded model directly. On the first conversations of
 * τ-bench with the tests' scaled-down settings: every outcome count and the summary's lines
 * (timings left out) are the same, and the tokens within what `duration_ms` in envelopes changes.
 *
 * Two runs of a concurrent workload are compared line by line, so nothing in them may depend on
 * timing (see {@link SETTINGS}).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { findSharedDataDir } from '../../examples/shared-data.ts';
import { loadAirlineRuns, loadAirlineTrajectories } from '../../examples/airline/trajectories.ts';
import type { AirlineDemoSettings } from '../../examples/airline/workload/demo-settings.ts';
import { MALFORMED_QUEUE_MESSAGES } from '../../examples/airline/workload/queue-messages.ts';
import {
  countMessageDlqByCause,
  countToolDlqByCause,
  runAirlineWorkload,
  type AirlineWorkloadReport,
} from '../../examples/airline/workload/run-airline-workload.ts';
import { formatWorkloadSummary } from '../../examples/airline/workload/summary.ts';
import { AIRLINE_TEST_SETTINGS, airlineDataPresent } from '../fixtures/airline-test-workload.ts';

const CONVERSATIONS = 12;
/**
 * The tests' settings, with what timing would otherwise decide taken out:
 * - the worker's shared breaker does not open: with conversations running concurrently, whether a
 *   run calling the tool broken for everyone gets its 401 or `circuit_open` depends on whether its
 *   call started before another run's 401 opened the breaker, and the failure report counts the
 *   401s. A conversation makes at most one such call (its run ends in the tool DLQ and parks it),
 *   so a threshold of one per conversation is never reached, and every such call gets its 401;
 * - a tool call may take 4 s (still below the service's 5 s hang): at 1 s, a call answered late on a
 *   loaded machine times out and is retried, and a write's retry is answered from the idempotency
 *   store, a line of the summary that the other run does not have.
 */
const SETTINGS: AirlineDemoSettings = {
  ...AIRLINE_TEST_SETTINGS,
  toolTimeoutMs: 4_000,
  sharedBreaker: { ...AIRLINE_TEST_SETTINGS.sharedBreaker, failureThreshold: CONVERSATIONS },
};
const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const workDir = mkdtempSync(join(tmpdir(), 'toolrun-ai-sdk-airline-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

async function runWorkload(name: string, model: Record<string, string>): Promise<AirlineWorkloadReport> {
  return runAirlineWorkload({
    runs: loadAirlineRuns(loadAirlineTrajectories().slice(0, CONVERSATIONS)),
    settings: SETTINGS,
    projectRoot,
    dbPath: join(workDir, `${name}.db`),
    configPath: join(projectRoot, 'examples', 'airline', 'toolrun.config.ts'),
    env: { ...process.env, TOOLRUN_MODEL: undefined, TOOLRUN_OPENAI_MODEL: undefined, TOOLRUN_DATA_DIR: findSharedDataDir(), ...model },
    workerEnv: { TOOLRUN_AIRLINE_BREAKER_COOL_DOWN_MS: '600000' },
    drainEnv: { TOOLRUN_AIRLINE_BREAKER_COOL_DOWN_MS: '1' },
    malformedMessages: MALFORMED_QUEUE_MESSAGES,
    log: () => undefined,
    quiet: true,
  });
}

/** Whether a run ended on the tool broken for everyone before or after the breaker opened depends on timing: one outcome. */
const BROKEN = ['misconfiguration · auth 401', 'circuit-open · circuit_open', 'AUTH_EXPIRED', 'CIRCUIT_OPEN'];
function merged(counts: Record<string, number>): Record<string, number> {
  const result: Record<string, number> = {};
  for (const [key, count] of Object.entries(counts)) {
    const target = BROKEN.includes(key) ? 'broken for everyone' : key;
    result[target] = (result[target] ?? 0) + count;
  }
  return result;
}

function outcomes(report: AirlineWorkloadReport) {
  const phase = report.faultPhase.counts;
  return {
    faultPhase: phase.byStatus,
    modelCalls: phase.modelCalls,
    modelCallsReported: phase.modelCallsReported,
    toolDlq: merged(countToolDlqByCause(report.toolDlqBeforeDrain)),
    messageDlq: countMessageDlqByCause(report.messageDlq),
    toolCalls: phase.toolCalls.calls,
    failedByCode: merged(phase.toolCalls.failedByCode),
    drained: report.resumed.map((run) => [run.runId, run.status, run.steps, run.stepsMatchRecording]).sort(),
    afterDrain: report.resumePhase.counts.byStatus,
    runsByFinalStatus: report.runsByFinalStatus,
    writesApplied: report.sideEffects.appliedByTool,
  };
}

/** The summary without what timing changes (durations, waits, percentiles; the tokens, as envelopes carry `duration_ms`) and the model's own line. */
function stableSummary(report: AirlineWorkloadReport): string[] {
  return formatWorkloadSummary(report)
    .filter(
      (line) =>
        !/\d(\.\d+)? ?(ms|s)\b|wall time|tokens spent|model {2}|misconfiguration|circuit|AUTH_EXPIRED|CIRCUIT_OPEN|broken for everyone|opened/.test(line),
    )
    .map((line) => line.replace(/(recorded|ai-sdk)\.db/g, '<store>.db').replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>'));
}

describe.skipIf(!airlineDataPresent)(`TOOLRUN_MODEL=ai-sdk: the main job over an AI SDK model (first ${CONVERSATIONS} conversations)`, () => {
  it("gives the recorded model's outcomes, tokens and summary, in the worker and in the drain", { timeout: 240_000 }, async () => {
    const direct = await runWorkload('recorded', {});
    const viaAiSdk = await runWorkload('ai-sdk', { TOOLRUN_MODEL: 'ai-sdk' });
    expect(viaAiSdk.modelDescription).toContain('fromAiSdkModel');
    expect(viaAiSdk.drain.exitCode).toBe(0);
    expect(viaAiSdk.faultPhase.counts.modelCalls).toBeGreaterThan(50);
    expect(outcomes(viaAiSdk)).toEqual(outcomes(direct));
    expect(stableSummary(viaAiSdk)).toEqual(stableSummary(direct));
    // The envelopes in the conversations carry `duration_ms`, so token estimates differ by a few digits.
    const tokens = (report: AirlineWorkloadReport) => report.faultPhase.counts.tokensOnFailedRuns;
    expect(Math.abs(tokens(viaAiSdk).input - tokens(direct).input)).toBeLessThanOrEqual(tokens(direct).input * 0.005);
    expect(tokens(viaAiSdk).output).toBe(tokens(direct).output);
    expect(viaAiSdk.sideEffects.ok).toBe(true);
  });
});
