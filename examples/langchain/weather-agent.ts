/**
 * toolrun inside LangChain v1's `createAgent`: the glue is one import and one call
 * (`toolrunMiddleware(runtime)`). Run it offline: `npx tsx examples/langchain/weather-agent.ts`.
 *
 * LangChain's own `fakeModel()` plays a model that sends a date in the wrong format, a truncated
 * call and a misspelt tool name, then corrects itself from toolrun's envelopes. With a real model,
 * pass any LangChain chat model instead (`new ChatOpenAI({ model: 'gpt-4o-mini' })`, or the string
 * `'openai:gpt-4o-mini'` with `@langchain/openai` installed) and drop the script.
 */
import { pathToFileURL } from 'node:url';
import { AIMessage, createAgent, fakeModel, HumanMessage, ToolMessage } from 'langchain';
import { createToolRuntime, defineTool } from '../../src/index.ts';
import { toolrunMiddleware } from '../../src/adapters/langchain/index.ts'; // in an app: 'toolrun/langchain'

const getWeather = defineTool({
  name: 'get_weather',
  description: 'Get the forecast for a city on a day',
  inputSchema: {
    type: 'object',
    properties: { city: { type: 'string' }, date: { type: 'string', format: 'date', description: 'YYYY-MM-DD' } },
    required: ['city', 'date'],
    additionalProperties: false,
  } as const, // written `as const`, the arguments of `execute` are typed from it
  idempotent: true,
  timeoutMs: 5_000,
  execute: async ({ city, date }) => ({ city, date, forecast: 'sunny', high_c: 21 }),
});

/** What the model was told after each of its tool calls. */
export interface ToolAnswer {
  toolCallId: string;
  status: 'success' | 'error';
  code: string | undefined;
  content: string;
}

/** Runs the scripted conversation and returns the tool answers and the model's final text. */
export async function runWeatherAgent(): Promise<{ answers: ToolAnswer[]; finalText: string; modelCalls: number }> {
  const runtime = createToolRuntime({ tools: [getWeather], retry: { backoff: { baseDelayMs: 50 } } });

  const model = fakeModel()
    // 1. a date in the wrong format
    .respondWithTools([{ name: 'get_weather', args: { city: 'Paris', date: '2024/5/1' }, id: 'call_1' }])
    // 2. arguments cut off mid-way: LangChain cannot parse them (an `invalid_tool_calls` entry)
    .respond(
      new AIMessage({
        content: '',
        invalid_tool_calls: [
          { type: 'invalid_tool_call', id: 'call_2', name: 'get_weather', args: '{"city": "Paris", "date": "2024-05', error: 'Unexpected end of JSON input' },
        ],
      }),
    )
    // 3. a misspelt tool name
    .respondWithTools([{ name: 'get_wheather', args: { city: 'Paris', date: '2024-05-01' }, id: 'call_3' }])
    // 4. the corrected call, then the answer
    .respondWithTools([{ name: 'get_weather', args: { city: 'Paris', date: '2024-05-01' }, id: 'call_4' }])
    .respond(new AIMessage('Sunny in Paris on 1 May 2024, 21 °C.'));

  const agent = createAgent({ model, middleware: [toolrunMiddleware(runtime)] });
  const { messages } = await agent.invoke(
    { messages: [new HumanMessage('What is the weather in Paris on 1 May 2024?')] },
    { configurable: { thread_id: 'chat-42' } },
  );

  const answers = messages
    .filter((message): message is ToolMessage => ToolMessage.isInstance(message))
    .map((message) => {
      const content = typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
      const envelope = JSON.parse(content) as { error?: { code?: string } };
      return { toolCallId: message.tool_call_id, status: message.status ?? 'success', code: envelope.error?.code, content };
    });
  const last = messages.at(-1);
  return { answers, finalText: typeof last?.content === 'string' ? last.content : '', modelCalls: model.callCount };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { answers, finalText } = await runWeatherAgent();
  for (const answer of answers) console.log(`${answer.toolCallId} ${answer.status.padEnd(7)} ${answer.content}\n`);
  console.log(`model: ${finalText}`);
}
