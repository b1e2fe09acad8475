import type { AgentRunStatus } from '../../agent/run-agent.ts';
import type { TokenUsage } from '../../agent/messages.ts';
import type { MessageFailureEntry, ResumableEntry } from '../../ground/dead-letter-entries.ts';
import type { DbosWorkflowHandle } from './dbos-api.ts';

/** The agent workflow's argument: the run and the message that asked for it, as received. */
export interface DbosRunInput {
  /** The run id, which is the workflow id of the run's own workflow. */
  runId: string;
  /** The queue message id (`''` when the message had none). */
  messageId: string;
  /** The message's body as received (a JSON run request: `input`, `messages`, `system`, `runId`, `sessionId`). */
  body: string;
}

/** Where a failed run failed, kept in the workflow's result so a replay knows where to fork. */
export interface DbosRunFailure {
  /** A tool call's failure, or the model's. */
  kind: 'tool' | 'model';
  /** The loop's step (0-based) that failed. */
  stepIndex: number;
  /** The failed call's index in the step's tool calls (a tool failure). */
  callIndex?: number;
  /** The tool's, or the model's, name. */
  name: string;
  /** The entry's `reason` (`retry-budget-exhausted`, `misconfiguration`, `model-unavailable`, …). */
  reason: string;
}

/** The agent workflow's result (JSON, as DBOS records it). */
export interface DbosRunResult {
  /** How the run ended (`tool_failed` and `model_failed` runs have an entry in the tool DLQ). */
  status: AgentRunStatus;
  /** toolrun's run id (the workflow id of the run's own workflow). */
  runId: string;
  /** The workflow that ran it: the run id, or `<runId>:replay:<n>` for a replay. */
  workflowId: string;
  /** The final answer, when the model gave one. */
  text: string | null;
  /** Steps completed in the run, from its start. */
  steps: number;
  /** Model calls the loop made in this workflow (the recorded ones a recovery or a fork read back included). */
  modelCalls: number;
  /** Tokens the run's model calls spent, from its start. */
  tokensSpent: TokenUsage;
  /** The run's conversation in toolrun's journal (written when the run failed or was replayed). */
  conversationRef: string;
  /** Set for `tool_failed` and `model_failed`. */
  failure?: DbosRunFailure;
  /** The tool-DLQ entry the run wrote (`tool_failed`, `model_failed`). */
  entry?: ResumableEntry;
}

/** What {@link DbosAgent.start} did with a message. */
export type DbosStartResult =
  | { status: 'rejected'; runId: null; messageId: string | undefined; entry: MessageFailureEntry; added: boolean }
  | { status: 'started'; runId: string; messageId: string | undefined; handle: DbosWorkflowHandle<DbosRunResult> };

/** The agent of a DBOS app: its registered workflow, and how messages start runs of it. */
export interface DbosAgent {
  /** The registered workflow (name `options.name`); start it with `DBOS.startWorkflow` or through {@link DbosAgent.start}. */
  readonly workflow: (input: DbosRunInput) => Promise<DbosRunResult>;
  /** The workflow's registered name. */
  readonly name: string;
  /**
   * Starts the run a message asks for: a body that cannot be parsed or validated goes to the
   * message DLQ at once (keyed by the message id; no workflow, the model never called); otherwise
   * the workflow starts under the run id (the body's `runId`, else `run_<message id>`, else a new
   * one). Starting the same run id again returns the first start's handle (DBOS's workflow id
   * idempotency). Rejects only when a DLQ or DBOS cannot be written.
   */
  start(message: { id?: string; body: unknown }): Promise<DbosStartResult>;
  /** {@link DbosAgent.start}, then the run's result (`undefined` for a rejected message). */
  run(message: { id?: string; body: unknown }): Promise<DbosRunResult | undefined>;
}
