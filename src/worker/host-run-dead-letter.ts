import { newConversationRef } from '../agent/conversation-ref.ts';
import { redactBounded } from '../core/build-failure.ts';
import type { ToolRuntime } from '../core/create-tool-runtime.ts';
import type { ToolCallRecord } from '../core/tool-call-record.ts';
import type { ToolFailureEntry } from '../ground/dead-letter-entries.ts';
import type { RunJournal } from '../ground/ports/run-journal.ts';
import type { Stores } from '../ground/ports/stores.ts';
import { boundedToolArgs, MAX_ENTRY_TOOL_NAME_BYTES, MAX_LAST_ERROR_BYTES } from './build-tool-failure-entry.ts';
import { hostEntryMessageId } from './host-entry.ts';
import { toolDeadLetterKey } from './push-dead-letter.ts';

/** Default of {@link HostDeadLetterOptions.toolRetryBudget}, as in toolrun's own loop. */
export const DEFAULT_HOST_RETRY_BUDGET = 2;

/** Where and how a host adapter dead-letters what a run cannot recover in-band (the `deadLetter` option of `toAiSdk`, `toAnthropicTools`…). */
export interface HostDeadLetterOptions {
  /** toolrun's stores (`createToolrun(...).stores`): the entry goes to `toolDlq`, a stored conversation to the run's `journal`. */
  stores: { toolDlq: Pick<Stores['toolDlq'], 'pushOnce' | 'remove'>; journal: Pick<RunJournal, 'putConversation'> };
  /** Retries (attempts beyond each call's first) one tool may spend across the run's steps, an integer 0–100. @defaultValue 2 */
  toolRetryBudget?: number;
}

/** Options of {@link createHostRunDeadLetter}. */
export interface HostRunDeadLetterOptions extends HostDeadLetterOptions {
  /** The host's name (see `isHostName`): the entry's `originalMessageId` is `<host>:<runId>`, and replay is routed by it. */
  host: string;
  /** The run: one host run (one `generateText`, one tool runner…) writes at most one entry. */
  runId: string;
  /** The runtime whose tools the host calls (its redactor and clock are used for the entry). */
  runtime: ToolRuntime;
}

/**
 * The conversation of a dead-lettered call: the messages to store in toolrun's conversation store
 * (up to and including the assistant turn holding the failed call, in the host's own format), or a
 * reference to where the host keeps it durably itself (a LangGraph `thread_id` and checkpoint id),
 * which becomes the entry's `conversationRef` as it is.
 */
export type HostConversation = { messages: readonly unknown[] } | { ref: string };

/** One settled tool call of a host run, as {@link HostRunDeadLetter.settle} takes it. */
export interface HostSettledCall {
  /** The runtime's developer record of the call (`runtime.execute`). */
  record: ToolCallRecord;
  /** The host's tool-call id; a call without one is never dead-lettered (a replay could not answer it). */
  toolCallId: string | undefined;
  /** The arguments as the model sent them (the entry keeps them redacted and bounded). */
  args: unknown;
  /** The host's step of the call: assistant turns before the failed one (0-based); a function is called only when the call is dead-lettered. */
  stepIndex: number | (() => number);
  /** The conversation up to the failed call; called only when the call is dead-lettered. */
  conversation: () => HostConversation;
}

/** The tool-DLQ side of one host run: budgets per tool, the usage seen so far, and the one entry it may push. */
export interface HostRunDeadLetter {
  readonly host: string;
  readonly runId: string;
  /** `maxAttempts` for the next call of `toolName` (`runtime.execute`): what is left of its retry budget, plus one. */
  maxAttemptsFor(toolName: string): number;
  /**
   * Counts the call and dead-letters the run when its failure is exhausted: a transient failure
   * once the tool's retry budget is spent (`retry-budget-exhausted`), a misconfiguration
   * (`misconfiguration`) or an open shared breaker (`circuit-open`). At most one entry per run (the
   * first step it could not recover). A later success of the same tool with the same arguments
   * removes it (the run recovered by itself). Rejects only with the stores' errors.
   */
  settle(call: HostSettledCall): Promise<void>;
  /** Records the host's usage so far in tokens (cumulative; the largest seen is kept): the entry's `tokensSpent`. */
  observeUsage(usage: { input: number; output: number }): void;
}

