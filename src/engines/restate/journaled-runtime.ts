import { defaultSuggestion } from '../../core/build-failure.ts';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import { toRetryDirective } from '../../core/retry-directive.ts';
import type { ToolCallRecord } from '../../core/tool-call-record.ts';
import type { ToolRunInput } from '../../core/tool-run-input.ts';
import type { SessionBreakers, SessionBreakerState } from '../../policies/session-breaker.ts';
import { DEFAULT_RETRY_POLICY } from '../../policies/retry-policy.ts';
import { step, type RestateStepContext } from './restate-steps.ts';

/** One execution of a tool call as journaled: its developer record (without the stack) and the session breaker's state after it. */
interface JournaledExecution {
  record: ToolCallRecord;
  /** The session breaker of the call's session after the execution, by the names the call went by. */
  breakers: { name: string; state: SessionBreakerState }[];
}

const CLOSED: SessionBreakerState = Object.freeze({ state: 'closed', consecutiveFailures: 0 });

/** The record of a call made of several executions: the attempts of all, the last outcome, the waits counted in its duration. */
function mergeExecutions(previous: ToolCallRecord | undefined, next: ToolCallRecord, waitedMs: number): ToolCallRecord {
  if (previous === undefined) return next;
  const attempts = previous.result.attempts + next.result.attempts;
  const durationMs = previous.result.duration_ms + waitedMs + next.result.duration_ms;
  let result = { ...next.result, attempts, duration_ms: durationMs };
  // the envelope of one execution says it was not retried: this call was
  if (result.status === 'failed' && result.error.suggestion === defaultSuggestion(result.error.code, result.error.fallbacks, true)) {
    result = { ...result, error: { ...result.error, suggestion: defaultSuggestion(result.error.code, result.error.fallbacks, false) } };
  }
  const lastBefore = previous.attempts.at(-1);
  return {
    ...next,
    result,
    durationMs,
    attempts: [
      ...previous.attempts.slice(0, -1),
      ...(lastBefore ? [{ ...lastBefore, delayAfterMs: waitedMs, retryReason: 'engine-retry' }] : []),
      ...next.attempts.map((attempt) => ({ ...attempt, attempt: attempt.attempt + previous.attempts.length })),
    ],
  };
}

/**
 * The runtime with each execution of a tool call a journaled Restate step (`toolrun.tool`): a
 * retried invocation reads the envelope of an execution already made instead of running the tool
 * again. Inside the step is toolrun's pipeline (validation, the breakers, the timeout, the
 * in-band retries whose waits fit the call's time budget); what happens after it is
 * `toRetryDirective`'s answer, in Restate's terms:
 * - `return-to-model` (success, invalid parameters, an unknown tool, a permanent failure) and
 *   `dead-letter` (budget spent, broken for everyone, a breaker open): the envelope is the call's
 *   result, and the agent loop routes it as it does outside Restate;
 * - `retry` (a transient failure with attempts left: the server asked for a wait longer than the
 *   runtime waits in-process): a durable `ctx.sleep` of the server's `Retry-After` (or the tool's
 *   backoff), then the next execution with the attempts left. Restate does the long wait, so it
 *   survives the process, and a retried invocation does not wait again.
 * The call's attempts are those the loop allows (`maxAttempts`), within the tool's retry policy.
 *
 * The per-session breaker the agent loop reads before a call (`sessionBreakers.check`) answers
 * from what the journal holds (the state after each journaled execution), so a replayed invocation
 * takes the same decisions as the original did.
 */
export function runtimeInRestate(context: RestateStepContext, runtime: ToolRuntime): ToolRuntime {
  const seen = new Map<string, SessionBreakerState>();
  const key = (sessionId: string, toolName: string) => `${sessionId}\u0000${toolName}`;
  const executeOnce = async (input: ToolRunInput, sessionId: string, maxAttempts: number | undefined): Promise<ToolCallRecord> => {
    const journaled = await step(
      context,
      'toolrun.tool',
      async (): Promise<JournaledExecution> => {
        const record = await runtime.execute({ ...input, ...(maxAttempts !== undefined ? { maxAttempts } : {}) });
        const names = [...new Set([record.toolName, record.requestedName, input.name])];
        const breakers = names.map((name) => ({ name, state: runtime.sessionBreakers?.check(sessionId, name) ?? CLOSED }));
        const { stack: _stack, ...error } = record.error ?? { causes: [] };
        const journaledRecord = { ...record, ...(record.error ? { error: { ...error, causes: record.error.causes } } : {}) } as ToolCallRecord;
        return JSON.parse(JSON.stringify({ record: journaledRecord, breakers })) as JournaledExecution;
      },
      { maxRetryAttempts: 1 },
    );
    for (const { name, state } of journaled.breakers) seen.set(key(sessionId, name), state);
    return journaled.record;
  };
  const execute = async (input: ToolRunInput): Promise<ToolCallRecord> => {
    const sessionId = input.sessionId ?? input.runId ?? 'default';
    let merged: ToolCallRecord | undefined;
    let waitedMs = 0;
    // the call's attempts in all: what the loop allows, within the tool's policy (known after the first execution)
    let maxAttempts = input.maxAttempts;
    while (true) {
      const spent = merged?.result.attempts ?? 0;
      const record = await executeOnce(input, sessionId, maxAttempts === undefined ? undefined : Math.max(1, maxAttempts - spent));
      merged = mergeExecutions(merged, record, waitedMs);
      const registered = runtime.getTool(record.toolName);
      const policy = registered?.retry ?? DEFAULT_RETRY_POLICY;
      maxAttempts = Math.max(1, Math.min(input.maxAttempts ?? policy.maxAttempts, policy.maxAttempts));
      const directive = toRetryDirective(record, {
        retriesSpent: spent,
        retryBudget: maxAttempts - 1,
        idempotent: registered?.idempotent ?? false,
        policy,
        random: () => context.rand.random(),
      });
      if (directive.action !== 'retry') return merged;
      await context.sleep(directive.afterMs, 'toolrun.retry-wait');
      waitedMs = directive.afterMs;
    }
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
