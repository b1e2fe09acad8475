import { createToolRuntime, defineTool } from '../../src/index.ts';

const queryWeather = defineTool({
  name: 'query_weather',
  description: 'The forecast for a city on a day',
  inputSchema: {
    type: 'object',
    properties: { city: { type: 'string' }, date: { type: 'string', format: 'date' } },
    required: ['city', 'date'],
    additionalProperties: false,
  } as const, // `as const`: execute's arguments are typed { city: string; date: string }
  execute: async ({ city, date }) => ({ city: city.toUpperCase(), date, forecast: 'sunny' }),
});

const runtime = createToolRuntime({ tools: [queryWeather] });
const result = await runtime.run({ name: 'query_weather', args: { city: 'Paris', date: '2024/1/5' } });
console.log(JSON.stringify(result, null, 2)); // never throws for a tool failure: the envelope is data
