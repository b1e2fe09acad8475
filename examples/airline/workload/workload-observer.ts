/**
 * Counts what happens while the worker handles the airline workload, from the worker's own hooks
 * (`onToolCall`, `onEvent`, `onResult`) and from the model: outcomes, in-band recoveries, breaker
 * transitions, run wall times and tokens.
 */
import type { ToolCallRecord } from '../../../src/core/tool-call-record.ts';
import type { HandleMessageResult } from '../../../src/worker/handle-message-options.ts';
import type { WorkerEvent } from '../../../src/worker/worker-events.ts';

/** In-band recovery: what the runtime did inside tool calls, invisible to the model. */
export interface ToolCallCounts {
  calls: number;
  succeeded: number;
  /** Calls that failed (after their retries), as envelopes handed to the model, by failure code. */
  failedByCode: Record<string, number>;
  /** The same failed calls by tool, then failure code (`TOOL_NOT_FOUND` under the name the model asked for). */
  failedByTool: Record<string, Record<string, number>>;
  /** The same failed calls by failure type (`environment`, `logic`, …). */
  failedByType: Record<string, number>;
  /** Calls that needed more than one attempt and then succeeded. */
  recovered: number;
  /** Failed attempts inside recovered calls, by failure code (`UNAVAILABLE`, `RATE_LIMITED`, `TIMEOUT`…). */
  recoveredAttemptsByCode: Record<string, number>;
  /** Waits the server asked for with `Retry-After` that the runtime honoured, and their sum in ms. */
  retryAfterWaits: number;
  retryAfterWaitMs: number;
  /** Waits chosen by the exponential backoff. */
  backoffWaits: number;
}

/** A shared-breaker transition as the worker reported it. */
export interface BreakerTransition {
  type: 'breaker-open' | 'breaker-half-open' | 'breaker-close' | 'breaker-reopen';
  toolName: string;
  /** Epoch ms. */
  at: number;
  lastError?: string;
}

/** Everything counted in one phase. */
export interface WorkloadCounts {
  /** Messages handled (runs and malformed messages). */
  handled: number;
  /** Handled messages by result status (`completed`, `tool_failed`, `rejected`, …). */
  byStatus: Record<string, number>;
  /** Wall time of each run, from its message's reservation to its terminal place, in ms. */
  runWallTimesMs: number[];
  toolCalls: ToolCallCounts;
  breaker: BreakerTransition[];
  /** Model calls counted by the model itself. */
  modelCalls: number;
  /** The run ids the model was called for (each once). */
  modelCallRunIds: string[];
  /** Model calls the handled runs report (the same number when no message was charged a call it did not report). */
  modelCallsReported: number;
  /** Tokens of runs that did not complete (tool DLQ and other failures). */
  tokensOnFailedRuns: { input: number; output: number };
}

/** The hooks to plug into the worker, and the counts. */
export interface WorkloadObserver {
  messageReserved(messageId: string, atMs: number): void;
  messageHandled(result: HandleMessageResult, atMs: number): void;
  toolCalled(record: ToolCallRecord): void;
  workerEvent(event: WorkerEvent): void;
  modelCalled(runId: string): void;
  counts(): WorkloadCounts;
}

const increment = (record: Record<string, number>, key: string, by = 1) => {
  record[key] = (record[key] ?? 0) + by;
};

/** Creates an observer with every count at zero. */
export function createWorkloadObserver(): WorkloadObserver {
  const reservedAt = new Map<string, number>();
  const modelCallRunIds = new Set<string>();
  const counts: WorkloadCounts = {
    handled: 0,
    byStatus: {},
    runWallTimesMs: [],
    toolCalls: {
      calls: 0,
      succeeded: 0,
      failedByCode: {},
      failedByTool: {},
      failedByType: {},
      recovered: 0,
      recoveredAttemptsByCode: {},
      retryAfterWaits: 0,
      retryAfterWaitMs: 0,
      backoffWaits: 0,
    },
    breaker: [],
    modelCalls: 0,
    modelCallRunIds: [],
    modelCallsReported: 0,
    tokensOnFailedRuns: { input: 0, output: 0 },
  };
  return {
    messageReserved(messageId, atMs) {
      if (!reservedAt.has(messageId)) reservedAt.set(messageId, atMs);
    },
    messageHandled(result, atMs) {
      counts.handled += 1;
      increment(counts.byStatus, result.status);
      const startedAt = result.messageId === undefined ? undefined : reservedAt.get(result.messageId);
      if (result.messageId !== undefined) reservedAt.delete(result.messageId);
      if (result.status === 'rejected' || result.status === 'delivery_limit_exceeded' || result.status === 'busy') return;
      if (startedAt !== undefined) counts.runWallTimesMs.push(atMs - startedAt);
      counts.modelCallsReported += result.modelCalls;
      if (result.status !== 'completed') {
        counts.tokensOnFailedRuns.input += result.tokensSpent.input;
        counts.tokensOnFailedRuns.output += result.tokensSpent.output;
      }
    },
    toolCalled(record) {
      const tools = counts.toolCalls;
      tools.calls += 1;
      for (const attempt of record.attempts) {
        if (attempt.delayAfterMs === undefined) continue;
        if (attempt.retryReason === 'retry-after') {
          tools.retryAfterWaits += 1;
          tools.retryAfterWaitMs += attempt.delayAfterMs;
        } else if (attempt.retryReason === 'backoff') {
          tools.backoffWaits += 1;
        }
      }
      if (record.result.status === 'success') {
        tools.succeeded += 1;
        if (record.attempts.length > 1) {
          tools.recovered += 1;
          for (const attempt of record.attempts) if (attempt.outcome !== 'success') increment(tools.recoveredAttemptsByCode, attempt.outcome);
        }
      } else {
        const { code, type } = record.result.error;
        increment(tools.failedByCode, code);
        increment(tools.failedByType, type);
        const toolName = code === 'TOOL_NOT_FOUND' ? record.requestedName : record.toolName;
        increment((tools.failedByTool[toolName] ??= {}), code);
      }
    },
    workerEvent(event) {
      if (event.type === 'breaker-open' || event.type === 'breaker-half-open' || event.type === 'breaker-close' || event.type === 'breaker-reopen') {
        counts.breaker.push({
          type: event.type,
          toolName: event.toolName,
          at: event.at,
          ...(event.type === 'breaker-open' ? { lastError: event.lastError } : {}),
        });
      }
    },
    modelCalled(runId) {
      counts.modelCalls += 1;
      modelCallRunIds.add(runId);
    },
    counts: () => ({ ...structuredClone(counts), modelCallRunIds: [...modelCallRunIds] }),
  };
}

/** The nearest-rank percentile (`fraction` in (0, 1]) of `values`, or `undefined` for none. */
export function percentile(values: readonly number[], fraction: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))];
}
