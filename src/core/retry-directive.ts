/**
 * The mapping from a toolrun failure to a durable engine's retry directive (DBOS, Restate,
 * Temporal): which failures are the step's result, which the engine retries after a wait, and which
 * stop the run for the tool dead-letter queue.
 */
import type { RandomSource } from '../ground/ports/clock.ts';
import { systemRandom } from '../ground/ports/clock.ts';
import type { FailureCode } from '../ground/failure-codes.ts';
import type { ToolResult } from '../ground/tool-result.ts';
import { computeBackoffMs } from '../policies/backoff.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../policies/retry-policy.ts';

/**
 * Why in-band recovery of a tool ended and the run goes to the tool dead-letter queue (the
 * `reason` of a tool-DLQ entry):
 * - `retry-budget-exhausted`: the run's retries of the tool are spent, or no time is left to wait;
 * - `session-breaker-open`: the tool failed too often in a row in this session;
 * - `misconfiguration`: the tool is broken for every caller (credential rejected, endpoint gone);
 * - `circuit-open`: the shared circuit breaker refused the call (opened by another run).
 */
export type ToolDeadLetterReason = 'retry-budget-exhausted' | 'session-breaker-open' | 'misconfiguration' | 'circuit-open';

/**
 * What a durable engine does with the outcome of one tool call run as a step (activity, `ctx.run`):
 * - `{ action: 'return-to-model' }`: not retried by the engine; the envelope is the step's result
 *   and goes back to the model (a success, invalid parameters, an unknown tool, a permanent failure,
 *   an ambiguous failure of a tool that is not idempotent);
 * - `{ action: 'retry', afterMs, basis }`: a transient failure; the engine retries the step after
 *   `afterMs` milliseconds (a durable timer, not an in-process sleep). `basis` is `retry-after`
 *   when the wait is the server's own (`Retry-After`, `retry-after-ms` or a rate-limit reset),
 *   `backoff` when it is toolrun's exponential backoff with jitter;
 * - `{ action: 'dead-letter', reason }`: in-band recovery is over; the engine stops the run
 *   (no retry) and the run goes to the tool dead-letter queue with `reason`. A misconfiguration is
 *   one shared-breaker alert, not one per run.
 */
export type RetryDirective =
  | { action: 'return-to-model' }
  | { action: 'retry'; afterMs: number; basis: 'retry-after' | 'backoff' }
  | { action: 'dead-letter'; reason: ToolDeadLetterReason };

/**
 * The outcome of one tool call, as `ToolRuntime.execute` returns it (a `ToolCallRecord` fits). With
 * the envelope alone (`{ result }`), a failure that is broken for every caller cannot be told from
 * a transient one with the same code: it is retried until the budget is spent instead of being
 * dead-lettered at once.
 */
export interface RetryDirectiveCall {
  /** The call's envelope. */
  result: ToolResult;
  /** The failure is broken for every caller (it fed the shared breaker). @defaultValue false */
  misconfiguration?: boolean;
}

/** The run's budget state and the engine's attempt, the second argument of {@link toRetryDirective}. */
export interface RetryBudgetState {
  /**
   * Retries of this tool already spent in the run before this call: for an engine that retries the
   * step, its attempt number minus one (Temporal `info.attempt - 1`), plus retries of earlier calls
   * of the tool when the run counts them. The call's own in-process retries (`result.attempts - 1`)
   * are added to it.
   */
  retriesSpent: number;
  /** Retries the run allows per tool, as toolrun's loop (`toolRetryBudget`). @defaultValue 2 */
  retryBudget?: number;
  /** Time left in the run's budget, in ms: a wait that is not strictly shorter dead-letters. @defaultValue unbounded */
  remainingMs?: number;
  /**
   * The tool is safe to repeat after an ambiguous failure (`RegisteredTool.idempotent`). A timeout,
   * network error or cancellation of a tool that is not is returned to the model, never retried by
   * the engine: the work may have happened. @defaultValue false
   */
  idempotent?: boolean;
  /** The backoff used when the server asked for no wait. @defaultValue toolrun's retry policy (500 ms, ×2, at most 30 s, jitter 100 ms, at least 100 ms) */
  policy?: Pick<RetryPolicy, 'backoff' | 'minDelayMs'>;
  /** Random source for the backoff's jitter. @defaultValue `Math.random` */
  random?: RandomSource;
}

