import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import type { ResumableEntry, ToolFailureEntry } from '../../ground/dead-letter-entries.ts';
import type { DeadLetterRecord, Stores } from '../../ground/ports/stores.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import type { HostContinuation, HostToolCall } from '../../worker/host-continuation.ts';
import type { HostRunReplayResult } from '../../worker/replay-host-run.ts';
import { replayEntryOfHost } from '../replay-host-entry.ts';
import { parseCheckpointRef, restoreMessages, toStoredMessages, type LangGraphCheckpointRef } from './langchain-conversation.ts';
import { LANGCHAIN_HOST } from './langchain-dead-letter.ts';
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

/** Options of {@link langchainContinuation}: how to continue a run of this app, registered once. */
export interface LangChainContinuationOptions {
  /**
   * The agent whose loop runs the remaining steps (`createAgent({ model, middleware: [toolrunMiddleware(runtime, …)], checkpointer })`).
   * For a checkpointed run it must use the checkpointer the run used.
   */
  agent: LangChainReplayAgent;
  /** toolrun's stores, to read and rewrite the conversation of a run without a checkpointer (through `journal`). @defaultValue none: such a run cannot be replayed (`INVALID_OPTIONS`) */
  stores?: Pick<Stores, 'journal'>;
  /** Config for the continuation's `invoke` (recursion limit, context, callbacks; for a run without a checkpointer on an agent with one, its `thread_id`). @defaultValue none */
  config?: LangChainRunConfig;
  /** The runtime whose tool failed. @defaultValue the replay's */
  runtime?: ToolRuntime;
}

/** Options of {@link replayLangChainDeadLetter}. */
export interface LangChainReplayOptions extends Omit<LangChainContinuationOptions, 'stores' | 'runtime'> {
  /** The stores the run dead-lettered into: its journal (the claim, the conversation, the replayed call's outcome, the completion) and the DLQ. */
  stores: Pick<Stores, 'toolDlq' | 'journal'>;
  /** The runtime whose tool failed (its fixed configuration). */
  runtime: ToolRuntime;
  /** How long the replay's claim on the run (`run:<runId>`) lasts without renewal. @defaultValue 300_000 */
  claimLeaseMs?: number;
}

/** How one replay ended, in toolrun's replay vocabulary (`completed`, `tool_failed`, `already_completed`, `in_progress`, `expired`, `invalid_entry`). */
export type LangChainReplayResult = HostRunReplayResult;

function isAi(message: unknown): message is AIMessage {
  return AIMessage.isInstance(message);
}

function messagesOf(state: unknown): BaseMessage[] {
  const messages = (state as { messages?: unknown } | undefined)?.messages;
  return Array.isArray(messages) ? (messages as BaseMessage[]) : [];
}

/** The last AI message's call `toolCallId` (its first call when `undefined`). */
function failedCallIn(messages: readonly unknown[], toolCallId?: string): HostToolCall | undefined {
  const turn = messages.findLast(isAi);
  const call = turn?.tool_calls?.find((candidate) => toolCallId === undefined || candidate.id === toolCallId);
  return typeof call?.id === 'string' ? { toolCallId: call.id, toolName: call.name, args: call.args } : undefined;
}

function textOf(message: BaseMessage | undefined): string | null {
  if (message === undefined) return null;
  return typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
}

function graphOf(agent: LangChainReplayAgent): NonNullable<LangChainReplayAgent['graph']> {
  if (agent.graph === undefined)
    throw new ToolrunError('INVALID_OPTIONS', "langchainContinuation: a checkpointed run needs the agent's graph (createAgent(...) has one)");
  return agent.graph;
}

/** The checkpoint's state, as `getState` addresses it. */
function checkpointConfig(ref: LangGraphCheckpointRef): LangChainRunConfig {
  return { configurable: { thread_id: ref.threadId, checkpoint_ns: '', checkpoint_id: ref.checkpointId } };
}

/** The answers the other calls of the failed turn got in the live run (the thread's latest state), to go back in with the replayed one. */
async function siblingAnswers(
  graph: NonNullable<LangChainReplayAgent['graph']>,
  ref: LangGraphCheckpointRef,
  prior: readonly BaseMessage[],
): Promise<BaseMessage[]> {
  const others = new Set((prior.findLast(isAi)?.tool_calls ?? []).map((call) => call.id).filter((id) => id !== ref.toolCallId));
  if (others.size === 0) return [];
  const latest = messagesOf((await graph.getState({ configurable: { thread_id: ref.threadId } })).values);
  return latest.filter((message) => others.has((message as { tool_call_id?: string }).tool_call_id));
}

/** The continuation's messages added after `before` messages; its model calls are the AI messages among them. */
function continued(state: unknown, before: number): { text: string | null; modelCalls: number; added: BaseMessage[] } {
  const added = messagesOf(state).slice(before);
  return { text: textOf(added.findLast(isAi)), modelCalls: added.filter(isAi).length, added };
}

