import { describe, expect, it } from 'vitest';
import { defineTool } from '../core/define-tool.ts';
import type { Clock } from '../ground/ports/clock.ts';
import type { Stores } from '../ground/ports/stores.ts';
import { createMemoryStores } from '../stores/memory/index.ts';
import { createStoreJournal } from '../stores/store-journal.ts';
import { createAutoAdvancingClock } from '../testing/auto-advancing-clock.ts';
import { createScriptedModel } from '../testing/scripted-model.ts';
import { createWorker } from './create-worker.ts';
import type { WorkerEvent } from './worker-events.ts';

/** The methods that write, by port: each fails while the disk is full. */
const WRITES: Record<string, readonly string[]> = {
  conversations: ['put'],
  runs: ['put'],
  ledger: ['putIfAbsent', 'delete'],
  queue: ['reserve', 'ack', 'release', 'extendLease'],
  claims: ['acquire', 'renew', 'release'],
  messageDlq: ['push', 'pushOnce'],
  toolDlq: ['push', 'pushOnce'],
};

/** Memory stores whose writes fail as PostgreSQL's do on a full disk (SQLSTATE 53100) while `full()` says so. */
function fullDiskStores(clock: Clock, full: () => boolean): { stores: Stores; memory: Stores } {
  const memory = createMemoryStores({ clock });
  const stores: Record<string, unknown> = { ...memory };
  for (const [port, methods] of Object.entries(WRITES)) {
    const target = (memory as unknown as Record<string, Record<string, unknown>>)[port]!;
    const wrapped = Object.create(target) as Record<string, unknown>;
    for (const method of methods) {
      const original = target[method];
      if (typeof original !== 'function') continue;
      wrapped[method] = async (...args: unknown[]) => {
        if (full()) throw Object.assign(new Error('could not extend file "base/16384/16402": No space left on device'), { code: '53100' });
        return (original as (...given: unknown[]) => unknown).apply(target, args);
      };
    }
    stores[port] = wrapped;
  }
  // the run journal over the failing stores: a run's every write meets the full disk
  stores.journal = createStoreJournal(stores as unknown as Stores);
  return { stores: stores as unknown as Stores, memory };
}

/** A model that calls `charge` once, then answers; one script per run. */
function chargeModel() {
  const perRun = new Map<string, ReturnType<typeof createScriptedModel>>();
  return (request: Parameters<ReturnType<typeof createScriptedModel>>[0]) => {
    let scripted = perRun.get(request.runId);
    if (scripted === undefined) {
      scripted = createScriptedModel([
        { toolCalls: [{ id: 'c', name: 'charge', args: '{}' }], usage: { input: 1, output: 1 } },
        { text: 'done', usage: { input: 1, output: 1 } },
      ]);
      perRun.set(request.runId, scripted);
    }
    return scripted(request);
  };
}

/**
 * Runs `messages` messages through a worker whose store's disk fills right after the first tool
 * call ran and stays full for `fullForMs` of clock time; the tool takes `toolMs`.
 */
async function runWithFullDisk(fullForMs: number, toolMs: number, messages = 3) {
  const clock = createAutoAdvancingClock();
  let fullFrom = Number.POSITIVE_INFINITY;
  const { stores, memory } = fullDiskStores(clock, () => clock.now() >= fullFrom && clock.now() < fullFrom + fullForMs);
  const calls = new Map<string, number>();
  const charge = defineTool({
    name: 'charge',
    description: 'charges a card',
    inputSchema: { type: 'object' },
    execute: async (_args, ctx) => {
      await clock.sleep(toolMs);
      calls.set(ctx.idempotencyKey, (calls.get(ctx.idempotencyKey) ?? 0) + 1);
      if (fullFrom === Number.POSITIVE_INFINITY) fullFrom = clock.now();
      return { charged: true };
    },
  });
  for (let index = 0; index < messages; index++) await memory.queue.enqueue({ id: `m${index}`, body: JSON.stringify({ input: `run ${index}` }) });
  const events: WorkerEvent[] = [];
  const worker = createWorker({ stores, tools: [charge], model: chargeModel(), clock, concurrency: 2, onEvent: (event) => events.push(event) });
  await worker.runUntilEmpty();
  return { calls, events, memory, stats: worker.stats };
}

