import { AIMessage, mapChatMessagesToStoredMessages, type BaseMessage, type ToolCall } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import type { ResumableEntry, ToolFailureEntry } from '../../ground/dead-letter-entries.ts';
import type { DeadLetterRecord, JsonValue, Stores } from '../../ground/ports/stores.ts';
import type { ToolResult } from '../../ground/tool-result.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import type { ReplayStatus } from '../../worker/replay-tool-failure.ts';
import { claimRun, newClaimHolder } from '../../worker/run-claim.ts';
import { asCheckpointRef, restoreMessages, type LangGraphCheckpointRef } from './langchain-conversation.ts';
import { LANGCHAIN_ENTRY_PREFIX } from './langchain-dead-letter.ts';
import { envelopeToolMessage } from './langchain-tools.ts';

/** A LangGraph run config (LangChain's `RunnableConfig`: `configurable` with `thread_id`, `recursionLimit`, `callbacks`, …). */
export type LangChainRunConfig = RunnableConfig;

/** The part of a LangGraph state snapshot (`agent.graph.getState(...)`) the replay reads. */
export interface LangGraphStateSnapshot {
  /** The state's values: `messages` holds the conversation. */
  values: unknown;
}

/**
 * What the replay needs of a LangChain v1 agent (`createAgent(...)`): `invoke`, and, for a run
 * whose conversation is a checkpoint of its checkpointer, its compiled graph's `getState` and
 * `updateState` (`agent.graph`).
 */
export interface LangChainReplayAgent {
  /** Runs the agent: with `{ messages }`, or with `null` to continue from the config's checkpoint. */
  invoke(input: unknown, config?: LangChainRunConfig): Promise<unknown>;
  /** The compiled graph (`agent.graph`): reads a checkpoint and forks the thread from it. Needed for a checkpointed run only. */
  graph?: {
    getState(config: LangChainRunConfig): Promise<LangGraphStateSnapshot>;
    updateState(config: LangChainRunConfig, values: unknown, asNode?: string): Promise<LangChainRunConfig>;
  };
}

/** Options of {@link replayLangChainDeadLetter}: registered once per app, used for every entry. */
export interface LangChainReplayOptions {
  /** The stores the run dead-lettered into (the claim, the ledger, the conversation, the DLQ). */
  stores: Pick<Stores, 'toolDlq' | 'conversations' | 'ledger' | 'claims' | 'journal'>;
  /** The runtime whose tool failed (its fixed configuration). */
  runtime: ToolRuntime;
  /**
   * How to continue a run of this app: the agent (`createAgent({ model, middleware: [toolrunMiddleware(runtime, …)], checkpointer })`)
   * whose loop runs the remaining steps. For a checkpointed run it must use the checkpointer the run used.
   */
  agent: LangChainReplayAgent;
  /** Config for the continuation's `invoke` (recursion limit, context, callbacks; for a run without a checkpointer on an agent with one, its `thread_id`). @defaultValue none */
  config?: LangChainRunConfig;
  /** How long the replay's claim on the run (`run:<runId>`) lasts without renewal. @defaultValue 300_000 */
  claimLeaseMs?: number;
}

/** How one replay ended, in toolrun's replay vocabulary (`completed`, `tool_failed`, `already_completed`, `in_progress`, `expired`, `invalid_entry`). */
export interface LangChainReplayResult {
  /** How it ended (see the interface's summary). */
  status: ReplayStatus;
  /** The entry's run, or `null` for an entry that is not a LangChain run's. */
  runId: string | null;
  /** Model calls the continuation made (the AI messages it added: the remaining steps only). */
  modelCalls: number;
  /** The last AI message's text, once completed. */
  text: string | null;
  /** The record's id. */
  id: string;
  /** The entry left the DLQ (the run completed, or had completed). */
  removed: boolean;
}

/** The conversation a replay resumes: the messages up to the failed call, the call, and how to continue. */
interface Resumable {
  messages: BaseMessage[];
  call: ToolCall & { id: string };
  checkpoint?: { ref: LangGraphCheckpointRef; siblings: BaseMessage[] };
}

