import { describe, expect, it } from 'vitest';
import type { AirlineRun } from '../trajectories.ts';
import { createConversationScheduler } from './conversation-scheduler.ts';

function run(trajectoryKey: string, index: number): AirlineRun {
  return { runId: `${trajectoryKey}-r${index}`, trajectoryKey, taskId: 0, trial: 0, messagesBefore: [], assistantTurns: [] };
}

const runs = [run('t0-trial0', 0), run('t0-trial0', 1), run('t0-trial0', 2), run('t1-trial0', 0), run('t1-trial0', 1)];

describe('createConversationScheduler', () => {
  it('releases the first run of every conversation, then each next run once the one before answered', () => {
    const scheduler = createConversationScheduler(runs);
    expect(scheduler.start().map((item) => item.runId)).toEqual(['t0-trial0-r0', 't1-trial0-r0']);
    expect(scheduler.start()).toEqual([]);
    expect(scheduler.runEnded('t1-trial0-r0', 'completed')).toEqual({ state: 'next', run: runs[4] });
    expect(scheduler.runEnded('t0-trial0-r0', 'max_steps')).toEqual({ state: 'next', run: runs[1] });
    expect(scheduler.runEnded('t1-trial0-r1', 'completed')).toEqual({ state: 'finished' });
    expect(scheduler.isSettled()).toBe(false);
  });

  it('parks a conversation whose run went to the tool DLQ until that run is resumed', () => {
    const scheduler = createConversationScheduler(runs);
    scheduler.start();
    expect(scheduler.runEnded('t0-trial0-r0', 'tool_failed')).toEqual({ state: 'parked', runId: 't0-trial0-r0' });
    expect(scheduler.runEnded('t1-trial0-r0', 'completed').state).toBe('next');
    expect(scheduler.runEnded('t1-trial0-r1', 'completed').state).toBe('finished');
    expect(scheduler.isSettled()).toBe(true);
    expect(scheduler.parkedRuns()).toEqual(['t0-trial0-r0']);
    expect(scheduler.resume('t0-trial0-r0')).toEqual({ state: 'next', run: runs[1] });
    expect(scheduler.isSettled()).toBe(false);
    expect(scheduler.parkedRuns()).toEqual([]);
    expect(scheduler.progress().find((item) => item.conversationKey === 't0-trial0')).toEqual({
      conversationKey: 't0-trial0',
      state: 'running',
      runIndex: 1,
      runCount: 3,
    });
  });

  it('ignores a run that is not the current one of its conversation (a redelivery, an unknown id)', () => {
    const scheduler = createConversationScheduler(runs);
    scheduler.start();
    expect(scheduler.runEnded('t0-trial0-r1', 'completed')).toEqual({ state: 'unknown-run' });
    expect(scheduler.runEnded('nope', 'completed')).toEqual({ state: 'unknown-run' });
    expect(scheduler.resume('t0-trial0-r0')).toEqual({ state: 'unknown-run' });
    expect(scheduler.runEnded('t0-trial0-r0', 'completed').state).toBe('next');
    expect(scheduler.runEnded('t0-trial0-r0', 'completed')).toEqual({ state: 'unknown-run' });
  });
});