describe('a worker whose store runs out of disk', () => {
  it.each([
    [20_000, 50],
    [60_000, 400],
  ])('a %i ms full disk with a %i ms tool: every call runs once, every message completes, none is counted', async (fullForMs, toolMs) => {
    const { calls, events, memory, stats } = await runWithFullDisk(fullForMs, toolMs);
    expect([...calls.values()]).toEqual([1, 1, 1]);
    expect(stats.byStatus).toEqual({ completed: 3 });
    // the step commits waited for the disk: no delivery failed
    expect(events.filter((event) => event.type === 'delivery-failed')).toEqual([]);
    expect(await memory.messageDlq.size()).toBe(0);
    expect(await memory.toolDlq.size()).toBe(0);
    expect(await memory.queue.size()).toBe(0);
  });

  it('an outage longer than the checkpoint retry: the delivery is released uncounted once the store is back, the call runs again once', async () => {
    // the step commit's retry (about 121 s) and the outcome's own write after it (as long again) both fail
    const { calls, events, memory, stats } = await runWithFullDisk(280_000, 50, 1);
    // the documented window: the outcome could not be written for longer than the retries last
    expect([...calls.values()]).toEqual([2]);
    const failed = events.filter((event) => event.type === 'delivery-failed');
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((event) => event.type === 'delivery-failed' && !event.counted)).toBe(true);
    expect(stats.byStatus).toEqual({ completed: 1 });
    expect(await memory.messageDlq.size()).toBe(0);
    expect(await memory.toolDlq.size()).toBe(0);
  });

  it('a release that fails is tried again with backoff, not swallowed: the message is not counted', async () => {
    const clock = createAutoAdvancingClock();
    let releaseFailures = 4;
    const memory = createMemoryStores({ clock });
    const release = memory.queue.release.bind(memory.queue);
    const reserve = memory.queue.reserve.bind(memory.queue);
    let failDelivery = true;
    const deliveries: number[] = [];
    const parts = {
      ...memory,
      queue: Object.assign(Object.create(memory.queue) as typeof memory.queue, {
        reserve: async (leaseMs: number) => {
          const delivery = await reserve(leaseMs);
          if (delivery) deliveries.push(delivery.deliveries);
          return delivery;
        },
        release: async (...args: Parameters<typeof release>) => {
          if (releaseFailures-- > 0) throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
          return release(...args);
        },
      }),
      runs: Object.assign(Object.create(memory.runs) as typeof memory.runs, {
        get: async (runId: string) => {
          if (failDelivery) {
            failDelivery = false;
            throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_READ' });
          }
          return memory.runs.get(runId);
        },
      }),
    };
    // the run journal over the failing run store: the run's first read fails
    const stores: Stores = { ...parts, journal: createStoreJournal(parts) };
    await memory.queue.enqueue({ id: 'm', body: JSON.stringify({ input: 'hi' }) });
    const errors: unknown[] = [];
    const triedAt: number[] = [];
    const worker = createWorker({
      stores,
      tools: [],
      model: createScriptedModel([{ text: 'done', usage: { input: 1, output: 1 } }]),
      clock,
      pollIntervalMs: 100,
      onError: (error) => {
        errors.push(error);
        if ((error as { code?: string }).code === 'SQLITE_FULL') triedAt.push(clock.now());
      },
    });
    await worker.runUntilEmpty();
    expect(errors.map((error) => (error as { code?: string }).code)).toEqual(['SQLITE_IOERR_READ', 'SQLITE_FULL', 'SQLITE_FULL', 'SQLITE_FULL', 'SQLITE_FULL']);
    expect(triedAt.slice(1).map((at, index) => at - triedAt[index]!)).toEqual([100, 200, 400]);
    // the second delivery is the first again: the outage gave it back uncounted
    expect(deliveries).toEqual([1, 1]);
    expect(worker.stats.byStatus).toEqual({ completed: 1 });
  });
});