/**
 * LangChain's continuation for toolrun's host replay: register it once as `hosts.langchain` (in the
 * config `toolrun dlq replay|drain` and the dashboard load, or in `createToolrun({ hosts })`), and
 * every replay of a LangChain entry continues the agent's own loop from the failed step, with the
 * replayed call's `ToolMessage` (toolrun's envelope, as the middleware answers):
 * - a run with a checkpointer (its `conversationRef` is `langgraph:…`): the conversation is read from
 *   the referenced checkpoint (`agent.graph.getState`; gone → `expired`), and the loop goes on from a
 *   fork of the thread at the failed step (`graph.updateState(…, 'tools')` with the answer and the
 *   answers the turn's other calls got in the live run, then `agent.invoke(null, <fork>)`);
 * - a run without one: the stored messages (`stores.journal.conversation`) plus the answer go to
 *   `agent.invoke({ messages })`, and the whole conversation is stored back.
 *
 * The continuation's invocation carries `configurable.toolrun_replay_of`, so a middleware with
 * `deadLetter` counts its budgets apart from the live run's.
 *
 * @example
 * ```ts
 * hosts: { langchain: langchainContinuation({ agent, stores }) }
 * ```
 *
 * @throws ToolrunError `INVALID_OPTIONS` when `agent` has no `invoke`; at replay, for a run without a
 *   checkpointer when `stores` was not given, or a checkpointed one when the agent has no `graph`.
 */
export function langchainContinuation(options: LangChainContinuationOptions): HostContinuation {
  const { agent, stores, config: base = {} } = options ?? ({} as LangChainContinuationOptions);
  if (typeof agent?.invoke !== 'function') throw new ToolrunError('INVALID_OPTIONS', 'langchainContinuation needs { agent } (createAgent(...))');
  return {
    ...(options.runtime !== undefined ? { runtime: options.runtime } : {}),
    async readConversation(entry: ToolFailureEntry) {
      const ref = parseCheckpointRef(entry.conversationRef);
      if (ref !== undefined) {
        const messages = messagesOf((await graphOf(agent).getState(checkpointConfig(ref))).values);
        return messages.length === 0 ? undefined : messages; // the checkpoint, or its thread, is gone
      }
      if (stores === undefined) throw new ToolrunError('INVALID_OPTIONS', 'langchainContinuation needs { stores } to replay a run without a checkpointer');
      const stored = await stores.journal.conversation(entry.conversationRef);
      if (stored === undefined) return undefined;
      try {
        return restoreMessages(stored);
      } catch {
        return []; // not LangChain's stored form: no failed call in it (invalid_entry)
      }
    },
    failedCall: (messages, entry) => failedCallIn(messages, parseCheckpointRef(entry.conversationRef)?.toolCallId),
    resultMessages: (call, result) => [envelopeToolMessage(result, call.toolCallId, call.toolName)],
    async continueRun({ entry, messages }) {
      const configurable = { ...base.configurable, toolrun_replay_of: `${entry.runId}:${entry.stepIndex}` };
      const ref = parseCheckpointRef(entry.conversationRef);
      if (ref === undefined) {
        const state = await agent.invoke({ messages }, { ...base, configurable });
        const run = continued(state, messages.length);
        await stores?.journal.putConversation(entry.conversationRef, toStoredMessages([...(messages as BaseMessage[]), ...run.added]));
        return { text: run.text, modelCalls: run.modelCalls };
      }
      const graph = graphOf(agent);
      const prior = messages.slice(0, -1) as BaseMessage[];
      const answers = [...(await siblingAnswers(graph, ref, prior)), ...(messages.slice(-1) as BaseMessage[])];
      // a fork of the thread at the failed step, as if the tools node had answered: LangGraph's loop goes on from there
      const forked = await graph.updateState(checkpointConfig(ref), { messages: answers }, 'tools');
      const state = await agent.invoke(null, { ...base, configurable: { ...configurable, ...forked.configurable } });
      const run = continued(state, prior.length + answers.length);
      return { text: run.text, modelCalls: run.modelCalls };
    },
  };
}

/**
 * Replays a tool-DLQ entry that `toolrunMiddleware(runtime, { deadLetter })` wrote, in LangChain's
 * own agent loop (toolrun's host replay, `replayHostRun`, with {@link langchainContinuation}):
 * claims the run (`run:<runId>`, through `stores.journal`; a second replay at once gets
 * `in_progress`), reads the conversation (the referenced checkpoint, or the stored messages;
 * `expired` when it is gone), calls the failed tool again with its recorded arguments under the
 * idempotency ledger (a write an earlier replay applied is not applied again), and lets the agent's
 * loop run the remaining steps, so the model is called for them only. A run that completes leaves
 * the DLQ (`completed`; a later replay of the same record: `already_completed`). A tool that fails
 * again leaves the entry where it is (`tool_failed`), the model not called. `replayDeadLetter`, the
 * drain, `toolrun dlq` and the dashboard do the same with `hosts: { langchain: langchainContinuation({ agent, stores }) }`.
 *
 * @throws ToolrunError `INVALID_OPTIONS` without `stores`, `runtime` or `agent`; whatever the stores or the agent throw (the claim is released first).
 */
export async function replayLangChainDeadLetter(record: DeadLetterRecord<ResumableEntry>, options: LangChainReplayOptions): Promise<LangChainReplayResult> {
  const { stores, runtime, agent } = options ?? ({} as LangChainReplayOptions);
  if (stores === undefined || runtime === undefined || typeof agent?.invoke !== 'function')
    throw new ToolrunError('INVALID_OPTIONS', 'replayLangChainDeadLetter needs stores, runtime and agent');
  const continuation = langchainContinuation({ agent, stores, ...(options.config !== undefined ? { config: options.config } : {}) });
  return replayEntryOfHost(record, { host: LANGCHAIN_HOST, runName: 'a LangChain run' }, continuation, options);
}
