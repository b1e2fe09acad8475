import { truncateText } from '../core/build-failure.ts';
import type { FailureLogField, RecoveryLogRecord, ToolFailureLogRecord, BreakerOpenLogRecord } from '../core/ports/failure-log.ts';
import type { Redactor } from '../core/redact.ts';
import type { ToolCallRecord } from '../core/tool-call-record.ts';
import type { ToolrunObservation } from './observation.ts';

/** Bounds of what a failure record keeps, in UTF-8 bytes / items. */
const MAX_MESSAGE_BYTES = 512;
const MAX_VALUE_BYTES = 200;
const MAX_FIELDS = 20;

/** The metric label of an unregistered tool name (the model's invention never becomes a label). */
export const UNKNOWN_TOOL_LABEL = 'unknown';

/**
 * The tool name to show in logs and spans: the registered tool, or, for `TOOL_NOT_FOUND`, the
 * requested name redacted and cut to 128 bytes (it is the model's text).
 */
export function displayToolName(record: ToolCallRecord, redactor: Redactor): string {
  if (record.result.status === 'failed' && record.result.error.code === 'TOOL_NOT_FOUND') {
    return truncateText(redactor.text(record.requestedName), 128);
  }
  return record.toolName;
}

/** The tool name as a metric label: registered names only (low cardinality, never a secret). */
export function metricToolName(record: ToolCallRecord): string {
  return record.result.status === 'failed' && record.result.error.code === 'TOOL_NOT_FOUND' ? UNKNOWN_TOOL_LABEL : record.toolName;
}

/** Field errors as the failure log keeps them: exact paths, values redacted and bounded. */
function failureFields(record: ToolCallRecord, redactor: Redactor): FailureLogField[] {
  if (record.result.status !== 'failed') return [];
  return (record.result.error.fields ?? []).slice(0, MAX_FIELDS).map((field) => ({
    path: truncateText(redactor.text(field.path), MAX_VALUE_BYTES),
    problem: field.problem,
    ...(field.expected !== undefined ? { expected: truncateText(redactor.text(field.expected), MAX_VALUE_BYTES) } : {}),
    ...(field.received !== undefined ? { received: truncateText(redactor.text(field.received), MAX_VALUE_BYTES) } : {}),
  }));
}

/**
 * The failure-log record of a failed call (redacted, bounded), or `undefined` for a success. The
 * log line of a failure carries the same values, so a report reads the same from either.
 */
export function toToolFailureLogRecord(record: ToolCallRecord, stepIndex: number | null, redactor: Redactor): ToolFailureLogRecord | undefined {
  if (record.result.status !== 'failed') return undefined;
  const error = record.result.error;
  return {
    kind: 'tool-failure',
    at: new Date(record.startedAt).toISOString(),
    toolName: displayToolName(record, redactor),
    runId: record.runId === undefined ? null : redactor.text(record.runId),
    sessionId: redactor.text(record.sessionId),
    traceId: record.traceId,
    callId: redactor.text(record.callId),
    stepIndex,
    type: error.type,
    code: error.code,
    message: truncateText(redactor.text(error.message), MAX_MESSAGE_BYTES),
    fields: failureFields(record, redactor),
    attempts: record.attempts.length,
    durationMs: record.durationMs,
  };
}

/** The failure-log record of a recovery or breaker observation (redacted). */
export function toEventLogRecord(
  observation: Extract<ToolrunObservation, { kind: 'recovery' | 'breaker-open' }>,
  redactor: Redactor,
): RecoveryLogRecord | BreakerOpenLogRecord {
  const base = {
    at: new Date(observation.at).toISOString(),
    toolName: observation.toolName,
    runId: observation.runId === null ? null : redactor.text(observation.runId),
    sessionId: observation.sessionId === null ? null : redactor.text(observation.sessionId),
  };
  if (observation.kind === 'breaker-open') return { kind: 'breaker-open', ...base, scope: observation.scope };
  return {
    kind: 'recovery',
    ...base,
    recoveredWith: observation.recoveredWith,
    failedAtStep: observation.failedAtStep,
    recoveredAtStep: observation.recoveredAtStep,
    rounds: observation.rounds,
    failures: observation.failures,
  };
}
