import { redactBounded } from '../core/build-failure.ts';
import type { FailureLogField, RecoveryLogRecord, ToolFailureLogRecord, BreakerOpenLogRecord } from '../ground/ports/failure-log.ts';
import type { Redactor } from '../core/redact.ts';
import { redactFieldErrors } from '../core/redact-fields.ts';
import type { ToolCallRecord } from '../core/tool-call-record.ts';
import type { ToolrunObservation } from './observation.ts';

/** Bounds of what a failure record keeps, in UTF-8 bytes / items. Each text is cut to its bound before it is redacted. */
const MAX_MESSAGE_BYTES = 512;
const MAX_VALUE_BYTES = 200;
const MAX_FIELDS = 20;
/** Bound of an identifier (run, session, call id: the caller's or the model's text), in UTF-8 bytes. */
export const MAX_ID_BYTES = 256;
/** Bound of a tool name shown in logs, spans and records, in UTF-8 bytes. */
export const MAX_TOOL_NAME_BYTES = 128;

/** Ids of at most this many code units are within {@link MAX_ID_BYTES} whatever their characters. */
const SHORT_ID_UNITS = Math.floor(MAX_ID_BYTES / 3);

/** An identifier as sinks keep it: redacted and cut to {@link MAX_ID_BYTES} (cut first). */
export function sinkId(redactor: Redactor, id: string): string {
  // A short id (every generated one) redacts in one pass: what `redactBounded` returns for a text
  // within its bound whose redaction is too (every code unit is at most 3 UTF-8 bytes).
  if (id.length <= SHORT_ID_UNITS) {
    const redacted = redactor.text(id);
    if (redacted.length <= SHORT_ID_UNITS) return redacted;
  }
  return redactBounded(redactor, id, MAX_ID_BYTES);
}

/** The metric label of an unregistered tool name (the model's invention never becomes a label). */
export const UNKNOWN_TOOL_LABEL = 'unknown';

/**
 * The tool name to show in logs and spans: the registered tool, or, for `TOOL_NOT_FOUND`, the
 * requested name redacted and cut to 128 bytes (it is the model's text).
 */
export function displayToolName(record: ToolCallRecord, redactor: Redactor): string {
  if (record.result.status === 'failed' && record.result.error.code === 'TOOL_NOT_FOUND') {
    return redactBounded(redactor, record.requestedName, MAX_TOOL_NAME_BYTES);
  }
  return record.toolName;
}

/** The tool name as a metric label: registered names only (low cardinality, never a secret). */
export function metricToolName(record: ToolCallRecord): string {
  return record.result.status === 'failed' && record.result.error.code === 'TOOL_NOT_FOUND' ? UNKNOWN_TOOL_LABEL : record.toolName;
}

/**
 * Field errors as the failure log keeps them: exact paths, texts cut then redacted, and the
 * received value of a sensitive field (`/password`, or a key of the tool's `sensitive` list) masked.
 */
function failureFields(record: ToolCallRecord, redactor: Redactor): FailureLogField[] {
  if (record.result.status !== 'failed') return [];
  const fields = (record.result.error.fields ?? []).slice(0, MAX_FIELDS).map((field) => ({
    path: field.path,
    problem: field.problem,
    ...(field.expected !== undefined ? { expected: field.expected } : {}),
    ...(field.received !== undefined ? { received: field.received } : {}),
  }));
  return redactFieldErrors(redactor, fields, { extraKeys: record.sensitiveKeys, maxBytes: MAX_VALUE_BYTES, maxFields: MAX_FIELDS }).fields.map((field) => ({
    ...field,
    problem: redactBounded(redactor, field.problem, MAX_VALUE_BYTES),
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
    runId: record.runId === undefined ? null : sinkId(redactor, record.runId),
    sessionId: sinkId(redactor, record.sessionId),
    traceId: record.traceId,
    callId: sinkId(redactor, record.callId),
    stepIndex,
    type: error.type,
    code: error.code,
    message: redactBounded(redactor, error.message, MAX_MESSAGE_BYTES),
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
    toolName: redactBounded(redactor, observation.toolName, MAX_TOOL_NAME_BYTES),
    runId: observation.runId === null ? null : sinkId(redactor, observation.runId),
    sessionId: observation.sessionId === null ? null : sinkId(redactor, observation.sessionId),
  };
  if (observation.kind === 'breaker-open') return { kind: 'breaker-open', ...base, scope: observation.scope };
  return {
    kind: 'recovery',
    ...base,
    recoveredWith: redactBounded(redactor, observation.recoveredWith, MAX_TOOL_NAME_BYTES),
    failedAtStep: observation.failedAtStep,
    recoveredAtStep: observation.recoveredAtStep,
    rounds: observation.rounds,
    failures: observation.failures,
  };
}
