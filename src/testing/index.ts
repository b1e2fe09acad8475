/**
 * `toolrun/testing`: what users need to test their own agents — a fake clock, an auto-advancing
 * clock for whole runs, a scripted model and a seeded random source. Importable anywhere (no test
 * runner needed); the contract suites every store backend must pass, which register vitest suites,
 * are in `toolrun/testing/contract`.
 *
 * @packageDocumentation
 */
export { createFakeClock, type FakeClock } from './fake-clock.ts';
export { createAutoAdvancingClock } from './auto-advancing-clock.ts';
export { createScriptedModel, type ScriptedModel, type ScriptedTurn } from './scripted-model.ts';
export { createSeededRandom } from './seeded-random.ts';
