import { createHash } from 'node:crypto';
import { AIMessage, mapChatMessagesToStoredMessages, mapStoredMessagesToChatMessages, type BaseMessage, type StoredMessage } from '@langchain/core/messages';

/**
 * The stored form of a conversation LangGraph keeps itself: one item, which points at the
 * checkpoint the failed tools step ran from (the state with the model's failed call, before any
 * tool answered it). The messages stay in the checkpointer; only this reference is stored.
 */
export interface LangGraphCheckpointRef {
  /** Marks the item as a reference (LangChain's stored messages have a message type here). */
  type: 'langgraph_checkpoint';
  /** The thread, the agent graph's namespace (`''`: the root graph), the checkpoint, and the id of the failed call. */
  data: { thread_id: string; checkpoint_ns: string; checkpoint_id: string; tool_call_id: string };
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
  return { type: 'langgraph_checkpoint', data: { thread_id: threadId, checkpoint_ns: '', checkpoint_id: checkpointId, tool_call_id: toolCallId } };
}

/**
 * What the tool DLQ stores for the conversation of a failed call: a reference to LangGraph's
 * checkpoint where the agent has a checkpointer, else the state's messages (LangChain's stored
 * message form) with the last AI message holding only the failed call.
 */
export function conversationToStore(config: LangChainToolConfig, call: { id: string; name: string; args: unknown }): unknown[] {
  const reference = checkpointOf(config, call.id);
  if (reference !== undefined) return [reference];
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
  return JSON.parse(JSON.stringify(mapChatMessagesToStoredMessages([...prior, failedTurn]))) as unknown[];
}

/** Whether a stored conversation is a checkpoint reference. */
export function asCheckpointRef(stored: readonly unknown[]): LangGraphCheckpointRef | undefined {
  const [first] = stored;
  const candidate = first as Partial<LangGraphCheckpointRef> | undefined;
  if (stored.length !== 1 || candidate?.type !== 'langgraph_checkpoint' || typeof candidate.data !== 'object' || candidate.data === null) return undefined;
  const { thread_id: threadId, checkpoint_id: checkpointId, tool_call_id: toolCallId } = candidate.data;
  return typeof threadId === 'string' && typeof checkpointId === 'string' && typeof toolCallId === 'string' ? (candidate as LangGraphCheckpointRef) : undefined;
}

/** The stored messages as LangChain messages (throws on a shape that is not LangChain's stored form). */
export function restoreMessages(stored: readonly unknown[]): BaseMessage[] {
  return mapStoredMessagesToChatMessages(stored as StoredMessage[]);
}
