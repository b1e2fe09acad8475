/**
 * The airline workload's recorded gpt-4o turns served by an AI SDK provider model: the SDK's own
 * `MockLanguageModelV3` (`ai/test`), scripted by the recordings. `TOOLRUN_MODEL=ai-sdk npm start`
 * runs the main job on it through `fromAiSdkModel`, so every model call of the worker and the drain
 * goes toolrun messages → AI SDK prompt → `doGenerate` → AI SDK content → toolrun response, and
 * the summary must be the recorded model's.
 *
 * The mock reads the prompt back into toolrun's messages for the recorded model. A prompt carries
 * tool-call inputs as parsed objects, but the recording is found by the calls' exact argument text
 * (`{"a": 1}` and `{"a":1}` are different recordings): so the texts of the conversation's calls are
 * handed to the mock beside the prompt and looked up by call id, name and input.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { MockLanguageModelV3 } from 'ai/test';
import { fromAiSdkModel, type AiSdkLanguageModel } from '../../src/adapters/ai-sdk/index.ts';
import type { ChatMessage, Model, ModelRequest } from '../../src/agent/messages.ts';
import { createRecordedModel } from '../airline/recorded-model.ts';
import type { AirlineRun } from '../airline/trajectories.ts';

type PromptPart = { type: string; text?: string; toolCallId?: string; toolName?: string; input?: unknown; output?: { type: string; value?: unknown } };
type PromptMessage = { role: string; content: string | PromptPart[] };

function argsText(args: unknown): string {
  return typeof args === 'string' ? args : (JSON.stringify(args) ?? '');
}

/** The key of a call's argument text: its id, name and parsed input (ids repeat across the recordings). */
function callKey(id: string, name: string, input: unknown): string {
  return JSON.stringify([id, name, input]);
}

function parsedInput(args: unknown): unknown {
  if (typeof args !== 'string') return args ?? {};
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return {};
  }
}

/** The argument text of every tool call of a toolrun conversation, by {@link callKey}. */
function argumentTexts(messages: readonly ChatMessage[]): Map<string, string> {
  const byKey = new Map<string, string>();
  for (const message of messages)
    for (const call of message.toolCalls ?? []) byKey.set(callKey(call.id, call.name, parsedInput(call.args)), argsText(call.args));
  return byKey;
}

function outputText(output: PromptPart['output']): string {
  if (output === undefined) return '';
  return typeof output.value === 'string' ? output.value : (JSON.stringify(output.value) ?? '');
}

/** An AI SDK prompt read back into toolrun's messages. */
export function promptToChatMessages(prompt: readonly PromptMessage[], argumentTextsByKey: ReadonlyMap<string, string>): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (const message of prompt) {
    const parts = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    const text = parts
      .filter((part) => part.type === 'text')
      .map((part) => part.text ?? '')
      .join('');
    if (message.role === 'system' || message.role === 'user') messages.push({ role: message.role, content: text });
    else if (message.role === 'assistant') {
      const calls = parts.filter((part) => part.type === 'tool-call');
      messages.push({
        role: 'assistant',
        content: text === '' ? null : text,
        ...(calls.length > 0
          ? {
              toolCalls: calls.map((part) => ({
                id: part.toolCallId ?? '',
                name: part.toolName ?? '',
                args: argumentTextsByKey.get(callKey(part.toolCallId ?? '', part.toolName ?? '', part.input ?? {})) ?? argsText(part.input),
              })),
            }
          : {}),
      });
    } else if (message.role === 'tool') {
      for (const part of parts) {
        if (part.type === 'tool-result')
          messages.push({ role: 'tool', toolCallId: part.toolCallId ?? '', name: part.toolName ?? '', content: outputText(part.output) });
      }
    }
  }
  return messages;
}

/**
 * A `MockLanguageModelV3` answering with the recorded turns of `runs` (see the module comment);
 * `argumentTextsNow` gives the argument texts of the conversation being answered.
 */
export async function createRecordedMockModel(runs: readonly AirlineRun[], argumentTextsNow: () => ReadonlyMap<string, string>): Promise<MockLanguageModelV3> {
  const { MockLanguageModelV3 } = await import('ai/test');
  const recorded = createRecordedModel(runs);
  return new MockLanguageModelV3({
    provider: 'recorded',
    modelId: 'gpt-4o-tau-bench',
    doGenerate: async (options) => {
      const answer = await recorded({
        messages: promptToChatMessages(options.prompt as unknown as PromptMessage[], argumentTextsNow()),
        signal: options.abortSignal ?? new AbortController().signal,
      });
      const toolCalls = answer.toolCalls ?? [];
      return {
        content: [
          ...(answer.text !== undefined && (answer.text !== '' || toolCalls.length === 0) ? [{ type: 'text' as const, text: answer.text }] : []),
          ...toolCalls.map((call) => ({ type: 'tool-call' as const, toolCallId: call.id, toolName: call.name, input: argsText(call.args) })),
        ],
        finishReason: { unified: toolCalls.length > 0 ? 'tool-calls' : 'stop', raw: undefined },
        usage: {
          inputTokens: { total: answer.usage.input, noCache: answer.usage.input, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: answer.usage.output, text: answer.usage.output, reasoning: undefined },
        },
        warnings: [],
      };
    },
  });
}

/**
 * The recorded turns of `runs` as toolrun's {@link Model}, through the AI SDK: `fromAiSdkModel`
 * over {@link createRecordedMockModel} (created, and `ai` loaded, on the first call). The exact
 * argument texts of the conversation reach the mock beside the prompt (an `AsyncLocalStorage` per
 * call); everything else it reads from the prompt.
 */
export function createAiSdkRecordedModel(runs: readonly AirlineRun[]): Model {
  const texts = new AsyncLocalStorage<ReadonlyMap<string, string>>();
  let mock: Promise<MockLanguageModelV3> | undefined;
  const languageModel: AiSdkLanguageModel = {
    specificationVersion: 'v3',
    provider: 'recorded',
    modelId: 'gpt-4o-tau-bench',
    doGenerate: async (options: never) => {
      mock ??= createRecordedMockModel(runs, () => texts.getStore() ?? new Map());
      return (await mock).doGenerate(options as never);
    },
  };
  const viaAiSdk = fromAiSdkModel(languageModel);
  const model = (request: ModelRequest) => texts.run(argumentTexts(request.messages), () => viaAiSdk(request));
  return Object.assign(model, { modelName: (viaAiSdk as { modelName?: string }).modelName });
}
