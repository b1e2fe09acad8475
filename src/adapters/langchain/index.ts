/**
 * `toolrun/langchain`: toolrun inside LangChain v1's `createAgent` — `toolrunMiddleware(runtime)`
 * runs every tool call through toolrun (unknown names and unparsable arguments included) and answers
 * with toolrun's envelope in a `ToolMessage` (`status: 'error'` for a failure). `langchain` and
 * `@langchain/core` are optional peer dependencies, needed only by this subpath.
 *
 * @packageDocumentation
 */
export { toolrunMiddleware, type ToolrunMiddlewareOptions } from './toolrun-middleware.ts';
export { toLangChainTools, ToolCallFailedError, type LangChainCallScope } from './langchain-tools.ts';
export { DEFAULT_LANGCHAIN_RETRY_BUDGET, LANGCHAIN_ENTRY_PREFIX, LANGCHAIN_HOST, type LangChainDeadLetterOptions } from './langchain-dead-letter.ts';
export {
  langchainContinuation,
  replayLangChainDeadLetter,
  type LangChainContinuationOptions,
  type LangChainReplayAgent,
  type LangChainReplayOptions,
  type LangChainReplayResult,
  type LangChainRunConfig,
  type LangGraphStateSnapshot,
} from './replay-langchain.ts';
export { LANGGRAPH_REF_PREFIX, type LangGraphCheckpointRef } from './langchain-conversation.ts';