/** Default of {@link RetryBudgetState.retryBudget}, as in toolrun's own loop. */
export const DEFAULT_TOOL_RETRY_BUDGET = 2;

/**
 * How each failure code is treated:
 * - `model`: the envelope goes back to the model;
 * - `transient`: retried by the engine (dead-lettered when the budget is spent or the tool is broken for everyone);
 * - `ambiguous`: transient, but the work may have happened: retried only for an idempotent tool;
 * - a {@link ToolDeadLetterReason}: stop and dead-letter.
 *
 * Whatever the code, a failure that is broken for every caller is dead-lettered first.
 *
 * A `Record` over every code: adding a code to `FAILURE_CODES` without a row here fails to compile.
 */
type CodeTreatment = 'model' | 'transient' | 'ambiguous' | 'retry-budget-exhausted' | 'session-breaker-open' | 'circuit-open';

const TREATMENT: Readonly<Record<FailureCode, CodeTreatment>> = Object.freeze({
  MALFORMED_ARGUMENTS: 'model',
  MISSING_REQUIRED: 'model',
  INVALID_TYPE: 'model',
  INVALID_ENUM: 'model',
  INVALID_FORMAT: 'model',
  DATE_FORMAT_ERROR: 'model',
  OUT_OF_RANGE: 'model',
  UNKNOWN_PARAMETER: 'model',
  SCHEMA_VALIDATION_FAILED: 'model',
  INVALID_INPUT: 'model',
  TIMEOUT: 'ambiguous',
  UNAVAILABLE: 'transient',
  RATE_LIMITED: 'transient',
  NETWORK_ERROR: 'ambiguous',
  BUDGET_EXHAUSTED: 'retry-budget-exhausted',
  PERMISSION_DENIED: 'model',
  AUTH_EXPIRED: 'model',
  TOOL_NOT_FOUND: 'model',
  NOT_FOUND: 'model',
  PRECONDITION_FAILED: 'model',
  TOOL_EXCEPTION: 'model',
  OUTPUT_TOO_LARGE: 'model',
  CANCELLED: 'ambiguous',
  CALL_LIMIT_EXCEEDED: 'model',
  TOO_MANY_FAILURES: 'session-breaker-open',
  CIRCUIT_OPEN: 'circuit-open',
});

const RETURN_TO_MODEL: RetryDirective = Object.freeze({ action: 'return-to-model' });

