import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import type { ToolCallRecord } from '../../core/tool-call-record.ts';
import { createHostRunDeadLetter, DEFAULT_HOST_RETRY_BUDGET, type HostDeadLetterOptions } from '../../worker/host-run-dead-letter.ts';

/** The host name of AI SDK runs: the `originalMessageId` of their tool-DLQ entries is `ai-sdk:<runId>`, and `hosts['ai-sdk']` replays them. */
export const AI_SDK_HOST = 'ai-sdk';

/** The `originalMessageId` prefix of a tool-DLQ entry dead-lettered from an AI SDK run (a host run has no queue message). */
export const AI_SDK_ENTRY_PREFIX = `${AI_SDK_HOST}:`;

/** Default of `toolRetryBudget` of {@link AiSdkDeadLetterOptions}, as in toolrun's own loop. */
export const DEFAULT_AI_SDK_RETRY_BUDGET = DEFAULT_HOST_RETRY_BUDGET;

/** Where and how `toAiSdk` dead-letters what a run cannot recover in-band (toolrun's host dead-letter options). */
export type AiSdkDeadLetterOptions = HostDeadLetterOptions;

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

function stepIndexOf(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  return (messages as unknown[]).filter((message) => (message as { role?: unknown } | null)?.role === 'assistant').length;
}

/** The AI SDK's side of toolrun's host dead-letter: its conversation shape, its step count and its usage. */
export function createAiSdkRunDeadLetter(runtime: ToolRuntime, runId: string, options: AiSdkDeadLetterOptions): AiSdkRunDeadLetter {
  const core = createHostRunDeadLetter({ ...options, host: AI_SDK_HOST, runId, runtime });
  return {
    maxAttemptsFor: (toolName) => core.maxAttemptsFor(toolName),
    observeSteps(steps) {
      let input = 0;
      let output = 0;
      for (const step of steps as StepLike[]) {
        input += tokens(step?.usage?.inputTokens);
        output += tokens(step?.usage?.outputTokens);
      }
      core.observeUsage({ input, output });
    },
    settle: ({ record, messages, toolCallId, args }) =>
      core.settle({
        record,
        toolCallId,
        args,
        stepIndex: stepIndexOf(messages),
        conversation: () => ({ messages: conversationUpTo(messages, toolCallId ?? '', record.toolName, args) }),
      }),
  };
}
