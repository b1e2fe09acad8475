export * from './clock.ts';
export * from './schema-validator.ts';
export * from './stores.ts';
export * from './failure-log.ts';
export * from './run-journal.ts';
