/**
 * `toolrun/openai-agents`: toolrun's tools for the OpenAI Agents SDK (`@openai/agents`, an optional
 * peer dependency): function tools that hand the raw argument string to toolrun, the run
 * configuration that answers unknown tool names with toolrun's envelope instead of ending the run,
 * and, given a place to dead-letter, the tool DLQ and its replay in the SDK's own loop.
 *
 * @packageDocumentation
 */
export { toOpenAiAgents, type OpenAiAgentsOptions, type OpenAiAgentsTools, type RuntimeSource } from './to-openai-agents.ts';
export { OPENAI_AGENTS_HOST, type OpenAiAgentsDeadLetterOptions } from './openai-agents-dead-letter.ts';
export {
  openAiAgentsContinuation,
  replayOpenAiAgentsDeadLetter,
  type ContinueOpenAiAgentsRun,
  type OpenAiAgentsContinuation,
  type OpenAiAgentsReplayOptions,
} from './replay-openai-agents.ts';
