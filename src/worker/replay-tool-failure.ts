import { runAgent, type AgentRunHooks } from '../agent/run-agent.ts';
import type { ReplayStatus } from './replay-status.ts';
import type { HostRegistry } from './host-continuation.ts';
import type { CommittedRun, RunJournal } from '../ground/ports/run-journal.ts';
import type { ChatMessage, Model } from '../agent/messages.ts';
import type { Stores } from '../ground/ports/stores.ts';

import type { ToolRuntime } from '../core/create-tool-runtime.ts';
import type { SharedBreaker } from '../policies/shared-breaker.ts';
import type { ToolsInput } from '../core/tool-registry.ts';

import type { ModelFailureEntry, ResumableEntry, ToolFailureEntry } from '../ground/dead-letter-entries.ts';
import { resolveRuntime } from './resolve-runtime.ts';
import { hostOfEntry } from './host-entry.ts';
import { runOptionsOf } from './handle-message.ts';
import { resumableEntryOf } from './resumable-dead-letters.ts';

import { claimRun, newClaimHolder } from './run-claim.ts';
import { decodeRunState } from '../agent/run-state.ts';
import { createMemoryStores } from '../stores/memory/index.ts';
import type { RunHooks, RunLimits, RunModelOptions, RunRuntimeOptions } from './run-options.ts';

/** Options of {@link replayToolFailure}: the same model, tools and stores the run had. */
export interface ReplayOptions
  extends Pick<RunLimits, 'maxSteps' | 'toolRetryBudget'>, Pick<RunHooks, 'onEvent' | 'onToolCall'>, RunModelOptions, RunRuntimeOptions {
  model: Model;
  tools?: ToolsInput;
  runtime?: ToolRuntime;
  /** The stores the run was checkpointed in. @defaultValue fresh in-memory stores (which hold no run: the replay ends `expired`) */
  stores?: Stores;
  /**
   * Run-level observers passed to `runAgent` as its `hooks` (e.g. `createObservability().runHooks`
   * of `toolrun/otel`: a run span, step indexes and recovery rounds for the resumed run, which
   * starts with `resumed: true`). @defaultValue none
   */
  runHooks?: AgentRunHooks;
  signal?: AbortSignal;
  /**
   * How long the replay's claim on the run (`run:<runId>`, taken through `stores.journal`) lasts without
   * renewal; renewed every third of it while the replay runs. A second replay, drain or worker
   * finds the run `in_progress` meanwhile; a replayer that crashed frees it when the claim expires.
   * @defaultValue 300_000
   */
  claimLeaseMs?: number;
  /**
   * How to continue the runs of SDK hosts and durable engines, by host name: `replayDeadLetter`,
   * `drainToolDlq`, `toolrun dlq replay|drain` and the dashboard replay an entry whose
   * `originalMessageId` is `<host>:<runId>` with `hosts[host]` (see `HostRegistry`), never with
   * toolrun's own loop; a host not registered leaves it in the DLQ (`invalid_entry`, with `host`
   * and `message`). @defaultValue none
   */
  hosts?: HostRegistry;
}

/** The outcome of one replay. Never thrown: a drain of many entries goes on past a bad one. */
export interface ReplayResult {
  status: ReplayStatus;
  runId: string | null;
  /** Model calls made by this replay (only the remaining steps). */
  modelCalls: number;
  text: string | null;
  /** When the run failed again: why (`toolName` is the model's name for a model failure). */
  failure?: { stepIndex: number; toolName: string; reason: string; kind?: 'tool' | 'model' };
  /** When the run failed again: its new tool-DLQ entry (the drain puts it in place of the old one). */
  entry?: ToolFailureEntry | ModelFailureEntry;
  /** For `in_progress`: who holds the run's claim. */
  holder?: string;
  /**
   * For `completed`: the calls this replay ran again that failed again, each with its tool and the
   * envelope's failure code. The model answered without them (it was handed the failure, as in any
   * run), so the run completed and its entry leaves the DLQ — but the world is not fixed for them.
   * Absent when every call run again succeeded.
   */
  failedAgain?: { callId: string; toolName: string; code: string }[];
  /** For an entry a host run dead-lettered (`originalMessageId` `<host>:<runId>`): the host. */
  host?: string;
  /** A word on why the entry was not replayed or did not complete (a host not registered, a conversation gone…). */
  message?: string;
}

