import { describe, expect, it } from 'vitest';
import type { Clock } from '../ground/ports/clock.ts';
import { createBullMqWorker } from '../queues/bullmq/create-bullmq-worker.ts';
import { createMemoryStores } from '../stores/memory/index.ts';
import { createToolrun } from './create-toolrun.ts';
import { createWorker } from './create-worker.ts';
import { drainToolDlq } from './drain-tool-dlq.ts';
import { assertToolrunConfig } from './worker-config.ts';

const model = async () => ({ text: 'done', usage: { input: 1, output: 1 } });

describe('a stores bundle without a journal', () => {
  it('is refused at creation by createToolrun and createWorker, naming the port', () => {
    const { journal: _journal, ...withoutJournal } = createMemoryStores();
    expect(() => createToolrun({ model, tools: [], stores: withoutJournal as never })).toThrow(
      expect.objectContaining({
        code: 'INVALID_OPTIONS',
        message: expect.stringMatching(/^createToolrun: `stores` lacks `journal` \(pass a whole Stores bundle/),
      }),
    );
    expect(() => createWorker({ model, tools: [], stores: withoutJournal as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/^createWorker: `stores` lacks `journal`/) }),
    );
    expect(() => createWorker({ model, tools: [], stores: { ...withoutJournal, journal: null } as never })).toThrow(/lacks `journal`/);
  });
});

describe('hostile option values', () => {
  const stores = createMemoryStores();

  it('a getter or Proxy that throws is a ToolrunError naming the option, not the thrown error', () => {
    const throwing = Object.defineProperty({}, 'baseMs', {
      enumerable: true,
      get: () => {
        throw new Error('getter boom');
      },
    });
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(() => createWorker({ model, tools: [], stores, redeliveryBackoff: throwing as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: 'createWorker: `redeliveryBackoff` could not be read: getter boom' }),
    );
    expect(() => createWorker({ model, tools: [], stores, leaseMs: proxy as never })).toThrow(
      expect.objectContaining({
        code: 'INVALID_OPTIONS',
        message: 'createWorker: `leaseMs` must be a positive number (of ms, at most 214748364), received an object',
      }),
    );
    expect(() => createToolrun({ model, tools: [], stores: proxy as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/^createToolrun: `stores` could not be read: /) }),
    );
    expect(() => createToolrun({ model, tools: [], hosts: throwing as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: 'createToolrun: `hosts` could not be read: getter boom' }),
    );
  });

  it('a huge key or thousands of them give a message of bounded length that still says what is wrong', () => {
    const huge = 'x'.repeat(1_000_000);
    const messageOf = (fn: () => unknown): string => {
      try {
        fn();
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    const backoff = messageOf(() => createWorker({ model, tools: [], stores, redeliveryBackoff: { baseMs: 1, maxMs: 2, [huge]: 1 } as never }));
    expect(backoff).toMatch(/^createWorker: `redeliveryBackoff` must be \{ baseMs, maxMs \}.*unknown `x{40}…` \}$/);
    expect(backoff.length).toBeLessThan(300);
    const manyHosts = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`Bad${i}`, 1]));
    const hosts = messageOf(() => createToolrun({ model, tools: [], hosts: { ...manyHosts, [huge]: 1 } as never }));
    expect(hosts).toMatch(/^createToolrun: `hosts`: "Bad0" is not a host name .*; and 19982 more$/);
    expect(hosts.length).toBeLessThan(3_000);
    const config = messageOf(() => assertToolrunConfig({ model, tools: [], [huge]: 1 }));
    expect(config).toMatch(/^config: unknown option `x{40}…` \(known: /);
    expect(config.length).toBeLessThan(500);
    const policy = messageOf(() => assertToolrunConfig({ model, tools: [], modelPolicy: { maxAttempts: huge } }));
    expect(policy).toMatch(/^config: `modelPolicy` is invalid: .*maxAttempts/);
    expect(policy.length).toBeLessThan(500);
  });

  it('a worker without stores is INVALID_OPTIONS, not a TypeError on the first port read', () => {
    expect(() => createWorker({ model, tools: [], stores: undefined as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: 'createWorker: `stores` must be a Stores bundle, received undefined' }),
    );
  });

  it('createToolrun refuses a `limits` that is not an object, and one that cannot be read', () => {
    for (const [limits, received] of [
      [[], 'an array'],
      ['x', 'the string "x"'],
      [null, 'null'],
    ] as const) {
      expect(() => createToolrun({ model, tools: [], limits: limits as never })).toThrow(
        expect.objectContaining({
          code: 'INVALID_OPTIONS',
          message: `createToolrun: \`limits\` must be an object ({ maxSteps, deadlineMs, … }), received ${received}`,
        }),
      );
    }
    const throwing = Object.defineProperty({ model, tools: [] }, 'limits', {
      enumerable: true,
      get: () => {
        throw new Error('limits boom');
      },
    });
    expect(() => createToolrun(throwing)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: 'createToolrun: `limits` could not be read: limits boom' }),
    );
    expect(() => createToolrun({ model, tools: [], limits: { maxSteps: 0 } })).toThrow(
      /^createToolrun: `limits\.maxSteps` must be an integer ≥ 1, received 0$/,
    );
  });

  it('options of null are INVALID_OPTIONS for createWorker, createBullMqWorker and drainToolDlq', async () => {
    expect(() => createWorker(null as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: 'createWorker: options must be an object, received null' }),
    );
    expect(() => createBullMqWorker(null as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: 'createBullMqWorker: options must be an object, received null' }),
    );
    await expect(drainToolDlq(null as never)).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
      message: 'drainToolDlq: options must be an object, received null',
    });
  });
});

describe('a fractional leaseMs or pollIntervalMs', () => {
  it('is rounded up to whole ms, so a clock whose time is the sum of its sleeps moves on', async () => {
    // at 1e12 ms, a sleep of 5e-324 ms adds nothing: the empty queue would be polled without end at one instant
    let now = 1e12;
    const clock: Clock = {
      now: () => now,
      sleep: async (ms) => {
        now += ms;
        await new Promise((resolve) => setImmediate(resolve));
      },
    };
    const stores = createMemoryStores({ clock });
    const polls: Array<{ at: number; leaseMs: number }> = [];
    const reserve = stores.queue.reserve.bind(stores.queue);
    const queue = { ...stores.queue, reserve: (leaseMs: number) => (polls.push({ at: now, leaseMs }), reserve(leaseMs)) };
    const worker = createWorker({ model, tools: [], stores: { ...stores, queue }, clock, leaseMs: 2.5, pollIntervalMs: Number.MIN_VALUE });
    const running = worker.run();
    for (let spins = 0; polls.length < 4 && spins < 1_000; spins++) await new Promise((resolve) => setImmediate(resolve));
    worker.stop();
    await running;
    expect(polls.slice(0, 4)).toEqual([0, 1, 2, 3].map((ms) => ({ at: 1e12 + ms, leaseMs: 3 })));
  });
});
