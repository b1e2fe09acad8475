/**
 * The names and shapes the activity side and the workflow side of toolrun's Temporal integration
 * share. Imports types only: the workflow sandbox bundles this file.
 */
import type { FailureCause } from '../../ground/failure-cause.ts';
import type { ToolFailure, ToolResult } from '../../ground/tool-result.ts';
import type { ToolDeadLetterReason } from '../../core/retry-directive.ts';

/** The `ApplicationFailure.type` of a transient tool failure the activity asks Temporal to retry (after `nextRetryDelay`). */
export const TOOLRUN_RETRY_FAILURE_TYPE = 'ToolrunRetry';

/** The `ApplicationFailure.type` of a non-retryable failure that ends the run for toolrun's tool dead-letter queue. */
export const TOOLRUN_DEAD_LETTER_FAILURE_TYPE = 'ToolrunDeadLetter';

/**
 * The one detail (`ApplicationFailure.details[0]`) of both failure types: what the workflow needs to
 * dead-letter the run, already redacted and bounded by the activity (it is written to the
 * workflow's history).
 */
export interface TemporalToolFailureDetails {
  /** Why in-band recovery ended. On a retry failure: `retry-budget-exhausted`, the reason when Temporal gives up retrying it. */
  reason: ToolDeadLetterReason;
  /** The registered tool's name (or the name the model called, bounded and redacted, for an unknown tool). */
  toolName: string;
  /** The call's arguments, redacted by the same rules as logs and bounded. */
  toolArgs: unknown;
  /** Executions of the tool spent on this call: Temporal's attempts and the runtime's own. */
  attempts: number;
  /** The last failure: its kind, upstream status and a redacted, bounded message. */
  lastError: FailureCause;
  /** The call's failure envelope, as the model would have read it. */
  envelope: ToolFailure;
}

/** One tool call as the workflow asks the activity to run it. */
export interface TemporalToolCall {
  /** The step (turn of the agent loop) the call belongs to, from 0. */
  stepIndex: number;
  /** The call's index in its step. @defaultValue 0 */
  callIndex?: number;
  /** The tool name the model produced. */
  name: string;
  /** An object, or the raw argument string the model produced. */
  args?: unknown;
  /** The model's id of the call. @defaultValue one toolrun generates */
  callId?: string;
  /** The run's absolute deadline, epoch ms: no retry waits past it. @defaultValue none */
  deadlineAt?: number;
}

/** What the workflow hands the dead-letter activity (see `deadLetterRun`). */
export interface TemporalDeadLetterInput {
  /** The workflow id: the entry's `runId` and its pointer back to the run (`originalMessageId` `temporal:<workflowId>`). */
  workflowId: string;
  /** The step that failed. */
  stepIndex: number;
  /** The failure, as `readToolFailureDetails` read it from the activity's failure. */
  details: TemporalToolFailureDetails;
  /** `conv_…`, made in the workflow so that a retried activity writes the same one. */
  conversationRef: string;
  /** The conversation up to the failed step (stored under `conversationRef`, so `toolrun dlq` and the dashboard show it). */
  messages: readonly unknown[];
  /** Model tokens the run spent before it was dead-lettered. */
  tokensSpent: { input: number; output: number };
  /** ISO-8601, the workflow's time when the run was dead-lettered. */
  firstSeenAt: string;
}

/** What the dead-letter activity did: the DLQ record's id, and whether this call added it (false: it was there). */
export interface TemporalDeadLetterResult {
  /** The tool-DLQ record's id. */
  id: string;
  /** This call added the entry (`false`: an earlier attempt or replay of the workflow had). */
  added: boolean;
}

/**
 * The activities `createToolrunActivities` returns, by the names the workflow proxies them with
 * (`proxyActivities<ToolrunActivities>(…)`).
 */
export interface ToolrunActivities {
  /**
   * Runs one tool call and returns its envelope (`return-to-model`), or throws an
   * `ApplicationFailure`: retryable with `nextRetryDelay` (`retry`) or non-retryable
   * (`dead-letter`), both typed and carrying {@link TemporalToolFailureDetails}.
   */
  toolrunCallTool(call: TemporalToolCall): Promise<ToolResult>;
  /** Pushes the run's entry into toolrun's tool DLQ, once per (workflow id, step). */
  toolrunDeadLetter(input: TemporalDeadLetterInput): Promise<TemporalDeadLetterResult>;
}
