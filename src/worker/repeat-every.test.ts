import { describe, expect, it } from 'vitest';
import type { Clock } from '../ground/ports/clock.ts';
import { createFakeClock } from '../testing/fake-clock.ts';
import { repeatEvery } from './repeat-every.ts';

/** A clock with `setTimer` whose timers fire only when the test says so. */
function timerClock(): Clock & { timers: { ms: number; fire: () => void; cancelled: boolean }[]; fireNext(): Promise<void> } {
  const timers: { ms: number; fire: () => void; cancelled: boolean }[] = [];
  return {
    timers,
    now: () => 0,
    sleep: () => Promise.reject(new Error('sleep must not be used when setTimer exists')),
    setTimer(ms, callback) {
      const timer = { ms, fire: callback, cancelled: false };
      timers.push(timer);
      return () => {
        timer.cancelled = true;
      };
    },
    async fireNext() {
      const timer = timers.find((candidate) => !candidate.cancelled && candidate.fire !== noop);
      if (!timer) throw new Error('no live timer');
      const { fire } = timer;
      timer.fire = noop;
      fire();
      for (let turn = 0; turn < 5; turn++) await Promise.resolve();
    },
  };
}
const noop = () => undefined;
const live = (clock: ReturnType<typeof timerClock>) => clock.timers.filter((timer) => !timer.cancelled && timer.fire !== noop).length;

describe('repeatEvery with a clock that has setTimer', () => {
  it('ticks once per timer, one timer at a time, until the tick says stop', async () => {
    const clock = timerClock();
    let ticks = 0;
    repeatEvery(clock, 100, async () => ++ticks < 3);
    expect(clock.timers.map((timer) => timer.ms)).toEqual([100]);
    await clock.fireNext();
    await clock.fireNext();
    expect(ticks).toBe(2);
    expect(live(clock)).toBe(1);
    await clock.fireNext();
    expect(ticks).toBe(3);
    expect(live(clock)).toBe(0); // the third tick said false: no timer left
  });

  it('goes on after a tick that rejects', async () => {
    const clock = timerClock();
    let ticks = 0;
    repeatEvery(clock, 10, async () => {
      ticks += 1;
      throw new Error('store down');
    });
    await clock.fireNext();
    await clock.fireNext();
    expect(ticks).toBe(2);
    expect(live(clock)).toBe(1);
  });

  it('stop cancels the pending timer and waits for a tick in flight; nothing ticks after it', async () => {
    const clock = timerClock();
    let finishTick: (() => void) | undefined;
    let ticks = 0;
    const repeating = repeatEvery(clock, 10, () => {
      ticks += 1;
      return new Promise<boolean>((resolve) => {
        finishTick = () => resolve(true);
      });
    });
    await clock.fireNext();
    let stopped = false;
    const stopping = repeating.stop().then(() => {
      stopped = true;
    });
    await Promise.resolve();
    expect(stopped).toBe(false); // the tick is still in flight
    finishTick!();
    await stopping;
    expect(stopped).toBe(true);
    expect(live(clock)).toBe(0); // not rescheduled after stop
    expect(ticks).toBe(1);
  });

  it('stop before the first timer fires: no tick at all', async () => {
    const clock = timerClock();
    let ticks = 0;
    await repeatEvery(clock, 10, async () => ++ticks > 0).stop();
    expect(clock.timers[0]!.cancelled).toBe(true);
    expect(ticks).toBe(0);
  });
});

describe('repeatEvery with a clock without setTimer (sleep)', () => {
  it('ticks every interval of the clock and stops at once', async () => {
    const clock = createFakeClock();
    let ticks = 0;
    const repeating = repeatEvery(clock, 100, async () => {
      ticks += 1;
      return true;
    });
    await clock.advance(99);
    expect(ticks).toBe(0);
    await clock.advance(1);
    expect(ticks).toBe(1);
    await clock.advance(200);
    expect(ticks).toBe(3);
    await repeating.stop();
    await clock.advance(1_000);
    expect(ticks).toBe(3);
    expect(clock.pendingSleeps()).toBe(0);
  });
});
