import type { ChatMessage, Model, ModelRequest, ModelResponse, ModelToolCall } from '../../agent/messages.ts';
import { ModelResponseError } from '../../core/tool-error.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';

/**
 * The one method of the `@anthropic-ai/sdk` client this adapter calls,
 * `messages.create(body, { signal })`, typed structurally (the SDK is an optional peer; any SDK version's overloads fit).
 * What it resolves to is checked, not trusted.
 */
export interface AnthropicMessagesClient {
  messages: {
    create: (...args: never[]) => unknown;
  };
}

type CreateMessage = (body: Record<string, unknown>, options: { signal: AbortSignal }) => Promise<unknown>;

/** Options of {@link createAnthropicModel}. */
export interface AnthropicModelOptions {
  /**
   * The client, e.g. `new Anthropic({ maxRetries: 0 })`: used as it is (set `maxRetries: 0` to
   * leave retries to toolrun's model policy instead of the SDK's on top of them).
   */
  client: AnthropicMessagesClient;
  /** The model name, e.g. `claude-sonnet-4-5`. */
  model: string;
  /** The Messages API's `max_tokens`. @defaultValue 4096 */
  maxTokens?: number;
  /** A system prompt sent before the run's own system messages. */
  system?: string;
  temperature?: number;
  /** Extra body fields passed through (e.g. `tool_choice`, `metadata`, `thinking`). */
  extraBody?: Record<string, unknown>;
}

type ContentBlock = Record<string, unknown>;
interface MessageParam {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

/** Whether a tool message's content is a failed envelope (JSON `status: "failed"`, or the `<tool_result … status="failed">` text form). */
export function isFailedToolContent(content: string | null): boolean {
  if (content === null) return false;
  const text = content.trimStart();
  if (text.startsWith('<tool_result')) return /^<tool_result\b[^>]*\bstatus="failed"/.test(text);
  try {
    const parsed = JSON.parse(content) as unknown;
    return typeof parsed === 'object' && parsed !== null && (parsed as { status?: unknown }).status === 'failed';
  } catch {
    return false;
  }
}

function toolUseInput(args: unknown): Record<string, unknown> {
  if (typeof args === 'object' && args !== null && !Array.isArray(args)) return args as Record<string, unknown>;
  if (typeof args === 'string') {
    try {
      const parsed = JSON.parse(args) as unknown;
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // a call whose arguments were not an object: the API takes an object, its envelope says what was wrong
    }
  }
  return {};
}

/**
 * Converts toolrun messages to the Messages API: system messages go to `system` (returned apart);
 * an assistant turn's tool calls become `tool_use` blocks; consecutive tool messages become one
 * user turn of `tool_result` blocks, each with `is_error: true` when its envelope is a failure; a
 * user message right after tool results joins that turn (after the results, as the API requires).
 */
export function toAnthropicMessages(messages: readonly ChatMessage[]): { system: string[]; messages: MessageParam[] } {
  const system: string[] = [];
  const out: MessageParam[] = [];
  const last = () => out[out.length - 1];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        if (message.content) system.push(message.content);
        break;
      case 'assistant': {
        const content: ContentBlock[] = [];
        if (message.content) content.push({ type: 'text', text: message.content });
        for (const call of message.toolCalls ?? []) content.push({ type: 'tool_use', id: call.id, name: call.name, input: toolUseInput(call.args) });
        if (content.length === 0) content.push({ type: 'text', text: '' });
        out.push({ role: 'assistant', content });
        break;
      }
      case 'tool': {
        const block: ContentBlock = { type: 'tool_result', tool_use_id: message.toolCallId ?? '', content: message.content ?? '' };
        if (isFailedToolContent(message.content)) block.is_error = true;
        const previous = last();
        if (previous?.role === 'user' && previous.content.every((item) => item.type === 'tool_result')) previous.content.push(block);
        else out.push({ role: 'user', content: [block] });
        break;
      }
      default: {
        const previous = last();
        const block = { type: 'text', text: message.content ?? '' };
        if (previous?.role === 'user') previous.content.push(block);
        else out.push({ role: 'user', content: [block] });
      }
    }
  }
  return { system, messages: out };
}

/** How much of a body that is not a message is quoted in the error (characters). */
const MAX_QUOTED_BODY_LENGTH = 200;

