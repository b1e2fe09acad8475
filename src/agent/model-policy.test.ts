import { getEventListeners } from 'node:events';
import { RateLimitError } from 'openai';
import { describe, expect, it } from 'vitest';
import { createSharedBreaker } from '../policies/shared-breaker.ts';
import { createMemoryBreakerStateStore } from '../stores/memory/memory-breaker-state-store.ts';
import { createAutoAdvancingClock } from '../testing/auto-advancing-clock.ts';
import { createFakeClock } from '../testing/fake-clock.ts';
import { createSeededRandom } from '../testing/seeded-random.ts';
import type { Model, ModelRequest } from './messages.ts';
import { callModel, checkModelResponse, resolveModelPolicy, type CallModelInput } from './model-policy.ts';

const request: Omit<ModelRequest, 'signal'> = { messages: [{ role: 'user', content: 'hi' }], tools: [], stepIndex: 2, runId: 'run_1' };

function input(model: Model, overrides: Partial<CallModelInput> = {}): CallModelInput {
  return {
    model,
    request,
    modelName: 'test-model',
    policy: resolveModelPolicy(undefined),
    clock: createAutoAdvancingClock(),
    random: createSeededRandom(7),
    describe: (text) => text.slice(0, 200),
    ...overrides,
  };
}

/** A model that fails with `errors` in turn, then answers. Records when (clock time) it was called. */
function scripted(clock: { now(): number }, errors: unknown[]): Model & { at: number[] } {
  const at: number[] = [];
  const model = (async () => {
    at.push(clock.now());
    const error = errors.shift();
    if (error !== undefined) throw error;
    return { text: 'ok', usage: { input: 3, output: 1 } };
  }) as unknown as Model & { at: number[] };
  model.at = at;
  return model;
}

