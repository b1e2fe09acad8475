import { describe, expect, it } from 'vitest';
import { defineTool } from '../core/define-tool.ts';
import type { Model } from './messages.ts';
import { createMemoryStores } from '../stores/memory/index.ts';
import { createAutoAdvancingClock } from '../testing/auto-advancing-clock.ts';
import { handleMessage } from '../worker/handle-message.ts';
import { checkModelResponse } from './model-policy.ts';

describe('a model whose tool-call arguments JSON cannot hold', () => {
  it('BigInt arguments: an invalid answer naming the call, not an error thrown when the step is stored', () => {
    expect(checkModelResponse({ toolCalls: [{ id: 'c', name: 'pay', args: { amount: 10n } }], usage: { input: 1, output: 1 } }, 0)).toEqual({
      ok: false,
      problem: expect.stringMatching(/^toolCalls\[0\]\.args cannot be written as JSON \(.*BigInt.*\)/),
    });
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(checkModelResponse({ toolCalls: [{ name: 'pay', args: cycle }] }, 0)).toMatchObject({ ok: false });
    expect(checkModelResponse({ toolCalls: [{ name: 'pay', args: { amount: 10 } }] }, 0)).toMatchObject({ ok: true });
  });

  it('fails the run once, as a model failure with a clear error, at its first delivery: the message is not thrown back', async () => {
    const clock = createAutoAdvancingClock();
    const stores = createMemoryStores({ clock });
    let executions = 0;
    const pay = defineTool({ name: 'pay', description: 'pays', inputSchema: { type: 'object' }, execute: () => ++executions });
    let calls = 0;
    const model = (async () => {
      calls += 1;
      return { toolCalls: [{ id: 'c1', name: 'pay', args: { amount: 12345678901234567890n } }], usage: { input: 1, output: 1 } };
    }) as unknown as Model;
    const result = await handleMessage({ id: 'm1', body: JSON.stringify({ input: 'pay' }), deliveries: 1 }, { model, tools: [pay], stores, clock });
    expect(result.status).toBe('model_failed');
    expect(result.status === 'model_failed' && 'modelFailure' in result ? result.modelFailure?.lastError.message : undefined).toMatch(/BigInt/);
    expect(executions).toBe(0);
    expect(calls).toBeGreaterThan(0);
    expect(await stores.toolDlq.size()).toBe(1);
    expect((await stores.runs.get('run_m1'))?.status).toBe('model_failed');
  });
});
