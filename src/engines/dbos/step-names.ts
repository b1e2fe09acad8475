/**
 * The names toolrun gives the DBOS steps of an agent workflow. DBOS checks, when it replays a
 * workflow, that the step at each function id has the name it recorded; the names also let a
 * replay find where a run failed (`listWorkflowSteps`).
 */

/** A model call (one attempt) of step `stepIndex`: `toolrun.model:<stepIndex>`. */
export function modelStepName(stepIndex: number): string {
  return `toolrun.model:${stepIndex}`;
}

/** A tool call (one engine attempt) of step `stepIndex`, call `callIndex`: `toolrun.tool:<stepIndex>:<callIndex>`. */
export function toolStepName(stepIndex: number, callIndex: number): string {
  return `toolrun.tool:${stepIndex}:${callIndex}`;
}

/** The step that writes a failed run's conversation and its tool-DLQ entry. */
export const DEAD_LETTER_STEP_NAME = 'toolrun.dead-letter';

/** The step that writes a replayed run's last checkpoint. */
export const FINISH_STEP_NAME = 'toolrun.finish';

/** The workflow id of the `n`-th replay (fork) of run `runId`: `<runId>:replay:<n>`. */
export function replayWorkflowId(runId: string, n: number): string {
  return `${runId}:replay:${n}`;
}

/** The `n` of a replay's workflow id of `runId`, or `0` for the run's own workflow (`undefined` for another run's). */
export function replayNumberOf(runId: string, workflowId: string): number | undefined {
  if (workflowId === runId) return 0;
  const prefix = `${runId}:replay:`;
  if (!workflowId.startsWith(prefix)) return undefined;
  const n = Number(workflowId.slice(prefix.length));
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

/** The step and call index a tool call's idempotency key (`<runId>:<step>:<call>`) ends with. */
export function callPlaceOf(idempotencyKey: string | undefined): { stepIndex: number; callIndex: number } | undefined {
  if (idempotencyKey === undefined) return undefined;
  const match = /:(\d+):(\d+)$/.exec(idempotencyKey);
  return match ? { stepIndex: Number(match[1]), callIndex: Number(match[2]) } : undefined;
}
