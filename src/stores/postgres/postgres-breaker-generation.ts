/**
 * What a process of the PostgreSQL stores last learned of `<schema>.breaker_generation`: a
 * counter that every statement writing `<schema>.breakers` increments in its own transaction (a
 * trigger does it, whoever writes: this toolrun, an older one, an operator's SQL). While the
 * counter has not moved, no breaker record has changed, so a breaker state read at that
 * generation is still the stored one.
 *
 * The statements a worker sends before each model or tool call — the step commit, the run's claim —
 * read the counter too (a subquery in the same statement, at that statement's snapshot). The breaker
 * store then answers `get` from the state it read earlier when that state's generation is the one
 * the latest of those statements saw, and that statement started at most `maxStalenessMs` ago:
 * exactly what a read of the breaker at that statement's moment would have returned, without a
 * round trip of its own.
 */
export interface BreakerGenerationTracker {
  /** The longest a state may be reused after the statement that last confirmed its generation started, in ms. */
  readonly maxStalenessMs: number;
  /**
   * Notes the counter as read by a statement sent at `sentAtMs` (the injected clock's ms; its
   * snapshot is taken after that). The counter only grows: a smaller value (a statement whose
   * snapshot predates a newer one seen already) changes nothing.
   */
  observe(generation: number, sentAtMs: number): void;
  /** Whether a state read at `generation` is still the stored one as of a statement started at most `maxStalenessMs` before `nowMs`. */
  isFresh(generation: number, nowMs: number): boolean;
}

/**
 * A {@link BreakerGenerationTracker} for one process's stores. `maxStalenessMs` must be a finite
 * number ≥ 0 (the caller checks it); 0 reuses a state only at the very moment its generation was
 * confirmed.
 */
export function createBreakerGenerationTracker(maxStalenessMs: number): BreakerGenerationTracker {
  let generation = Number.NEGATIVE_INFINITY;
  let confirmedAtMs = Number.NEGATIVE_INFINITY;
  return {
    maxStalenessMs,
    observe(seen, sentAtMs) {
      if (!Number.isFinite(seen) || !Number.isFinite(sentAtMs)) return;
      if (seen > generation) {
        generation = seen;
        confirmedAtMs = sentAtMs;
      } else if (seen === generation && sentAtMs > confirmedAtMs) {
        confirmedAtMs = sentAtMs;
      }
    },
    isFresh(seen, nowMs) {
      return seen === generation && nowMs - confirmedAtMs <= maxStalenessMs;
    },
  };
}

/** Parses the counter as the driver returns it (`bigint` as text); `NaN` for anything else. */
export function generationOf(value: unknown): number {
  return typeof value === 'string' || typeof value === 'number' ? Number(value) : Number.NaN;
}
