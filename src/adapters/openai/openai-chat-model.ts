import type { ChatMessage, Model, ModelRequest, ModelResponse, ModelToolCall } from '../../agent/messages.ts';
import { ModelResponseError, ToolError } from '../../core/tool-error.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';

/**
 * The one method of the `openai` client this adapter calls (typed structurally: the driver is an
 * optional peer). What it resolves to is checked, not trusted.
 */
export interface ChatCompletionsClient {
  chat: {
    completions: {
      create(body: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<unknown>;
    };
  };
}

/** The parts of a chat-completions answer this adapter reads (anything else is a `ModelResponseError`). */
export interface ChatCompletionLike {
  choices: Array<{
    message: {
      content: string | null;
      tool_calls?: Array<{ id: string; type?: string; function: { name: string; arguments: string } }>;
    };
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

/** Options of {@link createOpenAiChatModel}. */
export interface OpenAiChatModelOptions {
  /** The model name, e.g. `gpt-4o`. */
  model: string;
  /**
   * A ready client (`new OpenAI(...)` or anything with `chat.completions.create`), used as it is
   * (its own `maxRetries` included: set it to 0 to leave retries to toolrun's model policy).
   */
  client?: ChatCompletionsClient;
  /** For a client built here: the API key (`undefined`, e.g. an unset variable, is the default). @defaultValue `process.env.OPENAI_API_KEY` */
  apiKey?: string | undefined;
  /** For a client built here: any OpenAI-compatible base URL. @defaultValue the `openai` package's default */
  baseURL?: string | undefined;
  temperature?: number;
  /** Extra body fields passed through (e.g. `max_tokens`, `seed`). */
  extraBody?: Record<string, unknown>;
}

/** Converts toolrun messages to chat-completions messages (tool results as `role: 'tool'`). */
export function toChatCompletionsMessages(messages: readonly ChatMessage[]): Array<Record<string, unknown>> {
  return messages.map((message) => {
    switch (message.role) {
      case 'tool':
        return { role: 'tool', tool_call_id: message.toolCallId ?? '', content: message.content ?? '' };
      case 'assistant':
        return {
          role: 'assistant',
          content: message.content,
          ...(message.toolCalls && message.toolCalls.length > 0
            ? {
                tool_calls: message.toolCalls.map((call) => ({
                  id: call.id,
                  type: 'function',
                  function: { name: call.name, arguments: typeof call.args === 'string' ? call.args : JSON.stringify(call.args ?? {}) },
                })),
              }
            : {}),
        };
      default:
        return { role: message.role, content: message.content ?? '' };
    }
  });
}

/** How much of a body that is not a completion is quoted in the error (characters). */
const MAX_QUOTED_BODY_LENGTH = 200;

/**
 * Reads a chat-completions answer into a toolrun {@link ModelResponse}.
 *
 * - `text`: the first choice's `content` (a string, `null`, or an array of text parts, joined);
 * - `toolCalls`: its `tool_calls`; each call's `arguments` string is passed through raw, so that
 *   malformed or truncated JSON reaches the runtime as a `MALFORMED_ARGUMENTS` envelope the model
 *   can fix (an object is passed as it is; absent arguments are `{}`); a call without an `id` gets
 *   `call_<stepIndex>_<index>`;
 * - `usage`: `prompt_tokens` / `completion_tokens`, 0 when absent or not a count.
 *
 * @throws ModelResponseError when the answer is not a chat completion: not an object (an HTML
 *   page from a proxy, a string), no `choices` or an empty list, a choice without a `message`,
 *   `content` of another type, `tool_calls` that is not a list, a call that is not an object or
 *   whose `function.name` is not a non-empty string, or `arguments` of another type. The message
 *   says which; classifyError classifies it as kind `invalid_response`, transient.
 * @throws an `Error` with `status` (and the body's `error`) when an OpenAI-compatible server
 *   answered 2xx with an error body carrying an HTTP status in `error.code` (some gateways do):
 *   classified by that status.
 */
export function parseChatCompletion(completion: unknown, stepIndex: number): ModelResponse {
  if (typeof completion !== 'object' || completion === null || Array.isArray(completion)) {
    throw new ModelResponseError(`the endpoint answered with ${describeBody(completion)} instead of a chat completion`);
  }
  const body = completion as Record<string, unknown>;
  const choices = body.choices;
  if (!Array.isArray(choices) || choices.length === 0) {
    const error = body.error;
    if (typeof error === 'object' && error !== null) {
      const code = (error as { code?: unknown }).code;
      const message = (error as { message?: unknown }).message;
      const text = typeof message === 'string' ? message : 'the endpoint answered with an error body';
      if (typeof code === 'number' && Number.isInteger(code) && code >= 400 && code <= 599)
        throw Object.assign(new Error(text), { name: 'ModelProviderError', status: code, error });
      throw new ModelResponseError(`the endpoint answered with an error body instead of a chat completion: ${text}`);
    }
    throw new ModelResponseError(Array.isArray(choices) ? 'the completion has no choices' : 'the completion has no `choices` list');
  }
  const message = (choices[0] as { message?: unknown } | null)?.message;
  if (typeof message !== 'object' || message === null) throw new ModelResponseError("the completion's first choice has no `message`");
  const { content, tool_calls: rawCalls } = message as { content?: unknown; tool_calls?: unknown };
  const text = readContent(content);
  const toolCalls: ModelToolCall[] = [];
  if (rawCalls !== undefined && rawCalls !== null) {
    if (!Array.isArray(rawCalls)) throw new ModelResponseError(`the completion's tool_calls is ${describeBody(rawCalls)}, not a list`);
    for (const [index, call] of rawCalls.entries()) {
      const fn = typeof call === 'object' && call !== null ? (call as { function?: unknown }).function : undefined;
      if (typeof fn !== 'object' || fn === null) throw new ModelResponseError(`tool_calls[${index}] has no \`function\` object`);
      const { name, arguments: args } = fn as { name?: unknown; arguments?: unknown };
      if (typeof name !== 'string' || name.length === 0)
        throw new ModelResponseError(`tool_calls[${index}].function.name is ${describeBody(name)}, not a tool name`);
      if (args !== undefined && args !== null && typeof args !== 'string' && (typeof args !== 'object' || Array.isArray(args))) {
        throw new ModelResponseError(`tool_calls[${index}].function.arguments is ${describeBody(args)}, not a JSON string`);
      }
      const id = (call as { id?: unknown }).id;
      toolCalls.push({ id: typeof id === 'string' && id.length > 0 ? id : `call_${stepIndex}_${index}`, name, args: args ?? {} });
    }
  }
  const usage = typeof body.usage === 'object' && body.usage !== null ? (body.usage as Record<string, unknown>) : {};
  return {
    text,
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    usage: { input: count(usage.prompt_tokens), output: count(usage.completion_tokens) },
  };
}

function readContent(content: unknown): string | null {
  if (content === undefined || content === null) return null;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const parts = content.map((part) => (typeof part === 'object' && part !== null ? (part as { text?: unknown }).text : undefined));
    if (parts.every((part) => typeof part === 'string')) return parts.join('');
  }
  throw new ModelResponseError(`the completion's content is ${describeBody(content)}, not text`);
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

function describeBody(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') {
    const quoted = value.length > MAX_QUOTED_BODY_LENGTH ? `${value.slice(0, MAX_QUOTED_BODY_LENGTH)}…` : value;
    return `a string (${JSON.stringify(quoted)})`;
  }
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * A toolrun model over any OpenAI-compatible chat-completions endpoint, built on the official
 * `openai` package (an optional peer dependency, loaded on first use when no `client` is given).
 * Tool arguments are passed to the runtime as the raw string the model produced, so malformed or
 * truncated JSON becomes a `MALFORMED_ARGUMENTS` envelope instead of an exception.
 *
 * Failures reject, in a form `classifyError` / `classifyModelError` read:
 * - errors of the endpoint are the `openai` package's own (`RateLimitError`, `AuthenticationError`,
 *   `APIConnectionError`…), unchanged, with their `status` and `headers` (for `Retry-After` and
 *   rate-limit reset headers);
 * - an answer that is not a chat completion: a {@link ModelResponseError};
 * - a client that cannot be built: a `ToolError` that is a misconfiguration (`kind: 'auth'` when
 *   the API key is missing, else `misconfigured`); the `openai` package not installed: `ToolrunError`
 *   `MISSING_DEPENDENCY`.
 *
 * A client built here has `maxRetries: 0`: retries are toolrun's model policy's (same backoff,
 * Retry-After and budget rules as tools), not the SDK's on top of them. The function's `modelName`
 * is `options.model` (the name dead-letter entries and the shared model breaker use).
 */
export function createOpenAiChatModel(options: OpenAiChatModelOptions): Model {
  let client: ChatCompletionsClient | undefined = options.client;
  const getClient = async (): Promise<ChatCompletionsClient> => {
    if (client) return client;
    let module: { default: new (config: Record<string, unknown>) => ChatCompletionsClient };
    try {
      module = (await import('openai')) as unknown as typeof module;
    } catch (cause) {
      throw new ToolrunError('MISSING_DEPENDENCY', 'createOpenAiChatModel needs the `openai` package: npm install openai', { cause });
    }
    try {
      client = new module.default({
        maxRetries: 0,
        ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
        ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
      });
    } catch (cause) {
      const text = cause instanceof Error ? cause.message : String(cause);
      const missingKey = /api[_ ]?key/i.test(text);
      throw new ToolError({
        kind: missingKey ? 'auth' : 'misconfigured',
        misconfiguration: true,
        message: `createOpenAiChatModel could not create its OpenAI client: ${text}`,
        cause,
      });
    }
    return client;
  };
  const chatModel = async (request: ModelRequest): Promise<ModelResponse> => {
    const completions = (await getClient()).chat.completions;
    const completion = await completions.create(
      {
        model: options.model,
        messages: toChatCompletionsMessages(request.messages),
        ...(request.tools.length > 0
          ? {
              tools: request.tools.map((tool) => ({
                type: 'function',
                function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
              })),
            }
          : {}),
        ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
        ...options.extraBody,
      },
      { signal: request.signal },
    );
    return parseChatCompletion(completion, request.stepIndex);
  };
  // its name in dead-letter entries, logs and the shared model breaker's key (`model:<name>`)
  return Object.assign(chatModel, { modelName: options.model });
}
