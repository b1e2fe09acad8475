/**
 * `toolrun/testing`: what users need to test their own agents — a fake clock, an auto-advancing
 * clock for whole runs, a scripted model, in-memory stores, and the contract suites every store
 * backend must pass (these import `vitest`).
 */
export * from './fake-clock.ts';
export * from './auto-advancing-clock.ts';
export * from './scripted-model.ts';
export * from './seeded-random.ts';
export * from './contract/index.ts';
export { createMemoryStores } from '../stores/memory/index.ts';
