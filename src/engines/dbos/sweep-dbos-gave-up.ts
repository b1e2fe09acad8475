import type { ChatMessage } from '../../agent/messages.ts';
import { redactBounded } from '../../core/build-failure.ts';
import { createRedactor, type Redactor } from '../../core/redact.ts';
import type { DeadLetterSink, MessageFailureEntry, RunFailureEntry, ToolFailureEntry } from '../../ground/dead-letter-entries.ts';
import { systemClock, type Clock } from '../../ground/ports/clock.ts';
import type { Stores } from '../../ground/ports/stores.ts';
import { initialMessages, parseRunRequest, rejectedMessageEntry } from '../../worker/parse-run-request.ts';
import { messageDeadLetterKey, pushDeadLetter } from '../../worker/push-dead-letter.ts';
import { pushResumable } from '../../worker/resumable-dead-letters.ts';
import { messageDeadLetterAdded, resumableDeadLetterAdded, type WorkerEvent } from '../../worker/worker-events.ts';
import type { DbosControl, DbosStepInfo, DbosWorkflowStatus } from './dbos-api.ts';
import type { DbosRunInput } from './dbos-run-types.ts';

/** Options of {@link sweepDbosGaveUp}. */
export interface DbosSweepOptions {
  /** The `DBOS` class in a launched process, or a `DBOSClient`. */
  control: DbosControl;
  /** toolrun's stores: the DLQs, and the journal (the conversations of swept runs, the marks of their entries). */
  stores: Stores;
  /** The agent workflow's registered name. @defaultValue `'toolrun.agent'` */
  name?: string;
  /** The DLQs the entries go to. @defaultValue `stores.messageDlq` and `stores.toolDlq` */
  queues?: { messageDlq: DeadLetterSink<MessageFailureEntry>; toolDlq: DeadLetterSink<ToolFailureEntry> };
  /** Redacts the raw body kept in a message-DLQ entry's `fields` and error texts. @defaultValue toolrun's default redactor */
  redactor?: Redactor;
  /** The clock of the entries' timestamps. @defaultValue the system clock */
  clock?: Clock;
  /** `dead-letter-add` events for the entries added. */
  onEvent?: (event: WorkerEvent) => void;
  /** Workflows looked at per call. @defaultValue 1000 */
  limit?: number;
}

/** What one sweep dead-lettered (entries added now; a repeat of a sweep adds none). */
export interface DbosSweepResult {
  /** Entries added to the message DLQ. */
  messageDlq: number;
  /** Entries added to the tool DLQ. */
  toolDlq: number;
}

const MODEL_STEP = /^toolrun\.model:(\d+)$/;

/**
 * The step the run was at when DBOS gave up: the last model turn recorded, or the one after it
 * when that turn's tool calls had run; `undefined` when no model call was recorded.
 */
function lastStepIndex(steps: readonly DbosStepInfo[]): number | undefined {
  let last: number | undefined;
  for (const step of steps) {
    const match = MODEL_STEP.exec(step.name);
    if (match) last = Math.max(last ?? 0, Number(match[1]));
  }
  if (last === undefined) return undefined;
  return steps.some((step) => step.name.startsWith(`toolrun.tool:${last}:`)) ? last + 1 : last;
}

/**
 * Dead-letters the agent workflows DBOS gave up on (status `MAX_RECOVERY_ATTEMPTS_EXCEEDED`: their
 * executor died on them more than `maxRecoveryAttempts` times — a poison message) and those that
 * threw (`ERROR`: a bug, or toolrun's stores out past the retries of the step writing them), each in
 * the right DLQ, as toolrun's worker does past `maxDeliveries`:
 * - no model call recorded (the run never got through its first step) → the message DLQ, with the raw body
 *   (`DELIVERY_LIMIT_EXCEEDED`);
 * - otherwise → one resumable tool-DLQ entry of kind `run` (`delivery-limit-exceeded`, pointer
 *   `dbos:<runId>`), whose replay resumes the workflow (`DBOS.resumeWorkflow`; for one that threw, a fork from the step that threw).
 * Keyed pushes: sweeping again adds nothing. Run it on a timer in one process, or from the CLI's host.
 */
