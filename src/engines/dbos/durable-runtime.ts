import { redactBounded } from '../../core/build-failure.ts';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import { toRetryDirective } from '../../core/retry-directive.ts';
import type { ToolCallRecord } from '../../core/tool-call-record.ts';
import type { RunJournal } from '../../ground/ports/run-journal.ts';
import type { ToolResult } from '../../ground/tool-result.ts';
import type { DbosEngine } from './dbos-api.ts';
import { callPlaceOf, toolStepName } from './step-names.ts';

/** Options of {@link durableRuntime}. */
export interface DurableRuntimeOptions {
  /** The `DBOS` class. */
  engine: DbosEngine;
  /** The runtime that runs the tools (its shared breaker on toolrun's PostgreSQL stores is shared by every executor). */
  runtime: ToolRuntime;
  /**
   * In a replay (a fork): the journal holding the successful outcomes of the failed step's other
   * calls, which are read instead of running those calls again. @defaultValue none
   */
  replayJournal?: RunJournal | undefined;
  /**
   * Whether a step DBOS replays from its record (not run) is counted by the session breaker as if
   * it ran, so a recovered workflow refuses the calls the original would have. Off in a fork: a
   * replay starts with a fresh session. @defaultValue true
   */
  rebuildSessionBreaker?: boolean;
}

/**
 * What a tool step records: the envelope, what routing reads of the developer record (the tool's
 * name, whether it is broken for everyone, the error's kind, status and text — redacted, bounded
 * to 2 KiB; no stack, no arguments: they are in the model's step), and the attempts the runtime was
 * given for it.
 */
interface ToolStep {
  result: ToolResult;
  toolName: string;
  misconfiguration: boolean;
  error?: { kind: NonNullable<ToolCallRecord['error']>['kind']; status: number | null; message: string };
  maxAttempts: number;
}

/** The step's record of a call. */
function toolStepOf(record: ToolCallRecord, runtime: ToolRuntime, maxAttempts: number): ToolStep {
  const { result, toolName, misconfiguration, error } = record;
  if (!error) return { result, toolName, misconfiguration, maxAttempts };
  return {
    result,
    toolName,
    misconfiguration,
    maxAttempts,
    error: { kind: error.kind, status: error.status, message: redactBounded(runtime.redactor, error.message, 2048) },
  };
}

/** The developer record of a call as the loop reads it, from its step (recorded now or read back). */
function recordOf(
  step: ToolStep,
  input: { callId?: string | undefined; sessionId?: string | undefined; runId?: string | undefined; args?: unknown },
): ToolCallRecord {
  return {
    result: step.result,
    traceId: step.result.trace_id,
    callId: input.callId ?? step.result.call_id,
    sessionId: input.sessionId ?? '',
    runId: input.runId,
    requestedName: step.toolName,
    toolName: step.toolName,
    arguments: input.args,
    sensitiveKeys: [],
    normalisations: [],
    attempts: [],
    misconfiguration: step.misconfiguration,
    ...(step.error ? { error: { ...step.error, causes: [] } } : {}),
    startedAt: 0,
    durationMs: step.result.duration_ms,
  };
}

/** The records of one call's engine attempts as one record: the last one, with every attempt and the whole duration counted. */
function merged(records: readonly ToolCallRecord[]): ToolCallRecord {
  const last = records[records.length - 1]!;
  if (records.length === 1) return last;
  const attempts = records.reduce((sum, record) => sum + record.result.attempts, 0);
  const durationMs = records.reduce((sum, record) => sum + record.result.duration_ms, 0);
  return {
    ...last,
    result: { ...last.result, attempts, duration_ms: durationMs } as ToolResult,
    attempts: records.flatMap((record) => record.attempts),
    durationMs,
  };
}

/**
 * The runtime with each tool call of the agent loop run as DBOS steps named
 * `toolrun.tool:<stepIndex>:<callIndex>`. Inside a step the runtime retries as it always does
 * (short waits); when it gives up on a transient failure whose wait does not fit its call budget
 * (a `Retry-After` of minutes) with the run's retry budget left, {@link toRetryDirective} says
 * `retry` and the workflow sleeps durably (`DBOS.sleep`) before the next step — the engine does the
 * long wait. Every other directive hands the envelope back to the loop, which routes it as toolrun's
 * own loop does. A step DBOS replays from its record is not run again: the side effect of a call
 * whose step was recorded happens once; a call cut off before its step was recorded runs again
 * (DBOS steps are at-least-once) with the same `idempotencyKey`.
 */
export function durableRuntime(options: DurableRuntimeOptions): ToolRuntime {
  const { engine, runtime, replayJournal } = options;
  const rebuild = options.rebuildSessionBreaker ?? true;

  const execute: ToolRuntime['execute'] = async (input) => {
    const place = callPlaceOf(input.idempotencyKey);
    // a call the loop did not make (no place in the run): not a step of the workflow
    if (place === undefined || input.runId === undefined) return runtime.execute(input);
    const runId = input.runId;
    const maxAttempts = input.maxAttempts ?? 3;
    const records: ToolCallRecord[] = [];
    let attemptsLeft = maxAttempts;
    while (true) {
      let ran = false;
      const given = attemptsLeft;
      const step = await engine.runStep(
        async (): Promise<ToolStep> => {
          ran = true;
          if (replayJournal) {
            const recorded = (await replayJournal.recorded(runId, place.stepIndex, place.callIndex)) as ToolResult | undefined;
            if (recorded?.status === 'success') return { result: recorded, toolName: recorded.tool_name, misconfiguration: false, maxAttempts: given };
          }
          return toolStepOf(await runtime.execute({ ...input, maxAttempts: given }), runtime, given);
        },
        { name: toolStepName(place.stepIndex, place.callIndex) },
      );
      const record = recordOf(step, input);
      if (!ran && rebuild) {
        if (record.result.status === 'success') runtime.sessionBreakers?.recordSuccess(input.sessionId ?? runId, record.toolName);
        else runtime.sessionBreakers?.recordFailure(input.sessionId ?? runId, record.toolName, { kind: 'counted' });
      }
      records.push(record);
      attemptsLeft -= Math.max(1, record.result.attempts);
      // only the attempts the step was given decide (recorded with it): a replay with a larger budget re-reads the same decision
      const stepLeft = step.maxAttempts - Math.max(1, record.result.attempts);
      const directive = toRetryDirective(record, {
        retriesSpent: maxAttempts - attemptsLeft - record.result.attempts,
        retryBudget: maxAttempts - 1,
        idempotent: runtime.getTool(record.toolName)?.idempotent ?? false,
      });
      if (directive.action !== 'retry' || stepLeft <= 0 || attemptsLeft <= 0) return merged(records);
      attemptsLeft = Math.min(attemptsLeft, stepLeft);
      await engine.sleep(directive.afterMs);
    }
  };

  return {
    run: async (input) => (await execute(input)).result,
    execute,
    get specs() {
      return runtime.specs;
    },
    get names() {
      return runtime.names;
    },
    getTool: (name) => runtime.getTool(name),
    redactor: runtime.redactor,
    sessionBreakers: runtime.sessionBreakers,
    clock: runtime.clock,
  };
}