interface Budget {
  attempts: number;
  retries: number;
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

function tokens(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

/**
 * The dead-letter side of one host run, shared by every host adapter: the same routing as toolrun's
 * own loop (transient with budget left → in-band; exhausted, misconfigured or circuit open → one
 * resumable tool-DLQ entry; never the message DLQ: a host run has no message). The entry is a
 * `ToolFailureEntry` with `originalMessageId` `<host>:<runId>`, its conversation stored through
 * `stores.journal` under a new `conversationRef` (or the host's own reference), and
 * `tokensSpent` the usage observed before the failed step. What the host does with the failed call
 * (the model gets the envelope) is unchanged.
 *
 * @throws TypeError when `host` is not a host name.
 */
export function createHostRunDeadLetter(options: HostRunDeadLetterOptions): HostRunDeadLetter {
  const { host, runId, runtime, stores } = options;
  const originalMessageId = hostEntryMessageId(host, runId);
  const retryBudget = options.toolRetryBudget ?? DEFAULT_HOST_RETRY_BUDGET;
  const budgets = new Map<string, Budget>();
  const usage = { input: 0, output: 0 };
  let deadLettered = false;
  /** The run's entry, until the run recovers its failed call itself. */
  let pushed: { id: string; toolName: string; args: string } | undefined;
  return {
    host,
    runId,
    maxAttemptsFor(toolName) {
      return 1 + Math.max(0, retryBudget - (budgets.get(toolName)?.retries ?? 0));
    },
    observeUsage(seen) {
      usage.input = Math.max(usage.input, tokens(seen?.input));
      usage.output = Math.max(usage.output, tokens(seen?.output));
    },
    async settle({ record, toolCallId, args, stepIndex: stepOf, conversation }) {
      const result = record.result;
      const budget = budgets.get(record.toolName) ?? { attempts: 0, retries: 0 };
      budgets.set(record.toolName, budget);
      budget.attempts += result.attempts;
      budget.retries += Math.max(0, result.attempts - 1);
      if (result.status === 'success' && pushed !== undefined && pushed.toolName === record.toolName && pushed.args === argsKey(args)) {
        // the model made the failed call again and it succeeded: the run recovered, nothing is left to replay
        const { id } = pushed;
        pushed = undefined;
        await stores.toolDlq.remove(id);
        return;
      }
      if (result.status !== 'failed' || deadLettered || toolCallId === undefined) return;
      const circuitOpen = result.error.code === 'CIRCUIT_OPEN';
      const exhausted = result.error.type === 'environment' && budget.retries >= retryBudget;
      if (!record.misconfiguration && !circuitOpen && !exhausted) return;
      // one entry per run: its replay resumes from the first step it could not recover
      deadLettered = true;
      const stepIndex = typeof stepOf === 'function' ? stepOf() : stepOf;
      const held = conversation();
      let conversationRef: string;
      if ('ref' in held) conversationRef = held.ref;
      else {
        conversationRef = newConversationRef(runtime.clock.now());
        await stores.journal.putConversation(conversationRef, held.messages);
      }
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
          message: redactBounded(runtime.redactor, record.error?.message ?? result.error.message, MAX_LAST_ERROR_BYTES),
        },
        conversationRef,
        tokensSpent: { ...usage },
        firstSeenAt: new Date(runtime.clock.now()).toISOString(),
        originalMessageId,
        reason: circuitOpen ? 'circuit-open' : record.misconfiguration ? 'misconfiguration' : 'retry-budget-exhausted',
      };
      const { id } = await stores.toolDlq.pushOnce(toolDeadLetterKey(runId, stepIndex), entry);
      pushed = { id, toolName: record.toolName, args: argsKey(args) };
    },
  };
}
