import type { ChatMessage, Model, ModelRequest, ModelResponse } from '../../agent/messages.ts';
import { ToolrunError } from '../../core/toolrun-error.ts';

/** The one method of the `openai` client this adapter calls (typed structurally: the driver is an optional peer). */
export interface ChatCompletionsClient {
  chat: {
    completions: {
      create(body: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<ChatCompletionLike>;
    };
  };
}

/** The parts of a chat-completions answer this adapter reads. */
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
  /** A ready client (`new OpenAI(...)` or anything with `chat.completions.create`). */
  client?: ChatCompletionsClient;
  /** For a client built here: the API key. @defaultValue `process.env.OPENAI_API_KEY` */
  apiKey?: string;
  /** For a client built here: any OpenAI-compatible base URL. @defaultValue the `openai` package's default */
  baseURL?: string;
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
            ? { tool_calls: message.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: typeof call.args === 'string' ? call.args : JSON.stringify(call.args ?? {}) } })) }
            : {}),
        };
      default:
        return { role: message.role, content: message.content ?? '' };
    }
  });
}

/**
 * A toolrun model over any OpenAI-compatible chat-completions endpoint, built on the official
 * `openai` package (an optional peer dependency, loaded on first use when no `client` is given).
 * Tool arguments are passed to the runtime as the raw string the model produced, so malformed or
 * truncated JSON becomes a `MALFORMED_ARGUMENTS` envelope instead of an exception. Errors of the
 * endpoint itself reject (the agent loop ends the run `model_failed`).
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
    client = new module.default({ ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}), ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}) });
    return client;
  };
  return async (request: ModelRequest): Promise<ModelResponse> => {
    const completions = (await getClient()).chat.completions;
    const completion = await completions.create(
      {
        model: options.model,
        messages: toChatCompletionsMessages(request.messages),
        ...(request.tools.length > 0
          ? { tools: request.tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.inputSchema } })) }
          : {}),
        ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
        ...options.extraBody,
      },
      { signal: request.signal },
    );
    const message = completion.choices[0]?.message;
    const toolCalls = (message?.tool_calls ?? []).map((call) => ({ id: call.id, name: call.function.name, args: call.function.arguments }));
    return {
      text: message?.content ?? null,
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
      usage: { input: completion.usage?.prompt_tokens ?? 0, output: completion.usage?.completion_tokens ?? 0 },
    };
  };
}
