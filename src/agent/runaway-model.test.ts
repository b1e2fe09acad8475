/**
 * A model that keeps calling a tool that does not exist: the hallucinated-name breaker is scoped to
 * the run when no session is given, and the run stops once it is open instead of using every step.
 */
import { describe, expect, it } from 'vitest';
import { createToolRuntime } from '../core/create-tool-runtime.ts';
import { createFakeClock } from '../testing/fake-clock.ts';
import { createScriptedModel } from '../testing/scripted-model.ts';
import { runAgent } from './run-agent.ts';

const tools = { search_web: async () => 'ok' };
const runaway = () => createScriptedModel([{ toolCalls: [{ id: 'c1', name: 'browse_internet', args: '{"q":"x"}' }], usage: { input: 10, output: 5 } }]);

describe('a runaway model calling a missing tool', () => {
  it.each([
    ['no session id', {}],
    ['a session id', { sessionId: 'user-7' }],
  ])('%s: at most 4 model calls, then tool_failed / session-breaker-open naming the unknown tool', async (_label, extra) => {
    const model = runaway();
    const runtime = createToolRuntime({ tools, clock: createFakeClock(0) });
    const result = await runAgent({ runtime, model, messages: [{ role: 'user', content: 'look it up' }], maxSteps: 20, ...extra });
    expect(model.calls).toBe(4);
    expect(result.status).toBe('tool_failed');
    expect(result.failure).toMatchObject({ toolName: 'browse_internet', reason: 'session-breaker-open', attempts: 0, lastError: { kind: 'unknown_tool' } });
    // the model read TOOL_NOT_FOUND three times; the fourth call was not made
    const toolMessages = model.requests[3]!.messages.filter((message) => message.role === 'tool');
    expect(toolMessages).toHaveLength(3);
  });

  it('two runs without a session id on one runtime do not share the breaker', async () => {
    const runtime = createToolRuntime({ tools, clock: createFakeClock(0) });
    for (const runId of ['run-a', 'run-b']) {
      const model = runaway();
      const result = await runAgent({ runtime, model, runId, messages: [{ role: 'user', content: 'look it up' }] });
      expect(model.calls).toBe(4);
      expect(result.status).toBe('tool_failed');
    }
  });

  it('runtime.run: a call with a runId and no sessionId is counted under its run', async () => {
    const runtime = createToolRuntime({ tools, clock: createFakeClock(0) });
    const code = async (runId?: string) => {
      const result = await runtime.run({ name: 'browse_internet', args: {}, ...(runId === undefined ? {} : { runId }) });
      return result.status === 'failed' ? result.error.code : 'success';
    };
    for (let call = 0; call < 3; call++) await code('run-a');
    expect(await code('run-a')).toBe('TOO_MANY_FAILURES');
    expect(await code('run-b')).toBe('TOOL_NOT_FOUND');
    // no run and no session: the shared 'default' scope, as before
    expect(await code()).toBe('TOOL_NOT_FOUND');
  });
});
