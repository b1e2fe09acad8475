import { createHash } from 'node:crypto';
import type { HostConversation } from '../../worker/host-run-dead-letter.ts';
import { AIMessage, mapChatMessagesToStoredMessages, mapStoredMessagesToChatMessages, type BaseMessage, type StoredMessage } from '@langchain/core/messages';

/** The `conversationRef` prefix of an entry whose conversation is a LangGraph checkpoint. */
export const LANGGRAPH_REF_PREFIX = 'langgraph:';

/**
 * A conversation LangGraph keeps itself, as an entry's `conversationRef` references it: the thread,
 * the checkpoint the failed tools step ran from (the state with the model's failed call, before
 * any tool answered it) and the failed call's id. The messages stay in the checkpointer.
 */
export interface LangGraphCheckpointRef {
  /** The LangGraph `thread_id`. */
  threadId: string;
  /** The id of the checkpoint the failed tools step ran from (in the root graph's namespace). */
  checkpointId: string;
  /** The id of the model's failed tool call in that checkpoint's last AI message. */
  toolCallId: string;
}

/** The reference as a `conversationRef`: `langgraph:<thread_id>:<checkpoint_id>:<tool call id>`, each part URI-encoded. */
export function formatCheckpointRef(ref: LangGraphCheckpointRef): string {
  return `${LANGGRAPH_REF_PREFIX}${[ref.threadId, ref.checkpointId, ref.toolCallId].map(encodeURIComponent).join(':')}`;
}

/** The reference a `conversationRef` holds, or `undefined` when it is not a LangGraph checkpoint's. */
export function parseCheckpointRef(conversationRef: string): LangGraphCheckpointRef | undefined {
  if (!conversationRef.startsWith(LANGGRAPH_REF_PREFIX)) return undefined;
  const parts = conversationRef.slice(LANGGRAPH_REF_PREFIX.length).split(':');
  if (parts.length !== 3 || parts.some((part) => part.length === 0)) return undefined;
  try {
    const [threadId, checkpointId, toolCallId] = parts.map(decodeURIComponent) as [string, string, string];
    return { threadId, checkpointId, toolCallId };
  } catch {
    return undefined;
  }
}

