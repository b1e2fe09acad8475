import { describe, expect, it } from 'vitest';
import type { EvalTask } from './eval-task.ts';
import { FAULT_KINDS, misspelledKey, planTaskFaults } from './fault-plan.ts';

/** A task of `calls` calls alternating a read and a write. */
function task(id: string, calls: number): EvalTask {
  return {
    id,
    system: '',
    turns: [
      {
        userMessage: 'hi',
        calls: Array.from({ length: calls }, (_, index) =>
          index % 2 === 0
            ? { name: 'get_user_details', args: { user_id: `u${index}` } }
            : { name: 'cancel_reservation', args: { reservation_id: `R${index}` } },
        ),
        reply: 'done',
      },
    ],
  };
}

const writeTools = new Set(['cancel_reservation']);

describe('planTaskFaults', () => {
  it('gives the same plan for the same seed and task, another for another seed', () => {
    const plans = (seed: number) =>
      Array.from({ length: 20 }, (_, index) => planTaskFaults(task(`t${index}`, 6), { seed, faultsPerTask: 2, writeTools }).faults);
    expect(plans(42)).toEqual(plans(42));
    expect(plans(42)).not.toEqual(plans(43));
  });

  it('hits distinct calls, never removes a write tool, and draws every kind over many tasks', () => {
    const seen = new Set<string>();
    for (let index = 0; index < 200; index += 1) {
      const plan = planTaskFaults(task(`t${index}`, 6), { seed: 7, faultsPerTask: 3, writeTools });
      expect(plan.faults).toHaveLength(3);
      expect(new Set(plan.faults.map((fault) => `${fault.turn}:${fault.call}`)).size).toBe(3);
      expect([...plan.goneTools].every((name) => !writeTools.has(name))).toBe(true);
      for (const fault of plan.faults) {
        seen.add(fault.kind);
        if (fault.kind === 'bad_argument') expect(fault.badKey?.sentAs).toBe(misspelledKey(fault.badKey!.key));
        if (fault.kind === 'renamed_tool') expect(plan.renamedTools.get(fault.toolName)).toBe(`${fault.toolName}_v2`);
      }
    }
    expect([...seen].sort()).toEqual([...FAULT_KINDS].sort());
  });

  it('plans no more faults than the task has calls', () => {
    expect(planTaskFaults(task('t', 1), { seed: 1, faultsPerTask: 4, writeTools }).faults).toHaveLength(1);
    expect(planTaskFaults(task('t', 0), { seed: 1, faultsPerTask: 4, writeTools }).faults).toHaveLength(0);
  });
});

describe('misspelledKey', () => {
  it('sends snake_case keys in camelCase, and others with a suffix', () => {
    expect(misspelledKey('reservation_id')).toBe('reservationId');
    expect(misspelledKey('destination')).toBe('destination_value');
  });
});
