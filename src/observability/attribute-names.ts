/**
 * Attribute and instrument names: the OpenTelemetry GenAI semantic conventions where they define
 * one, `toolrun.*` otherwise. Kept here so spans, metrics and tests agree.
 *
 * @see https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/ (execute_tool, invoke_agent)
 */

/** `gen_ai.operation.name`: `execute_tool` or `invoke_agent`. */
export const GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
/** `gen_ai.tool.name`: the registered tool (or the redacted requested name of an unknown one). */
export const GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
/** `gen_ai.tool.call.id`: the model's call id. */
export const GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id';
/** `function` for every toolrun tool. */
export const GEN_AI_TOOL_TYPE = 'gen_ai.tool.type';
/** Opt-in: the call's arguments as JSON (redacted). */
export const GEN_AI_TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments';
/** Opt-in: the call's result as JSON (redacted). */
export const GEN_AI_TOOL_CALL_RESULT = 'gen_ai.tool.call.result';
/** `gen_ai.agent.name` of run spans. */
export const GEN_AI_AGENT_NAME = 'gen_ai.agent.name';
/** `gen_ai.conversation.id`: the session id of the run. */
export const GEN_AI_CONVERSATION_ID = 'gen_ai.conversation.id';
/** `gen_ai.usage.input_tokens` spent by the run. */
export const GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
/** `gen_ai.usage.output_tokens` spent by the run. */
export const GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
/** The failure code (low cardinality), or the run status of a run that did not complete. */
export const ERROR_TYPE = 'error.type';

/** The failure type (`invalid_parameter`, `environment`, `permission`, `logic`, `circuit_breaker`). */
export const TOOLRUN_FAILURE_TYPE = 'toolrun.failure.type';
/** `success` or `failed`. */
export const TOOLRUN_STATUS = 'toolrun.status';
/** Executions of the tool in the call. */
export const TOOLRUN_ATTEMPTS = 'toolrun.attempts';
/** The 1-based attempt a retry event starts. */
export const TOOLRUN_ATTEMPT = 'toolrun.attempt';
/** Why the runtime retried (`backoff`, `retry-after`, `auth-refreshed`). */
export const TOOLRUN_RETRY_REASON = 'toolrun.retry.reason';
/** The wait before the retry, in milliseconds. */
export const TOOLRUN_RETRY_DELAY_MS = 'toolrun.retry.delay_ms';
/** The agent run id. */
export const TOOLRUN_RUN_ID = 'toolrun.run.id';
/** The run's final status (`completed`, `tool_failed`, …). */
export const TOOLRUN_RUN_STATUS = 'toolrun.run.status';
/** Steps completed in the run. */
export const TOOLRUN_RUN_STEPS = 'toolrun.run.steps';
/** The invocation resumed a checkpointed run. */
export const TOOLRUN_RUN_RESUMED = 'toolrun.run.resumed';
/** The tool a `tool_failed` run ended on. */
export const TOOLRUN_RUN_FAILURE_TOOL = 'toolrun.run.failure.tool';
/** Why in-band recovery ended (`retry-budget-exhausted`, `session-breaker-open`, …). */
export const TOOLRUN_RUN_FAILURE_REASON = 'toolrun.run.failure.reason';
/** `session` (one conversation) or `shared` (every run). */
export const TOOLRUN_BREAKER_SCOPE = 'toolrun.breaker.scope';
/** `message` or `tool`. */
export const TOOLRUN_DLQ_QUEUE = 'toolrun.dlq.queue';
/** The dead-letter reason: a rejection code or a tool-failure reason. */
export const TOOLRUN_DLQ_REASON = 'toolrun.dlq.reason';

/** Instrument names (units in the instrument, not the name, as OpenTelemetry asks). */
export const METRIC_NAMES = Object.freeze({
  /** Histogram, seconds: wall time of a tool call, retries and waits included. */
  toolDuration: 'gen_ai.execute_tool.duration',
  /** Counter: tool calls by tool, status, failure type and code. */
  toolCalls: 'toolrun.tool.calls',
  /** Counter: in-band retries by tool, reason and the failure that caused them. */
  toolRetries: 'toolrun.tool.retries',
  /** Counter: circuit breaker openings by tool and scope (`session`, `shared`). */
  breakerOpenings: 'toolrun.breaker.openings',
  /** Histogram, steps: from a failure to the next success of the run. */
  recoveryRounds: 'toolrun.recovery.rounds',
  /** Counter: agent runs by final status. */
  runs: 'toolrun.runs',
  /** Counter: dead-letter entries added, by queue and reason. */
  deadLetterAdded: 'toolrun.dlq.entries_added',
  /** Observable gauge: entries in each dead-letter queue. */
  deadLetterDepth: 'toolrun.dlq.depth',
  /** Observable gauge, seconds: age of the oldest entry of each dead-letter queue. */
  deadLetterOldestAge: 'toolrun.dlq.oldest_age',
});
