/**
 * The one piece of Restate's context toolrun's wrappers use: a journaled step (`ctx.run`), typed by
 * the call toolrun makes, so the wrappers do not import the SDK.
 */

/** Retries of one journaled step, as Restate's `RunOptions` take them. Durations in milliseconds. */
export interface StepRetryOptions {
  /** Attempts of the step before Restate gives up on it (the step then fails with a `TerminalError`). */
  maxRetryAttempts?: number;
  /** Total time of the step's retries before Restate gives up on it. */
  maxRetryDuration?: number;
  initialRetryInterval?: number;
  maxRetryInterval?: number;
  retryIntervalFactor?: number;
}

/** What toolrun needs of a Restate handler's context: `ctx.run`, `ctx.sleep` (a durable timer) and `ctx.rand` (deterministic in a replay). */
export interface RestateStepContext {
  run<T>(name: string, action: () => Promise<T>, options?: StepRetryOptions): PromiseLike<T>;
  sleep(durationMs: number, name?: string): PromiseLike<void>;
  rand: { random(): number };
}

/** Runs `action` as a journaled step: once its result is journaled, a retried invocation reads it instead of running it again. */
export function step<T>(context: RestateStepContext, name: string, action: () => Promise<T>, retry?: StepRetryOptions): Promise<T> {
  return Promise.resolve(retry === undefined ? context.run(name, action) : context.run(name, action, retry));
}
