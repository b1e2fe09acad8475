import type { ChatMessage, Model, ModelRequest, ModelResponse, ModelToolCall } from '../../agent/messages.ts';
import { ModelResponseError } from '../../core/tool-error.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';

/**
 * The options of an AI SDK provider model's `doGenerate` this adapter sets (typed structurally:
 * `LanguageModelV2CallOptions` of `ai` 5, `V3` of `ai` 6, `V4` of `ai` 7 all have them).
 */
export interface AiSdkCallOptions {
  prompt: unknown[];
  tools?: Array<{ type: 'function'; name: string; description?: string; inputSchema: unknown }>;
  toolChoice?: { type: 'auto' };
  abortSignal?: AbortSignal;
  [setting: string]: unknown;
}

/**
 * Any AI SDK provider language model (`LanguageModelV2` in `ai` 5, `V3` in `ai` 6, `V4` in `ai` 7:
 * `openai('gpt-4o')`, `anthropic(...)`, `MockLanguageModelV3`…), typed structurally so that every
 * version's model fits. A model id string is not one (it needs the SDK's global provider).
 */
export interface AiSdkLanguageModel {
  readonly specificationVersion: string;
  readonly provider: string;
  readonly modelId: string;
  /**
   * Called with {@link AiSdkCallOptions}. Typed `never` so that every version's model fits (each
   * declares its own options type); the result is checked, not trusted.
   */
  doGenerate(options: never): PromiseLike<unknown>;
}

/** Options of {@link fromAiSdkModel}. */
export interface FromAiSdkModelOptions {
  /**
   * Call settings passed to every `doGenerate` as they are: `temperature`, `maxOutputTokens`,
   * `seed`, `headers`, `providerOptions`… (the SDK's `LanguageModelV*CallOptions` names).
   */
  settings?: Record<string, unknown>;
  /** The model's name in toolrun's entries, logs and the model breaker's key. @defaultValue `<provider>:<modelId>` */
  modelName?: string;
}

/** A part of an {@link AiSdkPromptMessage}: `text`, `tool-call` (`toolCallId`, `toolName`, `input`) or `tool-result` (`toolCallId`, `toolName`, `output`). */
export type AiSdkPromptPart = Record<string, unknown>;

/** One message of an AI SDK prompt (`LanguageModelV2Message` / `V3` / `V4`: the same shape). */
export type AiSdkPromptMessage = { role: 'system'; content: string } | { role: 'user' | 'assistant' | 'tool'; content: AiSdkPromptPart[] };

/** A tool call's arguments as the prompt wants them: an object (a raw string is parsed; one that is not JSON is sent as `{}`, as the SDK does). */
function inputOf(args: unknown): unknown {
  if (typeof args !== 'string') return args ?? {};
  if (args.trim() === '') return {};
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return {};
  }
}

/** A tool message's content as a tool result: a failure envelope in the SDK's error channel (`error-json`), anything else as text. */
function outputOf(content: string | null): AiSdkPromptPart {
  const text = content ?? '';
  if (text.startsWith('{')) {
    try {
      const parsed = JSON.parse(text) as unknown;
      if (typeof parsed === 'object' && parsed !== null && (parsed as { status?: unknown }).status === 'failed') return { type: 'error-json', value: parsed };
    } catch {
      // not JSON: text
    }
  }
  return { type: 'text', value: text };
}

/**
 * Converts toolrun messages to an AI SDK prompt (`LanguageModelV2Prompt` / `V3` / `V4`, the same
 * shape): system messages as they are; user text as a text part; an assistant turn as its text and
 * `tool-call` parts (inputs as parsed objects); consecutive tool messages as one `tool` message of
 * `tool-result` parts (a failure envelope as `error-json`, else `text`). A tool message without a
 * name takes the name of the call it answers.
 */
export function toAiSdkPrompt(messages: readonly ChatMessage[]): AiSdkPromptMessage[] {
  const prompt: AiSdkPromptMessage[] = [];
  const callNames = new Map<string, string>();
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        prompt.push({ role: 'system', content: message.content ?? '' });
        break;
      case 'user':
        prompt.push({ role: 'user', content: [{ type: 'text', text: message.content ?? '' }] });
        break;
      case 'assistant': {
        const content: AiSdkPromptPart[] = [];
        if (message.content !== null && message.content !== '') content.push({ type: 'text', text: message.content });
        for (const call of message.toolCalls ?? []) {
          callNames.set(call.id, call.name);
          content.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: inputOf(call.args) });
        }
        prompt.push({ role: 'assistant', content });
        break;
      }
      case 'tool': {
        const toolCallId = message.toolCallId ?? '';
        const part = { type: 'tool-result', toolCallId, toolName: message.name ?? callNames.get(toolCallId) ?? '', output: outputOf(message.content) };
        const last = prompt[prompt.length - 1];
        if (last !== undefined && last.role === 'tool') last.content.push(part);
        else prompt.push({ role: 'tool', content: [part] });
        break;
      }
    }
  }
  return prompt;
}

