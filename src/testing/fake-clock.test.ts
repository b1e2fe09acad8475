import { describe, expect, it } from 'vitest';
import { createFakeClock } from './fake-clock.ts';

describe('createFakeClock', () => {
  it('starts at 2026-01-01T00:00:00Z by default and at the given time otherwise', () => {
    expect(new Date(createFakeClock().now()).toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(createFakeClock(42).now()).toBe(42);
  });

  it('does not move by itself and moves exactly by advance', async () => {
    const clock = createFakeClock(1_000);
    expect(clock.now()).toBe(1_000);
    await clock.advance(250);
    expect(clock.now()).toBe(1_250);
    await clock.advance(0);
    expect(clock.now()).toBe(1_250);
  });

  it('resolves a sleep only once its deadline is reached', async () => {
    const clock = createFakeClock(0);
    let done = false;
    const sleeping = clock.sleep(100).then(() => {
      done = true;
    });
    expect(clock.pendingSleeps()).toBe(1);
    await clock.advance(99);
    expect(done).toBe(false);
    await clock.advance(1);
    expect(done).toBe(true);
    expect(clock.pendingSleeps()).toBe(0);
    await sleeping;
  });

  it('resolves sleeps in deadline order, ties in start order, with now() at each deadline', async () => {
    const clock = createFakeClock(0);
    const seen: string[] = [];
    const track = (label: string, ms: number) =>
      clock.sleep(ms).then(() => {
        seen.push(`${label}@${clock.now()}`);
      });
    const all = Promise.all([track('c', 300), track('a', 100), track('b', 200), track('a2', 100)]);
    await clock.advance(1_000);
    await all;
    expect(seen).toEqual(['a@100', 'a2@100', 'b@200', 'c@300']);
    expect(clock.now()).toBe(1_000);
  });

  it('lets chained sleeps started by continuations resolve within the same advance', async () => {
    const clock = createFakeClock(0);
    const wakeTimes: number[] = [];
    const loop = (async () => {
      for (let attempt = 0; attempt < 3; attempt++) {
        await clock.sleep(500);
        // an extra await between sleeps, as real retry code has
        await Promise.resolve();
        wakeTimes.push(clock.now());
      }
    })();
    await clock.advance(1_499);
    expect(wakeTimes).toEqual([500, 1_000]);
    await clock.advance(1);
    await loop;
    expect(wakeTimes).toEqual([500, 1_000, 1_500]);
  });

  it('rejects a sleep with the signal reason when aborted, and forgets it', async () => {
    const clock = createFakeClock(0);
    const controller = new AbortController();
    const sleeping = clock.sleep(1_000, controller.signal);
    expect(clock.pendingSleeps()).toBe(1);
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(sleeping).rejects.toBe(reason);
    expect(clock.pendingSleeps()).toBe(0);
  });

  it('rejects at once when the signal is already aborted', async () => {
    const clock = createFakeClock(0);
    const reason = new Error('already');
    await expect(clock.sleep(10, AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(clock.pendingSleeps()).toBe(0);
  });

  it('resolves a non-positive sleep without advancing', async () => {
    const clock = createFakeClock(0);
    await clock.sleep(0);
    await clock.sleep(-5);
    expect(clock.now()).toBe(0);
    expect(clock.pendingSleeps()).toBe(0);
  });

  it('set() jumps forwards or backwards and resolves due sleeps', async () => {
    const clock = createFakeClock(1_000);
    let done = false;
    const sleeping = clock.sleep(50).then(() => {
      done = true;
    });
    clock.set(500);
    expect(clock.now()).toBe(500);
    expect(clock.pendingSleeps()).toBe(1);
    clock.set(1_050);
    await sleeping;
    expect(done).toBe(true);
    expect(clock.pendingSleeps()).toBe(0);
  });

  it('refuses a negative or non-finite advance', async () => {
    const clock = createFakeClock(0);
    await expect(clock.advance(-1)).rejects.toThrow(RangeError);
    await expect(clock.advance(Number.NaN)).rejects.toThrow(RangeError);
    expect(clock.now()).toBe(0);
  });
});
