/**
 * `toolrun/ai-sdk`: toolrun inside the Vercel AI SDK (`ai` 5 and 6 on Node 20, `ai` 7 on Node 22+;
 * `ai` is an optional peer dependency, used for its types only): `toAiSdk` gives `generateText` /
 * `streamText` toolrun's tools and tool-call repair, and `fromAiSdkModel` makes any AI SDK provider
 * model toolrun's `Model`.
 *
 * @packageDocumentation
 */
export { toAiSdk, type AiSdkTools, type ToAiSdkOptions } from './to-ai-sdk.ts';
export { ToolCallFailure } from './tool-call-failure.ts';
export { AI_SDK_ENTRY_PREFIX, AI_SDK_HOST, DEFAULT_AI_SDK_RETRY_BUDGET, type AiSdkDeadLetterOptions } from './ai-sdk-dead-letter.ts';
export {
  aiSdkContinuation,
  replayAiSdkDeadLetter,
  type AiSdkContinuation,
  type AiSdkContinueRun,
  type AiSdkReplayOptions,
  type AiSdkReplayResult,
} from './replay-ai-sdk.ts';
export {
  fromAiSdkModel,
  type AiSdkCallOptions,
  type AiSdkLanguageModel,
  type AiSdkPromptMessage,
  type AiSdkPromptPart,
  type FromAiSdkModelOptions,
} from './from-ai-sdk-model.ts';
