import { pino, type Logger } from 'pino';
import { redactBounded } from '../core/build-failure.ts';
import { truncateUtf8, utf8ByteLength } from '../ground/utf8.ts';
import { logLevelOf } from '../ground/failure-codes.ts';
import { createRedactor, type Redactor } from '../core/redact.ts';
import type { ToolCallRecord } from '../core/tool-call-record.ts';
import type { WorkerEvent } from '../worker/worker-events.ts';
import { displayToolName, MAX_TOOL_NAME_BYTES, sinkId, toEventLogRecord, toToolFailureLogRecord } from './failure-record.ts';
import type { ToolrunObservation, ToolrunObserver } from './observation.ts';
import { createSensitiveKeyCombiner } from './sensitive-keys.ts';

/** Options of {@link createToolCallLogger}. */
export interface ToolCallLoggerOptions {
  /** Where lines go: a pino logger (or child). @defaultValue `pino({ name: 'toolrun' })` (info, stdout) */
  logger?: Logger;
  /** The redactor of every value written. Pass the runtime's (`runtime.redactor`). @defaultValue `createRedactor()` */
  redactor?: Redactor;
  /** Argument keys redacted for every tool, on top of each tool's `sensitive` keys (wildcards allowed). */
  sensitiveKeys?: readonly string[];
  /** Bound of the logged `params`, in bytes of their JSON; longer ones are logged as cut text. @defaultValue 8192 */
  maxParamsBytes?: number;
  /** Bound of the developer record's error message and of each cause, in UTF-8 bytes (cut before redaction). @defaultValue 4096 */
  maxErrorBytes?: number;
  /** Bound of the developer record's stack, in UTF-8 bytes (cut before redaction). @defaultValue 16_384 */
  maxStackBytes?: number;
}

/** Causes and normalisations kept per line. */
const MAX_LIST_ITEMS = 20;
/** Bound of a worker-event or dead-letter text field, in UTF-8 bytes. */
const MAX_EVENT_TEXT_BYTES = 1024;

/**
 * Writes one structured pino line per tool call, and lines for recoveries, breaker
 * openings and dead-letter entries. Levels follow the failure type: success `debug`,
 * `invalid_parameter`, `environment` and `circuit_breaker` `warn`, `permission` and `logic` `error`.
 *
 * A `tool_call` line: `event`, `trace_id`, `call_id`, `session_id`, `run_id`, `step_index` (in an
 * observed run), `tool_name` (`requested_name` when it differs), `status`, `duration_ms`,
 * `attempts`, `retries`, `attempt_outcomes`, `normalisations`, `timestamp` (ISO-8601 start of the
 * call), `params` (redacted with the redactor, the tool's `sensitive` keys and `sensitiveKeys`);
 * on failure also `error_type`, `error_code`, `retryable`, `message`, `fields` and `developer`:
 * the full developer record (error kind, upstream status, name, message, stack, cause chain),
 * redacted, never put in the envelope. Other lines: `tool_recovery` (info), `breaker_open` (warn),
 * `dead_letter_add` (warn), `worker_event` (`dead-letter-full` error, others info).
 *
 * Every text is cut to its bound before it is redacted (ids 256 bytes, names 128, messages and
 * causes `maxErrorBytes`, stacks `maxStackBytes`, at most 20 causes); `params` are redacted with a
 * text budget of twice `maxParamsBytes`, then cut to `maxParamsBytes`.
 *
 * Nothing is built for a line whose level is disabled. Never throws.
 */
export interface ToolCallLogger extends ToolrunObserver {
  /** Pass as the runtime's `onCallEnd` when used alone (no step index, no recovery lines). */
  onCallEnd(record: ToolCallRecord): void;
  readonly logger: Logger;
}

