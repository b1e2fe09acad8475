export * from './dead-letter-entries.ts';
export * from './message-schema.ts';
export * from './handle-message.ts';
export * from './replay-tool-failure.ts';
export * from './drain-tool-dlq.ts';
export * from './create-worker.ts';
export * from './worker-events.ts';
export * from './build-tool-failure-entry.ts';
export { getDefaultStores } from './default-stores.ts';
