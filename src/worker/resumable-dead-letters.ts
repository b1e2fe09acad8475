import type { ModelFailureInfo } from '../agent/model-policy.ts';
import { decodeRunState, type ToolFailureInfo } from '../agent/run-state.ts';
import type { ToolRuntime } from '../core/create-tool-runtime.ts';
import type { Clock } from '../ground/ports/clock.ts';
import type { RunCheckpoint, RunJournal } from '../ground/ports/run-journal.ts';
import { buildToolFailureEntry } from './build-tool-failure-entry.ts';
import type { DeadLetterSink, ModelFailureEntry, ResumableEntry, ToolFailureEntry } from '../ground/dead-letter-entries.ts';
import type { HandleMessageOptions, WithQueues } from './handle-message-options.ts';
import { modelDeadLetterKey, pushDeadLetter, runDeadLetterKey, toolDeadLetterKey } from './push-dead-letter.ts';
import { resumableDeadLetterAdded } from './worker-events.ts';

/** Builds the resumable tool-DLQ entry of `run`, whose model failed (`messageId` of its message, `''` when none; `firstSeenAt` ISO 8601). */
export function buildModelFailureEntry(
  run: { runId: string; conversationRef: string; tokensSpent: { input: number; output: number } },
  failure: ModelFailureInfo,
  { messageId, firstSeenAt }: { messageId: string; firstSeenAt: string },
): ModelFailureEntry {
  const { runId, conversationRef, tokensSpent } = run;
  return {
    kind: 'model',
    runId,
    stepIndex: failure.stepIndex,
    modelName: failure.modelName,
    attempts: failure.attempts,
    lastError: { kind: failure.lastError.kind, status: failure.lastError.status, message: failure.lastError.message, code: failure.lastError.code },
    conversationRef,
    tokensSpent: { ...tokensSpent },
    firstSeenAt,
    originalMessageId: messageId,
    reason: failure.reason,
    ...(failure.retryAfterMs !== undefined ? { retryAfterMs: failure.retryAfterMs } : {}),
  };
}

/**
 * The resumable tool-DLQ entry of a run that ended `tool_failed` (its `failure`: arguments and
 * texts redacted and bounded with `runtime`'s redactor and the tool's sensitive keys) or
 * `model_failed` (its `modelFailure`); `undefined` when it has neither.
 */
export function resumableEntryOf(
  run: {
    runId: string;
    conversationRef: string;
    tokensSpent: { input: number; output: number };
    failure?: ToolFailureInfo | undefined;
    modelFailure?: ModelFailureInfo | undefined;
  },
  runtime: ToolRuntime,
  context: { messageId: string; firstSeenAt: string },
): ToolFailureEntry | ModelFailureEntry | undefined {
  if (run.failure) {
    const sensitiveKeys = runtime.getTool(run.failure.toolName)?.definition.sensitive ?? [];
    return buildToolFailureEntry(run, run.failure, { ...context, redactor: runtime.redactor, sensitiveKeys });
  }
  return run.modelFailure ? buildModelFailureEntry(run, run.modelFailure, context) : undefined;
}

/** The `pushOnce` key of a resumable entry: per kind, run and step. */
export function resumableDeadLetterKey(entry: ResumableEntry): string {
  switch (entry.kind) {
    case 'tool':
      return toolDeadLetterKey(entry.runId, entry.stepIndex);
    case 'model':
      return modelDeadLetterKey(entry.runId, entry.stepIndex);
    case 'run':
      return runDeadLetterKey(entry.runId, entry.stepIndex);
  }
}

/**
 * Pushes a resumable entry: by key when the sink has `pushOnce`; else with `push`, then a
 * dead-letter mark in the journal that a redelivery reads (it cannot cover a crash between the
 * push and the mark). Returns whether an entry was added.
 */
export async function pushResumable(entry: ResumableEntry, journal: RunJournal, options: Required<Pick<HandleMessageOptions, 'queues'>>): Promise<boolean> {
  const sink = options.queues.toolDlq as DeadLetterSink<ResumableEntry>;
  const added = await pushDeadLetter(sink, resumableDeadLetterKey(entry), entry);
  if (typeof sink.pushOnce !== 'function') await journal.markDeadLettered(entry.runId, entry.stepIndex, entry.kind, entry.firstSeenAt);
  return added;
}

/**
 * Pushes the resumable entry of a `tool_failed` or `model_failed` run unless it was pushed already:
 * the journal's dead-letter mark (written for `push`-only sinks) or the sink's key says so.
 */
export async function ensureDeadLettered(
  checkpoint: RunCheckpoint,
  { runtime, journal, clock }: { runtime: ToolRuntime; journal: RunJournal; clock: Clock },
  options: WithQueues<HandleMessageOptions>,
): Promise<ToolFailureEntry | ModelFailureEntry | undefined> {
  const state = decodeRunState(checkpoint.data);
  const failed = checkpoint.status === 'model_failed' ? { modelFailure: state.modelFailure } : { failure: state.failure };
  const entry = resumableEntryOf({ ...checkpoint, ...failed }, runtime, { messageId: checkpoint.messageId, firstSeenAt: new Date(clock.now()).toISOString() });
  if (entry === undefined) return undefined;
  if (await journal.deadLettered(entry.runId, entry.stepIndex, entry.kind)) return undefined;
  if (!(await pushResumable(entry, journal, options))) return undefined;
  options.onEvent?.(resumableDeadLetterAdded(entry, checkpoint.messageId !== '' ? checkpoint.messageId : undefined, clock.now()));
  return entry;
}
