/**
 * `toolrun/anthropic`: toolrun on the Anthropic SDK (`@anthropic-ai/sdk`, an optional peer
 * dependency): a toolrun `Model` over the Messages API, and toolrun's tools for the SDK's tool
 * runner. Failures reach Claude as `tool_result` blocks with `is_error: true`.
 *
 * @packageDocumentation
 */
export { createAnthropicModel, type AnthropicMessagesClient, type AnthropicModelOptions } from './anthropic-model.ts';
export { toAnthropicTools, type AnthropicRuntimeSource, type AnthropicToolsOptions } from './anthropic-tools.ts';
