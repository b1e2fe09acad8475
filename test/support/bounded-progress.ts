/**
 * Progress reports from a function run by `runBounded` with a progress bound: each call to a store
 * of the scenario is one step of work. The parent thread ends the run when no step comes for its
 * idle bound (a hang) or when the steps exceed its work bound (a loop), so a slow machine makes a
 * scenario slower, never a failure. Outside a worker thread the reports go nowhere.
 */
import { isMainThread, parentPort } from 'node:worker_threads';

/** How often, at most, a report crosses to the parent thread (the count itself is exact). */
const REPORT_EVERY_MS = 100;

/** Where the count lives: on the global object, so the thread's entry reads it with the result. */
const STEPS = Symbol.for('toolrun.test.boundedSteps');
const counter = globalThis as { [STEPS]?: number };
let lastReportAt = 0;

/** Counts one step of work and tells the parent thread, at most every {@link REPORT_EVERY_MS}. */
export function reportProgress(): void {
  const steps = (counter[STEPS] ?? 0) + 1;
  counter[STEPS] = steps;
  if (isMainThread || parentPort === null) return;
  const now = performance.now();
  if (now - lastReportAt < REPORT_EVERY_MS) return;
  lastReportAt = now;
  parentPort.postMessage({ type: 'progress', steps });
}

/**
 * The same stores, each port's methods counting a step per call (the methods run on the port
 * itself, so a store's own `this` is untouched).
 */
export function withProgress<T extends object>(stores: T): T {
  return new Proxy(stores, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value === 'function') return countCalls(value as (...args: unknown[]) => unknown, target);
      if (typeof value === 'object' && value !== null) return portWithProgress(value);
      return value;
    },
  });
}

const ports = new WeakMap<object, object>();

function portWithProgress(port: object): object {
  let wrapped = ports.get(port);
  if (wrapped === undefined) {
    wrapped = new Proxy(port, {
      get(target, key) {
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === 'function' ? countCalls(value as (...args: unknown[]) => unknown, target) : value;
      },
    });
    ports.set(port, wrapped);
  }
  return wrapped;
}

function countCalls(method: (...args: unknown[]) => unknown, self: object): (...args: unknown[]) => unknown {
  return (...args: unknown[]) => {
    reportProgress();
    return method.apply(self, args);
  };
}
