import { createToolRuntime, defineTool } from '../src/index.ts';
const schema = {
  type: 'object',
  properties: {
    origin: { type: 'string', pattern: '^[A-Z]{3}$' },
    destination: { type: 'string', pattern: '^[A-Z]{3}$' },
    date: { type: 'string', format: 'date' },
  },
  required: ['origin', 'destination', 'date'],
  additionalProperties: false,
};
const args = { origin: 'JFK', destination: 'SEA', date: '2024-05-20' };
const runtime = createToolRuntime({ tools: [defineTool({ name: 's', description: '', inputSchema: schema, execute: async (a) => ({ f: [a.origin] }) })] });
for (let i = 0; i < 20000; i++) await runtime.run({ name: 's', args });
const t = process.hrtime.bigint();
for (let i = 0; i < 100000; i++) await runtime.run({ name: 's', args });
console.log(Number(process.hrtime.bigint() - t) / 100000, 'ns/op');