function isReplayable(entry: unknown): entry is ResumableEntry {
  if (typeof entry !== 'object' || entry === null) return false;
  const candidate = entry as Partial<ToolFailureEntry>;
  return typeof candidate.runId === 'string' && typeof candidate.conversationRef === 'string' && Number.isInteger(candidate.stepIndex);
}

/**
 * Resumes a run from its failed step: the conversation is read through
 * `conversationRef`, the failed call is re-executed with its real arguments from the stored
 * conversation (the entry's are redacted), and the model is called only for the remaining steps.
 * Idempotent: calls recorded in the ledger are not repeated, and a completed run is not run again,
 * so replaying one entry twice performs each side effect once.
 *
 * Every kind of tool-DLQ entry replays the same way: a tool failure re-executes the failed call, a
 * model failure (`kind: 'model'`) calls the model again at its step, a poison run (`kind: 'run'`)
 * resumes from its last checkpoint. The run is claimed first (`run:<runId>`, through `stores.journal`):
 * of two replays, drains or a worker at once, one runs it and the others get `in_progress`.
 */
export async function replayToolFailure(entry: ResumableEntry, options: ReplayOptions): Promise<ReplayResult> {
  if (!isReplayable(entry)) return { status: 'invalid_entry', runId: null, modelCalls: 0, text: null };
  const stores = options.stores ?? createMemoryStores();
  const { runtime, breaker } = resolveRuntime(options, stores);
  const claimed = await claimRun(stores.journal, entry.runId, {
    holder: newClaimHolder('replay'),
    leaseMs: options.claimLeaseMs ?? 300_000,
    clock: runtime.clock,
  });
  if (!claimed.ok)
    return { status: 'in_progress', runId: entry.runId, modelCalls: 0, text: null, ...(claimed.holder !== undefined ? { holder: claimed.holder } : {}) };
  try {
    return await replayClaimed(entry, { checkpoint: claimed.checkpoint, messages: claimed.messages }, options, { journal: stores.journal, runtime, breaker });
  } finally {
    await claimed.claim.release();
  }
}

