export * from './messages.ts';
export * from './run-agent.ts';
export * from './run-state.ts';
