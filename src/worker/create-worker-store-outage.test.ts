import { describe, expect, it } from 'vitest';
import { defineTool } from '../core/define-tool.ts';
import type { Stores } from '../ground/ports/stores.ts';
import { createMemoryStores } from '../stores/memory/index.ts';
import { createAutoAdvancingClock } from '../testing/auto-advancing-clock.ts';
import { createScriptedModel } from '../testing/scripted-model.ts';
import { createWorker } from './create-worker.ts';

const busy = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });

/** Memory stores whose `queue.reserve` (and, with `dlqToo`, the tool DLQ's `size`) fails while `failing()` says so; `reserves` counts the tries. */
function flakyStores(failing: () => boolean, dlqToo = false) {
  const stores = createMemoryStores();
  const tries = { reserves: 0 };
  const reserve = stores.queue.reserve.bind(stores.queue);
  const size = stores.toolDlq.size.bind(stores.toolDlq);
  const flaky: Stores = {
    ...stores,
    queue: Object.assign(Object.create(stores.queue) as typeof stores.queue, {
      reserve: async (leaseMs: number) => {
        tries.reserves += 1;
        if (failing()) throw busy();
        return reserve(leaseMs);
      },
    }),
    toolDlq: Object.assign(Object.create(stores.toolDlq) as typeof stores.toolDlq, {
      size: async () => {
        if (dlqToo && failing()) throw busy();
        return size();
      },
    }),
  };
  return { stores: flaky, memory: stores, tries };
}

const echo = defineTool({ name: 'echo', description: '', inputSchema: { type: 'object' }, execute: async () => ({ ok: true }) });
const model = () => {
  const perRun = new Map<string, ReturnType<typeof createScriptedModel>>();
  return (request: Parameters<ReturnType<typeof createScriptedModel>>[0]) => {
    let scripted = perRun.get(request.runId);
    if (scripted === undefined) {
      scripted = createScriptedModel([
        { toolCalls: [{ id: 'c', name: 'echo', args: '{}' }], usage: { input: 1, output: 1 } },
        { text: 'done', usage: { input: 1, output: 1 } },
      ]);
      perRun.set(request.runId, scripted);
    }
    return scripted(request);
  };
};

describe('a worker whose queue fails', () => {
  it('outlives an outage of the queue: the failures go to onError, tried again with backoff, and every message completes once', async () => {
    let failures = 5;
    const { stores, memory, tries } = flakyStores(() => failures-- > 0, true);
    for (let index = 0; index < 6; index++) await memory.queue.enqueue({ id: `m${index}`, body: JSON.stringify({ input: `run ${index}` }) });
    const errors: unknown[] = [];
    const completed: string[] = [];
    const clock = createAutoAdvancingClock();
    const worker = createWorker({
      stores,
      tools: [echo],
      model: model(),
      clock,
      concurrency: 2,
      pollIntervalMs: 100,
      onError: (error) => errors.push(error),
      onResult: (result) => completed.push(`${result.status}:${result.runId}`),
    });
    const running = worker.run();
    for (let spins = 0; completed.length < 6 && spins < 10_000; spins++) await new Promise((resolve) => setImmediate(resolve));
    worker.stop();
    await running;
    expect(completed.sort()).toEqual(Array.from({ length: 6 }, (_, index) => `completed:run_m${index}`).sort());
    expect(errors).toHaveLength(5);
    expect(errors.every((error) => (error as { code?: string }).code === 'SQLITE_BUSY')).toBe(true);
    expect(tries.reserves).toBeGreaterThan(6);
    expect(await memory.queue.size()).toBe(0);
  });

  it('backs off between tries: from pollIntervalMs, doubling, at most 5 s', async () => {
    const { stores } = flakyStores(() => true);
    const clock = createAutoAdvancingClock();
    const triedAt: number[] = [];
    const worker = createWorker({ stores, tools: [echo], model: model(), clock, pollIntervalMs: 100, onError: () => triedAt.push(clock.now()) });
    const running = worker.run();
    for (let spins = 0; triedAt.length < 10 && spins < 10_000; spins++) await new Promise((resolve) => setImmediate(resolve));
    worker.stop();
    await running;
    const waits = triedAt.slice(1, 10).map((at, index) => at - triedAt[index]!);
    expect(waits).toEqual([100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000, 5_000]);
  });

  it('runUntilEmpty rejects with the error after 10 failures in a row, once the other consumers stopped', async () => {
    const { stores, memory, tries } = flakyStores(() => tries.reserves > 2);
    for (let index = 0; index < 2; index++) await memory.queue.enqueue({ id: `m${index}`, body: JSON.stringify({ input: `run ${index}` }) });
    const completed: string[] = [];
    const worker = createWorker({
      stores,
      tools: [echo],
      model: model(),
      clock: createAutoAdvancingClock(),
      concurrency: 3,
      onResult: (result) => completed.push(result.status),
    });
    await expect(worker.runUntilEmpty()).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    // the two messages taken before the outage were handled and acknowledged
    expect(completed).toEqual(['completed', 'completed']);
    expect(await memory.queue.size()).toBe(0);
  });
});
