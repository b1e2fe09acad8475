import type { Logger } from 'pino';
import type { Meter, Tracer } from '@opentelemetry/api';
import type { AgentRunHooks } from '../agent/run-agent.ts';
import type { Clock } from '../ground/ports/clock.ts';
import type { FailureLog, FailureLogRecord } from '../ground/ports/failure-log.ts';
import { createRedactor, type Redactor } from '../core/redact.ts';
import type { ToolCallRecord } from '../core/tool-call-record.ts';
import type { WorkerEvent } from '../worker/worker-events.ts';
import { createFailureRecorder, type FailureRecorder } from './failure-recorder.ts';
import type { ToolrunObservation } from './observation.ts';
import { createRunTracker } from './run-tracker.ts';
import { createSessionBreakerWatch } from './session-breaker-watch.ts';
import { createToolCallLogger, type ToolCallLogger } from './tool-call-logger.ts';
import { createToolCallTracer, type ToolCallTracer } from './tool-call-tracer.ts';
import { createToolrunMetrics, type DeadLetterQueuesToObserve, type ToolrunMetrics } from './toolrun-metrics.ts';

/** Options of {@link createObservability}. Each channel is on by default; `false` turns it off. */
export interface ObservabilityOptions {
  /** A pino logger for the per-call lines. @defaultValue `pino({ name: 'toolrun' })` */
  logger?: Logger | false;
  /** @defaultValue `trace.getTracer('toolrun')` (no-op until an OpenTelemetry SDK is registered) */
  tracer?: Tracer | false;
  /** @defaultValue `metrics.getMeter('toolrun')` (no-op until an OpenTelemetry SDK is registered) */
  meter?: Meter | false;
  /**
   * Instruments to feed instead of creating them on `meter` — e.g. a `MetricsServer`'s `metrics`, so
   * a worker serving `/metrics` in-process registers each instrument once.
   */
  metrics?: ToolrunMetrics;
  /** Records failures for `toolrun report`. @defaultValue none */
  failureLog?: FailureLog;
  /** The one redactor of logs, spans and failure records: pass the runtime's. @defaultValue `createRedactor()` */
  redactor?: Redactor;
  /** Argument keys redacted for every tool, on top of each tool's `sensitive` keys. */
  sensitiveKeys?: readonly string[];
  /** The DLQs behind the depth and oldest-age gauges. */
  stores?: DeadLetterQueuesToObserve;
  /** Clock of the oldest-entry age. @defaultValue the system clock */
  clock?: Clock;
  /** Record redacted tool arguments / results on spans. @defaultValue false */
  captureArguments?: boolean;
  captureResults?: boolean;
  /** `gen_ai.agent.name` of run spans. */
  agentName?: string;
  /** A failure record that could not be appended. */
  onFailureLogError?: (error: unknown, record: FailureLogRecord) => void;
}

/**
 * Logs, traces, metrics and the failure log of toolrun, wired together. Plug it in three places:
 *
 * ```ts
 * const observability = createObservability({ failureLog, stores });
 * await handleMessage(message, {
 *   model, tools, queues, stores,
 *   runtimeOptions: { onCallEnd: observability.onCallEnd, failurePatterns },
 *   runHooks: observability.runHooks,
 *   onEvent: observability.onEvent,
 * });
 * ```
 *
 * `onCallEnd` is the runtime's developer channel; `runHooks` gives run spans, step indexes and
 * recovery rounds (without them calls are still logged, traced and counted); `onEvent` takes the
 * worker's events (shared-breaker alerts, dead-letter entries). Nothing here throws into a call or a run.
 */
export interface Observability {
  readonly onCallEnd: (record: ToolCallRecord) => void;
  readonly runHooks: AgentRunHooks;
  readonly onEvent: (event: WorkerEvent) => void;
  /** Waits for failure-log appends in flight. */
  flush(): Promise<void>;
  readonly logger: ToolCallLogger | undefined;
  readonly tracer: ToolCallTracer | undefined;
  readonly metrics: ToolrunMetrics | undefined;
  readonly recorder: FailureRecorder | undefined;
}