function describeBody(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string')
    return `a string (${JSON.stringify(value.length > MAX_QUOTED_BODY_LENGTH ? `${value.slice(0, MAX_QUOTED_BODY_LENGTH)}…` : value)})`;
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

/**
 * Reads a Messages API answer into a toolrun {@link ModelResponse}: the `text` blocks joined as
 * `text`, each `tool_use` block as a tool call (its `id`, `name` and `input`), `usage.input_tokens`
 * (plus cache reads and writes) and `usage.output_tokens`. Other blocks (thinking, server tools) are
 * skipped. A `tool_use` block that `max_tokens` cut off (the answer's last block,
 * `stop_reason: "max_tokens"`) is passed as unterminated JSON text, so the runtime answers `MALFORMED_ARGUMENTS`
 * ("truncated") instead of running the tool on partial input.
 *
 * @throws ModelResponseError when the answer is not a message: not an object, no `content` list,
 *   a block that is not an object, a `tool_use` without a string `id`/`name` or with an `input`
 *   that is not an object. Classified `invalid_response`, transient.
 * @throws an `Error` with `status` 500 and the body's `error` for an error body answered with 2xx
 *   (`{"type":"error","error":{"type":"overloaded_error",…}}`), classified by the error's `type`.
 */
export function parseAnthropicMessage(body: unknown): ModelResponse {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new ModelResponseError(`the endpoint answered with ${describeBody(body)} instead of a message`);
  const message = body as Record<string, unknown>;
  if (message.type === 'error' && typeof message.error === 'object' && message.error !== null) {
    const error = message.error as { type?: unknown; message?: unknown };
    throw Object.assign(new Error(typeof error.message === 'string' ? error.message : 'the endpoint answered with an error body'), {
      name: 'ModelProviderError',
      error,
      type: error.type,
    });
  }
  const content = message.content;
  if (!Array.isArray(content)) throw new ModelResponseError(`the message's content is ${describeBody(content)}, not a list of blocks`);
  const texts: string[] = [];
  const toolCalls: ModelToolCall[] = [];
  const cutOff = message.stop_reason === 'max_tokens';
  for (const [index, block] of content.entries()) {
    if (typeof block !== 'object' || block === null) throw new ModelResponseError(`content[${index}] is ${describeBody(block)}, not a block`);
    const { type } = block as { type?: unknown };
    if (type === 'text') {
      const { text } = block as { text?: unknown };
      if (typeof text === 'string') texts.push(text);
    } else if (type === 'tool_use') {
      const { id, name, input } = block as { id?: unknown; name?: unknown; input?: unknown };
      if (typeof id !== 'string' || id.length === 0) throw new ModelResponseError(`content[${index}] (tool_use) has no id`);
      if (typeof name !== 'string' || name.length === 0) throw new ModelResponseError(`content[${index}] (tool_use) has no name`);
      if (input !== undefined && (typeof input !== 'object' || input === null || Array.isArray(input)))
        throw new ModelResponseError(`content[${index}] (tool_use) input is ${describeBody(input)}, not an object`);
      const truncated = cutOff && index === content.length - 1;
      const json = JSON.stringify(input ?? {});
      toolCalls.push({ id, name, args: truncated ? json.slice(0, -1) : (input ?? {}) });
    }
  }
  const usage = typeof message.usage === 'object' && message.usage !== null ? (message.usage as Record<string, unknown>) : {};
  return {
    text: texts.length > 0 ? texts.join('') : null,
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    usage: {
      input: count(usage.input_tokens) + count(usage.cache_read_input_tokens) + count(usage.cache_creation_input_tokens),
      output: count(usage.output_tokens),
    },
  };
}

/**
 * A toolrun model over the Anthropic Messages API (`client.messages.create` of `@anthropic-ai/sdk`,
 * an optional peer dependency), so `runAgent`, `handleMessage` and the worker run on Claude.
 *
 * - The request: the run's system messages (after `options.system`) as `system`, the tools as
 *   `{ name, description, input_schema }`, tool results as `tool_result` blocks with
 *   `is_error: true` when the envelope is a failure, and the run's abort signal passed to the SDK.
 * - The answer: text blocks joined, each `tool_use` block a tool call, usage counted (`parseAnthropicMessage`).
 * - Failures reject in a form toolrun's model policy classifies: the SDK's own errors unchanged
 *   (`APIError` with `status` and `headers`: `retry-after` and `anthropic-ratelimit-*-reset` give the
 *   wait, 529 is transient, 401/403 are a misconfiguration for the shared model breaker;
 *   `APIConnectionTimeoutError`, `APIUserAbortError`), and a {@link ModelResponseError} for an answer
 *   that is not a message.
 *
 * @example
 * ```ts
 * const model = createAnthropicModel({ client: new Anthropic({ maxRetries: 0 }), model: 'claude-sonnet-4-5' });
 * const toolrun = createToolrun({ model, tools });
 * ```
 *
 * @throws ToolrunError `INVALID_OPTIONS` (at creation) for a missing client or model name, or a
 *   `maxTokens` that is not a positive integer.
 */
export function createAnthropicModel(options: AnthropicModelOptions): Model {
  const problems: string[] = [];
  if (typeof options !== 'object' || options === null) throw new ToolrunError('INVALID_OPTIONS', 'createAnthropicModel: options must be an object');
  if (typeof options.client?.messages?.create !== 'function') problems.push('client must be an Anthropic client (with messages.create)');
  if (typeof options.model !== 'string' || options.model.length === 0) problems.push('model must be a model name');
  if (options.maxTokens !== undefined && (!Number.isInteger(options.maxTokens) || options.maxTokens <= 0))
    problems.push('maxTokens must be a positive integer');
  if (options.system !== undefined && typeof options.system !== 'string') problems.push('system must be a string');
  if (problems.length > 0) throw new ToolrunError('INVALID_OPTIONS', `createAnthropicModel: ${problems.join('; ')}`);
  const { client, model } = options;
  const maxTokens = options.maxTokens ?? 4096;
  const anthropicModel = async (request: ModelRequest): Promise<ModelResponse> => {
    const converted = toAnthropicMessages(request.messages);
    const system = [...(options.system ? [options.system] : []), ...converted.system].join('\n\n');
    const create = client.messages.create as unknown as CreateMessage;
    const answer = await create.call(
      client.messages,
      {
        model,
        max_tokens: maxTokens,
        ...(system.length > 0 ? { system } : {}),
        messages: converted.messages,
        ...(request.tools.length > 0
          ? { tools: request.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.inputSchema })) }
          : {}),
        ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
        ...options.extraBody,
      },
      { signal: request.signal },
    );
    return parseAnthropicMessage(answer);
  };
  return Object.assign(anthropicModel, { modelName: model });
}
