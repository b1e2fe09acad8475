/**
 * Step 4 of a call: the shared (cross-run) circuit breaker. Open: `CIRCUIT_OPEN`, the tool is not
 * run. Half-open: this call may be the probe (held in `call.heldProbe` until it is reported or
 * released). A breaker store that cannot be reached does not stop tool calls: the step fails open.
 */
import { STEP_PASSED, stepFailed, type CallState, type PipelineParts, type StepOutcome } from './call-state.ts';

/** Acquires the shared breaker of the call's tool, when the runtime has one. */
export async function acquireStep(parts: PipelineParts, call: CallState): Promise<StepOutcome<void>> {
  const sharedBreaker = parts.sharedBreaker;
  if (!sharedBreaker) return STEP_PASSED;
  const toolName = call.toolName;
  try {
    const acquired = await sharedBreaker.acquire(toolName);
    if (acquired.decision === 'reject') {
      // The developer record (and a tool-DLQ entry built from it) says why the breaker is open.
      const opened = await sharedBreaker.state(toolName).catch(() => undefined);
      call.misconfiguration = true;
      call.errorRecord = { kind: 'circuit_open', status: null, message: `shared breaker open${opened?.lastError ? `: ${opened.lastError}` : ''}`, causes: [] };
      return stepFailed({
        code: 'CIRCUIT_OPEN',
        message: `${toolName} is switched off for every run: it is failing for everyone`,
        ...(acquired.retryInMs !== undefined
          ? { detail: `The breaker is ${acquired.state}; it will be probed again in about ${Math.ceil(acquired.retryInMs / 1000)} s.` }
          : {}),
      });
    }
    if (acquired.decision === 'probe') call.heldProbe = { id: acquired.probeId };
  } catch {
    // a breaker store that cannot be reached must not stop tool calls: fail open
  }
  return STEP_PASSED;
}
