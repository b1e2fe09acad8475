import { describe, expect, it } from 'vitest';
import { forkStepOf } from './replay-dbos-run.ts';
import { callPlaceOf, replayNumberOf, replayWorkflowId } from './step-names.ts';

const steps = (...names: string[]) => names.map((name, functionID) => ({ functionID, name, output: null }));

describe('where a DBOS replay forks', () => {
  it('a failed tool call: its first step (the engine attempts after it run again)', () => {
    const recorded = steps('toolrun.model:0', 'toolrun.tool:0:0', 'toolrun.tool:0:1', 'DBOS.sleep', 'toolrun.tool:0:1', 'toolrun.dead-letter');
    expect(forkStepOf(recorded, { kind: 'tool', stepIndex: 0, callIndex: 1, name: 'book', reason: 'misconfiguration' })).toBe(2);
  });

  it('a call the loop refused (budget spent, session breaker open): the dead-letter step', () => {
    const recorded = steps('toolrun.model:0', 'toolrun.tool:0:0', 'toolrun.model:1', 'toolrun.dead-letter');
    expect(forkStepOf(recorded, { kind: 'tool', stepIndex: 1, callIndex: 0, name: 'book', reason: 'retry-budget-exhausted' })).toBe(3);
  });

  it("a failed model call: the step's first model attempt", () => {
    const recorded = steps('toolrun.model:0', 'toolrun.tool:0:0', 'toolrun.model:1', 'toolrun.model:1', 'toolrun.dead-letter');
    expect(forkStepOf(recorded, { kind: 'model', stepIndex: 1, name: 'gpt', reason: 'model-unavailable' })).toBe(2);
  });

  it('a workflow without the step or a dead-letter step: none', () => {
    expect(forkStepOf(steps('toolrun.model:0'), { kind: 'tool', stepIndex: 3, callIndex: 0, name: 'book', reason: 'circuit-open' })).toBeUndefined();
  });
});

describe('step and workflow names', () => {
  it("reads a call's place from its idempotency key, run ids with colons included", () => {
    expect(callPlaceOf('run_a:b:12:3')).toEqual({ stepIndex: 12, callIndex: 3 });
    expect(callPlaceOf('no-place')).toBeUndefined();
    expect(callPlaceOf(undefined)).toBeUndefined();
  });

  it("numbers a run's replays and tells another run's workflows apart", () => {
    expect(replayWorkflowId('run_1', 2)).toBe('run_1:replay:2');
    expect(replayNumberOf('run_1', 'run_1')).toBe(0);
    expect(replayNumberOf('run_1', 'run_1:replay:2')).toBe(2);
    expect(replayNumberOf('run_1', 'run_10')).toBeUndefined();
    expect(replayNumberOf('run_1', 'run_1:replay:x')).toBeUndefined();
    expect(replayNumberOf('run_1', 'run_1:replay:0')).toBeUndefined();
  });
});
