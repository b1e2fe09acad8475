import type { AgentRunResult } from '../../agent/run-agent.ts';
import { encodeRunState } from '../../agent/run-state.ts';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import type { DeadLetterSink, MessageFailureEntry, ResumableEntry, ToolFailureEntry } from '../../ground/dead-letter-entries.ts';
import type { Clock } from '../../ground/ports/clock.ts';
import type { JsonValue, RecordedCall, RunCheckpoint } from '../../ground/ports/run-journal.ts';
import type { Stores } from '../../ground/ports/stores.ts';
import { boundedToolArgs } from '../../worker/build-tool-failure-entry.ts';
import { pushResumable, resumableEntryOf } from '../../worker/resumable-dead-letters.ts';
import { resumableDeadLetterAdded, type WorkerEvent } from '../../worker/worker-events.ts';

/** What writing a run's end needs. */
export interface RunEndContext {
  stores: Stores;
  queues: { messageDlq: DeadLetterSink<MessageFailureEntry>; toolDlq: DeadLetterSink<ToolFailureEntry> };
  runtime: ToolRuntime;
  clock: Clock;
  onEvent?: ((event: WorkerEvent) => void) | undefined;
}

/** The outcomes of the failed step's calls that succeeded: a replay reads them instead of running those calls again. */
function succeededCalls(run: AgentRunResult, stepIndex: number): RecordedCall[] {
  const messages = run.messages;
  const assistant = messages.map((message) => message.role).lastIndexOf('assistant');
  const calls = messages[assistant]?.toolCalls ?? [];
  const recorded: RecordedCall[] = [];
  for (const message of messages.slice(assistant + 1)) {
    if (message.role !== 'tool' || typeof message.content !== 'string') continue;
    const callIndex = calls.findIndex((call) => call.id === message.toolCallId);
    if (callIndex < 0) continue;
    try {
      const outcome = JSON.parse(message.content) as { status?: unknown };
      if (outcome.status === 'success') recorded.push({ stepIndex, callIndex, outcome: outcome as JsonValue });
    } catch {
      // not an envelope: the call runs again
    }
  }
  return recorded;
}

/** The run's checkpoint as toolrun's journal keeps it (the dashboard, `toolrun dlq show` read it). */
function checkpointOf(run: AgentRunResult, messageId: string, nowMs: number, runtime: ToolRuntime): RunCheckpoint {
  const failure = run.failure
    ? { ...run.failure, toolArgs: boundedToolArgs(run.failure.toolArgs, runtime.redactor, runtime.getTool(run.failure.toolName)?.definition.sensitive ?? []) }
    : undefined;
  return {
    runId: run.runId,
    messageId,
    status: run.status,
    stepIndex: failure?.stepIndex ?? run.modelFailure?.stepIndex ?? run.steps,
    conversationRef: run.conversationRef,
    tokensSpent: { ...run.tokensSpent },
    toolAttempts: {},
    data: encodeRunState({
      budgets: {},
      pendingStep: run.status === 'tool_failed',
      ...(run.text !== null ? { text: run.text } : {}),
      ...(failure ? { failure } : {}),
      ...(run.modelFailure ? { modelFailure: run.modelFailure } : {}),
      ...(run.modelError !== undefined ? { modelError: run.modelError } : {}),
    }),
    updatedAt: new Date(nowMs).toISOString(),
  };
}

/** Writes the run's conversation and last checkpoint to toolrun's journal (one commit). */
export async function commitRunEnd(run: AgentRunResult, messageId: string, context: RunEndContext): Promise<void> {
  const checkpoint = checkpointOf(run, messageId, context.clock.now(), context.runtime);
  const calls = run.status === 'tool_failed' && run.failure ? succeededCalls(run, run.failure.stepIndex) : [];
  await context.stores.journal.finish({ conversationRef: run.conversationRef, messages: run.messages, storedCount: 0, checkpoint, calls });
}

/**
 * Dead-letters a run that ended `tool_failed` or `model_failed`: its conversation and checkpoint
 * committed to toolrun's journal (the successful outcomes of the failed step recorded with them),
 * then one resumable tool-DLQ entry whose `originalMessageId` is `dbos:<runId>` — the pointer to
 * the run's workflow — pushed by key (a repeat adds nothing). Returns the entry.
 */
export async function deadLetterRun(run: AgentRunResult, messageId: string, context: RunEndContext): Promise<ResumableEntry | undefined> {
  const { runtime, clock } = context;
  // `dbos:<runId>`: the pointer to the run's workflow
  const entry: ResumableEntry | undefined = resumableEntryOf(run, runtime, {
    messageId: `dbos:${run.runId}`,
    firstSeenAt: new Date(clock.now()).toISOString(),
  });
  if (entry === undefined) return undefined;
  await commitRunEnd(run, messageId, context);
  if (await pushResumable(entry, context.stores.journal, { queues: context.queues }))
    context.onEvent?.(resumableDeadLetterAdded(entry, messageId || undefined, clock.now()));
  return entry;
}
