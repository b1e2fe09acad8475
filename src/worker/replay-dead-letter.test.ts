import { describe, expect, it } from 'vitest';
import { defineTool } from '../core/define-tool.ts';
import { ToolError } from '../core/tool-error.ts';
import { createMemoryStores } from '../stores/memory/index.ts';
import { createAutoAdvancingClock } from '../testing/auto-advancing-clock.ts';
import { createScriptedModel } from '../testing/scripted-model.ts';
import { createToolrun } from './create-toolrun.ts';
import { replayDeadLetter } from './replay-dead-letter.ts';

/** A run that dead-letters at its second step while `book` is down, with a side-effect count. */
async function deadLettered() {
  const clock = createAutoAdvancingClock();
  const stores = createMemoryStores({ clock });
  const state = { healthy: false, bookings: 0, checks: 0, checkHealthy: true };
  const book = defineTool({
    name: 'book',
    description: 'Books',
    inputSchema: { type: 'object' },
    execute: () => {
      if (!state.healthy) throw new ToolError({ kind: 'server', status: 503 });
      state.bookings += 1;
      return { booked: true };
    },
  });
  const check = defineTool({
    name: 'check',
    description: 'Checks',
    inputSchema: { type: 'object' },
    execute: () => {
      state.checks += 1;
      if (!state.checkHealthy) throw new ToolError({ kind: 'server', status: 503 });
      return { fine: true };
    },
  });
  const call = { toolCalls: [{ id: 'c1', name: 'book', args: '{}' }], usage: { input: 10, output: 1 } };
  const options = { tools: [book, check], stores, runtimeOptions: { clock }, queues: { messageDlq: stores.messageDlq, toolDlq: stores.toolDlq } };
  const { handleMessage } = createToolrun({ ...options, model: createScriptedModel([call, call]) });
  await handleMessage({ body: '{"input":"book"}', id: 'm1' });
  const [record] = await stores.toolDlq.list();
  return { clock, stores, state, options, record: record! };
}

const finalAnswer = () => createScriptedModel([{ text: 'booked', usage: { input: 1, output: 1 } }]);

describe('replayDeadLetter', () => {
  it('removes the entry when the run completes; a second replay of the same record repeats nothing', async () => {
    const { stores, state, options, record } = await deadLettered();
    expect(record.entry).toMatchObject({ kind: 'tool', stepIndex: 1, toolName: 'book' });
    state.healthy = true;
    const first = await replayDeadLetter(record, { ...options, model: finalAnswer() });
    expect(first).toMatchObject({ id: record.id, status: 'completed', removed: true });
    expect(await stores.toolDlq.size()).toBe(0);
    const second = await replayDeadLetter(record, { ...options, model: finalAnswer() });
    expect(second).toMatchObject({ status: 'already_completed', removed: false });
    expect(state.bookings).toBe(1);
  });

  it('replaces the entry by the new one when the run fails at another step', async () => {
    const { stores, state, options, record } = await deadLettered();
    state.healthy = true;
    state.checkHealthy = false;
    const model = createScriptedModel([
      { toolCalls: [{ id: 'c2', name: 'check', args: '{}' }], usage: { input: 1, output: 1 } },
      { toolCalls: [{ id: 'c3', name: 'check', args: '{}' }], usage: { input: 1, output: 1 } },
    ]);
    const result = await replayDeadLetter(record, { ...options, model });
    expect(result.status).toBe('tool_failed');
    expect(result.removed).toBe(true);
    const left = await stores.toolDlq.list();
    expect(left.map(({ id }) => id)).toEqual([result.replacedBy]);
    expect(left[0]!.entry).toMatchObject({ kind: 'tool', toolName: 'check' });
    expect(left[0]!.entry.stepIndex).toBeGreaterThan(0);
    expect(state.bookings).toBe(1);
  });

  it('two operators replaying one record at once: one runs it, the other finds it in progress; the side effect happens once', async () => {
    const { stores, state, options, record } = await deadLettered();
    state.healthy = true;
    const results = await Promise.all([
      replayDeadLetter(record, { ...options, model: finalAnswer() }),
      replayDeadLetter(record, { ...options, model: finalAnswer() }),
    ]);
    expect(results.map(({ status }) => status).sort()).toEqual(['completed', 'in_progress']);
    expect(state.bookings).toBe(1);
    expect(await stores.toolDlq.size()).toBe(0);
  });

  it('createToolrun.replay settles the DLQ for a record, and only resumes the run for a bare entry', async () => {
    const { stores, state, options, record } = await deadLettered();
    state.healthy = true;
    const toolrun = createToolrun({ ...options, model: finalAnswer() });
    const bare = await toolrun.replay(record.entry);
    expect(bare.status).toBe('completed');
    expect(await stores.toolDlq.size()).toBe(1);
    const settled = await toolrun.replay(record);
    expect(settled).toMatchObject({ status: 'already_completed', removed: true });
    expect(await stores.toolDlq.size()).toBe(0);
    expect(state.bookings).toBe(1);
  });

  it('needs the DLQ the record is in', async () => {
    const { record } = await deadLettered();
    await expect(replayDeadLetter(record, { model: finalAnswer(), tools: {} })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
  });
});

describe('replayDeadLetter, a call that fails again', () => {
  it('says which calls failed again when the model went on without them (the run completed: the entry leaves the DLQ)', async () => {
    const { stores, state, options, record } = await deadLettered();
    expect(state.healthy).toBe(false);
    // still down: the call run again fails again, and the model answers without it
    const replayed = await replayDeadLetter(record, { ...options, model: createScriptedModel([{ text: 'could not book', usage: { input: 1, output: 1 } }]) });
    expect(replayed).toMatchObject({ status: 'completed', removed: true, failedAgain: [{ callId: 'c1', toolName: 'book', code: 'UNAVAILABLE' }] });
    expect(await stores.toolDlq.size()).toBe(0);
    expect(state.bookings).toBe(0);
  });

  it('says nothing of the kind when the call run again succeeds', async () => {
    const { state, options, record } = await deadLettered();
    state.healthy = true;
    const replayed = await replayDeadLetter(record, { ...options, model: finalAnswer() });
    expect(replayed.status).toBe('completed');
    expect(replayed.failedAgain).toBeUndefined();
  });
});
