import { Agent, OpenAIProvider, Runner } from '@openai/agents';
import { createToolRuntime } from '../../src/index.ts';
import { toOpenAiAgents } from '../../src/adapters/openai-agents/index.ts';
import { cancelTurns, scriptedOpenAiEndpoint } from './offline.ts';
import { tools as toolrunTools } from './tools.ts';

const runtime = createToolRuntime({ tools: toolrunTools });
const { tools, runConfig } = toOpenAiAgents(runtime, { sessionId: 'chat-42' }); // or toOpenAiAgents(createToolrun(…))

// offline stand-in: a scripted Chat Completions endpoint on 127.0.0.1; with OPENAI_API_KEY set, drop `modelProvider`
const endpoint = await scriptedOpenAiEndpoint(cancelTurns);
const modelProvider = new OpenAIProvider({ apiKey: 'offline', baseURL: endpoint.baseURL, useResponses: false });

const agent = new Agent({ name: 'support', instructions: 'Cancel reservations with the tool.', model: 'gpt-4o-mini', tools });
const result = await new Runner({ ...runConfig, modelProvider, tracingDisabled: true }).run(agent, 'Cancel ZFA04Y'); // or run(agent, input, { ...runConfig })
for (const item of result.newItems) if (item.type === 'tool_call_output_item') console.log(JSON.stringify(item.output).slice(0, 100)); // toolrun's envelopes
console.log(result.finalOutput);
await endpoint.close();
