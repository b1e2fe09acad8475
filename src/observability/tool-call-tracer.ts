import { context, isSpanContextValid, SpanKind, SpanStatusCode, trace, type Attributes, type HrTime, type Span, type Tracer } from '@opentelemetry/api';
import type { AgentRunHooks, AgentRunResult } from '../agent/run-agent.ts';
import { redactBounded } from '../core/build-failure.ts';
import { truncateUtf8 } from '../ground/utf8.ts';
import { createRedactor, type Redactor } from '../core/redact.ts';
import { redactFieldErrors } from '../core/redact-fields.ts';
import type { ToolCallRecord } from '../core/tool-call-record.ts';
import type { ToolFailureError } from '../ground/tool-result.ts';
import type { GEN_AI_TOOL_CALL_ID, GEN_AI_TOOL_NAME, GEN_AI_TOOL_TYPE, TOOLRUN_ATTEMPTS } from './attribute-names.ts';
import {
  ERROR_TYPE,
  GEN_AI_AGENT_NAME,
  GEN_AI_CONVERSATION_ID,
  GEN_AI_OPERATION_NAME,
  GEN_AI_TOOL_CALL_ARGUMENTS,
  GEN_AI_TOOL_CALL_RESULT,
  GEN_AI_USAGE_INPUT_TOKENS,
  GEN_AI_USAGE_OUTPUT_TOKENS,
  TOOLRUN_ATTEMPT,
  TOOLRUN_FAILURE_TYPE,
  TOOLRUN_RETRY_DELAY_MS,
  TOOLRUN_RETRY_REASON,
  TOOLRUN_RUN_FAILURE_REASON,
  TOOLRUN_RUN_FAILURE_TOOL,
  TOOLRUN_RUN_ID,
  TOOLRUN_RUN_RESUMED,
  TOOLRUN_RUN_STATUS,
  TOOLRUN_RUN_STEPS,
} from './attribute-names.ts';
import { displayToolName, MAX_TOOL_NAME_BYTES, sinkId } from './failure-record.ts';
import type { ToolrunObservation, ToolrunObserver } from './observation.ts';
import { createSensitiveKeyCombiner } from './sensitive-keys.ts';

/** Options of {@link createToolCallTracer}. */
export interface ToolCallTracerOptions {
  /** @defaultValue `trace.getTracer('toolrun')` (a no-op until an SDK is registered) */
  tracer?: Tracer;
  /** Redacts every text attribute. Pass the runtime's (`runtime.redactor`). @defaultValue `createRedactor()` */
  redactor?: Redactor;
  /** Argument keys redacted for every tool, on top of each tool's `sensitive` keys. */
  sensitiveKeys?: readonly string[];
  /** Record `gen_ai.tool.call.arguments` (redacted JSON). @defaultValue false */
  captureArguments?: boolean;
  /** Record `gen_ai.tool.call.result` (redacted JSON of `data`, or of `error` on failure). @defaultValue false */
  captureResults?: boolean;
  /** Bound of a captured JSON attribute, in bytes. @defaultValue 4096 */
  maxAttributeBytes?: number;
  /** `gen_ai.agent.name` of run spans (and their name, `invoke_agent {name}`). @defaultValue none */
  agentName?: string;
  /** Run spans kept open at once; beyond it the oldest is ended. @defaultValue 10_000 */
  maxOpenRuns?: number;
}

/**
 * Traces tool calls and agent runs with the OpenTelemetry GenAI semantic conventions:
 * - one `execute_tool {gen_ai.tool.name}` span (kind INTERNAL) per call, with
 *   `gen_ai.operation.name = execute_tool`, `gen_ai.tool.name`, `gen_ai.tool.call.id`,
 *   `gen_ai.tool.type = function`, `toolrun.attempts`; on failure `error.type` = the failure code,
 *   `toolrun.failure.type` and status ERROR; one `retry` event per retried attempt (at the start of
 *   the retry: `toolrun.attempt`, `error.type` of the attempt before, `toolrun.retry.reason`,
 *   `toolrun.retry.delay_ms`); arguments and results only when opted in, redacted and bounded;
 * - one `invoke_agent` span per run invocation, the parent of its tool spans, ended with the run's
 *   status (`error.type` = the status and status ERROR unless `completed`) and token usage.
 *
 * Tool spans are made when the call ends, with the call's own start and end times (on the runtime's
 * clock) and the run span as explicit parent — so they nest correctly with no context manager and
 * cost nothing while the tool runs. The run's trace id becomes the trace id of every tool call of
 * the run (via `runHooks.onRunStart`), so log lines and envelopes join the trace. Never throws.
 */
