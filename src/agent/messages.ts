import type { ToolSpec } from '../core/tool-registry.ts';

/** A tool call as a model produced it. `args` is the raw JSON string or an object. */
export interface ModelToolCall {
  id: string;
  name: string;
  args: unknown;
}

/**
 * One message of a conversation, provider-neutral. Tool results are `role: 'tool'` messages whose
 * `content` is the envelope JSON (see `formatToolResult`).
 */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  /** On assistant messages: the tool calls of that turn. */
  toolCalls?: ModelToolCall[];
  /** On tool messages: the id of the call this answers. */
  toolCallId?: string;
  /** On tool messages: the tool name. */
  name?: string;
}

/** Token usage of one model call. */
export interface TokenUsage {
  input: number;
  output: number;
}

/** What the agent loop sends the model each step. */
export interface ModelRequest {
  messages: readonly ChatMessage[];
  tools: readonly ToolSpec[];
  signal: AbortSignal;
  /** 0-based step of the run. */
  stepIndex: number;
  runId: string;
}

/** What the model answers: a final text, tool calls (possibly several, run in parallel), or both. */
export interface ModelResponse {
  text?: string | null;
  toolCalls?: ModelToolCall[];
  usage: TokenUsage;
}

/**
 * A model is a plain async function. Adapters: `toolrun/openai` (any OpenAI-compatible
 * chat-completions endpoint) and the scripted/recorded models of `toolrun/testing`.
 */
export type Model = (request: ModelRequest) => Promise<ModelResponse>;
