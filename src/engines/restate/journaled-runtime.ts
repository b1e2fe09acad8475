import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import type { ToolCallRecord } from '../../core/tool-call-record.ts';
import type { ToolRunInput } from '../../core/tool-run-input.ts';
import type { SessionBreakers, SessionBreakerState } from '../../policies/session-breaker.ts';
import { step, type RestateStepContext } from './restate-steps.ts';

/** One tool call as journaled: its developer record (without the stack) and the session breaker's state after it. */
interface JournaledToolCall {
  record: ToolCallRecord;
  /** The session breaker of the call's session after the call, by the names the call went by. */
  breakers: { name: string; state: SessionBreakerState }[];
}

const CLOSED: SessionBreakerState = Object.freeze({ state: 'closed', consecutiveFailures: 0 });

/**
 * The runtime with each tool call a journaled Restate step (`toolrun.tool`): a retried invocation
 * reads the envelope of a call already made instead of running the tool again. Inside the step
 * the call is toolrun's whole pipeline (validation, in-band retries with backoff and Retry-After,
 * the session and shared breakers), so no-retry failures come back as the step's result, the
 * envelope. The step is not retried by Restate: a call's retries are the runtime's.
 *
 * The per-session breaker the agent loop reads before a call (`sessionBreakers.check`) answers
 * from what the journal holds (the state after each journaled call), so a replayed invocation
 * takes the same decisions as the original did.
 */
export function runtimeInRestate(context: RestateStepContext, runtime: ToolRuntime): ToolRuntime {
  const seen = new Map<string, SessionBreakerState>();
  const key = (sessionId: string, toolName: string) => `${sessionId}\u0000${toolName}`;
  const execute = async (input: ToolRunInput): Promise<ToolCallRecord> => {
    const sessionId = input.sessionId ?? input.runId ?? 'default';
    const journaled = await step(
      context,
      'toolrun.tool',
      async (): Promise<JournaledToolCall> => {
        const record = await runtime.execute(input);
        const names = [...new Set([record.toolName, record.requestedName, input.name])];
        const breakers = names.map((name) => ({ name, state: runtime.sessionBreakers?.check(sessionId, name) ?? CLOSED }));
        const { stack: _stack, ...error } = record.error ?? { causes: [] };
        const journaledRecord = { ...record, ...(record.error ? { error: { ...error, causes: record.error.causes } } : {}) } as ToolCallRecord;
        return JSON.parse(JSON.stringify({ record: journaledRecord, breakers })) as JournaledToolCall;
      },
      { maxRetryAttempts: 1 },
    );
    for (const { name, state } of journaled.breakers) seen.set(key(sessionId, name), state);
    return journaled.record;
  };
  const inner = runtime.sessionBreakers;
  const sessionBreakers: SessionBreakers | undefined = inner && {
    check: (sessionId, toolName) => seen.get(key(sessionId, toolName)) ?? CLOSED,
    recordSuccess: (sessionId, toolName) => inner.recordSuccess(sessionId, toolName),
    recordFailure: (sessionId, toolName, failure) => inner.recordFailure(sessionId, toolName, failure),
    reset: (sessionId) => {
      seen.clear();
      inner.reset(sessionId);
    },
  };
  return {
    execute,
    run: async (input) => (await execute(input)).result,
    specs: runtime.specs,
    names: runtime.names,
    getTool: (name) => runtime.getTool(name),
    redactor: runtime.redactor,
    sessionBreakers,
    clock: runtime.clock,
  };
}
