/**
 * `toolrun/anthropic`: toolrun on the Anthropic SDK (`@anthropic-ai/sdk`, an optional peer
 * dependency): a toolrun `Model` over the Messages API, and toolrun's tools for the SDK's tool
 * runner. Failures reach Claude as `tool_result` blocks with `is_error: true`; with a dead-letter
 * place, what a run cannot recover becomes a resumable tool-DLQ entry, replayed in the SDK's runner.
 *
 * @packageDocumentation
 */
export { createAnthropicModel, type AnthropicMessagesClient, type AnthropicModelOptions } from './anthropic-model.ts';
export { toAnthropicTools, type AnthropicRuntimeSource, type AnthropicToolsOptions } from './anthropic-tools.ts';
export { ANTHROPIC_HOST, type AnthropicDeadLetterOptions } from './anthropic-dead-letter.ts';
export {
  runAnthropicToolRunner,
  type AnthropicRunnerParams,
  type AnthropicRunnerSettings,
  type AnthropicRunResult,
  type AnthropicToolRunnerClient,
  type RunAnthropicToolRunnerOptions,
} from './run-anthropic-tool-runner.ts';
export { anthropicContinuation, replayAnthropicDeadLetter, type AnthropicContinuationOptions, type AnthropicReplayOptions } from './anthropic-continuation.ts';
