import type { ResumableEntry } from '../../ground/dead-letter-entries.ts';
import { systemClock, type Clock } from '../../ground/ports/clock.ts';
import type { Stores } from '../../ground/ports/stores.ts';
import { claimRun, newClaimHolder } from '../../worker/run-claim.ts';
import type { DbosControl, DbosStepInfo, DbosWorkflowStatus } from './dbos-api.ts';
import type { DbosRunFailure, DbosRunResult } from './dbos-run-types.ts';
import { DEAD_LETTER_STEP_NAME, modelStepName, replayNumberOf, replayWorkflowId, toolStepName } from './step-names.ts';

/** Options of {@link replayDbosRun}. */
export interface DbosReplayOptions {
  /** The `DBOS` class in a launched process, or a `DBOSClient` anywhere else. */
  control: DbosControl;
  /** toolrun's stores the run was dead-lettered into (its claim is taken there). */
  stores: Stores;
  /** The replay's claim on the run (`run:<runId>`), renewed while it waits for the fork. @defaultValue 300_000 */
  claimLeaseMs?: number;
  /**
   * How long the replay waits for the fork's result, in ms. Past it the replay reports
   * `in_progress` (the fork goes on in the app's DBOS executors, and the next replay of the entry
   * reports its outcome), so `toolrun dlq replay` never hangs when no executor runs.
   * @defaultValue 600_000
   */
  waitMs?: number;
  /** The clock of the claim's renewals. @defaultValue the system clock */
  clock?: Clock;
}

/**
 * How a DBOS replay ended: the status of toolrun's replays (`completed`, `tool_failed` again,
 * `already_completed`, `in_progress`, `expired`, `invalid_entry`, …), the model calls the replay
 * made (the remaining steps only) and the workflow it ran.
 */
export interface DbosReplayOutcome {
  /** The replayed run's status, or why nothing ran. */
  status: DbosRunResult['status'] | 'already_completed' | 'in_progress' | 'expired' | 'invalid_entry';
  /** Model calls the replay made itself (the steps at or after the fork point). */
  modelCalls: number;
  /** The run's final answer, when it has one. */
  text: string | null;
  /** The replay's workflow (`<runId>:replay:<n>`), when one ran. */
  workflowId?: string;
  /** For `in_progress`: who holds the run. */
  holder?: string;
  /** What happened, in a sentence (the CLI and the dashboard show it). */
  message: string;
}

/** The run's workflows (its own and its replays'), the latest replay last. */
async function workflowsOf(control: DbosControl, runId: string): Promise<DbosWorkflowStatus[]> {
  const replays = await control.listWorkflows({ workflow_id_prefix: `${runId}:replay:`, loadOutput: true });
  const own = await control.listWorkflows({ workflowIDs: [runId], loadOutput: true });
  const numbered = [...own, ...replays].filter((workflow) => replayNumberOf(runId, workflow.workflowID) !== undefined);
  return numbered.sort((a, b) => replayNumberOf(runId, a.workflowID)! - replayNumberOf(runId, b.workflowID)!);
}

/**
 * The function id a replay forks from: the failed call's first step (the failed model call's, for a
 * model failure); for a call the loop refused (its budget spent, its session breaker open), the
 * step that dead-lettered the run — the fork runs that call with a fresh budget and session.
 */
export function forkStepOf(steps: readonly DbosStepInfo[], failure: DbosRunFailure): number | undefined {
  const name = failure.kind === 'model' ? modelStepName(failure.stepIndex) : toolStepName(failure.stepIndex, failure.callIndex ?? 0);
  const first = steps.find((step) => step.name === name);
  if (first) return first.functionID;
  return steps.find((step) => step.name === DEAD_LETTER_STEP_NAME)?.functionID;
}

const isDuplicateKey = (error: unknown) => typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';

/**
 * Replays a dead-lettered DBOS run with DBOS's own fork: the run's latest workflow (its own, or
 * its last replay's) is forked as `<runId>:replay:<n+1>` from the failed step, so the steps before
 * it are copied — the model is not called for them and their tools do not run again — and the
 * failed call runs again, with a fresh retry budget and session, then the model for the remaining
 * steps. Calls of the failed step that had succeeded are read from toolrun's journal, not run.
 * A run DBOS gave up on (`MAX_RECOVERY_ATTEMPTS_EXCEEDED`) is resumed instead (`resumeWorkflow`); one
 * whose workflow threw (`ERROR`) is forked from the step that threw.
 *
 * Under the run's claim (`run:<runId>`): a second replay at once gets `in_progress`; a replay of a
 * run a replay completed gets `already_completed`; the fork's id is fixed by the workflows before
 * it, so two replays racing without the claim fork once (DBOS refuses the second id). Never throws
 * for a run's state; rejects when the stores or DBOS cannot be reached.
 */
