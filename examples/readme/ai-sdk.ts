import { generateText, stepCountIs } from 'ai';
import { createToolrun } from '../../src/index.ts';
import { fromAiSdkModel, toAiSdk } from '../../src/adapters/ai-sdk/index.ts';
import { cancelTurns, scriptedLanguageModel } from './offline.ts'; // offline stand-in for openai('gpt-4o'), anthropic('claude-sonnet-4-5'), …
import { tools as toolrunTools } from './tools.ts';

const toolrun = createToolrun({ model: fromAiSdkModel(scriptedLanguageModel(cancelTurns)), tools: toolrunTools }); // an AI SDK model runs toolrun's loop
console.log((await toolrun.handleMessage({ id: 'msg-1', body: '{"input":"Cancel ZFA04Y"}' })).status); // completed

// toolrun's tools inside generateText / streamText
const { tools, repairToolCall } = toAiSdk(toolrun.runtime, { sessionId: 'chat-42' });
const result = await generateText({
  model: scriptedLanguageModel(cancelTurns),
  tools,
  experimental_repairToolCall: repairToolCall, // ai 7: `repairToolCall`; streamText takes the same two options
  stopWhen: stepCountIs(8),
  prompt: 'Cancel ZFA04Y',
});
for (const part of result.steps.flatMap((step) => step.content))
  if (part.type === 'tool-error' || part.type === 'tool-result') console.log(part.type, part.toolName);
console.log(result.text);
