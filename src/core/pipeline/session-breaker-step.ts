/** Step 2 of a call: the per-session circuit breaker. An open breaker ends the call with `TOO_MANY_FAILURES`. */
import { STEP_PASSED, stepFailed, type CallState, type PipelineParts, type StepOutcome } from './call-state.ts';

/** Checks the session breaker of the call's tool. */
export function sessionBreakerStep(parts: PipelineParts, call: CallState): StepOutcome<void> {
  if (parts.sessionBreakers && parts.sessionBreakers.check(call.sessionId, call.toolName).state === 'open') {
    return stepFailed({ code: 'TOO_MANY_FAILURES', message: `${call.toolName} failed too many times in a row in this session and is cut off` });
  }
  return STEP_PASSED;
}
