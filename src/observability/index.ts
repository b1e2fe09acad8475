/**
 * `toolrun/otel`: observability of tool calls and agent runs — pino logs, OpenTelemetry traces
 * and metrics (`@opentelemetry/api` only; bring your own SDK), a Prometheus endpoint, the failure
 * log and `toolrun report`. Start with {@link createObservability}.
 */
export { createObservability, type Observability, type ObservabilityOptions } from './create-observability.ts';
export { createToolCallLogger, type ToolCallLogger, type ToolCallLoggerOptions } from './tool-call-logger.ts';
export { createToolCallTracer, type ToolCallTracer, type ToolCallTracerOptions } from './tool-call-tracer.ts';
export { createToolrunMetrics, type ToolrunMetrics, type ToolrunMetricsOptions, type DeadLetterQueuesToObserve } from './toolrun-metrics.ts';
export { createFailureRecorder, type FailureRecorder, type FailureRecorderOptions } from './failure-recorder.ts';
export { startMetricsServer, type MetricsServer, type MetricsServerOptions } from './metrics-server.ts';
export type { ToolrunObservation, ToolrunObserver } from './observation.ts';
export { toToolFailureLogRecord, UNKNOWN_TOOL_LABEL } from './failure-record.ts';
export * from './attribute-names.ts';
export { buildFailureReport, redactFailureLogRecord, foldArrayIndices, REPORT_FAILURE_TYPES, type BuildFailureReportOptions, type FailureReport, type FieldFailureReport, type ToolFailureReport, type PatternGroupReport, type CountShare } from './report/build-failure-report.ts';
export { formatFailureReport, type FormatFailureReportOptions } from './report/format-failure-report.ts';
export { readFailureLogFile, failureRecordFromLogLine, type FailureLogFileContents } from './report/read-failure-log-file.ts';
export { runReportCommand, readAllFailures, type ReportCommandOptions, type ReportCommandResult } from './report/run-report-command.ts';
export { describeFieldHint, type FieldHintInput } from './report/field-hints.ts';
export { createMemoryFailureLog, type MemoryFailureLog, type MemoryFailureLogOptions } from '../stores/memory/memory-failure-log.ts';
export { createFailurePatternLibrary, DEFAULT_FAILURE_PATTERNS, type FailurePattern, type FailurePatternLibrary, type FailureSignature, type FailureStrategy } from '../core/failure-patterns.ts';
export type { FailureLog, FailureLogRecord, ToolFailureLogRecord, RecoveryLogRecord, BreakerOpenLogRecord, FailureLogField } from '../ground/ports/failure-log.ts';
