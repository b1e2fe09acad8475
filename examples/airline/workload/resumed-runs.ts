/**
 * What became of the tool-DLQ entries after the drain: read back from the store (run checkpoints
 * and stored conversations) and compared with the recordings, to show that each run resumed at
 * its failed step — no step done twice, none skipped.
 */
import type { ChatMessage } from '../../../src/agent/messages.ts';
import type { DeadLetterRecord, Stores } from '../../../src/ground/ports/stores.ts';
import type { ToolFailureEntry } from '../../../src/ground/dead-letter-entries.ts';
import type { AirlineRun } from '../trajectories.ts';

/** One drained entry: where its run failed, how it ended, and whether its steps match the recording. */
export interface ResumedRun {
  entryId: string;
  runId: string;
  /** The step that failed (the drain resumed here). */
  failedStep: number;
  toolName: string;
  /** `reason · last error kind [status]`, as in the tool-DLQ summary. */
  cause: string;
  /** The run's checkpoint status after the drain (`completed`, or `tool_failed` again…). */
  status: string;
  /** Steps of the whole run after the drain. */
  steps: number;
  /** Whether the entry is still in the tool DLQ. */
  stillInDlq: boolean;
  /**
   * The run's assistant turns in the stored conversation are the recorded ones, in order, each once
   * (compared by tool-call ids and text): the steps before the failure were not done again.
   */
  stepsMatchRecording: boolean;
}

/** `retry-budget-exhausted · server 503`: the reason and the last error's kind and status. */
export function describeToolFailureCause(entry: Pick<ToolFailureEntry, 'reason' | 'lastError'>): string {
  return `${entry.reason} · ${entry.lastError.kind}${entry.lastError.status !== null ? ` ${entry.lastError.status}` : ''}`;
}

function turnSignature(message: ChatMessage): string {
  return (message.toolCalls ?? []).length > 0 ? (message.toolCalls ?? []).map((call) => call.id).join(',') : `text:${message.content ?? ''}`;
}

/**
 * Inspects the runs of `entries` (the tool DLQ as it was before the drain) in `stores`.
 *
 * @param runsById the recorded runs, to compare the stored conversations with.
 */
export async function inspectResumedRuns(
  stores: Stores,
  entries: ReadonlyArray<DeadLetterRecord<unknown>>,
  runsById: ReadonlyMap<string, AirlineRun>,
): Promise<ResumedRun[]> {
  const remaining = new Set((await stores.toolDlq.list()).map((record) => record.id));
  const resumed: ResumedRun[] = [];
  for (const record of entries) {
    const entry = record.entry as ToolFailureEntry;
    const checkpoint = await stores.runs.get(entry.runId);
    const conversation = ((await stores.conversations.get(entry.conversationRef)) ?? []) as ChatMessage[];
    const run = runsById.get(entry.runId);
    let stepsMatchRecording = false;
    if (run !== undefined) {
      const live = conversation
        .slice(run.messagesBefore.length)
        .filter((message) => message.role === 'assistant')
        .map(turnSignature);
      const recorded = run.assistantTurns.filter((message) => message.role === 'assistant').map(turnSignature);
      // A run that ended on a tool reply in the recording gets one closing text turn from the recorded model.
      stepsMatchRecording =
        live.length >= recorded.length && recorded.every((signature, index) => live[index] === signature) && live.length <= recorded.length + 1;
    }
    resumed.push({
      entryId: record.id,
      runId: entry.runId,
      failedStep: entry.stepIndex,
      toolName: entry.toolName,
      cause: describeToolFailureCause(entry),
      status: checkpoint?.status ?? 'missing',
      steps: checkpoint?.stepIndex ?? 0,
      stillInDlq: remaining.has(record.id),
      stepsMatchRecording,
    });
  }
  return resumed;
}
