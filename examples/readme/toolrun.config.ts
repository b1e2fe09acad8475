import { defineConfig } from '../../src/index.ts';
import { createOpenAiChatModel } from '../../src/adapters/openai/index.ts';
import { tools } from './tools.ts';

export default defineConfig(({ env }) => ({
  model: createOpenAiChatModel({ model: 'gpt-4o-mini', apiKey: env.OPENAI_API_KEY }),
  tools,
  toolRetryBudget: 2,
}));
