/**
 * How a tool failed, as the tool itself knows it (what a `ToolError` says).
 *
 * - `server`: 5xx / unavailable (environment, retried)
 * - `timeout`: the call took too long (environment, ambiguous for writes)
 * - `network`: connection refused/reset, DNS (environment; a reset mid-call is ambiguous)
 * - `rate_limit`: 429 (environment, honours `retryAfterMs`)
 * - `auth`: credentials missing, expired or rejected (permission; `onAuthError` may refresh once)
 * - `forbidden`: authenticated but not allowed (permission)
 * - `not_found`: the thing asked for does not exist (logic)
 * - `precondition`: a business rule refused the call (logic)
 * - `invalid_input`: the tool itself rejected its arguments (invalid_parameter)
 * - `misconfigured`: broken for every caller: endpoint gone, the tool's configured host not found
 *   (environment, opens the shared breaker)
 */
export type ToolErrorKind =
  'server' | 'timeout' | 'network' | 'rate_limit' | 'auth' | 'forbidden' | 'not_found' | 'precondition' | 'invalid_input' | 'misconfigured';

/**
 * The kind of a failure, in developer records, checkpoints and dead-letter entries: a
 * {@link ToolErrorKind} (what the classifier found), or
 * - `exception`: an unexpected throw (a bug), or a result that is not JSON;
 * - `cancelled`: the caller aborted;
 * - `invalid_response`: a model answered with something that is not a model response;
 * - `unknown_tool`: no tool has the name the model called;
 * - `call_limit`: too many calls of the runtime were in flight (a tool that recursed);
 * - `circuit_open`: the shared circuit breaker refused the call;
 * - `crash`: every delivery of a run ended without a result (its consumer crashed, hung past its
 *   lease, or the store failed);
 * - `unknown`: nothing is known of the failure (a call not made because the run's retry budget
 *   for the tool was spent).
 */
export type FailureKind = ToolErrorKind | 'exception' | 'cancelled' | 'invalid_response' | 'unknown_tool' | 'call_limit' | 'circuit_open' | 'crash' | 'unknown';

/**
 * Why something failed, as toolrun keeps it in checkpoints and dead-letter entries: its
 * {@link FailureKind}, the upstream HTTP status or `null`, and a redacted, bounded `message`. The
 * one shape of a failure's cause across the loop, both DLQs and replays.
 */
export interface FailureCause {
  kind: FailureKind;
  status: number | null;
  message: string;
}
