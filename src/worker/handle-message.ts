import { runAgent, isTerminalRunStatus, type AgentRunResult, type AgentRunStatus, type RunAgentOptions } from '../agent/run-agent.ts';
import { decodeRunState } from '../agent/run-state.ts';
import { newConversationRef } from '../agent/conversation-ref.ts';
import { startStep } from '../agent/run-writer.ts';
import type { ToolRuntime } from '../core/create-tool-runtime.ts';
import type { Clock } from '../ground/ports/clock.ts';
import type { RunCheckpoint, RunJournal } from '../ground/ports/run-journal.ts';
import type { SharedBreaker } from '../policies/shared-breaker.ts';
import { createMemoryStores } from '../stores/memory/index.ts';
import type { MessageFailureEntry } from '../ground/dead-letter-entries.ts';
import { initialMessages, parseRunRequest, rejectedMessageEntry } from './parse-run-request.ts';
import { deadLetterPoisonMessage } from './poison-message.ts';
import { messageDeadLetterKey, pushDeadLetter } from './push-dead-letter.ts';
import { resolveRuntime } from './resolve-runtime.ts';
import { ensureDeadLettered, pushResumable, resumableEntryOf } from './resumable-dead-letters.ts';
import { claimRun, newClaimHolder } from './run-claim.ts';
import { messageDeadLetterAdded, resumableDeadLetterAdded } from './worker-events.ts';

import { withQueues, type HandleMessageOptions, type HandleMessageResult, type RunMessage, type WithQueues } from './handle-message-options.ts';

/**
 * Handles one run-request message — the routing contract:
 * - a body that cannot be parsed or validated → one message-DLQ entry, no retry, the model is never called (`rejected`);
 * - a transient tool failure that recovers → nothing dead-lettered (`completed`);
 * - in-band recovery exhausted, or a tool broken for everyone → one tool-DLQ entry with resumable state (`tool_failed`);
 * - the model failing past its policy (5xx, 429, timeouts, a rejected key, invalid answers) → one
 *   resumable tool-DLQ entry of kind `model` (`model_failed`); a rejected key opens the shared model breaker;
 * - a delivery past `maxDeliveries` (every earlier one failed or crashed) → dead-lettered as a poison
 *   message (`delivery_limit_exceeded`), resumable from its checkpoint when the run had started;
 * - a run claimed by another consumer (a replay or drain of it) → nothing done (`busy`): deliver it again later;
 * - a redelivered message (consumer crash) resumes its run from the last checkpoint; a finished run is not run again
 *   (`message-duplicate` event), and a message already dead-lettered is not dead-lettered twice (keyed push: see `queues`).
 *
 * Never throws for a bad message, a tool or the model; it throws only when a store fails or a bug
 * surfaces (the worker then redelivers the message, up to `maxDeliveries`).
 */
export async function handleMessage(message: RunMessage, given: HandleMessageOptions): Promise<HandleMessageResult> {
  const fallbackClock = given.clock ?? given.runtimeOptions?.clock ?? given.runtime?.clock;
  const stores = given.stores ?? createMemoryStores(fallbackClock ? { clock: fallbackClock } : {});
  const options = withQueues(given, stores);
  const { runtime, breaker } = resolveRuntime(options, stores);
  const clock = options.clock ?? runtime.clock;
  const receivedAt = new Date(clock.now()).toISOString();
  const parsed = parseRunRequest(message, options.maxBodyBytes ?? 1_048_576, receivedAt, runtime.redactor);
  const messageId = typeof message?.id === 'string' ? message.id : undefined;
  if (!parsed.ok) return rejectMessage(parsed.entry, messageId, options, clock);
  const request = parsed.request;
  const runId = request.runId ?? (messageId !== undefined ? `run_${messageId}` : `run_${globalThis.crypto.randomUUID()}`);
  const deliveries = typeof message.deliveries === 'number' && Number.isFinite(message.deliveries) ? message.deliveries : 1;

  // The run opened under its claim: what was committed is read once, after the claim was taken,
  // and handed to the loop, so nothing can change the run between the read and the run.
  const holder = newClaimHolder('worker');
  const messages = initialMessages(request);
  // a new run's first step goes with its claim (one commit), unless the message is past its bound (a poison message: it does not run)
  const start =
    deliveries > (options.maxDeliveries ?? 5)
      ? undefined
      : startStep({ runId, messageId: messageId ?? '', conversationRef: newConversationRef(runtime.clock.now()), messages, clock: runtime.clock });
  const { journal } = stores;
  const claimed = await claimRun(journal, runId, { holder, leaseMs: options.claimLeaseMs ?? 300_000, clock, holdWhile: options.holdClaimWhile, start });
  if (!claimed.ok) {
    options.onEvent?.({ type: 'run-busy', runId, messageId, holder: claimed.holder, at: clock.now() });
    return { status: 'busy', runId, messageId, holder: claimed.holder, alreadyFinished: false };
  }
  const existing = claimed.checkpoint;
  const context: ClaimedContext = { messageId, runId, options, journal, runtime, clock };
  if (existing && messageId !== undefined && existing.messageId !== '' && existing.messageId !== messageId) {
    await claimed.claim.release();
    // Another message's run: running this one would resume, or silently skip, a run it does not own.
    const detail = `runId "${runId}" belongs to the run of message "${existing.messageId}"; give this message its own runId`;
    return rejectMessage(
      rejectedMessageEntry(message, { code: 'RUN_ID_CONFLICT', detail }, { receivedAt, redactor: runtime.redactor }),
      messageId,
      options,
      clock,
    );
  }
  if ((existing && isTerminalRunStatus(existing.status)) || deliveries > (options.maxDeliveries ?? 5)) {
    try {
      if (existing && isTerminalRunStatus(existing.status)) return await finishedRun(existing, context);
      // the last recorded delivery error, if a store answers
      const lastError = messageId === undefined ? undefined : await journal.lastDeliveryError(messageId).catch(() => undefined);
      return await deadLetterPoisonMessage(message, { ...options, stores, lastError, deliveries: deliveries - 1, runId, checkpoint: existing ?? null });
    } finally {
      await claimed.claim.release();
    }
  }
  let run: AgentRunResult;
  try {
    run = await runAgent({
      model: options.model,
      runtime,
      messages,
      runId,
      ...(request.sessionId !== undefined ? { sessionId: request.sessionId } : {}),
      ...(options.deadlineMs !== undefined ? { deadlineMs: options.deadlineMs } : {}),
      ...runOptionsOf(options, breaker),
      persistence: {
        journal,
        messageId: messageId ?? '',
        opened: { checkpoint: existing, messages: claimed.messages },
        ...(claimed.started && start !== undefined ? { started: start } : {}),
        claimHolder: holder,
        ...(options.acknowledgeOnFinish === true && messageId !== undefined ? { acknowledge: messageId } : {}),
        ...(options.checkpointRetry !== undefined ? { checkpointRetry: options.checkpointRetry } : {}),
      },
    });
  } catch (error) {
    await claimed.claim.release();
    throw error;
  }
  // the run's last commit ended the claim
  await claimed.claim.forget();
  return deadLetterRun(run, context);
}

