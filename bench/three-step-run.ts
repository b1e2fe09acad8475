/**
 * The worker benchmarks' run, as plain data both the source (`worker.bench.ts`) and the compiled
 * package (`profile-sqlite-worker.mts`) build it from: a `lookup` tool (idempotent) and a scripted
 * model's three turns (two calls of it, then an answer).
 */
import type { ScriptedTurn } from '../src/testing/scripted-model.ts';

/** The `lookup` tool without its `execute` (`async ({ id }) => ({ id, status: 'ok' })` in both). */
export const LOOKUP_TOOL = {
  name: 'lookup',
  description: 'Looks a record up',
  inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  idempotent: true,
} as const;

/** The model's three turns: `lookup` of `a`, `lookup` of `b`, then `done`. */
export const THREE_STEP_TURNS: readonly ScriptedTurn[] = [
  { toolCalls: [{ id: 'c1', name: 'lookup', args: '{"id":"a"}' }], usage: { input: 100, output: 10 } },
  { toolCalls: [{ id: 'c2', name: 'lookup', args: '{"id":"b"}' }], usage: { input: 120, output: 10 } },
  { text: 'done', usage: { input: 140, output: 5 } },
];
