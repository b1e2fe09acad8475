import { newConversationRef } from '../../agent/conversation-ref.ts';
import { redactBounded } from '../../core/build-failure.ts';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import type { ToolCallRecord } from '../../core/tool-call-record.ts';
import type { ToolFailureEntry } from '../../ground/dead-letter-entries.ts';
import type { Stores } from '../../ground/ports/stores.ts';
import type { ToolFailure } from '../../ground/tool-result.ts';
import { boundedToolArgs, MAX_ENTRY_TOOL_NAME_BYTES, MAX_LAST_ERROR_BYTES } from '../../worker/build-tool-failure-entry.ts';
import { toolDeadLetterKey } from '../../worker/push-dead-letter.ts';

/** The `originalMessageId` prefix of a tool-DLQ entry dead-lettered from an AI SDK run (a host run has no queue message). */
export const AI_SDK_ENTRY_PREFIX = 'ai-sdk:';

/** Default of {@link AiSdkDeadLetterOptions.toolRetryBudget}, as in toolrun's own loop. */
export const DEFAULT_AI_SDK_RETRY_BUDGET = 2;

/** Where and how `toAiSdk` dead-letters what a run cannot recover in-band. */
export interface AiSdkDeadLetterOptions {
  /** toolrun's stores (`createToolrun(...).stores`): the entry goes to `toolDlq`, the conversation to `conversations`. */
  stores: { toolDlq: Pick<Stores['toolDlq'], 'pushOnce' | 'remove'>; conversations: Pick<Stores['conversations'], 'put'> };
  /** Retries (attempts beyond each call's first) one tool may spend across the run's steps. @defaultValue 2 */
  toolRetryBudget?: number;
}

interface Budget {
  attempts: number;
  retries: number;
}

/** The SDK's usage of one step, in any of its shapes (`ai` 5: numbers; 6 and 7: numbers too at this level). */
interface StepLike {
  usage?: { inputTokens?: unknown; outputTokens?: unknown };
}

function tokens(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** The tool-DLQ side of one AI SDK run: budgets per tool, the usage seen so far, and the one entry it may push. */
export interface AiSdkRunDeadLetter {
  /** `maxAttempts` for the next call of `toolName`: what is left of its retry budget. */
  maxAttemptsFor(toolName: string): number;
  /** Counts the call and dead-letters the run when the failure is exhausted. Never rejects because of the DLQ's content. */
  settle(call: { record: ToolCallRecord; messages: unknown; toolCallId: string | undefined; args: unknown }): Promise<void>;
  /** For the returned `prepareStep`: records the usage of the steps done so far. */
  observeSteps(steps: readonly unknown[]): void;
}

/** The SDK's `messages` with the failed call appended as the assistant turn of its step (the conversation a replay resumes). */
function conversationUpTo(messages: unknown, toolCallId: string, toolName: string, input: unknown): unknown[] {
  const prior = Array.isArray(messages) ? (messages as unknown[]) : [];
  return [...prior, { role: 'assistant', content: [{ type: 'tool-call', toolCallId, toolName, input }] }];
}

/** The arguments of a call as the model sent them, compared as JSON text (a string stays as it is). */
function argsKey(args: unknown): string {
  if (typeof args === 'string') return args;
  try {
    return JSON.stringify(args) ?? '';
  } catch {
    return '';
  }
}

function stepIndexOf(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  return (messages as unknown[]).filter((message) => (message as { role?: unknown } | null)?.role === 'assistant').length;
}

export function createAiSdkRunDeadLetter(runtime: ToolRuntime, runId: string, options: AiSdkDeadLetterOptions): AiSdkRunDeadLetter {
  const retryBudget = options.toolRetryBudget ?? DEFAULT_AI_SDK_RETRY_BUDGET;
  const budgets = new Map<string, Budget>();
  const usage = { input: 0, output: 0 };
  let deadLettered = false;
  /** The run's entry, until the run recovers its failed call itself. */
  let pushed: { id: string; toolName: string; args: string } | undefined;
  return {
    maxAttemptsFor(toolName) {
      return 1 + Math.max(0, retryBudget - (budgets.get(toolName)?.retries ?? 0));
    },
    observeSteps(steps) {
      let input = 0;
      let output = 0;
      for (const step of steps as StepLike[]) {
        input += tokens(step?.usage?.inputTokens);
        output += tokens(step?.usage?.outputTokens);
      }
      usage.input = Math.max(usage.input, input);
      usage.output = Math.max(usage.output, output);
    },
    async settle({ record, messages, toolCallId, args }) {
      const result = record.result;
      const budget = budgets.get(record.toolName) ?? { attempts: 0, retries: 0 };
      budgets.set(record.toolName, budget);
      budget.attempts += result.attempts;
      budget.retries += Math.max(0, result.attempts - 1);
      if (result.status === 'success' && pushed !== undefined && pushed.toolName === record.toolName && pushed.args === argsKey(args)) {
        // the model made the failed call again and it succeeded: the run recovered, nothing is left to replay
        const { id } = pushed;
        pushed = undefined;
        await options.stores.toolDlq.remove(id);
        return;
      }
      if (result.status !== 'failed' || deadLettered || toolCallId === undefined) return;
      const failure: ToolFailure = result;
      const circuitOpen = failure.error.code === 'CIRCUIT_OPEN';
      const exhausted = failure.error.type === 'environment' && budget.retries >= retryBudget;
      if (!record.misconfiguration && !circuitOpen && !exhausted) return;
      // one entry per run: its replay resumes from the first step it could not recover
      deadLettered = true;
      const conversationRef = newConversationRef(runtime.clock.now());
      await options.stores.conversations.put(conversationRef, conversationUpTo(messages, toolCallId, record.toolName, args));
      const stepIndex = stepIndexOf(messages);
      const entry: ToolFailureEntry = {
        kind: 'tool',
        runId,
        stepIndex,
        toolName: redactBounded(runtime.redactor, record.toolName, MAX_ENTRY_TOOL_NAME_BYTES),
        toolArgs: boundedToolArgs(args, runtime.redactor, record.sensitiveKeys),
        attempts: budget.attempts,
        lastError: {
          kind: record.error?.kind ?? 'unknown',
          status: record.error?.status ?? null,
          message: redactBounded(runtime.redactor, record.error?.message ?? failure.error.message, MAX_LAST_ERROR_BYTES),
        },
        conversationRef,
        tokensSpent: { ...usage },
        firstSeenAt: new Date(runtime.clock.now()).toISOString(),
        originalMessageId: `${AI_SDK_ENTRY_PREFIX}${runId}`,
        reason: circuitOpen ? 'circuit-open' : record.misconfiguration ? 'misconfiguration' : 'retry-budget-exhausted',
      };
      const { id } = await options.stores.toolDlq.pushOnce(toolDeadLetterKey(runId, stepIndex), entry);
      pushed = { id, toolName: record.toolName, args: argsKey(args) };
    },
  };
}