/** What the steps after the claim of a message's run share. */
interface ClaimedContext {
  messageId: string | undefined;
  runId: string;
  options: WithQueues<HandleMessageOptions>;
  journal: RunJournal;
  runtime: ToolRuntime;
  clock: Clock;
}

/**
 * A message whose run had already ended (a redelivery, or the same id enqueued twice): nothing is
 * run again. A crash after the run ended failed but before the message was acknowledged: its
 * entry is pushed now unless it was pushed, so it is never lost and never doubled.
 */
async function finishedRun(finished: RunCheckpoint, context: ClaimedContext): Promise<HandleMessageResult> {
  const { messageId, runId, options, journal, runtime, clock } = context;
  options.onEvent?.({ type: 'message-duplicate', messageId, runId, runStatus: finished.status, at: clock.now() });
  const pushed =
    finished.status === 'tool_failed' || finished.status === 'model_failed'
      ? await ensureDeadLettered(finished, { runtime, journal, clock }, options)
      : undefined;
  return {
    status: finished.status as AgentRunStatus,
    runId,
    messageId,
    text: decodeRunState(finished.data).text ?? null,
    steps: finished.stepIndex,
    modelCalls: 0,
    tokensSpent: finished.tokensSpent,
    alreadyFinished: true,
    ...(pushed?.kind === 'tool' ? { toolFailure: pushed } : {}),
    ...(pushed?.kind === 'model' ? { modelFailure: pushed } : {}),
  };
}

/** The result of a run that ended now, with its resumable tool-DLQ entry pushed when it failed (`tool_failed`, `model_failed`). */
async function deadLetterRun(run: AgentRunResult, context: ClaimedContext): Promise<HandleMessageResult> {
  const { messageId, runId, options, journal, runtime, clock } = context;
  const result: HandleMessageResult = {
    status: run.status,
    runId,
    messageId,
    text: run.text,
    steps: run.steps,
    modelCalls: run.modelCalls,
    tokensSpent: run.tokensSpent,
    alreadyFinished: false,
  };
  const entry = resumableEntryOf(run, runtime, { messageId: messageId ?? '', firstSeenAt: new Date(clock.now()).toISOString() });
  if (entry === undefined || !(await pushResumable(entry, journal, options))) return result;
  options.onEvent?.(resumableDeadLetterAdded(entry, messageId, clock.now()));
  return entry.kind === 'tool' ? { ...result, toolFailure: entry } : { ...result, modelFailure: entry };
}

/**
 * The run options a message and a replay pass to `runAgent` alike (each only when set): limits,
 * cancellation, observers and the model's policy and breaker.
 */
export function runOptionsOf(
  options: Pick<HandleMessageOptions, 'maxSteps' | 'toolRetryBudget' | 'signal' | 'onToolCall' | 'runHooks' | 'modelPolicy' | 'modelName'>,
  breaker: SharedBreaker | undefined,
): Partial<RunAgentOptions> {
  return {
    ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}),
    ...(options.toolRetryBudget !== undefined ? { toolRetryBudget: options.toolRetryBudget } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onToolCall ? { onToolCall: options.onToolCall } : {}),
    ...(options.runHooks ? { hooks: options.runHooks } : {}),
    ...(options.modelPolicy ? { modelPolicy: options.modelPolicy } : {}),
    ...(options.modelName !== undefined ? { modelName: options.modelName } : {}),
    ...(breaker ? { modelBreaker: breaker } : {}),
  };
}

/** Dead-letters a message that cannot start a run (keyed by its id: a repeat adds nothing). */
export async function rejectMessage(
  entry: MessageFailureEntry,
  messageId: string | undefined,
  options: WithQueues<HandleMessageOptions>,
  clock: Clock,
): Promise<HandleMessageResult> {
  const added = await pushDeadLetter(options.queues.messageDlq, messageId === undefined ? undefined : messageDeadLetterKey(messageId), entry);
  if (added) options.onEvent?.(messageDeadLetterAdded(entry, messageId, clock.now()));
  return { status: 'rejected', runId: null, messageId, reason: entry.reason, alreadyFinished: !added };
}
