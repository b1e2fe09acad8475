import { describe, expect, it } from 'vitest';
import { defineTool } from '../core/define-tool.ts';
import { createMemoryStores } from '../stores/memory/index.ts';
import { createScriptedModel } from '../testing/scripted-model.ts';
import { createToolrun } from './create-toolrun.ts';
import { createWorker } from './create-worker.ts';
import { workerSettings } from './worker-settings.ts';

/** An object whose `field` is valid on the first read and `then` (a value, or a throw) on every later one; `reads()` counts. */
function changing<T extends object>(base: T, field: string, first: unknown, then: unknown): T & { reads(): number } {
  let reads = 0;
  return Object.defineProperties(base, {
    [field]: {
      enumerable: true,
      get: () => {
        reads += 1;
        if (reads === 1) return first;
        if (then instanceof Error) throw then;
        return then;
      },
    },
    reads: { value: () => reads },
  }) as T & { reads(): number };
}

const ask = defineTool({ name: 'ask', description: '', inputSchema: { type: 'object' }, execute: () => ({ ok: true }) });
/** A model that always calls a tool, so only `maxSteps` ends its run. */
const looping = () => createScriptedModel([{ toolCalls: [{ id: 'c', name: 'ask', args: '{}' }], usage: { input: 1, output: 1 } }]);

describe('createToolrun reads `limits` once', () => {
  it.each([
    ['an invalid value', { maxSteps: 0 }],
    ['a value that is not an object', 42],
    ['a throw', new Error('second read')],
  ])('a `limits` getter valid on the first read and %s after: the checked limits are the ones used', async (_name, then) => {
    const model = looping();
    const options = changing({ model, tools: [ask], stores: createMemoryStores() }, 'limits', { maxSteps: 1 }, then);
    const toolrun = createToolrun(options);
    const result = await toolrun.handleMessage({ id: 'm1', body: '{"input":"go"}' });
    expect(result.status).toBe('max_steps');
    expect(model.calls).toBe(1);
    expect(options.reads()).toBe(1);
  });

  it('a `limits.maxSteps` getter valid on the first read and invalid after: the checked value is the one used', async () => {
    const model = looping();
    const limits = changing({} as { maxSteps?: number }, 'maxSteps', 2, -1);
    const toolrun = createToolrun({ model, tools: [ask], stores: createMemoryStores(), limits });
    const result = await toolrun.handleMessage({ id: 'm1', body: '{"input":"go"}' });
    expect(result.status).toBe('max_steps');
    expect(model.calls).toBe(2);
    expect(limits.reads()).toBe(1);
  });

  it('a `limits` getter that throws on its first read is INVALID_OPTIONS naming it', () => {
    const options = {
      model: looping(),
      tools: [ask],
      get limits(): never {
        throw new Error('boom');
      },
    };
    expect(() => createToolrun(options)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/`limits` could not be read: boom/) }),
    );
  });
});

describe('workerSettings reads `leaseMs` and `pollIntervalMs` once', () => {
  const stores = createMemoryStores();
  it.each([
    ['leaseMs', -1],
    ['leaseMs', Number.NaN],
    ['leaseMs', new Error('second read')],
    ['pollIntervalMs', 0],
    ['pollIntervalMs', new Error('second read')],
  ] as const)('a `%s` getter valid on the first read and %s after: the checked value is the one used', (field, then) => {
    const options = changing({ stores }, field, 1_500.5, then);
    const settings = workerSettings(options as never);
    expect(settings[field]).toBe(1_501);
    expect(options.reads()).toBe(1);
  });

  it('a `redeliveryBackoff` whose `maxMs` is valid on the first read and not after: the checked value is the one used', () => {
    const backoff = changing({ baseMs: 10 }, 'maxMs', 100, -1);
    const settings = workerSettings({ stores, redeliveryBackoff: backoff } as never);
    expect([1, 2, 3, 10].map((deliveries) => settings.redeliveryDelayMs(deliveries))).toEqual([10, 20, 40, 100]);
    expect(backoff.reads()).toBe(1);
  });
});

describe('createWorker uses the stores it checked', () => {
  it('a `stores` getter that answers other stores on a later read: the worker consumes the checked ones', async () => {
    const checked = createMemoryStores();
    const other = createMemoryStores();
    await checked.queue.enqueue({ id: 'm1', body: '{"input":"go"}' });
    await other.queue.enqueue({ id: 'm2', body: '{"input":"go"}' });
    const model = createScriptedModel([{ text: 'done', usage: { input: 1, output: 1 } }]);
    const options = changing({ model, tools: [ask] }, 'stores', checked, other);
    const worker = createWorker(options as never);
    await worker.runUntilEmpty();
    expect(worker.stats.handled).toBe(1);
    expect(await checked.queue.size()).toBe(0);
    expect(await other.queue.size()).toBe(1);
  });
});

describe('createToolrun checks its hooks, and the options of its createWorker and drain', () => {
  it('a hook that is not a function is INVALID_OPTIONS naming it; hooks on a prototype are taken', async () => {
    for (const hooks of [{ onEvent: 'x' }, { onToolCall: 5 }, 7]) {
      expect(() => createToolrun({ model: looping(), tools: [ask], hooks } as never)).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/`hooks(\.onEvent|\.onToolCall)?` must be/) }),
      );
    }
    const ended: string[] = [];
    class Hooks {
      onRunEnd(result: { status: string }) {
        ended.push(result.status);
      }
    }
    const toolrun = createToolrun({ model: createScriptedModel([{ text: 'done', usage: { input: 1, output: 1 } }]), tools: [ask], hooks: new Hooks() });
    expect((await toolrun.handleMessage({ id: 'm1', body: '{"input":"go"}' })).status).toBe('completed');
    expect(ended).toEqual(['completed']);
  });

  it('toolrun.createWorker and toolrun.drain: options that are not an object or cannot be read are INVALID_OPTIONS', async () => {
    const toolrun = createToolrun({ model: looping(), tools: [ask] });
    const throwing = {
      get concurrency(): never {
        throw new Error('getter boom');
      },
    };
    for (const options of [null, 'x', throwing]) {
      expect(() => toolrun.createWorker(options as never)).toThrow(expect.objectContaining({ name: 'ToolrunError', code: 'INVALID_OPTIONS' }));
      await expect(toolrun.drain(options as never)).rejects.toMatchObject({ name: 'ToolrunError', code: 'INVALID_OPTIONS' });
    }
    expect(() => toolrun.createWorker(throwing as never)).toThrow(/`concurrency` could not be read: getter boom/);
  });
});
