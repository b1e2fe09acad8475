/**
 * toolrun on the Anthropic SDK, both ways: toolrun's tools in the SDK's own tool runner
 * (`toAnthropicTools`, one import and one call), and Claude as the model of toolrun's loop
 * (`createAnthropicModel`). Type-checked by `npm run typecheck`; run it with a key:
 * `ANTHROPIC_API_KEY=… npx tsx examples/anthropic/weather-agent.ts`.
 */
import Anthropic from '@anthropic-ai/sdk';
import { createToolRuntime, defineTool, runAgent } from '../../src/index.ts';
import { createAnthropicModel, toAnthropicTools } from '../../src/adapters/anthropic/index.ts';

const runtime = createToolRuntime({
  tools: [
    defineTool({
      name: 'get_weather',
      description: 'The forecast for a city on a day',
      inputSchema: {
        type: 'object',
        properties: { city: { type: 'string' }, date: { type: 'string', format: 'date' } },
        required: ['city', 'date'],
        additionalProperties: false,
      },
      execute: ({ city, date }) => ({ city, date, forecast: 'sunny', high_c: 21 }),
    }),
  ],
});
const client = new Anthropic({ maxRetries: 0 });
const question = 'What is the weather in Paris on 2024-01-15?';

// 1. the SDK's tool runner; the glue is one call: failures come back as tool_result with is_error: true
const final = await client.beta.messages.toolRunner({
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  messages: [{ role: 'user', content: question }],
  tools: toAnthropicTools(runtime),
});
console.log(final.content);

// 2. toolrun's loop (retries, budgets, breakers, the tool DLQ through createToolrun) on Claude
const result = await runAgent({
  model: createAnthropicModel({ client, model: 'claude-sonnet-4-5' }),
  runtime,
  messages: [{ role: 'user', content: question }],
});
console.log(result.status, result.text);
