import { createToolRuntime } from './src/core/create-tool-runtime.ts';
import { defineTool } from './src/core/define-tool.ts';
const t = (name: string, properties: Record<string, unknown>, required: string[] = Object.keys(properties)) =>
  defineTool({ name, description: 'd', inputSchema: { type: 'object', properties, required, additionalProperties: false }, execute: async (a) => a });
const runtime = createToolRuntime({ tools: [
  t('check_price', { items: { type: 'array', items: { type: 'string' } }, quantities: { type: 'array', items: { type: 'integer' } } }),
  t('find_recipe', { diet: { type: 'array', items: { type: 'string', enum: ['vegan', 'vegetarian', 'gluten-free'] }, default: ['vegetarian'] } }),
  t('count', { n: { type: 'integer' } }),
  t('circle', { radius: { type: 'number' }, angle: { type: 'number' } }),
  t('search', { query: { type: 'string' } }),
] });
const show = async (name: string, args: unknown) => { const r = await runtime.run({ name, args }); console.log(name, JSON.stringify(args), '\n  ', JSON.stringify(r.status === 'failed' ? { m: r.error.message, d: r.error.detail, s: r.error.suggestion, f: r.error.fields } : r)); };
await show('check_price', { items: 'pumpkin, eggs, milk', quantities: [3, 24, 1] });
await show('check_price', { items: ['pumpkin'], quantities: '3, 24' });
await show('find_recipe', { diet: 'vegan' });
await show('find_recipe', { diet: 'gluten-free' });
await show('count', { n: 'five' });
await show('count', {});
await show('circle', '{"radius": 5, "angle": 2 * Math.PI}');
await show('circle', '{"radius": 5, "angle": Math.PI / 2}');
await show('circle', '{"radius": sqrt(2), "angle": 1}');
await show('search', '{"query": "O"Brien"}');
await show('search', '{"query": "crash" on start"}');
await show('search', { 'que\u0000ry\n': 'x' });
