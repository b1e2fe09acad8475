import type { Clock } from '../ground/ports/clock.ts';

/** A running {@link repeatEvery}. */
export interface Repeating {
  /** Stops repeating; resolves once no tick is in flight (a tick that started runs to its end). */
  stop(): Promise<void>;
}

/** The abort reason of the sleep fallback: a constant, so stopping builds no `DOMException`. */
const STOPPED = Object.freeze({ stopped: true });

/**
 * Calls `tick` every `intervalMs` on `clock` (each interval counted from the end of the previous
 * tick) until `tick` resolves `false` or `stop` is called; a tick that rejects counts as `true`.
 * With `clock.setTimer` (the system clock) each wait is one timer, nothing else; other clocks
 * (fake ones in tests) wait with `clock.sleep` and an AbortSignal.
 */
export function repeatEvery(clock: Clock, intervalMs: number, tick: () => Promise<boolean>): Repeating {
  let stopped = false;
  if (clock.setTimer !== undefined) {
    const setTimer = clock.setTimer.bind(clock);
    let cancel: (() => void) | undefined;
    let running: Promise<void> | undefined;
    const again = (repeat: boolean) => {
      running = undefined;
      if (repeat && !stopped) cancel = setTimer(intervalMs, fire);
    };
    const fire = () => {
      cancel = undefined;
      if (stopped) return;
      running = tick().then(again, () => again(true));
    };
    cancel = setTimer(intervalMs, fire);
    return {
      stop: async () => {
        stopped = true;
        cancel?.();
        cancel = undefined;
        await running;
      },
    };
  }
  const controller = new AbortController();
  const loop = (async () => {
    for (;;) {
      try {
        await clock.sleep(intervalMs, controller.signal);
      } catch {
        return;
      }
      if (stopped) return;
      if (!(await tick().catch(() => true))) return;
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      controller.abort(STOPPED);
      await loop;
    },
  };
}