/** Creates a {@link ToolCallLogger}. */
export function createToolCallLogger(options: ToolCallLoggerOptions = {}): ToolCallLogger {
  const logger = options.logger ?? pino({ name: 'toolrun' });
  const redactor = options.redactor ?? createRedactor();
  const maxParamsBytes = options.maxParamsBytes ?? 8192;
  const maxErrorBytes = options.maxErrorBytes ?? 4096;
  const maxStackBytes = options.maxStackBytes ?? 16_384;
  const keysFor = createSensitiveKeyCombiner(options.sensitiveKeys);
  const bounded = (text: string, maxBytes: number) => redactBounded(redactor, text, maxBytes);

  const params = (record: ToolCallRecord): unknown => {
    const redacted = redactor.value(record.arguments, keysFor(record.sensitiveKeys), { maxTextBytes: 2 * maxParamsBytes });
    const json = JSON.stringify(redacted) ?? 'null';
    return json.length > maxParamsBytes && utf8ByteLength(json) > maxParamsBytes ? truncateUtf8(json, maxParamsBytes) : redacted;
  };

  const logCall = (record: ToolCallRecord, stepIndex: number | null) => {
    const result = record.result;
    const level = result.status === 'success' ? 'debug' : logLevelOf(result.error.type);
    if (!logger.isLevelEnabled(level)) return;
    const toolName = displayToolName(record, redactor);
    const line: Record<string, unknown> = {
      event: 'tool_call',
      trace_id: record.traceId,
      call_id: sinkId(redactor, record.callId),
      session_id: sinkId(redactor, record.sessionId),
      run_id: record.runId === undefined ? null : sinkId(redactor, record.runId),
      ...(stepIndex !== null ? { step_index: stepIndex } : {}),
      tool_name: toolName,
      ...(record.requestedName !== record.toolName && toolName === record.toolName
        ? { requested_name: bounded(record.requestedName, MAX_TOOL_NAME_BYTES) }
        : {}),
      status: result.status,
      duration_ms: record.durationMs,
      attempts: record.attempts.length,
      retries: Math.max(0, record.attempts.length - 1),
      attempt_outcomes: record.attempts.map((attempt) => attempt.outcome),
      normalisations: record.normalisations.slice(0, MAX_LIST_ITEMS).map((entry) => bounded(entry, MAX_EVENT_TEXT_BYTES)),
      timestamp: new Date(record.startedAt).toISOString(),
      params: params(record),
    };
    const failure = toToolFailureLogRecord(record, stepIndex, redactor);
    if (failure && result.status === 'failed') {
      line.error_type = failure.type;
      line.error_code = failure.code;
      line.retryable = result.error.retryable;
      line.message = failure.message;
      line.fields = failure.fields;
      if (record.error) {
        line.developer = {
          kind: record.error.kind,
          status: record.error.status,
          ...(record.error.name !== undefined ? { name: bounded(record.error.name, MAX_TOOL_NAME_BYTES) } : {}),
          message: bounded(record.error.message, maxErrorBytes),
          ...(record.error.stack !== undefined ? { stack: bounded(record.error.stack, maxStackBytes) } : {}),
          causes: record.error.causes.slice(0, MAX_LIST_ITEMS).map((cause) => bounded(cause, maxErrorBytes)),
          ...(record.error.causes.length > MAX_LIST_ITEMS ? { causes_omitted: record.error.causes.length - MAX_LIST_ITEMS } : {}),
          misconfiguration: record.misconfiguration,
        };
      }
    }
    logger[level](line, `${toolName} ${result.status}${result.status === 'failed' ? `: ${result.error.code}` : ''}`);
  };

  const logWorkerEvent = (event: WorkerEvent) => {
    const level = event.type === 'dead-letter-full' ? 'error' : 'info';
    if (!logger.isLevelEnabled(level)) return;
    const { type, at, ...rest } = event;
    const fields = Object.fromEntries(
      Object.entries(rest).map(([key, value]) => [
        key,
        typeof value === 'string'
          ? bounded(value, MAX_EVENT_TEXT_BYTES)
          : typeof value === 'object' && value !== null
            ? redactor.value(value, undefined, { maxTextBytes: 4 * MAX_EVENT_TEXT_BYTES })
            : value,
      ]),
    );
    logger[level]({ event: 'worker_event', type, ...fields, timestamp: new Date(at).toISOString() }, `worker ${type}`);
  };

  const observe = (observation: ToolrunObservation): void => {
    try {
      switch (observation.kind) {
        case 'tool-call':
          logCall(observation.record, observation.stepIndex);
          return;
        case 'recovery': {
          if (!logger.isLevelEnabled('info')) return;
          const record = toEventLogRecord(observation, redactor);
          if (record.kind !== 'recovery') return;
          logger.info(
            {
              event: 'tool_recovery',
              trace_id: observation.traceId,
              run_id: record.runId,
              session_id: record.sessionId,
              tool_name: record.toolName,
              recovered_with: record.recoveredWith,
              failed_at_step: record.failedAtStep,
              recovered_at_step: record.recoveredAtStep,
              rounds: record.rounds,
              failures: record.failures,
              timestamp: record.at,
            },
            `${record.toolName} recovered after ${record.rounds} step(s)`,
          );
          return;
        }
        case 'breaker-open': {
          if (!logger.isLevelEnabled('warn')) return;
          const record = toEventLogRecord(observation, redactor);
          if (record.kind !== 'breaker-open') return;
          logger.warn(
            {
              event: 'breaker_open',
              tool_name: record.toolName,
              scope: record.scope,
              run_id: record.runId,
              session_id: record.sessionId,
              timestamp: record.at,
            },
            `${record.scope} breaker open for ${record.toolName}`,
          );
          return;
        }
        case 'dead-letter-add':
          if (!logger.isLevelEnabled('warn')) return;
          logger.warn(
            {
              event: 'dead_letter_add',
              queue: observation.queue,
              reason: bounded(observation.reason, MAX_EVENT_TEXT_BYTES),
              tool_name: observation.toolName === null ? null : bounded(observation.toolName, MAX_TOOL_NAME_BYTES),
              timestamp: new Date(observation.at).toISOString(),
            },
            `${observation.queue} dead-letter entry added`,
          );
          return;
        case 'worker-event':
          logWorkerEvent(observation.event);
          return;
        case 'run-end':
          return;
        default: {
          const unreachable: never = observation;
          return unreachable;
        }
      }
    } catch {
      // logging must never break a call or a run
    }
  };

  return {
    observe,
    onCallEnd: (record) => observe({ kind: 'tool-call', record, stepIndex: null }),
    logger,
  };
}
