import type { Clock } from '../ground/ports/clock.ts';

interface PendingSleep {
  deadline: number;
  order: number;
  resolve: () => void;
}

/**
 * What holds a {@link createGatedClock} still: time does not advance while `held()` answers true
 * (e.g. a store call is in flight); the holder calls the clock's `wake()` once it answers false.
 */
export interface AdvanceGate {
  held(): boolean;
}

/**
 * A fake clock for integration tests of whole runs: whenever the process is otherwise idle (two
 * macrotask turns with nothing else to do), time jumps to the earliest pending sleep and resolves
 * it. Retries, backoff and Retry-After waits then cost no real time, and a timeout fires only when
 * the tool really is stuck on something that never settles. Not for tools doing real I/O: their
 * timeouts would fire at once — use `createFakeClock` and drive it by hand there.
 *
 * @param startMs - epoch milliseconds. @defaultValue `Date.UTC(2026, 0, 1)`
 */
export function createAutoAdvancingClock(startMs: number = Date.UTC(2026, 0, 1)): Clock & { readonly sleeps: number } {
  return createGatedClock(startMs);
}

/**
 * The auto-advancing clock with a `gate`: while `gate.held()`, an idle process does not move time;
 * `wake()` looks again. For tests on stores doing real I/O, where a round trip is not idleness.
 */
export function createGatedClock(startMs: number, gate?: AdvanceGate): Clock & { readonly sleeps: number; wake(): void } {
  let now = startMs;
  let order = 0;
  let scheduled = false;
  const pending: PendingSleep[] = [];

  const fire = () => {
    scheduled = false;
    if (pending.length === 0 || gate?.held() === true) return;
    pending.sort((a, b) => a.deadline - b.deadline || a.order - b.order);
    const next = pending.shift()!;
    now = Math.max(now, next.deadline);
    next.resolve();
    if (pending.length > 0) schedule();
  };
  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => setImmediate(fire));
  }

  return {
    now: () => now,
    atEndOfTurn: (callback) => void setImmediate(callback),
    wake: () => {
      if (pending.length > 0) schedule();
    },
    get sleeps() {
      return pending.length;
    },
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) {
          reject(signal.reason);
          return;
        }
        const entry: PendingSleep = {
          deadline: now + Math.max(0, ms),
          order: order++,
          resolve: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        const onAbort = () => {
          const index = pending.indexOf(entry);
          if (index >= 0) pending.splice(index, 1);
          reject(signal?.reason);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        pending.push(entry);
        schedule();
      }),
  };
}