export async function replayDbosRun(entry: ResumableEntry, options: DbosReplayOptions): Promise<DbosReplayOutcome> {
  const none = { modelCalls: 0, text: null };
  if (typeof entry?.runId !== 'string') return { status: 'invalid_entry', ...none, message: 'the entry names no run' };
  const { control } = options;
  const runId = entry.runId;
  const claimed = await claimRun(options.stores.journal, runId, {
    holder: newClaimHolder('dbos-replay'),
    leaseMs: options.claimLeaseMs ?? 300_000,
    clock: options.clock ?? systemClock,
  });
  if (!claimed.ok)
    return { status: 'in_progress', ...none, ...(claimed.holder !== undefined ? { holder: claimed.holder } : {}), message: `run ${runId} is being worked on` };
  try {
    const workflows = await workflowsOf(control, runId);
    const latest = workflows[workflows.length - 1];
    if (!latest) return { status: 'expired', ...none, message: `DBOS holds no workflow of run ${runId} (deleted, or past its retention)` };
    const context: ForkContext = { control, runId, waitMs: options.waitMs ?? 600_000 };
    if (latest.status === 'MAX_RECOVERY_ATTEMPTS_EXCEEDED') {
      await control.resumeWorkflow(latest.workflowID);
      const result = await resultWithin(context, latest.workflowID);
      if (!result) return stillRunning(latest.workflowID);
      return {
        status: result.status,
        modelCalls: result.modelCalls,
        text: result.text,
        workflowId: latest.workflowID,
        message: `resumed ${latest.workflowID}`,
      };
    }
    if (latest.status === 'ERROR') return await forkFromError(context, latest);
    if (latest.status !== 'SUCCESS')
      return { status: 'in_progress', ...none, workflowId: latest.workflowID, message: `workflow ${latest.workflowID} is ${latest.status}` };
    const output = latest.output as DbosRunResult | undefined;
    if (output?.status === 'completed')
      return { status: 'already_completed', ...none, text: output.text, message: `run ${runId} completed in ${latest.workflowID}` };
    if (!output?.failure)
      return { status: 'invalid_entry', ...none, message: `workflow ${latest.workflowID} ended ${output?.status ?? 'without a result'}, not at a failed step` };
    return await forkFromFailure(context, latest, output.failure);
  } finally {
    await claimed.claim.release();
  }
}

/** What the forks of one replay share. */
interface ForkContext {
  control: DbosControl;
  runId: string;
  waitMs: number;
}

/** The workflow's result, or `undefined` when it has none within `waitMs`. */
async function resultWithin(context: ForkContext, workflowId: string): Promise<DbosRunResult | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), context.waitMs);
  });
  try {
    return await Promise.race([context.control.retrieveWorkflow<DbosRunResult>(workflowId).getResult(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The outcome of a replay whose workflow is still running when the replay stops waiting. */
function stillRunning(workflowId: string): DbosReplayOutcome {
  return { status: 'in_progress', modelCalls: 0, text: null, workflowId, message: `${workflowId} is still running; replay the entry again for its outcome` };
}

/** Forks a workflow that threw from the step that threw (its last step when none did: the loop threw between steps). */
async function forkFromError(context: ForkContext, latest: DbosWorkflowStatus): Promise<DbosReplayOutcome> {
  const steps = (await context.control.listWorkflowSteps(latest.workflowID)) ?? [];
  const failed = steps.find((step) => step.error !== null && step.error !== undefined) ?? steps[steps.length - 1];
  return forkAt(context, latest, failed?.functionID ?? 0);
}

/** Forks `latest` from its failed step and waits for the fork's result. */
async function forkFromFailure(context: ForkContext, latest: DbosWorkflowStatus, failure: DbosRunFailure): Promise<DbosReplayOutcome> {
  const steps = (await context.control.listWorkflowSteps(latest.workflowID)) ?? [];
  const startStep = forkStepOf(steps, failure);
  if (startStep === undefined)
    return { status: 'invalid_entry', modelCalls: 0, text: null, message: `workflow ${latest.workflowID} has no step of its failure` };
  return forkAt(context, latest, startStep);
}

/** Forks `latest` as the run's next replay from `startStep` and waits for the fork's result. */
async function forkAt(context: ForkContext, latest: DbosWorkflowStatus, startStep: number): Promise<DbosReplayOutcome> {
  const { control, runId } = context;
  const forkId = replayWorkflowId(runId, (replayNumberOf(runId, latest.workflowID) ?? 0) + 1);
  try {
    await control.forkWorkflow(latest.workflowID, startStep, { newWorkflowID: forkId });
  } catch (error) {
    if (isDuplicateKey(error))
      return { status: 'in_progress', modelCalls: 0, text: null, workflowId: forkId, message: `${forkId} was started by another replay` };
    throw error;
  }
  const result = await resultWithin(context, forkId);
  if (!result) return stillRunning(forkId);
  const forkSteps = (await control.listWorkflowSteps(forkId)) ?? [];
  // the model calls the fork made itself: those at or after the fork point (the ones before were copied)
  const modelCalls = forkSteps.filter((step) => step.functionID >= startStep && step.name.startsWith('toolrun.model:')).length;
  return {
    status: result.status,
    modelCalls,
    text: result.text,
    workflowId: forkId,
    message: `forked ${latest.workflowID} from step ${startStep} as ${forkId}: ${result.status}`,
  };
}
