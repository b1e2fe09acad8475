import { describe, expect, it } from 'vitest';
import { classifyError } from '../../core/classify-error.ts';
import { ToolError } from '../../core/tool-error.ts';
import type { Model, ModelRequest } from '../../agent/messages.ts';
import { modelInRestate } from './journaled-model.ts';
import type { RestateStepContext } from './restate-steps.ts';

/** A journal of step results: replayed while it has entries, appended to past its end. */
function journaledContext(journal: unknown[] = []): RestateStepContext & { journal: unknown[] } {
  let index = 0;
  return {
    journal,
    rand: { random: () => 0.5 },
    sleep: async () => undefined,
    async run<T>(_name: string, action: () => Promise<T>): Promise<T> {
      if (index < journal.length) return journal[index++] as T;
      index += 1;
      const value = JSON.parse(JSON.stringify(await action())) as T;
      journal.push(value);
      return value;
    },
  };
}

const request: ModelRequest = { messages: [{ role: 'user', content: 'hi' }], tools: [], signal: new AbortController().signal, stepIndex: 0, runId: 'r1' };

describe('modelInRestate', () => {
  it('a failure is journaled as its classification and thrown again classified the same, without calling the model again', async () => {
    let calls = 0;
    const headers = new Headers({ 'retry-after': '7' });
    const failing: Model = async () => {
      calls += 1;
      throw Object.assign(new Error('rate limited'), { status: 429, headers });
    };
    const context = journaledContext();
    const thrown = await modelInRestate(context, failing)(request).catch((error: unknown) => error);
    const replayed = await modelInRestate(journaledContext([...context.journal]), failing)(request).catch((error: unknown) => error);
    expect(calls).toBe(1);
    const original = classifyError(Object.assign(new Error('rate limited'), { status: 429, headers }), { nowMs: Date.now(), target: 'fixed' });
    for (const error of [thrown, replayed]) {
      expect(ToolError.is(error)).toBe(true);
      const classified = classifyError(error, { nowMs: Date.now(), target: 'fixed' });
      expect({
        code: classified.code,
        transient: classified.transient,
        retryAfterMs: classified.retryAfterMs,
        misconfiguration: classified.misconfiguration,
      }).toEqual({
        code: original.code,
        transient: original.transient,
        retryAfterMs: 7_000,
        misconfiguration: original.misconfiguration,
      });
    }
  });

  it('an answer is journaled; the model keeps its name for the breaker key and the entries', async () => {
    let calls = 0;
    const model = Object.assign(
      async () => {
        calls += 1;
        return { text: 'done', usage: { input: 3, output: 1 } };
      },
      { modelName: 'gpt-test' },
    );
    const context = journaledContext();
    const journaled = modelInRestate(context, model);
    expect(await journaled(request)).toEqual({ text: 'done', usage: { input: 3, output: 1 } });
    expect(await modelInRestate(journaledContext([...context.journal]), model)(request)).toEqual({ text: 'done', usage: { input: 3, output: 1 } });
    expect(calls).toBe(1);
    expect((journaled as { modelName?: string }).modelName).toBe('gpt-test');
  });
});
