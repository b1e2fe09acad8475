/**
 * The chat message shape of toolrun's agent loop, as the airline workload uses it. Kept local until
 * the agent loop exports its own type; structurally the same.
 */

/** A tool call the model asked for; `args` is the raw JSON text the model produced, or an object. */
export interface ChatToolCall {
  id: string;
  name: string;
  args: string | object;
}

/**
 * One conversation message.
 * - `system` / `user`: `content` is the text.
 * - `assistant`: `content` is the text (or `null`), `toolCalls` the calls it asked for.
 * - `tool`: `content` is the tool's reply, `toolCallId` the call it answers.
 */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  toolCalls?: ChatToolCall[];
  toolCallId?: string;
}