function isAi(message: unknown): message is AIMessage {
  return AIMessage.isInstance(message);
}

function messagesOf(snapshot: LangGraphStateSnapshot | undefined): BaseMessage[] {
  const messages = (snapshot?.values as { messages?: unknown } | undefined)?.messages;
  return Array.isArray(messages) ? (messages as BaseMessage[]) : [];
}

/** The last AI message's call `toolCallId` (any call when `undefined`). */
function failedCallIn(messages: readonly BaseMessage[], toolCallId?: string): (ToolCall & { id: string }) | undefined {
  const turn = messages.findLast(isAi);
  const call = turn?.tool_calls?.find((candidate) => toolCallId === undefined || candidate.id === toolCallId);
  return typeof call?.id === 'string' ? (call as ToolCall & { id: string }) : undefined;
}

/** Reads what the entry's conversation holds: `undefined` when it is gone (expired), `null` when it is not a conversation of this host. */
async function resumableOf(stored: unknown[], agent: LangChainReplayAgent): Promise<Resumable | null | undefined> {
  const ref = asCheckpointRef(stored);
  if (ref === undefined) {
    let messages: BaseMessage[];
    try {
      messages = restoreMessages(stored);
    } catch {
      return null;
    }
    const call = failedCallIn(messages);
    return call === undefined ? null : { messages, call };
  }
  if (agent.graph === undefined) return null;
  const { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: checkpointId, tool_call_id: toolCallId } = ref.data;
  const snapshot = await agent.graph.getState({ configurable: { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: checkpointId } });
  const messages = messagesOf(snapshot);
  if (messages.length === 0) return undefined; // the checkpoint (or its thread) is gone
  const call = failedCallIn(messages, toolCallId);
  if (call === undefined) return null;
  // the other calls of the failed turn were answered in the live run: their answers go back in with this one
  const others = new Set((messages.findLast(isAi)?.tool_calls ?? []).map((candidate) => candidate.id).filter((id) => id !== toolCallId));
  const latest = others.size === 0 ? [] : messagesOf(await agent.graph.getState({ configurable: { thread_id: threadId } }));
  const siblings = latest.filter((message) => others.has((message as { tool_call_id?: string }).tool_call_id));
  return { messages, call, checkpoint: { ref, siblings } };
}

function textOf(message: BaseMessage | undefined): string | null {
  if (message === undefined) return null;
  return typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
}

/** Runs the remaining steps in the agent's loop; returns the messages it added. */
async function continueRun(resumable: Resumable, answer: BaseMessage, options: LangChainReplayOptions, replayOf: string): Promise<BaseMessage[]> {
  const base = options.config ?? {};
  const configurable = { ...base.configurable, toolrun_replay_of: replayOf };
  if (resumable.checkpoint === undefined) {
    const input = [...resumable.messages, answer];
    const state = (await options.agent.invoke({ messages: input }, { ...base, configurable })) as { messages?: BaseMessage[] };
    return (state?.messages ?? []).slice(input.length);
  }
  const { ref, siblings } = resumable.checkpoint;
  const graph = options.agent.graph!;
  const at = { configurable: { thread_id: ref.data.thread_id, checkpoint_ns: ref.data.checkpoint_ns, checkpoint_id: ref.data.checkpoint_id } };
  // a fork of the thread at the failed step, as if the tools node had answered: LangGraph's loop goes on from there
  const forked = await graph.updateState(at, { messages: [...siblings, answer] }, 'tools');
  const state = (await options.agent.invoke(null, { ...base, configurable: { ...configurable, ...forked.configurable } })) as { messages?: BaseMessage[] };
  return (state?.messages ?? []).slice(resumable.messages.length + siblings.length + 1);
}

