import { describe, expect, it } from 'vitest';
import { hasSharedData } from '../examples/shared-data.ts';
import type { ChatMessage } from '../examples/airline/chat-message.ts';
import { createRecordedModel, END_OF_RECORDING_TEXT, estimateTokens } from '../examples/airline/recorded-model.ts';
import { loadAirlineRuns, loadAirlineTrajectories, runHasToolCalls, splitTrajectoryIntoRuns } from '../examples/airline/trajectories.ts';

const dataPresent = hasSharedData('tau-bench', 'gpt-4o-airline.trajectories.json');
const FAILED_ENVELOPE = '{"status":"failed","error":{"type":"environment","code":"UNAVAILABLE"}}';

describe.skipIf(!dataPresent)('τ-bench airline trajectories split into runs', () => {
  it('splits the 200 conversations into 1,341 runs, 569 of them with tool calls, covering every assistant message', () => {
    const trajectories = loadAirlineTrajectories();
    const runs = loadAirlineRuns(trajectories);
    expect(trajectories).toHaveLength(200);
    expect(runs).toHaveLength(1341);
    expect(runs.filter(runHasToolCalls)).toHaveLength(569);
    const assistantMessages = trajectories.flatMap((trajectory) => trajectory.traj).filter((message) => message.role === 'assistant').length;
    expect(runs.flatMap((run) => run.assistantTurns).filter((message) => message.role === 'assistant')).toHaveLength(assistantMessages);
    expect(runs.flatMap((run) => run.assistantTurns).filter((message) => message.role === 'tool')).toHaveLength(1164);
    expect(new Set(runs.map((run) => run.runId)).size).toBe(runs.length);
    for (const run of runs) {
      expect(run.messagesBefore.at(-1)?.role).toBe('user');
      const last = run.assistantTurns.at(-1);
      // a run ends with the reply to the customer, or (51 runs) with the tool reply that ended the conversation
      expect(last?.role === 'tool' || (last?.role === 'assistant' && last.toolCalls === undefined)).toBe(true);
      expect(run.assistantTurns.slice(0, -1).every((message) => message.role === 'tool' || message.toolCalls !== undefined)).toBe(true);
    }
  });

  it('names runs t{task}-trial{trial}-r{k} and keeps the whole conversation before each run', () => {
    const trajectory = loadAirlineTrajectories()[0];
    if (trajectory === undefined) throw new Error('no trajectory');
    const runs = splitTrajectoryIntoRuns(trajectory);
    expect(runs[0]?.runId).toBe('t0-trial0-r0');
    expect(runs[1]?.runId).toBe('t0-trial0-r1');
    expect(runs[1]?.messagesBefore).toEqual([...(runs[0]?.messagesBefore ?? []), ...(runs[0]?.assistantTurns ?? []), runs[1]?.messagesBefore.at(-1)]);
  });
});

describe.skipIf(!dataPresent)('recorded model', () => {
  const runs = dataPresent ? loadAirlineRuns() : [];
  const model = createRecordedModel(runs);
  const signal = new AbortController().signal;

  it('returns every recorded assistant turn even when the live tool replies are failure envelopes', async () => {
    let turns = 0;
    for (const run of runs) {
      const messages: ChatMessage[] = [...run.messagesBefore];
      for (const recorded of run.assistantTurns) {
        if (recorded.role === 'tool') {
          messages.push({ ...recorded, content: FAILED_ENVELOPE });
          continue;
        }
        const answer = await model({ messages, tools: [], signal });
        if (recorded.toolCalls === undefined) {
          expect(answer.text).toBe(recorded.content);
          expect(answer.toolCalls).toBeUndefined();
        } else {
          expect(answer.toolCalls).toEqual(recorded.toolCalls);
        }
        expect(answer.usage.input).toBeGreaterThan(0);
        expect(answer.usage.output).toBeGreaterThan(0);
        messages.push({ role: 'assistant', content: answer.text ?? null, ...(answer.toolCalls === undefined ? {} : { toolCalls: answer.toolCalls }) });
        turns += 1;
      }
    }
    expect(turns).toBe(2454);
  });

  it('estimates usage as characters / 4 and keeps the recorded tool-call ids', async () => {
    const run = runs.find((candidate) => candidate.assistantTurns[0]?.toolCalls !== undefined);
    if (run === undefined) throw new Error('no run with tool calls');
    const answer = await model({ messages: run.messagesBefore, tools: [], signal });
    const recordedCall = run.assistantTurns[0]?.toolCalls?.[0];
    expect(answer.toolCalls?.[0]?.id).toBe(recordedCall?.id);
    const inputCharacters = run.messagesBefore.reduce((sum, message) => sum + (message.content?.length ?? 0), 0);
    expect(answer.usage.input).toBe(estimateTokens(inputCharacters));
    expect(answer.usage.output).toBe(estimateTokens((recordedCall?.name.length ?? 0) + String(recordedCall?.args).length));
  });

  it('answers an end-of-recording text after the last recorded turn, and refuses an unknown conversation', async () => {
    const run = runs.find((candidate) => candidate.assistantTurns.at(-1)?.role === 'tool');
    if (run === undefined) throw new Error('no run that ends on a tool reply');
    const answer = await model({ messages: [...run.messagesBefore, ...run.assistantTurns], tools: [], signal });
    expect(answer.text).toBe(END_OF_RECORDING_TEXT);
    await expect(model({ messages: [{ role: 'user', content: 'not a recorded customer' }], tools: [], signal })).rejects.toThrow(/does not match/);
  });
});