/** A token count of either usage shape: a number (`ai` 5) or `{ total }` (`ai` 6 and 7). */
function tokens(value: unknown): number {
  const count = typeof value === 'object' && value !== null ? (value as { total?: unknown }).total : value;
  return typeof count === 'number' && Number.isFinite(count) && count > 0 ? Math.floor(count) : 0;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : typeof value === 'string' ? `a string (${JSON.stringify(value.slice(0, 80))})` : `a ${typeof value}`;
}

/**
 * Reads a `doGenerate` result into a toolrun {@link ModelResponse}: the text parts joined; each
 * client-executed `tool-call` as a call whose arguments are the model's raw JSON text (so
 * malformed JSON and unknown names reach toolrun); usage from either shape, 0 when absent.
 * Reasoning, sources, files and provider-executed tool calls and results are left out.
 *
 * @throws ModelResponseError when the result has no `content` list, or a tool call has no
 *   non-empty `toolName` (classified as an invalid response, transient).
 */
export function parseAiSdkResult(result: unknown, stepIndex: number): ModelResponse {
  if (typeof result !== 'object' || result === null) throw new ModelResponseError(`the model's doGenerate resolved to ${describe(result)}, not a result`);
  const { content, usage } = result as { content?: unknown; usage?: unknown };
  if (!Array.isArray(content)) throw new ModelResponseError(`the model's result has ${content === undefined ? 'no' : describe(content)} \`content\` list`);
  const texts: string[] = [];
  const toolCalls: ModelToolCall[] = [];
  for (const [index, part] of content.entries()) {
    if (typeof part !== 'object' || part === null) continue;
    const { type } = part as { type?: unknown };
    if (type === 'text') {
      const { text } = part as { text?: unknown };
      if (typeof text === 'string') texts.push(text);
    } else if (type === 'tool-call') {
      const { toolCallId, toolName, input, providerExecuted } = part as {
        toolCallId?: unknown;
        toolName?: unknown;
        input?: unknown;
        providerExecuted?: unknown;
      };
      if (providerExecuted === true) continue;
      if (typeof toolName !== 'string' || toolName.length === 0)
        throw new ModelResponseError(`content[${index}] is a tool call whose toolName is ${describe(toolName)}`);
      toolCalls.push({
        id: typeof toolCallId === 'string' && toolCallId.length > 0 ? toolCallId : `call_${stepIndex}_${index}`,
        name: toolName,
        args: input ?? {},
      });
    }
  }
  const counts = typeof usage === 'object' && usage !== null ? (usage as { inputTokens?: unknown; outputTokens?: unknown }) : {};
  return {
    text: texts.length > 0 ? texts.join('') : null,
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    usage: { input: tokens(counts.inputTokens), output: tokens(counts.outputTokens) },
  };
}

/**
 * Any AI SDK provider model as toolrun's {@link Model}, so `runAgent`, `handleMessage`, the worker
 * and the drain run on any provider the AI SDK supports (`ai` 5, 6 and 7 models):
 *
 * ```ts
 * const toolrun = createToolrun({ model: fromAiSdkModel(openai('gpt-4o')), tools });
 * ```
 *
 * Each step calls the model's `doGenerate` once, directly (not `generateText`: the SDK would parse,
 * validate and repair tool calls itself), with the conversation as an AI SDK prompt (see
 * `toAiSdkPrompt`), the runtime's tools as function tools with their JSON Schemas, tool
 * choice `auto`, the run's abort signal and `settings`. The answer is read by
 * `parseAiSdkResult`. The function's `modelName` is `<provider>:<modelId>`.
 *
 * Failures reject: the provider's own errors unchanged (the SDK's `APICallError`, with
 * `statusCode`, `responseHeaders` and `isRetryable`, which toolrun's model policy classifies and
 * retries; the provider's own retries are not used), and a {@link ModelResponseError} for a result
 * that is not one.
 *
 * @throws ToolrunError `INVALID_OPTIONS` when `languageModel` is not a provider model object (a
 *   model id string included: resolve it with its provider first).
 */
export function fromAiSdkModel(languageModel: AiSdkLanguageModel, options: FromAiSdkModelOptions = {}): Model {
  if (typeof languageModel !== 'object' || languageModel === null || typeof (languageModel as { doGenerate?: unknown }).doGenerate !== 'function') {
    throw new ToolrunError(
      'INVALID_OPTIONS',
      `fromAiSdkModel needs an AI SDK provider model (e.g. openai('gpt-4o')), received ${describe(languageModel)}${typeof languageModel === 'string' ? ': a model id needs its provider' : ''}`,
    );
  }
  const settings = options.settings ?? {};
  const model = async (request: ModelRequest): Promise<ModelResponse> => {
    const callOptions: AiSdkCallOptions = {
      ...settings,
      prompt: toAiSdkPrompt(request.messages),
      ...(request.tools.length > 0
        ? {
            tools: request.tools.map((tool) => ({ type: 'function' as const, name: tool.name, description: tool.description, inputSchema: tool.inputSchema })),
            toolChoice: { type: 'auto' as const },
          }
        : {}),
      abortSignal: request.signal,
    };
    const result = await languageModel.doGenerate(callOptions as never);
    return parseAiSdkResult(result, request.stepIndex);
  };
  const modelName = options.modelName ?? `${String(languageModel.provider)}:${String(languageModel.modelId)}`;
  return Object.assign(model, { modelName });
}
