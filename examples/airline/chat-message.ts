/**
 * The chat message shape of the airline workload: toolrun's own (`src/agent/messages.ts`).
 * - `system` / `user`: `content` is the text.
 * - `assistant`: `content` is the text (or `null`), `toolCalls` the calls it asked for (`args` is
 *   the raw JSON text the model produced).
 * - `tool`: `content` is the tool's reply, `toolCallId` the call it answers.
 */
export type { ChatMessage, ModelToolCall as ChatToolCall } from '../../src/agent/messages.ts';
