import type { ToolContext } from './define-tool.ts';
import type { Clock } from '../ground/ports/clock.ts';

/** Outcome of one execution of a tool. */
export type AttemptOutcome = { ok: true; value: unknown } | { ok: false; thrown: unknown; abortReason: 'timeout' | 'cancelled' | undefined };

/** A promise already fulfilled: `.then` on it queues a microtask without `queueMicrotask`'s per-call async resource. */
const FULFILLED: Promise<void> = Promise.resolve();

/** Starts a timer on the clock; returns its cancel function. */
function startTimer(clock: Clock, ms: number, callback: () => void): () => void {
  if (clock.setTimer) return clock.setTimer(ms, callback);
  const controller = new AbortController();
  clock.sleep(ms, controller.signal).then(callback, () => undefined);
  return () => controller.abort();
}

/**
 * One execution of a tool: the `context` its `execute` receives (a class, with the lazy `signal`
 * getter on its prototype and its state in private fields, so a call allocates one object and no
 * closures for it), and the settling of the attempt's outcome.
 */
class Attempt implements ToolContext {
  readonly callId: string;
  readonly sessionId: string;
  readonly runId: string | undefined;
  readonly idempotencyKey: string;
  readonly attempt: number;
  readonly #timeoutMs: number;
  readonly #clock: Clock;
  readonly #callerSignal: AbortSignal | undefined;
  readonly #resolve: (outcome: AttemptOutcome) => void;
  #controller: AbortController | undefined = undefined;
  #abortedWith: unknown = undefined;
  #settled = false;
  #abortReason: 'timeout' | 'cancelled' | undefined = undefined;
  #cancelTimer: (() => void) | undefined = undefined;
  #onCallerAbort: (() => void) | undefined = undefined;

  constructor(
    context: Omit<ToolContext, 'signal'>,
    options: { timeoutMs: number; clock: Clock; callerSignal: AbortSignal | undefined },
    resolve: (outcome: AttemptOutcome) => void,
  ) {
    this.callId = context.callId;
    this.sessionId = context.sessionId;
    this.runId = context.runId;
    this.idempotencyKey = context.idempotencyKey;
    this.attempt = context.attempt;
    this.#timeoutMs = options.timeoutMs;
    this.#clock = options.clock;
    this.#callerSignal = options.callerSignal;
    this.#resolve = resolve;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#abortedWith !== undefined || this.#settled) this.#controller.abort(this.#abortedWith);
    }
    return this.#controller.signal;
  }

  /** Calls the tool with `attempt` as its context (a static method: the context shows the tool nothing but `ToolContext`). */
  static start(attempt: Attempt, execute: (args: unknown, context: ToolContext) => unknown, args: unknown): void {
    attempt.#run(execute, args);
  }

  /** Calls the tool and settles on its result, its timeout or the caller's abort, whichever comes first. */
  #run(execute: (args: unknown, context: ToolContext) => unknown, args: unknown): void {
    const callerSignal = this.#callerSignal;
    if (callerSignal) {
      if (callerSignal.aborted) {
        this.#callerAborted();
        return;
      }
      this.#onCallerAbort = () => this.#callerAborted();
      callerSignal.addEventListener('abort', this.#onCallerAbort, { once: true });
    }
    let pending: Promise<unknown>;
    try {
      const value = execute(args, this);
      if (value instanceof Promise) pending = value;
      else if ((typeof value === 'object' && value !== null) || typeof value === 'function')
        pending = Promise.resolve(value); // a thenable is adopted
      else {
        this.#finish({ ok: true, value });
        return;
      }
    } catch (thrown) {
      this.#finish({ ok: false, thrown, abortReason: this.#abortReason });
      return;
    }
    pending.then(
      (value) => this.#finish({ ok: true, value }),
      (thrown: unknown) => this.#finish({ ok: false, thrown, abortReason: this.#abortReason }),
    );
    // The timer starts one microtask later, after the settlement of a tool that answered at once
    // (most do): such a call never creates a timer. A tool still running then gets its timeout.
    void FULFILLED.then(() => this.#startTimeout());
  }

  #abortWork(reason: unknown): void {
    this.#abortedWith = reason;
    this.#controller?.abort(reason);
  }

  #callerAborted(): void {
    const reason = this.#callerSignal?.reason;
    this.#abortReason ??= 'cancelled';
    this.#abortWork(reason);
    this.#finish({ ok: false, thrown: reason, abortReason: 'cancelled' });
  }

  #startTimeout(): void {
    if (this.#settled) return;
    this.#cancelTimer = startTimer(this.#clock, this.#timeoutMs, () => {
      if (this.#settled) return;
      this.#abortReason ??= 'timeout';
      const reason = new DOMException(`The tool did not answer within ${this.#timeoutMs} ms`, 'TimeoutError');
      this.#abortWork(reason);
      this.#finish({ ok: false, thrown: reason, abortReason: 'timeout' });
    });
  }

  #finish(outcome: AttemptOutcome): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#cancelTimer?.();
    if (this.#onCallerAbort) this.#callerSignal?.removeEventListener('abort', this.#onCallerAbort);
    this.#resolve(outcome);
  }
}

/**
 * Executes a tool once, bounded by `timeoutMs` on the injected clock. On timeout or caller abort the
 * tool's `context.signal` is aborted (the work is cancelled, not just no longer awaited) and the
 * attempt settles at once; a late result or rejection of the tool is ignored. The timer is started a
 * microtask after the tool was called, and not at all when the tool has settled by then (a tool that
 * returns a plain value settles the attempt at once). The signal's AbortController is created only
 * when the tool reads `context.signal`, so tools that do not listen for cancellation pay nothing for it.
 */
export function runAttempt(
  execute: (args: unknown, context: ToolContext) => unknown,
  args: unknown,
  context: Omit<ToolContext, 'signal'>,
  options: { timeoutMs: number; clock: Clock; callerSignal: AbortSignal | undefined },
): Promise<AttemptOutcome> {
  let resolveOutcome!: (outcome: AttemptOutcome) => void;
  const outcome = new Promise<AttemptOutcome>((resolve) => {
    resolveOutcome = resolve;
  });
  Attempt.start(new Attempt(context, options, resolveOutcome), execute, args);
  return outcome;
}
