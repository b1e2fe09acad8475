/**
 * `toolrun/openai-agents`: toolrun's tools for the OpenAI Agents SDK (`@openai/agents`, an optional
 * peer dependency): function tools that hand the raw argument string to toolrun, and the run
 * configuration that answers unknown tool names with toolrun's envelope instead of ending the run.
 *
 * @packageDocumentation
 */
export { toOpenAiAgents, type OpenAiAgentsOptions, type OpenAiAgentsTools, type RuntimeSource } from './to-openai-agents.ts';
