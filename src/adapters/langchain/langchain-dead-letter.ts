import { newConversationRef } from '../../agent/conversation-ref.ts';
import { redactBounded } from '../../core/build-failure.ts';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import type { ToolCallRecord } from '../../core/tool-call-record.ts';
import type { ToolFailureEntry } from '../../ground/dead-letter-entries.ts';
import type { Stores } from '../../ground/ports/stores.ts';
import type { ToolFailure } from '../../ground/tool-result.ts';
import { boundedToolArgs, MAX_ENTRY_TOOL_NAME_BYTES, MAX_LAST_ERROR_BYTES } from '../../worker/build-tool-failure-entry.ts';
import { toolDeadLetterKey } from '../../worker/push-dead-letter.ts';
import { conversationToStore, stateMessages, stepIndexOf, usageOf, type LangChainToolConfig } from './langchain-conversation.ts';

/** The `originalMessageId` prefix of a tool-DLQ entry dead-lettered from a LangChain agent run (a host run has no queue message). */
export const LANGCHAIN_ENTRY_PREFIX = 'langchain:';

/** Default of {@link LangChainDeadLetterOptions.toolRetryBudget}, as in toolrun's own loop. */
export const DEFAULT_LANGCHAIN_RETRY_BUDGET = 2;

/** How many runs' budgets one middleware remembers (the oldest is forgotten first). */
const MAX_REMEMBERED_RUNS = 1024;

/** Where and how `toolrunMiddleware` dead-letters what an agent run cannot recover in-band. */
export interface LangChainDeadLetterOptions {
  /** toolrun's stores (`createToolrun(...).stores`): the entry goes to `toolDlq`, the conversation (or its checkpoint reference) to `conversations`. */
  stores: { toolDlq: Pick<Stores['toolDlq'], 'pushOnce' | 'remove'>; conversations: Pick<Stores['conversations'], 'put'> };
  /** Retries (attempts beyond each call's first) one tool may spend across the run's steps. @defaultValue 2 */
  toolRetryBudget?: number;
}

/** One failed or succeeded call, as the middleware's tool saw it. */
export interface SettledCall {
  record: ToolCallRecord;
  config: LangChainToolConfig;
  toolCallId: string | undefined;
  args: unknown;
}

/** The tool-DLQ side of the agent runs of one middleware: budgets per run and tool, and each run's one entry. */
export interface LangChainDeadLetter {
  /** `maxAttempts` for the next call of `toolName` in `runKey`'s run: what is left of its retry budget. */
  maxAttemptsFor(runKey: string, toolName: string): number;
  /** Counts the call and dead-letters the run when the failure is exhausted. */
  settle(runKey: string, runId: string, call: SettledCall): Promise<void>;
}

interface RunState {
  budgets: Map<string, { attempts: number; retries: number }>;
  deadLettered: boolean;
  /** The run's entry, until the run recovers its failed call itself. */
  pushed?: { id: string; toolName: string; args: string };
}

/** The arguments of a call as the model sent them, compared as JSON text. */
function argsKey(args: unknown): string {
  if (typeof args === 'string') return args;
  try {
    return JSON.stringify(args) ?? '';
  } catch {
    return '';
  }
}

function entryOf(runtime: ToolRuntime, runId: string, call: SettledCall, facts: { attempts: number; conversationRef: string; reason: ToolFailureEntry['reason'] }): ToolFailureEntry {
  const { record } = call;
  const failure = record.result as ToolFailure;
  const messages = stateMessages(call.config);
  return {
    kind: 'tool',
    runId,
    stepIndex: stepIndexOf(messages),
    toolName: redactBounded(runtime.redactor, record.toolName, MAX_ENTRY_TOOL_NAME_BYTES),
    toolArgs: boundedToolArgs(call.args, runtime.redactor, record.sensitiveKeys),
    attempts: facts.attempts,
    lastError: {
      kind: record.error?.kind ?? 'unknown',
      status: record.error?.status ?? null,
      message: redactBounded(runtime.redactor, record.error?.message ?? failure.error.message, MAX_LAST_ERROR_BYTES),
    },
    conversationRef: facts.conversationRef,
    tokensSpent: usageOf(messages),
    firstSeenAt: new Date(runtime.clock.now()).toISOString(),
    originalMessageId: `${LANGCHAIN_ENTRY_PREFIX}${runId}`,
    reason: facts.reason,
  };
}

/**
 * The tool DLQ of the agent runs one `toolrunMiddleware` sees, with toolrun's routing: a transient
 * failure with retry budget left stays in-band; one that spends the tool's budget across the run's
 * steps, a misconfiguration (it fed the shared breaker) or an open shared breaker becomes the run's
 * one entry (the first step it could not recover, where a replay resumes). When the run makes the
 * failed call again with the same arguments and it succeeds, the entry is removed.
 */
export function createLangChainDeadLetter(runtime: ToolRuntime, options: LangChainDeadLetterOptions): LangChainDeadLetter {
  const retryBudget = options.toolRetryBudget ?? DEFAULT_LANGCHAIN_RETRY_BUDGET;
  const runs = new Map<string, RunState>();
  const runOf = (runKey: string): RunState => {
    let run = runs.get(runKey);
    if (run === undefined) {
      run = { budgets: new Map(), deadLettered: false };
      runs.set(runKey, run);
      if (runs.size > MAX_REMEMBERED_RUNS) runs.delete(runs.keys().next().value as string);
    }
    return run;
  };
  return {
    maxAttemptsFor(runKey, toolName) {
      return 1 + Math.max(0, retryBudget - (runs.get(runKey)?.budgets.get(toolName)?.retries ?? 0));
    },
    async settle(runKey, runId, call) {
      const run = runOf(runKey);
      const { record, toolCallId, args } = call;
      const result = record.result;
      const budget = run.budgets.get(record.toolName) ?? { attempts: 0, retries: 0 };
      run.budgets.set(record.toolName, budget);
      budget.attempts += result.attempts;
      budget.retries += Math.max(0, result.attempts - 1);
      const pushed = run.pushed;
      if (result.status === 'success' && pushed !== undefined && pushed.toolName === record.toolName && pushed.args === argsKey(args)) {
        // the model made the failed call again and it succeeded: the run recovered, nothing is left to replay
        delete run.pushed;
        await options.stores.toolDlq.remove(pushed.id);
        return;
      }
      if (result.status !== 'failed' || run.deadLettered || toolCallId === undefined) return;
      const circuitOpen = result.error.code === 'CIRCUIT_OPEN';
      const exhausted = result.error.type === 'environment' && budget.retries >= retryBudget;
      if (!record.misconfiguration && !circuitOpen && !exhausted) return;
      run.deadLettered = true;
      const conversationRef = newConversationRef(runtime.clock.now());
      await options.stores.conversations.put(conversationRef, conversationToStore(call.config, { id: toolCallId, name: record.requestedName, args }));
      const reason = circuitOpen ? 'circuit-open' : record.misconfiguration ? 'misconfiguration' : 'retry-budget-exhausted';
      const entry = entryOf(runtime, runId, call, { attempts: budget.attempts, conversationRef, reason });
      const { id } = await options.stores.toolDlq.pushOnce(toolDeadLetterKey(runId, entry.stepIndex), entry);
      run.pushed = { id, toolName: record.toolName, args: argsKey(args) };
    },
  };
}