/** The parts of LangChain's tool config the dead-letter reads (structural: they differ across versions). */
export interface LangChainToolConfig {
  toolCall?: { id?: string };
  signal?: AbortSignal;
  runId?: unknown;
  configurable?: { thread_id?: unknown; run_id?: unknown; toolrun_replay_of?: unknown; __pregel_checkpointer?: unknown };
  /** LangGraph's execution info (1.x): the checkpoint the task runs from, its namespace, the thread. */
  executionInfo?: { threadId?: unknown; runId?: unknown; checkpointId?: unknown; checkpointNs?: unknown };
  /** The agent's state, which `createAgent`'s tool node hands its tools. */
  state?: { messages?: unknown };
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** The state's messages, when they are LangChain messages. */
export function stateMessages(config: LangChainToolConfig): BaseMessage[] {
  const messages = config.state?.messages;
  return Array.isArray(messages) ? (messages as BaseMessage[]) : [];
}

function typeOf(message: unknown): string | undefined {
  const getType = (message as { getType?: unknown } | null)?.getType;
  return typeof getType === 'function' ? String((getType as () => unknown).call(message)) : undefined;
}

/** Index of the message that started the invocation: the last human message (the first message without one). */
function runStartIndex(messages: readonly BaseMessage[]): number {
  for (let index = messages.length - 1; index >= 0; index--) if (typeOf(messages[index]) === 'human') return index;
  return 0;
}

/**
 * The run an agent invocation is, for the tool DLQ: the invocation's own `runId` (LangGraph's
 * `executionInfo.runId`, or `configurable.run_id`), else one derived from the thread and the id the
 * messages reducer gave the invocation's input message, so a resumed invocation is the same run.
 * `undefined` when there is neither (a state without message ids).
 */
export function invocationRunId(config: LangChainToolConfig): string | undefined {
  const given = text(config.executionInfo?.runId) ?? text(config.configurable?.run_id) ?? text(config.runId);
  if (given !== undefined) return given;
  const messages = stateMessages(config);
  const start = messages[runStartIndex(messages)] as { id?: unknown } | undefined;
  const id = text(start?.id);
  if (id === undefined) return undefined;
  const thread = text(config.configurable?.thread_id) ?? text(config.executionInfo?.threadId) ?? '';
  return `run_${createHash('sha256').update(`${thread}\n${id}`).digest('hex').slice(0, 32)}`;
}

/** The model calls of the run so far: the AI messages since the invocation's input (the failed call's own included). */
function runAiMessages(messages: readonly BaseMessage[]): BaseMessage[] {
  return messages.slice(runStartIndex(messages)).filter((message) => typeOf(message) === 'ai');
}

/** The failed call's step: the model turns of the run before the one that made the call. */
export function stepIndexOf(messages: readonly BaseMessage[]): number {
  return Math.max(0, runAiMessages(messages).length - 1);
}

function tokens(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

/** The run's usage so far, from the `usage_metadata` of its AI messages (the failed call's turn included). */
export function usageOf(messages: readonly BaseMessage[]): { input: number; output: number } {
  const usage = { input: 0, output: 0 };
  for (const message of runAiMessages(messages)) {
    const metadata = (message as { usage_metadata?: { input_tokens?: unknown; output_tokens?: unknown } }).usage_metadata;
    usage.input += tokens(metadata?.input_tokens);
    usage.output += tokens(metadata?.output_tokens);
  }
  return usage;
}

/**
 * The checkpoint to reference, when LangGraph keeps the conversation: a checkpointer (a thread),
 * the task's checkpoint, and the agent as the root graph (a tools task's namespace is `tools:<task>`).
 */
function checkpointOf(config: LangChainToolConfig, toolCallId: string): LangGraphCheckpointRef | undefined {
  // LangGraph's key for the graph's checkpointer in a task's config: absent, the checkpoint ids live only in memory
  if (config.configurable?.__pregel_checkpointer === undefined) return undefined;
  const threadId = text(config.executionInfo?.threadId);
  const checkpointId = text(config.executionInfo?.checkpointId);
  const namespace = typeof config.executionInfo?.checkpointNs === 'string' ? config.executionInfo.checkpointNs : undefined;
  if (threadId === undefined || checkpointId === undefined || namespace === undefined || namespace.includes('|')) return undefined;
  return { threadId, checkpointId, toolCallId };
}

/**
 * The conversation of a failed call for the tool DLQ: a reference to LangGraph's checkpoint where
 * the agent has a checkpointer (the entry's `conversationRef`), else the state's messages to store
 * (LangChain's stored message form) with the last AI message holding only the failed call.
 */
export function conversationOf(config: LangChainToolConfig, call: { id: string; name: string; args: unknown }): HostConversation {
  const reference = call.id === '' ? undefined : checkpointOf(config, call.id);
  if (reference !== undefined) return { ref: formatCheckpointRef(reference) };
  const messages = stateMessages(config);
  let last = messages.length - 1;
  while (last >= 0 && typeOf(messages[last]) !== 'ai') last--;
  const prior = last >= 0 ? messages.slice(0, last) : messages;
  const turn = last >= 0 ? (messages[last] as AIMessage) : undefined;
  const failedTurn = new AIMessage({
    content: turn?.content ?? '',
    ...(turn?.id !== undefined ? { id: turn.id } : {}),
    ...(turn?.usage_metadata !== undefined ? { usage_metadata: turn.usage_metadata } : {}),
    tool_calls: [{ type: 'tool_call', id: call.id, name: call.name, args: (call.args ?? {}) as Record<string, unknown> }],
  });
  return { messages: toStoredMessages([...prior, failedTurn]) };
}

/** Messages in LangChain's stored form (`{ type, data }`), as plain JSON. */
export function toStoredMessages(messages: readonly BaseMessage[]): unknown[] {
  return JSON.parse(JSON.stringify(mapChatMessagesToStoredMessages([...messages]))) as unknown[];
}

/** The stored messages as LangChain messages (throws on a shape that is not LangChain's stored form). */
export function restoreMessages(stored: readonly unknown[]): BaseMessage[] {
  return mapStoredMessagesToChatMessages(stored as StoredMessage[]);
}
