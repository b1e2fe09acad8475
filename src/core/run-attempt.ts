import type { ToolContext } from './define-tool.ts';
import type { Clock } from '../ground/ports/clock.ts';

/** Outcome of one execution of a tool. */
export type AttemptOutcome = { ok: true; value: unknown } | { ok: false; thrown: unknown; abortReason: 'timeout' | 'cancelled' | undefined };

/**
 * The `context` a tool's `execute` receives. A class with the lazy `signal` getter on its
 * prototype: an object literal with a spread and a getter costs microseconds per call.
 */
const SIGNAL = Symbol('signal');

class AttemptContext implements ToolContext {
  readonly callId: string;
  readonly sessionId: string;
  readonly runId: string | undefined;
  readonly idempotencyKey: string;
  readonly attempt: number;
  readonly [SIGNAL]: () => AbortSignal;

  constructor(context: Omit<ToolContext, 'signal'>, signal: () => AbortSignal) {
    this.callId = context.callId;
    this.sessionId = context.sessionId;
    this.runId = context.runId;
    this.idempotencyKey = context.idempotencyKey;
    this.attempt = context.attempt;
    this[SIGNAL] = signal;
  }

  get signal(): AbortSignal {
    return this[SIGNAL]();
  }
}

/** Starts a timer on the clock; returns its cancel function. */
function startTimer(clock: Clock, ms: number, callback: () => void): () => void {
  if (clock.setTimer) return clock.setTimer(ms, callback);
  const controller = new AbortController();
  clock.sleep(ms, controller.signal).then(callback, () => undefined);
  return () => controller.abort();
}

/**
 * Executes a tool once, bounded by `timeoutMs` on the injected clock. On timeout or caller abort the
 * tool's `context.signal` is aborted (the work is cancelled, not just no longer awaited) and the
 * attempt settles at once; a late result or rejection of the tool is ignored. The timer is started a
 * microtask after the tool was called, and not at all when the tool has settled by then. The signal's
 * AbortController is created only when the tool reads `context.signal`, so tools that do not
 * listen for cancellation pay nothing for it.
 */
export function runAttempt(
  execute: (args: unknown, context: ToolContext) => unknown,
  args: unknown,
  context: Omit<ToolContext, 'signal'>,
  options: { timeoutMs: number; clock: Clock; callerSignal: AbortSignal | undefined },
): Promise<AttemptOutcome> {
  return new Promise<AttemptOutcome>((resolve) => {
    const { callerSignal } = options;
    let controller: AbortController | undefined;
    let abortedWith: unknown;
    let settled = false;
    let abortReason: 'timeout' | 'cancelled' | undefined;

    const abortWork = (reason: unknown) => {
      abortedWith = reason;
      controller?.abort(reason);
    };
    const onCallerAbort = () => {
      abortReason ??= 'cancelled';
      abortWork(callerSignal?.reason);
      finish({ ok: false, thrown: callerSignal?.reason, abortReason: 'cancelled' });
    };
    let cancelTimer: () => void = () => undefined;
    function finish(outcome: AttemptOutcome): void {
      if (settled) return;
      settled = true;
      cancelTimer();
      callerSignal?.removeEventListener('abort', onCallerAbort);
      resolve(outcome);
    }

    if (callerSignal?.aborted) {
      onCallerAbort();
      return;
    }
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    const startTimeout = () => {
      if (settled) return;
      cancelTimer = startTimer(options.clock, options.timeoutMs, () => {
        if (settled) return;
        abortReason ??= 'timeout';
        const reason = new DOMException(`The tool did not answer within ${options.timeoutMs} ms`, 'TimeoutError');
        abortWork(reason);
        finish({ ok: false, thrown: reason, abortReason: 'timeout' });
      });
    };

    const toolContext = new AttemptContext(context, () => {
      if (!controller) {
        controller = new AbortController();
        if (abortedWith !== undefined || settled) controller.abort(abortedWith);
      }
      return controller.signal;
    });

    let pending: Promise<unknown>;
    try {
      pending = Promise.resolve(execute(args, toolContext));
    } catch (thrown) {
      pending = Promise.reject(thrown);
    }
    pending.then(
      (value) => finish({ ok: true, value }),
      (thrown: unknown) => finish({ ok: false, thrown, abortReason }),
    );
    // The timer starts one microtask later, after the settlement of a tool that answered at once
    // (most do): such a call never creates a timer. A tool still running then gets its timeout.
    queueMicrotask(startTimeout);
  });
}