/**
 * Replays a tool-DLQ entry that `toolrunMiddleware(runtime, { deadLetter })` wrote, in LangChain's
 * own agent loop: claims the run (`run:<runId>`, through `stores.journal`; a second replay at once
 * gets `in_progress`), reads the conversation (LangGraph's checkpoint it references, or the messages
 * stored; `expired` when it is gone), calls the failed tool again with its recorded arguments under
 * the idempotency ledger (a write an earlier replay applied is not applied again), and hands the
 * agent the conversation plus the tool's `ToolMessage`: from a checkpoint, a fork of the thread at
 * the failed step (`graph.updateState(…, 'tools')`, then `invoke(null)`); from stored messages, an
 * `invoke` with them. The model is called for the remaining steps only. A run that completes leaves
 * the DLQ (`completed`; a later replay of the same record: `already_completed`). A tool that fails
 * again leaves the entry where it is (`tool_failed`), the model not called.
 *
 * @throws ToolrunError `INVALID_OPTIONS` without `stores`, `runtime` or `agent`; whatever the stores or the agent throw (the claim is released first).
 */
export async function replayLangChainDeadLetter(record: DeadLetterRecord<ResumableEntry>, options: LangChainReplayOptions): Promise<LangChainReplayResult> {
  const { stores, runtime, agent } = options ?? ({} as LangChainReplayOptions);
  if (stores === undefined || runtime === undefined || typeof agent?.invoke !== 'function')
    throw new ToolrunError('INVALID_OPTIONS', 'replayLangChainDeadLetter needs stores, runtime and agent');
  const entry = record.entry as ToolFailureEntry;
  const base = { id: record.id, modelCalls: 0, text: null, removed: false };
  if (entry?.kind !== 'tool' || typeof entry.runId !== 'string' || !entry.originalMessageId?.startsWith(LANGCHAIN_ENTRY_PREFIX))
    return { ...base, status: 'invalid_entry', runId: null };
  const { runId } = entry;
  const claimed = await claimRun(stores.journal, runId, {
    holder: newClaimHolder('langchain-replay'),
    leaseMs: options.claimLeaseMs ?? 300_000,
    clock: runtime.clock,
  });
  if (!claimed.ok) return { ...base, status: 'in_progress', runId };
  try {
    const completedKey = `${LANGCHAIN_ENTRY_PREFIX}${runId}:completed`;
    const completed = (await stores.ledger.get(completedKey)) as { text?: string | null } | undefined;
    if (completed !== undefined)
      return { ...base, status: 'already_completed', runId, text: completed.text ?? null, removed: await stores.toolDlq.remove(record.id) };
    const stored = await stores.conversations.get(entry.conversationRef);
    if (stored === undefined) return { ...base, status: 'expired', runId };
    const resumable = await resumableOf(stored, agent);
    if (resumable === undefined) return { ...base, status: 'expired', runId };
    if (resumable === null) return { ...base, status: 'invalid_entry', runId };

    const { call } = resumable;
    const key = `${LANGCHAIN_ENTRY_PREFIX}${runId}:${entry.stepIndex}:${call.id}`;
    let result = (await stores.ledger.get(key)) as ToolResult | undefined;
    if (result === undefined) {
      result = await runtime.run({ name: call.name, args: call.args, callId: call.id, runId, idempotencyKey: key });
      if (result.status !== 'success') return { ...base, status: 'tool_failed', runId };
      await stores.ledger.putIfAbsent(key, result as unknown as JsonValue);
    }
    const answer = envelopeToolMessage(result, call.id, call.name);
    const added = await continueRun(resumable, answer, options, record.id);
    if (resumable.checkpoint === undefined) {
      const whole = [...resumable.messages, answer, ...added];
      await stores.conversations.put(entry.conversationRef, JSON.parse(JSON.stringify(mapChatMessagesToStoredMessages(whole))) as unknown[]);
    }
    const text = textOf(added.findLast(isAi));
    await stores.ledger.putIfAbsent(completedKey, { text });
    const removed = await stores.toolDlq.remove(record.id);
    return { ...base, status: 'completed', runId, modelCalls: added.filter(isAi).length, text, removed };
  } finally {
    await claimed.claim.release();
  }
}
