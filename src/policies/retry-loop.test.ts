import { describe, expect, it } from 'vitest';
import type { Outcome } from '../ground/tool-result.ts';
import { createFakeClock } from '../testing/fake-clock.ts';
import { executeWithRetry, type RetryWait } from './retry-loop.ts';

/** A loop whose attempts answer from `script` in turn (a string fails with it), waiting `waits[n]` after failure n. */
function scripted(script: Array<number | string | undefined>, waits: RetryWait[]) {
  const seen: Array<{ attempt: number; at: number }> = [];
  const clock = createFakeClock(0);
  const loop = {
    attempt: (attempt: number): Promise<Outcome<number, string> | undefined> => {
      seen.push({ attempt, at: clock.now() });
      const next = script[attempt - 1];
      if (next === undefined) return Promise.resolve(undefined);
      return Promise.resolve(typeof next === 'number' ? { ok: true, value: next } : { ok: false, failure: next });
    },
    retryAfter: (_failure: string, attempt: number) => waits[attempt - 1],
  };
  return { loop, clock, seen };
}

/** Lets the loop run its microtasks until it sleeps on `clock` (at most 100 turns of the microtask queue). */
async function untilSleeping(clock: ReturnType<typeof createFakeClock>): Promise<void> {
  for (let turn = 0; turn < 100 && clock.pendingSleeps() === 0; turn++) await Promise.resolve();
  expect(clock.pendingSleeps()).toBe(1);
}

describe('executeWithRetry', { timeout: 5_000 }, () => {
  it('retries after the waits the loop asks for, on the clock, until an attempt succeeds', async () => {
    const { loop, clock, seen } = scripted(['a', 'b', 7], [100, 'at-once']);
    const ended = executeWithRetry(loop, { clock });
    await untilSleeping(clock);
    await clock.advance(100);
    expect(await ended).toEqual({ ok: true, value: 7 });
    expect(seen).toEqual([
      { attempt: 1, at: 0 },
      { attempt: 2, at: 100 },
      { attempt: 3, at: 100 },
    ]);
  });

  it('ends with the last failure when the loop stops, or when no time is left for the next attempt', async () => {
    const stopped = scripted(['a', 'b'], ['at-once', undefined]);
    expect(await executeWithRetry(stopped.loop, { clock: stopped.clock })).toEqual({ ok: false, failure: 'b', cancelled: false });
    const noTime = scripted(['a', undefined], ['at-once']);
    expect(await executeWithRetry(noTime.loop, { clock: noTime.clock })).toEqual({ ok: false, failure: 'a', cancelled: false });
    const none = scripted([undefined], []);
    expect(await executeWithRetry(none.loop, { clock: none.clock })).toEqual({ ok: false, failure: undefined, cancelled: false });
  });

  it('goes on from a first failure the caller ran itself, and ends cancelled when the signal aborts a wait', async () => {
    const { loop, clock, seen } = scripted(['unused', 'b', 'c'], [50, 1000]);
    const controller = new AbortController();
    const ended = executeWithRetry(loop, { clock, signal: controller.signal, firstFailure: 'a' });
    await untilSleeping(clock);
    await clock.advance(50);
    expect(seen).toEqual([{ attempt: 2, at: 50 }]);
    await untilSleeping(clock);
    controller.abort();
    expect(await ended).toEqual({ ok: false, failure: 'b', cancelled: true });
  });
});
