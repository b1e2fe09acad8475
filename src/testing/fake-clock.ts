import type { Clock } from '../ground/ports/clock.ts';

/**
 * A {@link Clock} whose time only moves when a test moves it, so retries, backoff, breaker
 * cool-downs, leases and TTLs are tested exactly and without wall-clock sleeps.
 */
export interface FakeClock extends Clock {
  /**
   * Moves time forward by `ms` milliseconds. Pending sleeps whose deadline falls inside the window
   * resolve one deadline at a time, in deadline order (ties in the order they were started); after
   * each, the clock lets their continuations run, so a sleep started by a continuation resolves in
   * the same `advance` when its deadline is still inside the window. Resolves once the clock
   * stands at the target time and continuations have settled.
   *
   * @throws RangeError when `ms` is negative or not finite.
   */
  advance(ms: number): Promise<void>;
  /**
   * Sets the time to `ms` (epoch milliseconds) at once, forwards or backwards. Sleeps whose deadline
   * is now due resolve (their continuations run later, as microtasks); nothing is awaited.
   */
  set(ms: number): void;
  /** How many sleeps are waiting for the clock to reach their deadline. */
  pendingSleeps(): number;
}

interface PendingSleep {
  deadlineMs: number;
  order: number;
  resolve: () => void;
}

/** Macrotask turns given to continuations after each resolved deadline. */
const SETTLE_TURNS = 3;

function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Creates a fake clock standing at `startMs`.
 *
 * `sleep(ms, signal)` registers a deadline `now() + ms` and resolves when `advance`/`set` reaches it;
 * a non-positive `ms` resolves on the next microtask without waiting for the clock. An aborted
 * signal rejects the sleep with the signal's reason at once (and a sleep started with an already
 * aborted signal rejects immediately), as the system clock does.
 *
 * Not safe to drive from two `advance` calls at once: await one before starting the next.
 *
 * @param startMs - epoch milliseconds. @defaultValue `Date.UTC(2026, 0, 1)`
 */
export function createFakeClock(startMs: number = Date.UTC(2026, 0, 1)): FakeClock {
  let nowMs = startMs;
  let nextOrder = 0;
  const pending: PendingSleep[] = [];

  const takeDue = (limitMs: number): PendingSleep[] => {
    const due = pending.filter((sleep) => sleep.deadlineMs <= limitMs);
    due.sort((left, right) => left.deadlineMs - right.deadlineMs || left.order - right.order);
    for (const sleep of due) pending.splice(pending.indexOf(sleep), 1);
    return due;
  };

  const earliestDeadline = (): number | undefined => {
    let earliest: number | undefined;
    for (const sleep of pending) {
      if (earliest === undefined || sleep.deadlineMs < earliest) earliest = sleep.deadlineMs;
    }
    return earliest;
  };

  return {
    now: () => nowMs,
    // the end of the turn is not time: the writes asked for in one synchronous run commit together
    atEndOfTurn: (callback) => queueMicrotask(callback),

    sleep(ms, signal) {
      return new Promise<void>((resolve, reject) => {
        if (signal?.aborted) {
          reject(signal.reason);
          return;
        }
        if (!(ms > 0)) {
          queueMicrotask(resolve);
          return;
        }
        const onAbort = () => {
          const index = pending.indexOf(sleep);
          if (index !== -1) pending.splice(index, 1);
          reject(signal?.reason);
        };
        const sleep: PendingSleep = {
          deadlineMs: nowMs + ms,
          order: nextOrder++,
          resolve: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        pending.push(sleep);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },

    async advance(ms) {
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advance(ms) needs a finite ms >= 0, received ${ms}`);
      const targetMs = nowMs + ms;
      for (;;) {
        const deadlineMs = earliestDeadline();
        if (deadlineMs === undefined || deadlineMs > targetMs) break;
        nowMs = Math.max(nowMs, deadlineMs);
        for (const sleep of takeDue(deadlineMs)) sleep.resolve();
        for (let turn = 0; turn < SETTLE_TURNS; turn++) await settle();
      }
      nowMs = targetMs;
      for (let turn = 0; turn < SETTLE_TURNS; turn++) await settle();
    },

    set(ms) {
      nowMs = ms;
      for (const sleep of takeDue(ms)) sleep.resolve();
    },

    pendingSleeps: () => pending.length,
  };
}