describe('callModel', () => {
  it('records a model that throws a plain bug as MODEL_EXCEPTION, and a 503 with its own code (no tool code on a model failure)', async () => {
    const clock = createAutoAdvancingClock();
    const bug = await callModel(input(scripted(clock, [new TypeError('cannot read properties of undefined')]), { clock }));
    expect(bug).toMatchObject({ ok: false, failure: { lastError: { kind: 'exception', code: 'MODEL_EXCEPTION' } } });
    const down = Object.assign(new Error('overloaded'), { status: 503 });
    const unavailable = await callModel(input(scripted(clock, [down, down, down]), { clock }));
    expect(unavailable).toMatchObject({ ok: false, failure: { lastError: { status: 503, code: 'UNAVAILABLE' } } });
  });

  it("leaves no listener on the run's signal: a long run's model calls do not pile them up", async () => {
    const controller = new AbortController();
    const clock = createAutoAdvancingClock();
    const model = scripted(clock, [new RateLimitError(429, { message: 'slow down' }, 'slow down', new Headers())]);
    for (let call = 0; call < 20; call++) {
      expect(await callModel(input(model, { clock, signal: controller.signal }))).toMatchObject({ ok: true });
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('waits what a 429 asks (Retry-After), not the backoff, then succeeds', async () => {
    const clock = createAutoAdvancingClock();
    const limited = new RateLimitError(429, { message: 'slow down' }, 'slow down', new Headers({ 'retry-after': '7' }));
    const model = scripted(clock, [limited]);
    const outcome = await callModel(input(model, { clock }));
    expect(outcome).toMatchObject({ ok: true, attempts: 2, response: { text: 'ok' } });
    expect(model.at[1]! - model.at[0]!).toBe(7_000);
  });

  it('never sleeps past the run deadline: a Retry-After longer than the time left ends the step at once', async () => {
    const clock = createAutoAdvancingClock();
    const limited = new RateLimitError(429, { message: 'slow down' }, 'slow down', new Headers({ 'retry-after': '60' }));
    const model = scripted(clock, [limited]);
    const startedAt = clock.now();
    const outcome = await callModel(input(model, { clock, deadlineAt: startedAt + 30_000 }));
    expect(outcome).toMatchObject({
      ok: false,
      cancelled: false,
      failure: { reason: 'model-budget-exhausted', attempts: 1, retryAfterMs: 60_000, stepIndex: 2, lastError: { status: 429, kind: 'rate_limit' } },
    });
    expect(clock.now() - startedAt).toBeLessThan(30_000);
    expect(model.at).toHaveLength(1);
  });

  it('times out a model that never answers and ignores its signal, and retries it', async () => {
    const clock = createFakeClock();
    const signals: AbortSignal[] = [];
    const model: Model = (call) => {
      signals.push(call.signal);
      return new Promise(() => undefined); // never settles, never looks at the signal
    };
    const pending = callModel(
      input(model, { clock, policy: resolveModelPolicy({ timeoutMs: 1_000, maxAttempts: 2, backoff: { baseDelayMs: 100, jitterMs: 0 } }) }),
    );
    await clock.advance(1_000);
    await clock.advance(100);
    await clock.advance(1_000);
    const outcome = await pending;
    expect(outcome).toMatchObject({ ok: false, failure: { reason: 'model-retries-exhausted', attempts: 2, lastError: { code: 'TIMEOUT' } } });
    expect(signals.map((signal) => signal.aborted)).toEqual([true, true]);
  });

  it('a caller abort is a cancel, not a failure to dead-letter', async () => {
    const controller = new AbortController();
    const model: Model = () => {
      controller.abort(new Error('shutting down'));
      return new Promise(() => undefined);
    };
    const outcome = await callModel(input(model, { signal: controller.signal }));
    expect(outcome).toEqual({ ok: false, cancelled: true, attempts: 1 });
  });

  it('opens the shared model breaker on a rejected key; then rejects without calling the model', async () => {
    const clock = createAutoAdvancingClock();
    const events: string[] = [];
    const breaker = createSharedBreaker({
      store: createMemoryBreakerStateStore(),
      clock,
      options: { failureThreshold: 1 },
      onEvent: (event) => events.push(`${event.type}:${event.key}`),
    });
    const rejected = Object.assign(new Error('Incorrect API key'), { status: 401 });
    const model = scripted(clock, [rejected, rejected]);
    const first = await callModel(input(model, { clock, breaker }));
    const second = await callModel(input(model, { clock, breaker }));
    expect(first).toMatchObject({ ok: false, failure: { reason: 'model-not-retryable', attempts: 1, breakerOpened: true } });
    expect(second).toMatchObject({ ok: false, attempts: 0, failure: { reason: 'model-breaker-open', attempts: 0, lastError: { code: 'CIRCUIT_OPEN' } } });
    expect(model.at).toHaveLength(1);
    expect(events).toEqual(['breaker-open:model:test-model']);
  });

  it('rejects a timeout beyond what timers can hold at creation', () => {
    expect(() => resolveModelPolicy({ timeoutMs: 2 ** 31 })).toThrow(/timeoutMs/);
    expect(() => resolveModelPolicy({ timeoutMs: 0 })).toThrow(/timeoutMs/);
  });
});

describe('checkModelResponse', () => {
  it('normalises usage and gives calls without an id a stable one', () => {
    expect(checkModelResponse({ toolCalls: [{ name: 'lookup', args: '{}' }], usage: { input: Number.NaN, output: -3 } }, 4)).toEqual({
      ok: true,
      response: { text: null, toolCalls: [{ id: 'call_4_0', name: 'lookup', args: '{}' }], usage: { input: 0, output: 0 } },
    });
  });

  it.each([
    [undefined, 'undefined'],
    ['text', 'a string'],
    [[], 'an array'],
    [{ text: 5 }, 'not a string'],
    [{ toolCalls: {} }, 'not an array'],
    [{ toolCalls: [null] }, 'toolCalls[0]'],
    [{ toolCalls: [{ id: 'a', name: '' }] }, 'toolCalls[0].name'],
  ])('%j is not a response (%s)', (value, problem) => {
    const checked = checkModelResponse(value, 0);
    expect(checked.ok).toBe(false);
    expect(checked.ok ? '' : checked.problem).toContain(problem);
  });

  it('a response whose getters throw is a problem, not a crash', () => {
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error('boom');
        },
      },
    );
    expect(checkModelResponse(hostile, 0)).toMatchObject({ ok: false });
  });
});