/**
 * The retry directive of one tool call run as a durable engine's step: the one mapping from
 * toolrun's failure taxonomy to what DBOS, Restate and Temporal do (the table of
 * `docs/engines/README.md`). In order:
 *
 * 1. a success → `return-to-model`;
 * 2. a failure that is broken for every caller (`call.misconfiguration`) or the shared breaker's
 *    `CIRCUIT_OPEN` → `dead-letter` (`misconfiguration` / `circuit-open`), unless the tool has
 *    fallbacks (the envelope's `error.fallbacks`): then `return-to-model`, as toolrun's loop does;
 * 3. `TOO_MANY_FAILURES` (session breaker open) → `dead-letter` `session-breaker-open`;
 *    `BUDGET_EXHAUSTED` (no time left for the call) → `dead-letter` `retry-budget-exhausted`;
 * 4. invalid parameters, an unknown tool and the other permanent failures (`PERMISSION_DENIED`,
 *    `AUTH_EXPIRED` and `NOT_FOUND` that are not misconfigurations, `PRECONDITION_FAILED`,
 *    `TOOL_EXCEPTION`, `OUTPUT_TOO_LARGE`, `CALL_LIMIT_EXCEEDED`) → `return-to-model`;
 * 5. `TIMEOUT`, `NETWORK_ERROR`, `CANCELLED` of a tool that is not idempotent → `return-to-model`
 *    (the work may have happened; the envelope says not to call again now);
 * 6. a transient failure (`UNAVAILABLE`, `RATE_LIMITED`, and 5 for an idempotent tool): when
 *    `retriesSpent + result.attempts - 1 ≥ retryBudget` → `dead-letter` `retry-budget-exhausted`;
 *    else `retry` after the server's wait (`error.retry_after_ms`: `Retry-After`, `retry-after-ms`,
 *    rate-limit reset, capped at 24 h) or else the backoff for retry number `retriesSpent`, at least
 *    `minDelayMs` either way; a wait not strictly shorter than `remainingMs` → `dead-letter`
 *    `retry-budget-exhausted`.
 *
 * Pure apart from `budget.random` (the backoff's jitter; inject it for determinism). Never throws
 * for a well-formed envelope.
 *
 * @param call - the call's envelope, and whether its failure is broken for every caller (a `ToolCallRecord` fits)
 * @param budget - the run's budget state and the engine's attempt (see {@link RetryBudgetState})
 * @returns the {@link RetryDirective}
 * @example
 * ```ts
 * const record = await runtime.execute({ name, args, runId, maxAttempts: 1 });
 * const directive = toRetryDirective(record, { retriesSpent: attempt - 1, idempotent: runtime.getTool(name)?.idempotent });
 * ```
 */
export function toRetryDirective(call: RetryDirectiveCall, budget: RetryBudgetState): RetryDirective {
  const { result } = call;
  if (result.status === 'success') return RETURN_TO_MODEL;
  const error = result.error;
  const hasFallbacks = (error.fallbacks?.length ?? 0) > 0;
  const treatment = TREATMENT[error.code];
  if (call.misconfiguration === true || treatment === 'circuit-open') {
    if (hasFallbacks) return RETURN_TO_MODEL;
    return { action: 'dead-letter', reason: treatment === 'circuit-open' ? 'circuit-open' : 'misconfiguration' };
  }
  switch (treatment) {
    case 'model':
      return RETURN_TO_MODEL;
    case 'retry-budget-exhausted':
    case 'session-breaker-open':
      return { action: 'dead-letter', reason: treatment };
    case 'ambiguous':
      if (budget.idempotent !== true) return RETURN_TO_MODEL;
      return transientDirective(result.attempts, error.retry_after_ms, budget);
    case 'transient':
      return transientDirective(result.attempts, error.retry_after_ms, budget);
    default: {
      const unreachable: never = treatment;
      return unreachable;
    }
  }
}

/** The directive of a transient failure: retry after the server's wait or the backoff, or dead-letter when the budget is spent. */
function transientDirective(callAttempts: number, retryAfterMs: number | undefined, budget: RetryBudgetState): RetryDirective {
  const retriesSpent = Math.max(0, Math.floor(budget.retriesSpent));
  const spent = retriesSpent + Math.max(0, callAttempts - 1);
  if (spent >= (budget.retryBudget ?? DEFAULT_TOOL_RETRY_BUDGET)) return { action: 'dead-letter', reason: 'retry-budget-exhausted' };
  const policy = budget.policy ?? DEFAULT_RETRY_POLICY;
  const serverWait = retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0;
  const waitMs = serverWait ? retryAfterMs : computeBackoffMs(spent, policy.backoff, budget.random ?? systemRandom);
  const afterMs = Math.max(policy.minDelayMs, waitMs);
  if (budget.remainingMs !== undefined && !(afterMs < budget.remainingMs)) return { action: 'dead-letter', reason: 'retry-budget-exhausted' };
  return { action: 'retry', afterMs, basis: serverWait ? 'retry-after' : 'backoff' };
}
