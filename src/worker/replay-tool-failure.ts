import { runAgent, ledgerKey, type AgentRunHooks, type AgentRunStatus } from '../agent/run-agent.ts';
import type { ChatMessage, Model } from '../agent/messages.ts';
import type { Stores } from '../core/ports/stores.ts';
import type { ToolCallRecord } from '../core/tool-call-record.ts';
import type { ToolRuntime, ToolRuntimeOptions } from '../core/create-tool-runtime.ts';
import type { ToolsInput } from '../core/tool-registry.ts';
import type { SharedBreakerOptions } from '../policies/shared-breaker.ts';
import type { ToolFailureEntry } from './dead-letter-entries.ts';
import { resolveRuntime } from './resolve-runtime.ts';
import { buildToolFailureEntry } from './build-tool-failure-entry.ts';
import { getDefaultStores } from './default-stores.ts';
import type { WorkerEvent } from './worker-events.ts';

/** Options of {@link replayToolFailure}: the same model, tools and stores the run had. */
export interface ReplayOptions {
  model: Model;
  tools?: ToolsInput;
  runtime?: ToolRuntime;
  runtimeOptions?: Omit<ToolRuntimeOptions, 'tools' | 'sharedBreaker'>;
  /** The stores the run was checkpointed in. @defaultValue the process-wide in-memory set */
  stores?: Stores;
  /** A fresh in-band budget for the resumed run. @defaultValue 2 */
  toolRetryBudget?: number;
  maxSteps?: number;
  sharedBreaker?: Partial<SharedBreakerOptions> | false;
  onEvent?: (event: WorkerEvent) => void;
  onToolCall?: (record: ToolCallRecord, stepIndex: number) => void;
  /**
   * Run-level observers passed to `runAgent` as its `hooks` (e.g. `createObservability().runHooks`
   * of `toolrun/otel`: a run span, step indexes and recovery rounds for the resumed run, which
   * starts with `resumed: true`). @defaultValue none
   */
  runHooks?: AgentRunHooks;
  signal?: AbortSignal;
}

/**
 * How a replay ended:
 * - an agent status (`completed`, `tool_failed` again, `max_steps`, …) of the resumed run;
 * - `already_completed`: the run had completed (a second replay): nothing was done;
 * - `expired`: the conversation (or the run's checkpoint) is gone — its TTL passed;
 * - `invalid_entry`: the entry lacks what a replay needs.
 */
export type ReplayStatus = AgentRunStatus | 'already_completed' | 'expired' | 'invalid_entry';

/** The outcome of one replay. Never thrown: a drain of many entries goes on past a bad one. */
export interface ReplayResult {
  status: ReplayStatus;
  runId: string | null;
  /** Model calls made by this replay (only the remaining steps). */
  modelCalls: number;
  text: string | null;
  /** When the run failed again: why. */
  failure?: { stepIndex: number; toolName: string; reason: string };
  /** When the run failed again: its new tool-DLQ entry (the drain puts it in place of the old one). */
  entry?: ToolFailureEntry;
}

function isReplayable(entry: unknown): entry is ToolFailureEntry {
  if (typeof entry !== 'object' || entry === null) return false;
  const candidate = entry as Partial<ToolFailureEntry>;
  return typeof candidate.runId === 'string' && typeof candidate.conversationRef === 'string' && Number.isInteger(candidate.stepIndex);
}

/**
 * Resumes a run from its failed step (SPEC.md §2): the conversation is read through
 * `conversationRef`, the failed call is re-executed with its real arguments from the stored
 * conversation (the entry's are redacted), and the model is called only for the remaining steps.
 * Idempotent: calls recorded in the ledger are not repeated, and a completed run is not run again,
 * so replaying one entry twice performs each side effect once.
 */
export async function replayToolFailure(entry: ToolFailureEntry, options: ReplayOptions): Promise<ReplayResult> {
  if (!isReplayable(entry)) return { status: 'invalid_entry', runId: null, modelCalls: 0, text: null };
  const stores = options.stores ?? getDefaultStores();
  const checkpoint = await stores.runs.get(entry.runId);
  if (checkpoint?.status === 'completed') {
    return { status: 'already_completed', runId: entry.runId, modelCalls: 0, text: typeof checkpoint.data?.text === 'string' ? checkpoint.data.text : null };
  }
  const stored = (await stores.conversations.get(entry.conversationRef)) as ChatMessage[] | undefined;
  if (!stored || !checkpoint) return { status: 'expired', runId: entry.runId, modelCalls: 0, text: null };

  // Forget the failed outcomes of the failed step so those calls run again; keep the successful ones.
  let messages = stored;
  if (checkpoint.data?.pendingStep === true) {
    const lastAssistant = messages.map((message) => message.role).lastIndexOf('assistant');
    const calls = messages[lastAssistant]?.toolCalls ?? [];
    const retry = new Set<string>();
    for (const [callIndex, call] of calls.entries()) {
      const key = ledgerKey(entry.runId, checkpoint.stepIndex, callIndex);
      const recorded = (await stores.ledger.get(key)) as { status?: string } | undefined;
      if (recorded?.status === 'failed') {
        await stores.ledger.delete(key);
        retry.add(call.id);
      }
    }
    messages = messages.filter((message, index) => !(index > lastAssistant && message.role === 'tool' && retry.has(message.toolCallId ?? '')));
    await stores.conversations.put(entry.conversationRef, messages);
  }
  const runtime = resolveRuntime(options, stores);
  await stores.runs.put({ ...checkpoint, status: 'running', updatedAt: new Date(runtime.clock.now()).toISOString() });

  const run = await runAgent({
    model: options.model,
    runtime,
    messages: [],
    runId: entry.runId,
    resetBudgets: true,
    ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}),
    ...(options.toolRetryBudget !== undefined ? { toolRetryBudget: options.toolRetryBudget } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onToolCall ? { onToolCall: options.onToolCall } : {}),
    ...(options.runHooks ? { hooks: options.runHooks } : {}),
    persistence: { conversations: stores.conversations, runs: stores.runs, ledger: stores.ledger, messageId: checkpoint.messageId },
  });
  return {
    status: run.status,
    runId: run.runId,
    modelCalls: run.modelCalls,
    text: run.text,
    ...(run.failure
      ? {
          failure: { stepIndex: run.failure.stepIndex, toolName: run.failure.toolName, reason: run.failure.reason },
          entry: buildToolFailureEntry(run, run.failure, {
            messageId: checkpoint.messageId,
            redactor: runtime.redactor,
            sensitiveKeys: runtime.getTool(run.failure.toolName)?.definition.sensitive ?? [],
            firstSeenAt: entry.firstSeenAt,
          }),
        }
      : {}),
  };
}
