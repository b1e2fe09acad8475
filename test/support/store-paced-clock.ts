/**
 * A fake clock for scenarios on a store that does real I/O (PostgreSQL, Redis): like
 * `createAutoAdvancingClock`, time jumps to the earliest pending sleep when the process is idle,
 * but only while no call to the scenario's stores is in flight. A database round trip is then not
 * taken for idleness (the auto-advancing clock would fire the next sleep during it, letting leases,
 * claims and breakers run out in fake time), and no wait of the scenario is in real time: a 5 ms
 * backoff is 5 ms of the clock however loaded the machine is.
 *
 * The stores must be wrapped with `track` (each port's methods count their calls until they settle).
 */
import type { Clock } from '../../src/ground/ports/clock.ts';
import { createGatedClock } from '../../src/testing/auto-advancing-clock.ts';

/** The clock, and `track`, which wraps a store bundle so that its calls hold the clock still. */
export interface StorePacedClock {
  clock: Clock;
  track<T extends object>(stores: T): T;
}

/** @param startMs - epoch milliseconds. @defaultValue `Date.UTC(2026, 0, 1)` */
export function createStorePacedClock(startMs: number = Date.UTC(2026, 0, 1)): StorePacedClock {
  let inFlight = 0;
  // a store call in flight: the process waits on I/O, not on time; its settling wakes the clock
  const clock = createGatedClock(startMs, { held: () => inFlight > 0 });
  const settled = () => {
    inFlight -= 1;
    if (inFlight === 0) clock.wake();
  };

  const trackCall = (method: (...args: unknown[]) => unknown, self: object) => {
    return (...args: unknown[]) => {
      const result = method.apply(self, args);
      if (typeof (result as Promise<unknown> | undefined)?.then !== 'function') return result;
      inFlight += 1;
      return (result as Promise<unknown>).finally(settled);
    };
  };
  const ports = new WeakMap<object, object>();
  const trackPort = (port: object): object => {
    let wrapped = ports.get(port);
    if (wrapped === undefined) {
      wrapped = new Proxy(port, {
        get(target, key) {
          const value = Reflect.get(target, key, target) as unknown;
          return typeof value === 'function' ? trackCall(value as (...args: unknown[]) => unknown, target) : value;
        },
      });
      ports.set(port, wrapped);
    }
    return wrapped;
  };
  const track = <T extends object>(stores: T): T =>
    new Proxy(stores, {
      get(target, key) {
        const value = Reflect.get(target, key, target) as unknown;
        if (typeof value === 'function') return trackCall(value as (...args: unknown[]) => unknown, target);
        if (typeof value === 'object' && value !== null) return trackPort(value);
        return value;
      },
    });
  return { clock, track };
}
