/**
 * `toolrun/openai`: a toolrun `Model` on any OpenAI-compatible chat-completions endpoint (`openai`,
 * an optional peer dependency, imported on first use).
 *
 * @packageDocumentation
 */
export { createOpenAiChatModel, type ChatCompletionLike, type ChatCompletionsClient, type OpenAiChatModelOptions } from './openai-chat-model.ts';
