/**
 * toolrun — make the tool calls of LLM agents fail well.
 *
 * The root entry: the tool runtime, the agent loop, the worker and its dead-letter queues, the
 * composition root and the in-memory stores. It runs on any JavaScript runtime. Backends and
 * integrations are subpaths (`toolrun/sqlite`, `toolrun/postgres`, `toolrun/redis`,
 * `toolrun/bullmq`, `toolrun/otel`, `toolrun/openai`, `toolrun/testing`).
 *
 * Named exports only: every name here is public API, recorded in `api/toolrun.api.md`.
 *
 * @packageDocumentation
 */

// The composition root.
export { createToolrun, type Toolrun, type ToolrunOptions } from './worker/create-toolrun.ts';
export type { RunHooks, RunLimits, RunModelOptions, RunRuntimeOptions } from './worker/run-options.ts';

// Tools and the tool runtime.
export { defineTool, type InferArgs, type ToolContext, type ToolDefinition } from './core/define-tool.ts';
export { createToolRuntime, type ToolRuntime, type ToolRuntimeOptions } from './core/create-tool-runtime.ts';
export type { ToolRunInput } from './core/tool-run-input.ts';
export type { PlainToolFunction, RegisteredTool, ToolSpec, ToolsInput } from './core/tool-registry.ts';
export type { AttemptRecord, ToolCallRecord } from './core/tool-call-record.ts';
export { formatToolResult } from './core/format-tool-result.ts';

// Durable engines: what a failure asks of the engine (return to the model, retry after, dead-letter).
export {
  DEFAULT_TOOL_RETRY_BUDGET,
  toRetryDirective,
  type RetryBudgetState,
  type RetryDirective,
  type RetryDirectiveCall,
  type ToolDeadLetterReason,
} from './core/retry-directive.ts';

// The envelope and the failure taxonomy.
export type { EnvelopeBase, FieldError, ToolFailure, ToolFailureError, ToolResult, ToolSuccess, ToolWarning } from './ground/tool-result.ts';
export type { FailureCause, FailureKind } from './ground/failure-cause.ts';
export { FAILURE_CODES, type FailureCode, type FailureType } from './ground/failure-codes.ts';

// Errors: what a tool or a model throws, and what toolrun throws for programmer errors.
export { ModelResponseError, ToolError, type ToolErrorOptions } from './core/tool-error.ts';
export type { ToolErrorKind } from './ground/failure-cause.ts';
export { ToolrunError, type ToolrunErrorCode } from './ground/toolrun-error.ts';

// Redaction and failure patterns.
export { createRedactor, type Redactor, type RedactorOptions, type RedactValueLimits } from './core/redact.ts';
export type { SecretFamily } from './core/redact-scan.ts';
export {
  createFailurePatternLibrary,
  DEFAULT_FAILURE_PATTERNS,
  type FailurePattern,
  type FailurePatternLibrary,
  type FailureSignature,
  type FailureSignatureInput,
  type FailureStrategy,
} from './core/failure-patterns.ts';

// Schema validation.
export { createAjvSchemaValidator, type AjvInstance, type AjvSchemaValidatorOptions } from './schema/ajv-schema-validator.ts';
export type { JsonSchemaDialect } from './schema/json-schema-dialect.ts';
export type { StandardSchemaToJsonSchema } from './schema/standard-schema.ts';

// Policies: retries and circuit breakers.
export type { BackoffOptions } from './policies/backoff.ts';
export type { RetryPolicy, RetryPolicyOverride } from './policies/retry-policy.ts';
export type { SessionBreakerOptions, SessionBreakers, SessionBreakerState, SessionFailure } from './policies/session-breaker.ts';
export {
  createSharedBreaker,
  type BreakerState,
  type SharedBreaker,
  type SharedBreakerAcquisition,
  type SharedBreakerEvent,
  type SharedBreakerOptions,
  type SharedBreakerRecord,
} from './policies/shared-breaker.ts';