/** Creates an {@link Observability}. */
export function createObservability(options: ObservabilityOptions = {}): Observability {
  const redactor = options.redactor ?? createRedactor();
  const shared = { redactor, ...(options.sensitiveKeys ? { sensitiveKeys: options.sensitiveKeys } : {}) };
  const logger = options.logger === false ? undefined : createToolCallLogger({ ...shared, ...(options.logger ? { logger: options.logger } : {}) });
  const tracer =
    options.tracer === false
      ? undefined
      : createToolCallTracer({
          ...shared,
          ...(options.tracer ? { tracer: options.tracer } : {}),
          ...(options.captureArguments !== undefined ? { captureArguments: options.captureArguments } : {}),
          ...(options.captureResults !== undefined ? { captureResults: options.captureResults } : {}),
          ...(options.agentName !== undefined ? { agentName: options.agentName } : {}),
        });
  const metrics =
    options.metrics ??
    (options.meter === false
      ? undefined
      : createToolrunMetrics({
          redactor,
          ...(options.meter ? { meter: options.meter } : {}),
          ...(options.stores ? { stores: options.stores } : {}),
          ...(options.clock ? { clock: options.clock } : {}),
        }));
  const recorder = options.failureLog
    ? createFailureRecorder({ failureLog: options.failureLog, redactor, ...(options.onFailureLogError ? { onError: options.onFailureLogError } : {}) })
    : undefined;
  const observers = [logger, tracer, metrics, recorder].filter((observer) => observer !== undefined);
  const runs = createRunTracker();
  const breakers = createSessionBreakerWatch();

  const emit = (observation: ToolrunObservation) => {
    for (const observer of observers) observer.observe(observation);
  };

  const onCallEnd = (record: ToolCallRecord): void => {
    try {
      const { stepIndex, recovery } = runs.observeCall(record);
      emit({ kind: 'tool-call', record, stepIndex });
      if (recovery && record.runId !== undefined) {
        const at = record.startedAt + record.durationMs;
        emit({ kind: 'recovery', runId: record.runId, sessionId: record.sessionId, traceId: record.traceId, recoveredWith: record.toolName, ...recovery, at });
      }
      if (breakers.observeCall(record)) {
        const at = record.startedAt + record.durationMs;
        emit({ kind: 'breaker-open', toolName: record.toolName, scope: 'session', runId: record.runId ?? null, sessionId: record.sessionId, at });
      }
    } catch {
      // observability must never break a call
    }
  };

  const runHooks: AgentRunHooks = {
    onRunStart(info) {
      runs.start(info);
      return tracer?.runHooks.onRunStart(info);
    },
    onStepStart(info) {
      runs.step(info.runId, info.stepIndex);
    },
    onRunEnd(result, info) {
      const sessionId = runs.end(result.runId) ?? null;
      const failure = result.failure;
      if (failure?.reason === 'session-breaker-open' && sessionId !== null && breakers.observeRunEnd(sessionId, failure.toolName)) {
        emit({ kind: 'breaker-open', toolName: failure.toolName, scope: 'session', runId: result.runId, sessionId, at: info.at });
      }
      emit({ kind: 'run-end', result, sessionId, at: info.at });
      tracer?.runHooks.onRunEnd(result, info);
    },
  };

  const onEvent = (event: WorkerEvent): void => {
    try {
      if (event.type === 'breaker-open') {
        emit({ kind: 'breaker-open', toolName: event.toolName, scope: 'shared', runId: null, sessionId: null, at: event.at });
      } else if (event.type === 'dead-letter-add') {
        emit({ kind: 'dead-letter-add', queue: event.queue, reason: event.reason, toolName: event.toolName ?? null, at: event.at });
      } else {
        emit({ kind: 'worker-event', event });
      }
    } catch {
      // observability must never break the worker
    }
  };

  return { onCallEnd, runHooks, onEvent, flush: async () => recorder?.flush(), logger, tracer, metrics, recorder };
}
