/** Step 2 of a call: the per-session circuit breaker. An open breaker ends the call with `TOO_MANY_FAILURES`. */
import { STEP_PASSED, stepFailed, type CallState, type PipelineParts, type StepOutcome } from './call-state.ts';

/**
 * The message of a cut-off tool, per registered tool name: the same string each time, so the
 * envelope's redactor finds it among the texts it remembers as clean without hashing a new string
 * (registered names only, so the map is bounded by the registries; emptied past 1,024 names).
 */
const CUT_OFF_MESSAGES = new Map<string, string>();

function cutOffMessage(toolName: string): string {
  let message = CUT_OFF_MESSAGES.get(toolName);
  if (message === undefined) {
    if (CUT_OFF_MESSAGES.size >= 1024) CUT_OFF_MESSAGES.clear();
    message = `${toolName} failed too many times in a row in this session and is cut off`;
    CUT_OFF_MESSAGES.set(toolName, message);
  }
  return message;
}

/** Checks the session breaker of the call's tool (a registered one: the step runs after the tool was found). */
export function sessionBreakerStep(parts: PipelineParts, call: CallState): StepOutcome<void> {
  if (parts.sessionBreakers && parts.sessionBreakers.check(call.sessionId, call.toolName).state === 'open') {
    return stepFailed({ code: 'TOO_MANY_FAILURES', message: cutOffMessage(call.toolName) });
  }
  return STEP_PASSED;
}
