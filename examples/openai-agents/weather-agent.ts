/**
 * toolrun under the OpenAI Agents SDK: the glue is one import and one call (`toOpenAiAgents`),
 * spread into the SDK's own `Runner`. Type-checked by `npm run typecheck`; run it with a key:
 * `OPENAI_API_KEY=… npx tsx examples/openai-agents/weather-agent.ts`.
 */
import { Agent, Runner } from '@openai/agents';
import { createToolRuntime, defineTool, ToolError } from '../../src/index.ts';
import { toOpenAiAgents } from '../../src/adapters/openai-agents/index.ts';

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
      timeoutMs: 5_000,
      async execute({ city, date }, { signal }) {
        const response = await fetch(`https://wttr.in/${encodeURIComponent(String(city))}?format=j1`, { signal });
        if (!response.ok)
          throw new ToolError({ kind: response.status >= 500 ? 'server' : 'invalid_input', status: response.status, headers: response.headers });
        const body = (await response.json()) as { weather?: Array<{ date: string; maxtempC: string }> };
        return { city, date, high_c: body.weather?.find((day) => day.date === date)?.maxtempC ?? null };
      },
    }),
  ],
});

// the glue: one call
const { tools, runConfig } = toOpenAiAgents(runtime, { sessionId: 'demo-session' });

const agent = new Agent({ name: 'weather', instructions: 'Answer with the get_weather tool. Dates are YYYY-MM-DD.', model: 'gpt-4o-mini', tools });
const result = await new Runner(runConfig).run(agent, `What is the high in Paris on ${new Date().toISOString().slice(0, 10)}?`);
console.log(result.finalOutput);