export interface ToolCallTracer extends ToolrunObserver {
  /** Pass as the runtime's `onCallEnd` when used alone. */
  onCallEnd(record: ToolCallRecord): void;
  /** For `runAgent({ hooks })` / `handleMessage({ runHooks })`: the run spans. */
  readonly runHooks: Required<Pick<AgentRunHooks, 'onRunStart' | 'onRunEnd'>>;
}

/**
 * Epoch milliseconds as an OpenTelemetry `HrTime` (`[seconds, nanoseconds]`), computed as the SDK
 * computes it from a `Date` or a number: the same span times, without a `Date` per timestamp (and a
 * number is not ambiguous with a `performance.now()` reading, as a bare number would be to the SDK).
 */
function hrTimeOf(epochMs: number): HrTime {
  return [Math.trunc(epochMs / 1000), Math.round((epochMs % 1000) * 1e6)];
}

/** Creates a {@link ToolCallTracer}. */
export function createToolCallTracer(options: ToolCallTracerOptions = {}): ToolCallTracer {
  const tracer = options.tracer ?? trace.getTracer('toolrun');
  const redactor = options.redactor ?? createRedactor();
  const maxAttributeBytes = options.maxAttributeBytes ?? 4096;
  const maxOpenRuns = options.maxOpenRuns ?? 10_000;
  const keysFor = createSensitiveKeyCombiner(options.sensitiveKeys);
  const runSpans = new Map<string, Span>();

  // Redacted with a text budget of twice the bound (so the scan is bounded too), then cut.
  const json = (value: unknown, keys: readonly string[]): string =>
    truncateUtf8(JSON.stringify(redactor.value(value, keysFor(keys), { maxTextBytes: 2 * maxAttributeBytes })) ?? 'null', maxAttributeBytes);
  const name = (text: string) => redactBounded(redactor, text, MAX_TOOL_NAME_BYTES);
  // A failure's field errors with the received values of sensitive fields masked (in `message` and `detail` too).
  const withRedactedFields = (error: ToolFailureError, keys: readonly string[]): unknown => {
    if (!error.fields || error.fields.length === 0) return error;
    const { fields, maskText } = redactFieldErrors(redactor, error.fields, { extraKeys: keysFor(keys), maxBytes: 512 });
    return { ...error, message: maskText(error.message), detail: maskText(error.detail), fields };
  };

  const endRunSpan = (runId: string, result: AgentRunResult | undefined, at: number) => {
    const span = runSpans.get(runId);
    if (!span) return;
    runSpans.delete(runId);
    if (result) {
      span.setAttributes({
        [TOOLRUN_RUN_STATUS]: result.status,
        [TOOLRUN_RUN_STEPS]: result.steps,
        [GEN_AI_USAGE_INPUT_TOKENS]: result.tokensSpent.input,
        [GEN_AI_USAGE_OUTPUT_TOKENS]: result.tokensSpent.output,
        ...(result.failure ? { [TOOLRUN_RUN_FAILURE_TOOL]: name(result.failure.toolName), [TOOLRUN_RUN_FAILURE_REASON]: name(result.failure.reason) } : {}),
      });
      if (result.status !== 'completed') {
        span.setAttribute(ERROR_TYPE, result.status);
        span.setStatus({ code: SpanStatusCode.ERROR, message: result.status });
      }
    } else {
      span.setAttribute(TOOLRUN_RUN_STATUS, 'abandoned');
    }
    span.end(hrTimeOf(at));
  };

  const runHooks: ToolCallTracer['runHooks'] = {
    onRunStart(info) {
      try {
        endRunSpan(info.runId, undefined, info.at);
        const span = tracer.startSpan(
          options.agentName === undefined ? 'invoke_agent' : `invoke_agent ${options.agentName}`,
          {
            kind: SpanKind.INTERNAL,
            startTime: hrTimeOf(info.at),
            attributes: {
              [GEN_AI_OPERATION_NAME]: 'invoke_agent',
              ...(options.agentName !== undefined ? { [GEN_AI_AGENT_NAME]: options.agentName } : {}),
              [GEN_AI_CONVERSATION_ID]: sinkId(redactor, info.sessionId),
              [TOOLRUN_RUN_ID]: sinkId(redactor, info.runId),
              [TOOLRUN_RUN_RESUMED]: info.resumed,
            },
          },
          context.active(),
        );
        runSpans.set(info.runId, span);
        if (runSpans.size > maxOpenRuns) {
          const oldest = runSpans.keys().next().value;
          if (oldest !== undefined) endRunSpan(oldest, undefined, info.at);
        }
        const spanContext = span.spanContext();
        return isSpanContextValid(spanContext) ? { traceId: spanContext.traceId } : undefined;
      } catch {
        return undefined;
      }
    },
    onRunEnd(result, info) {
      try {
        endRunSpan(result.runId, result, info.at);
      } catch {
        // tracing must never break a run
      }
    },
  };

  // Span names are few (one per tool): built once, not per call.
  const spanNames = new Map<string, string>();
  const spanNameOf = (toolName: string): string => {
    let spanName = spanNames.get(toolName);
    if (spanName === undefined) {
      spanName = `execute_tool ${toolName}`;
      if (spanNames.size < 10_000) spanNames.set(toolName, spanName);
    }
    return spanName;
  };

  const traceCall = (record: ToolCallRecord) => {
    const result = record.result;
    const toolName = displayToolName(record, redactor);
    // Literal keys (checked against the names below): an object literal with computed keys is built
    // property by property, one with literal keys from a template.
    const attributes: Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': toolName,
      'gen_ai.tool.call.id': sinkId(redactor, record.callId),
      'gen_ai.tool.type': 'function',
      'toolrun.attempts': record.attempts.length,
    } satisfies Record<
      typeof GEN_AI_OPERATION_NAME | typeof GEN_AI_TOOL_NAME | typeof GEN_AI_TOOL_CALL_ID | typeof GEN_AI_TOOL_TYPE | typeof TOOLRUN_ATTEMPTS,
      string | number
    >;
    if (result.status === 'failed') {
      attributes[ERROR_TYPE] = result.error.code;
      attributes[TOOLRUN_FAILURE_TYPE] = result.error.type;
    }
    if (options.captureArguments) attributes[GEN_AI_TOOL_CALL_ARGUMENTS] = json(record.arguments, record.sensitiveKeys);
    if (options.captureResults)
      attributes[GEN_AI_TOOL_CALL_RESULT] = json(
        result.status === 'success' ? result.data : withRedactedFields(result.error, record.sensitiveKeys),
        record.sensitiveKeys,
      );

    const runSpan = record.runId === undefined ? undefined : runSpans.get(record.runId);
    const parent = runSpan ? trace.setSpan(context.active(), runSpan) : context.active();
    const span = tracer.startSpan(spanNameOf(toolName), { kind: SpanKind.INTERNAL, startTime: hrTimeOf(record.startedAt), attributes }, parent);
    // One retry event per attempt after the first, at its start: the start of the call plus every
    // earlier attempt and the wait after it (no read before the first attempt: index 0 has no previous).
    const attempts = record.attempts;
    let attemptStartsAt = record.startedAt;
    for (let index = 1; index < attempts.length; index++) {
      const previous = attempts[index - 1]!;
      attemptStartsAt += previous.durationMs + (previous.delayAfterMs ?? 0);
      span.addEvent(
        'retry',
        {
          [TOOLRUN_ATTEMPT]: attempts[index]!.attempt,
          [ERROR_TYPE]: name(previous.outcome),
          ...(previous.retryReason !== undefined ? { [TOOLRUN_RETRY_REASON]: name(previous.retryReason) } : {}),
          [TOOLRUN_RETRY_DELAY_MS]: previous.delayAfterMs ?? 0,
        },
        hrTimeOf(attemptStartsAt),
      );
    }
    if (result.status === 'failed') span.setStatus({ code: SpanStatusCode.ERROR, message: redactBounded(redactor, result.error.message, 256) });
    span.end(hrTimeOf(record.startedAt + record.durationMs));
  };

  const observe = (observation: ToolrunObservation): void => {
    if (observation.kind !== 'tool-call') return;
    try {
      traceCall(observation.record);
    } catch {
      // tracing must never break a call
    }
  };

  return { observe, onCallEnd: (record) => observe({ kind: 'tool-call', record, stepIndex: null }), runHooks };
}
