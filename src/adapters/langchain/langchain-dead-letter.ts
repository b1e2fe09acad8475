import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import type { ToolCallRecord } from '../../core/tool-call-record.ts';
import { createHostRunDeadLetter, DEFAULT_HOST_RETRY_BUDGET, type HostDeadLetterOptions, type HostRunDeadLetter } from '../../worker/host-run-dead-letter.ts';
import { conversationOf, stateMessages, stepIndexOf, usageOf, type LangChainToolConfig } from './langchain-conversation.ts';

/** The host name of LangChain agent runs: the `originalMessageId` of their tool-DLQ entries is `langchain:<runId>`, and `hosts.langchain` replays them. */
export const LANGCHAIN_HOST = 'langchain';

/** The `originalMessageId` prefix of a tool-DLQ entry dead-lettered from a LangChain agent run (a host run has no queue message). */
export const LANGCHAIN_ENTRY_PREFIX = `${LANGCHAIN_HOST}:`;

/** Default of `toolRetryBudget` of {@link LangChainDeadLetterOptions}, as in toolrun's own loop. */
export const DEFAULT_LANGCHAIN_RETRY_BUDGET = DEFAULT_HOST_RETRY_BUDGET;

/** Where and how `toolrunMiddleware` dead-letters what an agent run cannot recover in-band (toolrun's host dead-letter options). */
export type LangChainDeadLetterOptions = HostDeadLetterOptions;

/** How many runs one middleware remembers (the oldest is forgotten first). */
const MAX_REMEMBERED_RUNS = 1024;

/** One settled call, as the middleware's tool saw it. */
export interface SettledCall {
  record: ToolCallRecord;
  config: LangChainToolConfig;
  toolCallId: string | undefined;
  args: unknown;
}

/** The tool-DLQ side of the agent runs one middleware sees: toolrun's host dead-letter per run. */
export interface LangChainDeadLetter {
  /** `maxAttempts` for the next call of `toolName` in the run: what is left of its retry budget. */
  maxAttemptsFor(run: { key: string; runId: string }, toolName: string): number;
  /** Counts the call and dead-letters the run when the failure is exhausted (see `createHostRunDeadLetter`). */
  settle(run: { key: string; runId: string }, call: SettledCall): Promise<void>;
}

/**
 * LangChain's side of toolrun's host dead-letter, for the runs of one `toolrunMiddleware`: one
 * `createHostRunDeadLetter` per run (by `run.key`: a replay's continuation is a run of its own for
 * the budgets), its step the run's model turns before the failed one, its usage the state's
 * `usage_metadata`, its conversation a LangGraph checkpoint reference or the state's messages.
 */
export function createLangChainDeadLetter(runtime: ToolRuntime, options: LangChainDeadLetterOptions): LangChainDeadLetter {
  const runs = new Map<string, HostRunDeadLetter>();
  const runOf = ({ key, runId }: { key: string; runId: string }): HostRunDeadLetter => {
    let run = runs.get(key);
    if (run === undefined) {
      run = createHostRunDeadLetter({ ...options, host: LANGCHAIN_HOST, runId, runtime });
      runs.set(key, run);
      if (runs.size > MAX_REMEMBERED_RUNS) runs.delete(runs.keys().next().value as string);
    }
    return run;
  };
  return {
    maxAttemptsFor: (run, toolName) => runOf(run).maxAttemptsFor(toolName),
    async settle(run, { record, config, toolCallId, args }) {
      const core = runOf(run);
      const messages = stateMessages(config);
      if (record.result.status === 'failed') core.observeUsage(usageOf(messages));
      await core.settle({
        record,
        toolCallId,
        args,
        stepIndex: stepIndexOf(messages),
        conversation: () => conversationOf(config, { id: toolCallId ?? '', name: record.requestedName, args }),
      });
    },
  };
}