/** Replays `entry` on its run, claimed: `committed` is what the claim found. */
async function replayClaimed(
  entry: ResumableEntry,
  committed: CommittedRun,
  options: ReplayOptions,
  { journal, runtime, breaker }: { journal: RunJournal; runtime: ToolRuntime; breaker: SharedBreaker | undefined },
): Promise<ReplayResult> {
  const { checkpoint } = committed;
  if (checkpoint?.status === 'completed') {
    return { status: 'already_completed', runId: entry.runId, modelCalls: 0, text: decodeRunState(checkpoint.data).text ?? null };
  }
  // The run's own conversation only: an entry edited to name another one (another run's) would
  // have this replay rewrite that conversation.
  if (checkpoint && checkpoint.conversationRef !== entry.conversationRef) return { status: 'invalid_entry', runId: entry.runId, modelCalls: 0, text: null };
  const stored = committed.messages as ChatMessage[] | undefined;
  // a host's run (an SDK's loop, a durable engine) is never checkpointed by toolrun's loop: it is
  // replayed by that host's replay, not taken for an expired one — a drain must not remove it as such
  if (!checkpoint && hostOfEntry(entry) !== undefined) return { status: 'invalid_entry', runId: entry.runId, modelCalls: 0, text: null };
  if (!stored || !checkpoint) return { status: 'expired', runId: entry.runId, modelCalls: 0, text: null };

  // Forget the failed outcomes of the failed step so those calls run again; keep the successful ones.
  let messages = stored;
  // the calls of the failed step without an outcome now (failed ones forgotten, refused ones never
  // made): the replay runs them, and the run's answer may come without them
  const rerun = new Set<string>();
  const pending = decodeRunState(checkpoint.data).pendingStep;
  if (pending) {
    const lastAssistant = messages.map((message) => message.role).lastIndexOf('assistant');
    const calls = messages[lastAssistant]?.toolCalls ?? [];
    const retry = new Set<string>();
    for (const [callIndex, call] of calls.entries()) {
      const recorded = (await journal.recorded(entry.runId, checkpoint.stepIndex, callIndex)) as { status?: string } | undefined;
      if (recorded?.status === 'failed') {
        await journal.forget(entry.runId, checkpoint.stepIndex, callIndex);
        retry.add(call.id);
      }
    }
    messages = messages.filter((message, index) => !(index > lastAssistant && message.role === 'tool' && retry.has(message.toolCallId ?? '')));
    const answered = new Set(messages.slice(lastAssistant + 1).flatMap((message) => (message.role === 'tool' ? [message.toolCallId] : [])));
    for (const call of calls) if (!answered.has(call.id)) rerun.add(call.id);
  }
  // the run running again, with the failed outcomes' tool messages taken out (the whole conversation written again)
  const running = { ...checkpoint, status: 'running' as const, updatedAt: new Date(runtime.clock.now()).toISOString() };
  await journal.commit({
    conversationRef: checkpoint.conversationRef,
    messages,
    storedCount: pending ? 0 : messages.length,
    checkpoint: running,
    calls: [],
  });

  const run = await runAgent({
    model: options.model,
    runtime,
    messages: [],
    runId: entry.runId,
    resetBudgets: true,
    ...runOptionsOf(options, breaker),
    persistence: { journal, messageId: checkpoint.messageId, opened: { checkpoint: running, messages } },
  });
  const result: ReplayResult = { status: run.status, runId: run.runId, modelCalls: run.modelCalls, text: run.text };
  const failedAgain = run.status === 'completed' ? callsFailedAgain(run.messages.slice(messages.length), rerun) : [];
  if (failedAgain.length > 0) result.failedAgain = failedAgain;
  const failed = resumableEntryOf(run, runtime, { messageId: checkpoint.messageId, firstSeenAt: entry.firstSeenAt });
  if (failed) {
    result.entry = failed;
    // the name as the run knows it (the entry's is redacted and bounded)
    const toolName = run.failure?.toolName ?? run.modelFailure?.modelName ?? '';
    result.failure = { stepIndex: failed.stepIndex, toolName, reason: failed.reason, kind: failed.kind };
  }
  return result;
}

/** The tool results answering the turn `messages` start with (up to the next assistant turn), of the calls in `callIds`, whose envelope says `failed`. */
function callsFailedAgain(messages: readonly ChatMessage[], callIds: ReadonlySet<string>): { callId: string; toolName: string; code: string }[] {
  const failed: { callId: string; toolName: string; code: string }[] = [];
  if (callIds.size === 0) return failed;
  for (const message of messages) {
    if (message.role === 'assistant') break;
    if (message.role !== 'tool' || message.toolCallId === undefined || !callIds.has(message.toolCallId)) continue;
    let envelope: { status?: unknown; error?: { code?: unknown } } | undefined;
    try {
      envelope = JSON.parse(typeof message.content === 'string' ? message.content : '') as typeof envelope;
    } catch {
      continue;
    }
    if (envelope?.status !== 'failed') continue;
    const code = typeof envelope.error?.code === 'string' ? envelope.error.code : 'UNKNOWN';
    failed.push({ callId: message.toolCallId, toolName: message.name ?? '?', code });
  }
  return failed;
}
