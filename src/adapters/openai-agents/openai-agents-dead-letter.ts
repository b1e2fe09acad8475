import type { RunContext } from '@openai/agents';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import type { ToolCallRecord } from '../../core/tool-call-record.ts';
import { createHostRunDeadLetter, type HostDeadLetterOptions } from '../../worker/host-run-dead-letter.ts';

/** The host name of an OpenAI Agents run's tool-DLQ entries: their `originalMessageId` is `openai-agents:<runId>`. */
export const OPENAI_AGENTS_HOST = 'openai-agents';

/** Where and how `toOpenAiAgents` dead-letters what a run cannot recover in-band. */
export type OpenAiAgentsDeadLetterOptions = HostDeadLetterOptions;

/** The SDK's function call item of the failed call, as `invoke` gets it in `details.toolCall`. */
interface FunctionCallLike {
  type?: unknown;
  callId?: unknown;
  name?: unknown;
  arguments?: unknown;
}

/** The tool-DLQ side of one OpenAI Agents run: what the model was sent, the budgets, and the one entry it may push. */
export interface OpenAiAgentsRunDeadLetter {
  /** `maxAttempts` for the next call of `toolName`: what is left of its retry budget, plus one. */
  maxAttemptsFor(toolName: string): number;
  /** For `callModelInputFilter`: the SDK's input items of the model call about to be made (before toolrun's rewriting). */
  observeModelInput(items: readonly unknown[]): void;
  /** Counts the call and dead-letters the run when its failure is exhausted. Rejects only with the stores' errors. */
  settle(call: { record: ToolCallRecord; runContext: RunContext<unknown> | undefined; toolCall: FunctionCallLike | undefined; args: string }): Promise<void>;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

/**
 * The dead-letter side of one `Runner.run` through `toOpenAiAgents({ deadLetter })`, on toolrun's
 * host dead-letter core (same routing, entry and budgets as every host). The conversation of an
 * entry is the SDK's input items of the model call that made the failed call (as
 * `callModelInputFilter` saw them: the run's input and the items it generated so far), plus the
 * failed `function_call` item; `tokensSpent` is the SDK's `RunContext.usage` when the tool ran
 * (the model call that made it included); `stepIndex` the model calls before it.
 */
export function createOpenAiAgentsRunDeadLetter(runtime: ToolRuntime, runId: string, options: OpenAiAgentsDeadLetterOptions): OpenAiAgentsRunDeadLetter {
  const core = createHostRunDeadLetter({ ...options, host: OPENAI_AGENTS_HOST, runId, runtime });
  let modelInput: readonly unknown[] | undefined;
  let modelCalls = 0;
  return {
    maxAttemptsFor: (toolName) => core.maxAttemptsFor(toolName),
    observeModelInput(items) {
      modelInput = items;
      modelCalls += 1;
    },
    async settle({ record, runContext, toolCall, args }) {
      const usage = runContext?.usage;
      core.observeUsage({ input: count(usage?.inputTokens), output: count(usage?.outputTokens) });
      // without toolrun's callModelInputFilter the SDK's own count of requests says which step this is
      const stepIndex = Math.max(0, (modelCalls > 0 ? modelCalls : count(usage?.requests)) - 1);
      const callId = typeof toolCall?.callId === 'string' && toolCall.callId.length > 0 ? toolCall.callId : undefined;
      await core.settle({
        record,
        toolCallId: callId,
        args,
        stepIndex,
        conversation: () => ({
          messages: [
            ...(modelInput ?? []),
            // the SDK's own item (its id and provider data replay as they came), with the arguments as the model sent them
            toolCall?.type === 'function_call'
              ? { ...toolCall, arguments: args }
              : { type: 'function_call', callId, name: record.toolName, arguments: args, status: 'completed' },
          ],
        }),
      });
    },
  };
}
