/**
 * Keeps tool executions from starving the event loop. Promise continuations (microtasks) run before
 * any timer or I/O callback: a tool that calls the runtime again and again without ever waiting for
 * I/O (itself, recursively, or in a loop) would keep the loop from turning, so no timeout could
 * fire. Every execution is counted; after {@link MAX_EXECUTIONS_PER_TURN} executions without the
 * loop turning, the next one first waits for a macrotask (`setImmediate` where there is one, else
 * `MessageChannel`, else `setTimeout(0)`), which lets timers, I/O and other work run.
 *
 * One guard per runtime (so a tool recursing through several runtimes yields in each). No `node:`
 * import: runs on Node, Bun, Deno and Cloudflare Workers.
 */

/** Executions allowed between two turns of the event loop before the next one yields. */
export const MAX_EXECUTIONS_PER_TURN = 256;

type Schedule = (callback: () => void) => void;

/**
 * The platform's cheapest macrotask, captured when the module loads (so fake timers installed later
 * by a test framework do not hold it back).
 */
const scheduleMacrotask: Schedule = (() => {
  const global = globalThis as unknown as {
    setImmediate?: (callback: () => void) => unknown;
    MessageChannel?: new () => {
      port1: { onmessage: (() => void) | null; close?: () => void };
      port2: { postMessage(message: unknown): void; close?: () => void };
    };
    setTimeout: (callback: () => void, ms: number) => unknown;
  };
  const immediate = global.setImmediate;
  if (typeof immediate === 'function') return (callback) => void immediate(callback);
  const Channel = global.MessageChannel;
  if (typeof Channel === 'function') {
    return (callback) => {
      const channel = new Channel();
      channel.port1.onmessage = () => {
        channel.port1.close?.();
        channel.port2.close?.();
        callback();
      };
      channel.port2.postMessage(undefined);
    };
  }
  const timeout = global.setTimeout;
  return (callback) => void timeout(callback, 0);
})();

/**
 * A turn guard: counts tool executions between two turns of the event loop. Each runtime owns one
 * (no state is shared between runtimes or kept in the module).
 */
export interface TurnGuard {
  /**
   * Counts one tool execution. Returns `undefined` when it may run at once (the common case: no
   * allocation), or a promise that resolves on the next turn of the event loop when this turn has
   * already run {@link MAX_EXECUTIONS_PER_TURN} executions.
   */
  beforeExecution(): Promise<void> | undefined;
}

/** Creates a {@link TurnGuard}. */
export function createTurnGuard(): TurnGuard {
  let executionsThisTurn = 0;
  let resetScheduled = false;
  let waiters: Array<() => void> = [];

  function onTurn(): void {
    executionsThisTurn = 0;
    resetScheduled = false;
    const ready = waiters;
    waiters = [];
    for (const resume of ready) resume();
  }

  return {
    beforeExecution() {
      if (!resetScheduled) {
        resetScheduled = true;
        scheduleMacrotask(onTurn);
      }
      executionsThisTurn += 1;
      if (executionsThisTurn <= MAX_EXECUTIONS_PER_TURN) return undefined;
      return new Promise<void>((resolve) => {
        waiters.push(resolve);
      });
    },
  };
}
