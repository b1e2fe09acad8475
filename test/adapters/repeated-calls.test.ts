/** `createRepeatedCalls`: which deliveries of a call id reuse the first one's envelope, and its bound. */
import { describe, expect, it } from 'vitest';
import { createRepeatedCalls } from '../../src/adapters/repeated-calls.ts';
import type { ToolResult } from '../../src/ground/tool-result.ts';

function counter() {
  let runs = 0;
  const execute = async (): Promise<ToolResult> => {
    runs += 1;
    return { status: 'success', tool_name: 't', call_id: 'c', duration_ms: 0, attempts: 1, trace_id: String(runs), data: runs };
  };
  return { execute, runs: () => runs };
}

describe('createRepeatedCalls', () => {
  it('a delivery in flight under the same scope shares the first; another scope runs', async () => {
    const calls = createRepeatedCalls();
    const { execute, runs } = counter();
    const scope = {};
    const [first, second, other] = await Promise.all([
      calls.run({ callId: 'a', scope }, execute),
      calls.run({ callId: 'a', scope }, execute),
      calls.run({ callId: 'a', scope: {} }, execute),
    ]);
    expect(second).toBe(first);
    expect(other).not.toBe(first);
    expect(runs()).toBe(2);
  });

  it('a settled call is reused under another scope only when the conversation shows it answered', async () => {
    const calls = createRepeatedCalls();
    const { execute, runs } = counter();
    const first = await calls.run({ callId: 'a', scope: {} }, execute);
    expect(await calls.run({ callId: 'a', scope: {}, answeredInConversation: (id) => id === 'a' }, execute)).toBe(first);
    expect(runs()).toBe(1);
    await calls.run({ callId: 'a', scope: {}, answeredInConversation: () => false }, execute);
    expect(runs()).toBe(2);
  });

  it('no call id always runs; a rejected run is forgotten', async () => {
    const calls = createRepeatedCalls();
    const { execute, runs } = counter();
    await calls.run({ callId: undefined, scope: undefined }, execute);
    await calls.run({ callId: '', scope: undefined }, execute);
    expect(runs()).toBe(2);
    await expect(calls.run({ callId: 'b', scope: undefined }, () => Promise.reject(new Error('store down')))).rejects.toThrow('store down');
    await calls.run({ callId: 'b', scope: undefined }, execute);
    expect(runs()).toBe(3);
  });

  it('remembers at most maxIds ids, forgetting the oldest', async () => {
    const calls = createRepeatedCalls(3);
    const { execute, runs } = counter();
    for (const id of ['a', 'b', 'c', 'd']) await calls.run({ callId: id, scope: undefined }, execute);
    await calls.run({ callId: 'd', scope: undefined }, execute);
    expect(runs()).toBe(4);
    await calls.run({ callId: 'a', scope: undefined }, execute);
    expect(runs()).toBe(5);
  });
});
