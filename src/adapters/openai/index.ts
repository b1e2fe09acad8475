export * from './openai-chat-model.ts';
