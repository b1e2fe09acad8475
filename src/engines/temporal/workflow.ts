/**
 * The workflow side of toolrun's Temporal integration (`toolrun/temporal/workflow`): imported by
 * workflow code, so it runs in Temporal's deterministic sandbox. It imports `@temporalio/workflow`
 * and toolrun's types only.
 *
 * @packageDocumentation
 */
// (the re-export first: the declaration file keeps the comment above only on a statement it keeps)
export {
  TOOLRUN_DEAD_LETTER_FAILURE_TYPE,
  TOOLRUN_RETRY_FAILURE_TYPE,
  type TemporalDeadLetterInput,
  type TemporalDeadLetterResult,
  type TemporalToolCall,
  type TemporalToolFailureDetails,
  type ToolrunActivities,
} from './failure-types.ts';
import { ApplicationFailure, uuid4, workflowInfo } from '@temporalio/workflow';
import type { ToolDeadLetterReason } from '../../core/retry-directive.ts';
import type { ToolResult } from '../../ground/tool-result.ts';
import {
  TOOLRUN_DEAD_LETTER_FAILURE_TYPE,
  TOOLRUN_RETRY_FAILURE_TYPE,
  type TemporalDeadLetterResult,
  type TemporalToolCall,
  type TemporalToolFailureDetails,
  type ToolrunActivities,
} from './failure-types.ts';

/** What the run had when a call failed for good, for its dead-letter entry. */
export interface TemporalRunSoFar {
  /** The conversation up to the failed step (the assistant turn with the failed call included). @defaultValue `[]` */
  messages?: readonly unknown[];
  /** Model tokens spent by the run so far. @defaultValue 0 and 0 */
  tokensSpent?: { input: number; output: number };
}

/**
 * The outcome of {@link callTool}:
 * - `{ status: 'result', result }`: the envelope for the model (a success, or a failure the model
 *   must handle: invalid arguments, unknown tool, a permanent failure);
 * - `{ status: 'dead-lettered', reason, entryId, added, conversationRef }`: in-band recovery ended;
 *   the run is in toolrun's tool DLQ (`entryId`) and the workflow should end (e.g. return a
 *   `tool_failed` status) rather than call the model again.
 */
export type TemporalToolOutcome =
  | { status: 'result'; result: ToolResult }
  | { status: 'dead-lettered'; reason: ToolDeadLetterReason; entryId: string; added: boolean; conversationRef: string };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/**
 * The {@link TemporalToolFailureDetails} of a failed `toolrunCallTool` activity, or `undefined` when
 * the failure is not toolrun's (a timeout of the activity itself, a worker error): the cause chain
 * of the error (`ActivityFailure` → `ApplicationFailure`, or → `TimeoutFailure` → the last
 * `ApplicationFailure`) is searched for an `ApplicationFailure` of type `ToolrunDeadLetter` or
 * `ToolrunRetry` (a retry that Temporal gave up on: its retry policy's `maximumAttempts` or a
 * schedule-to-close timeout; its reason is `retry-budget-exhausted`). Never throws.
 */
export function readToolFailureDetails(error: unknown): TemporalToolFailureDetails | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && isRecord(current); depth++) {
    if (current instanceof ApplicationFailure && (current.type === TOOLRUN_DEAD_LETTER_FAILURE_TYPE || current.type === TOOLRUN_RETRY_FAILURE_TYPE)) {
      const details: unknown = current.details?.[0];
      if (isRecord(details) && typeof details.reason === 'string' && typeof details.toolName === 'string' && isRecord(details.lastError))
        return details as unknown as TemporalToolFailureDetails;
      return undefined;
    }
    current = current.cause;
  }
  return undefined;
}

/**
 * Dead-letters the current workflow run into toolrun's tool DLQ through the `toolrunDeadLetter`
 * activity: the entry's `runId` is the workflow id (its pointer back to the run), its
 * `originalMessageId` `temporal:<workflowId>`, its `conversationRef` a `conv_…` made here
 * from the workflow's deterministic `uuid4()` (a retried activity writes the same one), its
 * `firstSeenAt` the workflow's time. Idempotent per (workflow id, step).
 *
 * @param activities - the proxied activities (`proxyActivities<ToolrunActivities>(…)`)
 * @param failure - the details read from the failed call ({@link readToolFailureDetails})
 * @param run - the step that failed, and the conversation and tokens so far
 * @returns the DLQ record's id and whether this call added it
 */
export async function deadLetterRun(
  activities: Pick<ToolrunActivities, 'toolrunDeadLetter'>,
  failure: TemporalToolFailureDetails,
  run: TemporalRunSoFar & { stepIndex: number },
): Promise<TemporalDeadLetterResult & { conversationRef: string }> {
  const info = workflowInfo();
  const conversationRef = `conv_${uuid4().replaceAll('-', '')}`;
  const pushed = await activities.toolrunDeadLetter({
    workflowId: info.workflowId,
    stepIndex: run.stepIndex,
    details: failure,
    conversationRef,
    messages: run.messages ?? [],
    tokensSpent: run.tokensSpent ?? { input: 0, output: 0 },
    firstSeenAt: new Date(Date.now()).toISOString(),
  });
  return { ...pushed, conversationRef };
}

/**
 * Runs one tool call from a workflow through the `toolrunCallTool` activity and settles it the
 * way toolrun's own loop does: the envelope back for the model, or — when the activity failed with
 * toolrun's dead-letter failure, or Temporal gave up retrying toolrun's retry failure — the run
 * dead-lettered with {@link deadLetterRun} and `dead-lettered` returned. Any other failure (an
 * activity timeout with no toolrun failure in it, a cancellation) is rethrown unchanged.
 *
 * @param activities - the proxied activities (`proxyActivities<ToolrunActivities>(…)`; its retry
 *   policy may leave `maximumAttempts` unlimited: toolrun's `retryBudget` bounds the attempts)
 * @param call - the call, with its step and index in the step
 * @param run - the conversation and tokens so far, for the entry when the run is dead-lettered
 */
export async function callTool(activities: ToolrunActivities, call: TemporalToolCall, run: TemporalRunSoFar = {}): Promise<TemporalToolOutcome> {
  try {
    return { status: 'result', result: await activities.toolrunCallTool(call) };
  } catch (error) {
    const failure = readToolFailureDetails(error);
    if (failure === undefined) throw error;
    const pushed = await deadLetterRun(activities, failure, { ...run, stepIndex: call.stepIndex });
    return { status: 'dead-lettered', reason: failure.reason, entryId: pushed.id, added: pushed.added, conversationRef: pushed.conversationRef };
  }
}
