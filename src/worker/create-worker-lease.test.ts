import { describe, expect, it } from 'vitest';
import { defineTool } from '../core/define-tool.ts';
import type { RunQueue } from '../ground/ports/stores.ts';

import { createMemoryStores } from '../stores/memory/index.ts';
import { createFakeClock, type FakeClock } from '../testing/fake-clock.ts';
import { createScriptedModel } from '../testing/scripted-model.ts';
import { createWorker } from './create-worker.ts';
import type { WorkerEvent } from './worker-events.ts';

const LEASE_MS = 3_000;
const STEP_MS = 250;

/** A run whose one tool call lasts until the test ends it; `started` resolves when it began. */
function slowRun() {
  let finish!: () => void;
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const done = new Promise<void>((resolve) => (finish = resolve));
  let executions = 0;
  const tool = defineTool({
    name: 'slow',
    description: '',
    inputSchema: { type: 'object' },
    timeoutMs: 60_000,
    execute: async () => {
      executions += 1;
      markStarted();
      await done;
      return { ok: true };
    },
  });
  const model = createScriptedModel([
    { toolCalls: [{ id: 'c1', name: 'slow', args: '{}' }], usage: { input: 1, output: 1 } },
    { text: 'done', usage: { input: 1, output: 1 } },
  ]);
  return { tool, model, started, finish, executions: () => executions };
}

/** Moves the fake clock to `totalMs` in steps; after each, a second consumer tries to take a message. */
async function advanceWhileAnotherConsumerPolls(clock: FakeClock, queue: RunQueue, totalMs: number) {
  const taken: { atMs: number; id: string; deliveries: number }[] = [];
  for (let elapsedMs = STEP_MS; elapsedMs <= totalMs; elapsedMs += STEP_MS) {
    await clock.advance(STEP_MS);
    const delivery = await queue.reserve(LEASE_MS);
    if (delivery) taken.push({ atMs: elapsedMs, id: delivery.id, deliveries: delivery.deliveries });
  }
  return taken;
}

describe('createWorker lease renewal', () => {
  it('a run that takes 3× the lease is never handed to a second consumer, and is acknowledged once', async () => {
    const clock = createFakeClock();
    const stores = createMemoryStores({ clock });
    const run = slowRun();
    const errors: unknown[] = [];
    const results: string[] = [];
    const worker = createWorker({
      stores,
      clock,
      model: run.model,
      tools: [run.tool],
      leaseMs: LEASE_MS,
      onError: (error) => errors.push(error),
      onResult: (result) => results.push(result.status),
    });
    await stores.queue.enqueue({ id: 'long', body: '{"input":"take your time"}' });
    const finished = worker.runUntilEmpty();
    await run.started;

    const taken = await advanceWhileAnotherConsumerPolls(clock, stores.queue, LEASE_MS * 3 + STEP_MS);
    expect(taken).toEqual([]);

    run.finish();
    await finished;
    expect(results).toEqual(['completed']);
    expect(run.executions()).toBe(1);
    expect(errors).toEqual([]);
    expect(await stores.queue.size()).toBe(0);
    // the renewal loop stopped with the message: nothing is left sleeping on the clock
    expect(clock.pendingSleeps()).toBe(0);
  });

  it('reports a lost lease as one lease-lost event, not an error, and lets the run finish (the control: without renewal a second consumer takes it)', async () => {
    const clock = createFakeClock();
    const stores = createMemoryStores({ clock });
    // a queue whose renewals never go through, as when the lease ended before a renewal arrived
    const queue: RunQueue = { ...stores.queue, extendLease: async () => false };
    const run = slowRun();
    const errors: unknown[] = [];
    const events: WorkerEvent[] = [];
    const results: string[] = [];
    const worker = createWorker({
      stores: { ...stores, queue },
      clock,
      model: run.model,
      tools: [run.tool],
      leaseMs: LEASE_MS,
      onError: (error) => errors.push(error),
      onEvent: (event) => events.push(event),
      onResult: (result) => results.push(result.status),
    });
    await stores.queue.enqueue({ id: 'long', body: '{"input":"take your time"}' });
    const finished = worker.runUntilEmpty();
    await run.started;

    const taken = await advanceWhileAnotherConsumerPolls(clock, stores.queue, LEASE_MS * 3);
    // the second consumer does not renew either, so it loses the message every lease
    expect(taken).toEqual([1, 2, 3].map((leases) => ({ atMs: LEASE_MS * leases, id: 'long', deliveries: leases + 1 })));
    expect(errors).toEqual([]);
    expect(events.filter((event) => event.type === 'lease-lost')).toEqual([{ type: 'lease-lost', messageId: 'long', deliveries: 1, at: expect.any(Number) }]);

    run.finish();
    await finished;
    expect(results).toEqual(['completed']);
    expect(errors).toEqual([]);
    expect(events.filter((event) => event.type === 'lease-lost')).toHaveLength(1);
  });

  it('reports a renewal that throws and renews again at the next interval', async () => {
    const clock = createFakeClock();
    const stores = createMemoryStores({ clock });
    let failures = 1;
    const queue: RunQueue = {
      ...stores.queue,
      extendLease: async (id, deliveries, leaseMs) => {
        if (failures > 0) {
          failures -= 1;
          throw new Error('store unavailable');
        }
        return stores.queue.extendLease(id, deliveries, leaseMs);
      },
    };
    const run = slowRun();
    const errors: unknown[] = [];
    const worker = createWorker({
      stores: { ...stores, queue },
      clock,
      model: run.model,
      tools: [run.tool],
      leaseMs: LEASE_MS,
      onError: (error) => errors.push(error),
    });
    await stores.queue.enqueue({ id: 'long', body: '{"input":"take your time"}' });
    const finished = worker.runUntilEmpty();
    await run.started;

    const taken = await advanceWhileAnotherConsumerPolls(clock, stores.queue, LEASE_MS * 3);
    expect(taken).toEqual([]);
    expect(errors.map((error) => (error as Error).message)).toEqual(['store unavailable']);

    run.finish();
    await finished;
    expect(await stores.queue.size()).toBe(0);
  });
});