export async function sweepDbosGaveUp(options: DbosSweepOptions): Promise<DbosSweepResult> {
  const { control, stores } = options;
  const queues = options.queues ?? { messageDlq: stores.messageDlq, toolDlq: stores.toolDlq };
  const redactor = options.redactor ?? createRedactor();
  const clock = options.clock ?? systemClock;
  const result: DbosSweepResult = { messageDlq: 0, toolDlq: 0 };
  const gaveUp = await control.listWorkflows({
    workflowName: options.name ?? 'toolrun.agent',
    status: ['MAX_RECOVERY_ATTEMPTS_EXCEEDED', 'ERROR'],
    loadInput: true,
    limit: options.limit ?? 1000,
  });
  for (const workflow of gaveUp) {
    const input = workflow.input?.[0] as DbosRunInput | undefined;
    if (typeof input?.runId !== 'string' || input.runId !== workflow.workflowID) continue; // a replay's fork: its run has an entry already
    const steps = (await control.listWorkflowSteps(workflow.workflowID)) ?? [];
    const stepIndex = lastStepIndex(steps);
    const attempts = workflow.recoveryAttempts ?? 0;
    const now = new Date(clock.now()).toISOString();
    const why = whyEnded(workflow, redactor);
    if (stepIndex === undefined) {
      const added = await deadLetterMessage(workflow, input, { queues, redactor, now, why });
      if (added) {
        result.messageDlq += 1;
        options.onEvent?.(messageDeadLetterAdded(added, input.messageId || undefined, clock.now()));
      }
      continue;
    }
    const conversationRef = `conv_dbos_${input.runId}`;
    const parsed = parseRunRequest({ id: input.messageId, body: input.body }, Number.MAX_SAFE_INTEGER, now, redactor);
    const messages: ChatMessage[] = parsed.ok ? initialMessages(parsed.request) : [];
    await stores.journal.putConversation(conversationRef, messages);
    const entry: RunFailureEntry = {
      kind: 'run',
      runId: input.runId,
      stepIndex,
      deliveries: attempts,
      lastError: { kind: workflow.status === 'ERROR' ? 'exception' : 'crash', status: null, message: why },
      conversationRef,
      tokensSpent: { input: 0, output: 0 },
      firstSeenAt: now,
      originalMessageId: `dbos:${input.runId}`,
      reason: 'delivery-limit-exceeded',
    };
    if (await pushResumable(entry, stores.journal, { queues })) {
      result.toolDlq += 1;
      options.onEvent?.(resumableDeadLetterAdded(entry, input.messageId || undefined, clock.now()));
    }
  }
  return result;
}

/** Why DBOS ended the workflow, in a sentence (the error a workflow threw redacted and bounded). */
function whyEnded(workflow: DbosWorkflowStatus, redactor: Redactor): string {
  if (workflow.status !== 'ERROR') return `DBOS gave up on workflow ${workflow.workflowID} after ${workflow.recoveryAttempts ?? 0} recovery attempts`;
  const error = workflow.error as { message?: unknown } | string | undefined;
  const text = typeof error === 'string' ? error : typeof error?.message === 'string' ? error.message : 'no message';
  return `workflow ${workflow.workflowID} failed: ${redactBounded(redactor, text, 512)}`;
}

/** The message-DLQ entry of a workflow that never got through its first step; `undefined` when it was there already. */
async function deadLetterMessage(
  workflow: DbosWorkflowStatus,
  input: DbosRunInput,
  context: { queues: NonNullable<DbosSweepOptions['queues']>; redactor: Redactor; now: string; why: string },
): Promise<MessageFailureEntry | undefined> {
  const attempts = workflow.recoveryAttempts ?? 0;
  const entry = rejectedMessageEntry(
    { id: input.messageId, body: input.body },
    { code: 'DELIVERY_LIMIT_EXCEEDED', detail: `${context.why}, before its first model call was recorded`, deliveries: attempts },
    { receivedAt: context.now, redactor: context.redactor },
  );
  const key = messageDeadLetterKey(input.messageId !== '' ? input.messageId : workflow.workflowID);
  return (await pushDeadLetter(context.queues.messageDlq, key, entry)) ? entry : undefined;
}
