/**
 * `toolrun/otel`: observability of tool calls and agent runs — pino logs, OpenTelemetry traces
 * and metrics (`@opentelemetry/api` only; bring your own SDK), a Prometheus endpoint, the failure
 * log and the failure report of `toolrun report`. Start with {@link createObservability}.
 *
 * @packageDocumentation
 */
export { createObservability, type Observability, type ObservabilityOptions } from './create-observability.ts';
export type { ToolrunObservation, ToolrunObserver } from './observation.ts';
export { createToolCallLogger, type ToolCallLogger, type ToolCallLoggerOptions } from './tool-call-logger.ts';
export { createToolCallTracer, type ToolCallTracer, type ToolCallTracerOptions } from './tool-call-tracer.ts';
export { createToolrunMetrics, type DeadLetterQueuesToObserve, type ToolrunMetrics, type ToolrunMetricsOptions } from './toolrun-metrics.ts';
export { METRIC_NAMES } from './attribute-names.ts';
export { startMetricsServer, type MetricsServer, type MetricsServerOptions } from './metrics-server.ts';

// The failure log and the failure report.
export { createFailureRecorder, type FailureRecorder, type FailureRecorderOptions } from './failure-recorder.ts';
export type {
  BreakerOpenLogRecord,
  FailureLog,
  FailureLogField,
  FailureLogPage,
  FailureLogPageOptions,
  FailureLogRecord,
  FailureLogRecordBase,
  RecoveryLogRecord,
  ToolFailureLogRecord,
} from '../ground/ports/failure-log.ts';
export { createMemoryFailureLog, type MemoryFailureLog, type MemoryFailureLogOptions } from '../stores/memory/memory-failure-log.ts';
export {
  buildFailureReport,
  createFailureReportBuilder,
  type BuildFailureReportOptions,
  type CountShare,
  type FailureReport,
  type FailureReportBuilder,
  type FieldFailureReport,
  type PatternGroupReport,
  type ToolFailureReport,
} from './report/build-failure-report.ts';
export { formatFailureReport, type FormatFailureReportOptions } from './report/format-failure-report.ts';
export { readAllFailures, streamFailureLog } from './report/run-report-command.ts';
export { readFailureLogFile, scanFailureLogFile, type FailureLogFileContents, type FailureLogFileScan } from './report/read-failure-log-file.ts';