// The agent loop and the model.
export { runAgent, type AgentPersistence, type AgentRunHooks, type AgentRunResult, type AgentRunStatus, type RunAgentOptions } from './agent/run-agent.ts';
export { DEFAULT_CHECKPOINT_RETRY, type CheckpointRetryOptions } from './policies/retry-durable-write.ts';
export type { ChatMessage, Model, ModelRequest, ModelResponse, ModelToolCall, TokenUsage } from './agent/messages.ts';
export type { ModelFailureInfo, ModelFailureReason, ModelPolicyOptions } from './agent/model-policy.ts';
export type { ToolFailureInfo } from './agent/run-state.ts';

// The worker: messages, the two dead-letter queues, replay and drain.
export { handleMessage } from './worker/handle-message.ts';
export type { HandleMessageOptions, HandleMessageResult, RunMessage } from './worker/handle-message-options.ts';
export { RUN_REQUEST_SCHEMA, type RunRequest } from './worker/message-schema.ts';
export { replayToolFailure, type ReplayOptions, type ReplayResult } from './worker/replay-tool-failure.ts';
export type { ReplayStatus } from './worker/replay-status.ts';
export { replayDeadLetter, type ReplayDeadLetterOptions, type ReplayDeadLetterResult } from './worker/replay-dead-letter.ts';
export { drainToolDlq, type DrainOptions, type DrainReport } from './worker/drain-tool-dlq.ts';
// SDK hosts and durable engines: their runs dead-letter into the tool DLQ and replay in their own loop.
export { hostOfEntry } from './worker/host-entry.ts';
export {
  createHostRunDeadLetter,
  type HostConversation,
  type HostDeadLetterOptions,
  type HostRunDeadLetter,
  type HostRunDeadLetterOptions,
  type HostSettledCall,
} from './worker/host-run-dead-letter.ts';
export type {
  HostContinuation,
  HostContinueInput,
  HostContinueResult,
  HostRegistration,
  HostRegistry,
  HostReplayContext,
  HostReplayer,
  HostReplayOutcome,
  HostToolCall,
} from './worker/host-continuation.ts';
export { replayHostRun, type HostRunReplayOptions, type HostRunReplayResult } from './worker/replay-host-run.ts';
export { createWorker, type Worker } from './worker/create-worker.ts';
export type { WorkerOptions } from './worker/worker-options.ts';
export type { WorkerEvent } from './worker/worker-events.ts';
export type {
  DeadLetterSink,
  MessageFailureCode,
  MessageFailureEntry,
  ModelFailureEntry,
  ResumableEntry,
  RunFailureEntry,
  ToolFailureEntry,
} from './ground/dead-letter-entries.ts';
export type { ToolArgsPreview } from './worker/build-tool-failure-entry.ts';
export {
  readDeadLetterMetrics,
  type DeadLetterMetrics,
  type DeadLetterQueueMetrics,
  type MessageDeadLetterMetrics,
  type ReadDeadLetterMetricsOptions,
  type ToolDeadLetterKind,
  type ToolDeadLetterMetrics,
} from './worker/dead-letter-metrics.ts';
export { defineConfig, type ToolrunConfig, type ToolrunConfigContext, type ToolrunConfigFactory, type ToolrunConfigInput } from './worker/worker-config.ts';

// Ports: what the core depends on, and the in-memory stores.
export type { Clock, RandomSource } from './ground/ports/clock.ts';
export type { CompiledToolSchema, JsonSchema, SchemaValidator, ToolSchemaInput, ValidateOptions, ValidationResult } from './ground/ports/schema-validator.ts';
export type {
  BreakerStateStore,
  ClaimInfo,
  ClaimStore,
  ConversationStore,
  DeadLetterCauseCount,
  DeadLetterFilter,
  DeadLetterGroupCount,
  DeadLetterListOptions,
  DeadLetterQueue,
  DeadLetterRecord,
  IdempotencyLedger,
  KeyedPushResult,
  QueueDelivery,
  ReleaseOptions,
  RunQueue,
  RunStore,
  Stores,
} from './ground/ports/stores.ts';
export type { CommittedRun, JsonValue, OpenedRun, RecordedCall, RunCheckpoint, RunClaim, RunJournal, RunStep } from './ground/ports/run-journal.ts';
export { createMemoryStores, type MemoryStoresOptions } from './stores/memory/memory-stores.ts';
export { createStoreJournal, type JournalStores } from './stores/store-journal.ts';
