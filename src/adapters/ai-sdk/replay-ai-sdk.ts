import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import type { ResumableEntry } from '../../ground/dead-letter-entries.ts';
import type { DeadLetterRecord, JsonValue, Stores } from '../../ground/ports/stores.ts';
import type { ToolResult } from '../../ground/tool-result.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import type { ReplayStatus } from '../../worker/replay-tool-failure.ts';
import { claimRun, newClaimHolder } from '../../worker/run-claim.ts';
import { AI_SDK_ENTRY_PREFIX } from './ai-sdk-dead-letter.ts';

/** What `continueRun` returns: the parts of `generateText`'s result the replay reads. */
export interface AiSdkContinuation {
  text: string;
  /** One per model call the continuation made. */
  steps: readonly unknown[];
  response: { messages: readonly unknown[] };
}

/** Options of {@link replayAiSdkDeadLetter}: registered once per app, used for every entry. */
export interface AiSdkReplayOptions {
  /** The stores the run dead-lettered into (the claim, the ledger, the conversation, the DLQ). */
  stores: Pick<Stores, 'toolDlq' | 'conversations' | 'ledger' | 'claims' | 'journal'>;
  /** The runtime whose tool failed (its fixed configuration). */
  runtime: ToolRuntime;
  /**
   * How to continue a run of this app in the AI SDK's own loop: call `generateText` with your
   * model, tools and options and these `messages`, and return its result, e.g.
   * `(messages) => generateText({ model, tools, messages, stopWhen: stepCountIs(5) })`.
   */
  continueRun(messages: unknown[]): Promise<AiSdkContinuation>;
  /** How long the replay's claim on the run (`run:<runId>`) lasts without renewal. @defaultValue 300_000 */
  claimLeaseMs?: number;
}

/** How one replay ended, in toolrun's replay vocabulary (`completed`, `tool_failed`, `already_completed`, `in_progress`, `expired`, `invalid_entry`). */
export interface AiSdkReplayResult {
  status: ReplayStatus;
  runId: string | null;
  /** Model calls the continuation made (the remaining steps only). */
  modelCalls: number;
  text: string | null;
  /** The record's id. */
  id: string;
  /** The entry left the DLQ (the run completed, or had completed). */
  removed: boolean;
}

/** The ledger key of the failed call's outcome in a replay. */
function callKey(runId: string, stepIndex: number, toolCallId: string): string {
  return `${AI_SDK_ENTRY_PREFIX}${runId}:${stepIndex}:${toolCallId}`;
}

/** The ledger key that says a replay completed the run. */
function completedKey(runId: string): string {
  return `${AI_SDK_ENTRY_PREFIX}${runId}:completed`;
}

interface FailedCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

/** The call the stored conversation ends with (the assistant turn `toAiSdk` appended). */
function failedCallOf(messages: readonly unknown[]): FailedCall | undefined {
  const last = messages.at(-1) as { role?: unknown; content?: unknown } | undefined;
  if (last?.role !== 'assistant' || !Array.isArray(last.content)) return undefined;
  const part = (last.content as Array<Record<string, unknown>>).find((candidate) => candidate.type === 'tool-call');
  if (typeof part?.toolCallId !== 'string' || typeof part.toolName !== 'string') return undefined;
  return { toolCallId: part.toolCallId, toolName: part.toolName, input: part.input };
}

/** The tool message answering `call` with `result`, as the AI SDK writes one. */
function toolMessage(call: FailedCall, result: ToolResult): unknown {
  return {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        output:
          result.status === 'success' ? { type: 'json', value: (result.data ?? null) as JsonValue } : { type: 'error-text', value: JSON.stringify(result) },
      },
    ],
  };
}

/**
 * Replays a tool-DLQ entry that `toAiSdk({ deadLetter })` wrote, in the AI SDK's own loop: claims
 * the run (`run:<runId>`, through `stores.journal`; a second replay at once gets `in_progress`), reads the
 * conversation the SDK had handed the tool (`expired` when it is gone), calls the failed tool again
 * with its recorded arguments under the idempotency ledger (a write already applied by an earlier
 * replay is not applied again), appends its result and hands the conversation to `continueRun`,
 * so the model is called for the remaining steps only. A run that completes leaves the DLQ
 * (`completed`; a later replay of the same record: `already_completed`). A tool that fails again
 * leaves the entry where it is (`tool_failed`), the model not called.
 *
 * @throws ToolrunError `INVALID_OPTIONS` without `stores`, `runtime` or `continueRun`; whatever the stores or `continueRun` throw (the claim is released first).
 */
export async function replayAiSdkDeadLetter(record: DeadLetterRecord<ResumableEntry>, options: AiSdkReplayOptions): Promise<AiSdkReplayResult> {
  const { stores, runtime, continueRun } = options ?? ({} as AiSdkReplayOptions);
  if (stores === undefined || runtime === undefined || typeof continueRun !== 'function')
    throw new ToolrunError('INVALID_OPTIONS', 'replayAiSdkDeadLetter needs stores, runtime and continueRun');
  const entry = record.entry;
  const base = { id: record.id, modelCalls: 0, text: null, removed: false };
  if (entry?.kind !== 'tool' || typeof entry.runId !== 'string' || !entry.originalMessageId?.startsWith(AI_SDK_ENTRY_PREFIX))
    return { ...base, status: 'invalid_entry', runId: null };
  const { runId } = entry;
  const claimed = await claimRun(stores.journal, runId, {
    holder: newClaimHolder('ai-sdk-replay'),
    leaseMs: options.claimLeaseMs ?? 300_000,
    clock: runtime.clock,
  });
  if (!claimed.ok) return { ...base, status: 'in_progress', runId };
  try {
    const completed = (await stores.ledger.get(completedKey(runId))) as { text?: string } | undefined;
    if (completed !== undefined)
      return { ...base, status: 'already_completed', runId, text: completed.text ?? null, removed: await stores.toolDlq.remove(record.id) };
    const messages = await stores.conversations.get(entry.conversationRef);
    if (messages === undefined) return { ...base, status: 'expired', runId };
    const call = failedCallOf(messages);
    if (call === undefined) return { ...base, status: 'invalid_entry', runId };

    const key = callKey(runId, entry.stepIndex, call.toolCallId);
    let result = (await stores.ledger.get(key)) as ToolResult | undefined;
    if (result === undefined) {
      result = await runtime.run({ name: call.toolName, args: call.input, callId: call.toolCallId, runId, idempotencyKey: key });
      if (result.status !== 'success') return { ...base, status: 'tool_failed', runId };
      await stores.ledger.putIfAbsent(key, result as unknown as JsonValue);
    }
    const resumed = [...messages, toolMessage(call, result)];
    await stores.conversations.put(entry.conversationRef, resumed);
    const continuation = await continueRun(resumed);
    await stores.conversations.put(entry.conversationRef, [...resumed, ...continuation.response.messages]);
    await stores.ledger.putIfAbsent(completedKey(runId), { text: continuation.text });
    const removed = await stores.toolDlq.remove(record.id);
    return { ...base, status: 'completed', runId, modelCalls: continuation.steps.length, text: continuation.text, removed };
  } finally {
    await claimed.claim.release();
  }
}
