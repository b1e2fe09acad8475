// The model and tools of `toolrun worker` and `toolrun dlq replay|drain` (plain JavaScript: no build step)
import { defineConfig, defineTool } from '../../src/index.ts';
import { createOpenAiChatModel } from '../../src/adapters/openai/index.ts';
import { createScriptedModel } from '../../src/testing/index.ts';

const lookUpOrder = defineTool({
  name: 'look_up_order',
  description: 'The status of an order, by its 4-digit id',
  inputSchema: { type: 'object', properties: { order_id: { type: 'string', pattern: '^[0-9]{4}$' } }, required: ['order_id'] },
  execute: async ({ order_id }) => ({ order_id, status: 'shipped' }),
});

// Without OPENAI_API_KEY, a scripted model stands in: it calls the tool, then answers.
const offline = createScriptedModel([
  ({ messages }) =>
    messages.at(-1)?.role === 'tool'
      ? { text: 'Order 1234 has shipped.', usage: { input: 60, output: 6 } }
      : { toolCalls: [{ id: 'call_1', name: 'look_up_order', args: { order_id: '1234' } }], usage: { input: 30, output: 8 } },
]);

export default defineConfig(({ env }) => ({
  model: env.OPENAI_API_KEY ? createOpenAiChatModel({ model: 'gpt-4o-mini', apiKey: env.OPENAI_API_KEY }) : offline,
  tools: [lookUpOrder],
}));
