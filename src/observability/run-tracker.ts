import type { ToolCallRecord } from '../core/tool-call-record.ts';
import { metricToolName } from './failure-record.ts';

/** The recovery a successful call completes (see {@link RunTracker.observeCall}). */
export interface RecoveryEpisode {
  /** The tool whose failure opened the episode (`unknown` for a name the model invented). */
  toolName: string;
  failedAtStep: number;
  recoveredAtStep: number;
  rounds: number;
  failures: number;
}

/**
 * What `createObservability` remembers per run in flight: its session, current step and open
 * failure episode. In memory, bounded (the least recently started runs are forgotten first).
 */
export interface RunTracker {
  start(info: { runId: string; sessionId: string; stepIndex: number }): void;
  step(runId: string, stepIndex: number): void;
  /** Forgets the run; returns its session id. */
  end(runId: string): string | undefined;
  sessionOf(runId: string): string | undefined;
  /**
   * Places one finished call in its run (call once per record): its step, and the recovery it
   * completes — a success at a later step than the first failure since the run's last success.
   * A success in the same step as the failure (a parallel call) does not end the episode.
   */
  observeCall(record: ToolCallRecord): { stepIndex: number | null; recovery?: RecoveryEpisode };
}

interface TrackedRun {
  sessionId: string;
  stepIndex: number;
  episode: { toolName: string; failedAtStep: number; failures: number } | undefined;
}

/** What a call outside any tracked run yields (shared, frozen). */
const NOT_IN_A_RUN: { stepIndex: null } = Object.freeze({ stepIndex: null });

/** Creates a {@link RunTracker} remembering at most `maxRuns` runs. @defaultValue 10_000 */
export function createRunTracker(maxRuns = 10_000): RunTracker {
  const runs = new Map<string, TrackedRun>();
  return {
    start({ runId, sessionId, stepIndex }) {
      runs.delete(runId);
      runs.set(runId, { sessionId, stepIndex, episode: undefined });
      if (runs.size > maxRuns) {
        const oldest = runs.keys().next().value;
        if (oldest !== undefined) runs.delete(oldest);
      }
    },
    step(runId, stepIndex) {
      const run = runs.get(runId);
      if (run) run.stepIndex = stepIndex;
    },
    end(runId) {
      const run = runs.get(runId);
      runs.delete(runId);
      return run?.sessionId;
    },
    sessionOf: (runId) => runs.get(runId)?.sessionId,
    observeCall(record) {
      const run = record.runId === undefined ? undefined : runs.get(record.runId);
      if (!run) return NOT_IN_A_RUN;
      const stepIndex = run.stepIndex;
      if (record.result.status === 'failed') {
        if (run.episode) run.episode.failures += 1;
        else run.episode = { toolName: metricToolName(record), failedAtStep: stepIndex, failures: 1 };
        return { stepIndex };
      }
      const episode = run.episode;
      if (!episode || stepIndex <= episode.failedAtStep) return { stepIndex };
      run.episode = undefined;
      return {
        stepIndex,
        recovery: {
          toolName: episode.toolName,
          failedAtStep: episode.failedAtStep,
          recoveredAtStep: stepIndex,
          rounds: stepIndex - episode.failedAtStep,
          failures: episode.failures,
        },
      };
    },
  };
}
