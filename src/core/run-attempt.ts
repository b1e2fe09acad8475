import type { ToolContext } from './define-tool.ts';
import type { Clock } from '../ground/ports/clock.ts';

/** Outcome of one execution of a tool. */
export type AttemptOutcome = { ok: true; value: unknown } | { ok: false; thrown: unknown; abortReason: 'timeout' | 'cancelled' | undefined };

/** Who hears how an attempt ended (an object with a method, so a caller allocates no closure for it). */
export interface AttemptListener {
  /** Called exactly once with the attempt's outcome; must not throw (nothing would catch it). */
  settled(outcome: AttemptOutcome): void;
}

/**
 * What every attempt of one call shares: the tool's `execute`, the arguments, the context's ids, the
 * clock of the timeout and the caller's signal (one object per call, read by each attempt).
 */
export interface AttemptScope {
  readonly execute: (args: unknown, context: ToolContext) => unknown;
  readonly args: unknown;
  readonly callId: string;
  readonly sessionId: string;
  readonly runId: string | undefined;
  readonly idempotencyKey: string;
  readonly clock: Clock;
  readonly callerSignal: AbortSignal | undefined;
}

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
  readonly #listener: AttemptListener;
  #controller: AbortController | undefined = undefined;
  #abortedWith: unknown = undefined;
  #settled = false;
  #abortReason: 'timeout' | 'cancelled' | undefined = undefined;
  #cancelTimer: (() => void) | undefined = undefined;
  #onCallerAbort: (() => void) | undefined = undefined;

  constructor(scope: AttemptScope, attempt: number, timeoutMs: number, listener: AttemptListener) {
    this.callId = scope.callId;
    this.sessionId = scope.sessionId;
    this.runId = scope.runId;
    this.idempotencyKey = scope.idempotencyKey;
    this.attempt = attempt;
    this.#timeoutMs = timeoutMs;
    this.#clock = scope.clock;
    this.#callerSignal = scope.callerSignal;
    this.#listener = listener;
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#abortedWith !== undefined || this.#settled) this.#controller.abort(this.#abortedWith);
    }
    return this.#controller.signal;
  }

  /** Calls the tool with `attempt` as its context (static methods: the context shows the tool nothing but `ToolContext`). */
  static start(attempt: Attempt, execute: (args: unknown, context: ToolContext) => unknown, args: unknown): void {
    attempt.#run(execute, args);
  }

  /** Starts the attempt's timeout, unless it has settled. */
  static startTimeout(attempt: Attempt): void {
    attempt.#startTimeout();
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
    this.#listener.settled(outcome);
  }
}

/** An attempt {@link startAttempt} started: what {@link startTimeout} arms. */
export type StartedAttempt = { readonly __brand: 'StartedAttempt' };

/**
 * Executes `scope.execute` once as attempt `attempt`, bounded by `timeoutMs` on the scope's clock,
 * and calls `listener.settled` exactly once with its outcome: synchronously when the tool returns a
 * plain value or throws, else from a microtask or the timer. On timeout or caller abort the tool's
 * `context.signal` is aborted (the work is cancelled, not just no longer awaited) and the attempt
 * settles at once; a late result or rejection of the tool is ignored. The timer runs from
 * {@link startTimeout}, which the caller calls a microtask after this one returns: a tool that
 * answered at once (most do) has settled by then and never gets a timer. The signal's
 * AbortController is created only when the tool reads `context.signal`, so tools that do not listen
 * for cancellation pay nothing for it.
 */
export function startAttempt(scope: AttemptScope, attempt: number, timeoutMs: number, listener: AttemptListener): StartedAttempt {
  const started = new Attempt(scope, attempt, timeoutMs, listener);
  Attempt.start(started, scope.execute, scope.args);
  return started as unknown as StartedAttempt;
}

/** Starts the timeout of an attempt {@link startAttempt} started, unless it has settled (then it does nothing). */
export function startTimeout(started: StartedAttempt): void {
  Attempt.startTimeout(started as unknown as Attempt);
}

/** {@link startAttempt} as a promise of its outcome (never rejects), its timeout started a microtask later. */
export function attemptOutcome(scope: AttemptScope, attempt: number, timeoutMs: number): Promise<AttemptOutcome> {
  return new Promise<AttemptOutcome>((resolve) => {
    const started = startAttempt(scope, attempt, timeoutMs, { settled: resolve });
    void FULFILLED.then(() => startTimeout(started));
  });
}

/** {@link attemptOutcome} from the tool's `execute`, its arguments and the context's ids. */
export function runAttempt(
  execute: (args: unknown, context: ToolContext) => unknown,
  args: unknown,
  context: Omit<ToolContext, 'signal'>,
  options: { timeoutMs: number; clock: Clock; callerSignal: AbortSignal | undefined },
): Promise<AttemptOutcome> {
  const scope: AttemptScope = { ...context, execute, args, clock: options.clock, callerSignal: options.callerSignal };
  return attemptOutcome(scope, context.attempt, options.timeoutMs);
}
