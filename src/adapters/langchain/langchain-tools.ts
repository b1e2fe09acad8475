import { DynamicStructuredTool, type StructuredToolInterface } from '@langchain/core/tools';
import { ToolMessage } from '@langchain/core/messages';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import { formatToolResult } from '../../core/format-tool-result.ts';
import type { ToolFailure, ToolResult } from '../../ground/tool-result.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import { createRepeatedCalls, type RepeatedCalls } from '../repeated-calls.ts';
import { invocationRunId, type LangChainToolConfig } from './langchain-conversation.ts';
import type { LangChainDeadLetter } from './langchain-dead-letter.ts';

/** Which conversation and run a call belongs to (see `toolrunMiddleware`). */
export interface LangChainCallScope {
  /**
   * Scope of toolrun's per-session breaker and of the default idempotency key.
   * @defaultValue the LangGraph `thread_id` of the invocation, else toolrun's `'default'`
   */
  sessionId?: string;
  /**
   * toolrun's run id (`ctx.runId`, logs).
   * @defaultValue LangGraph's run id when it provides one (`executionInfo.runId`, or `configurable.run_id` as LangGraph Platform sets it), else none
   */
  runId?: string;
}

const FAILURE_BRAND = Symbol.for('toolrun.ToolCallFailedError');

/**
 * What a tool made by {@link toLangChainTools} throws when toolrun's envelope is a failure, so that
 * LangChain's callbacks (LangSmith, `streamEvents`) record the tool run as an error instead of a
 * success. `toolrunMiddleware` catches it and answers the model with a `ToolMessage` whose content
 * is the envelope and whose `status` is `'error'`; a caller invoking a tool directly can read the
 * envelope from {@link ToolCallFailedError.result}.
 *
 * Recognise it with {@link ToolCallFailedError.is} rather than `instanceof` (the brand survives two
 * bundled copies of toolrun).
 */
export class ToolCallFailedError extends Error {
  /** toolrun's failure envelope, exactly as the model gets it. */
  readonly result: ToolFailure;

  constructor(result: ToolFailure) {
    super(`${result.error.code}: ${result.error.message}`);
    this.name = 'ToolCallFailedError';
    this.result = result;
    Object.defineProperty(this, FAILURE_BRAND, { value: true });
  }

  /** Whether `value` is a {@link ToolCallFailedError} (of any copy of toolrun). */
  static is(value: unknown): value is ToolCallFailedError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[FAILURE_BRAND] === true;
  }
}

/** The envelope as the content of a tool message: its JSON, as toolrun's own agent loop sends it. */
export function envelopeContent(result: ToolResult): string {
  try {
    const json = JSON.stringify(result);
    if (typeof json === 'string') return json;
  } catch {
    // below: the tolerant serialisation, which never throws
  }
  return formatToolResult(result);
}

/**
 * The `ToolMessage` answering one call: the envelope as content and as `artifact`, `status: 'error'`
 * for a failure. `name` is the name the model used (providers pair a result with its call by it).
 */
export function envelopeToolMessage(result: ToolResult, toolCallId: string, name: string): ToolMessage {
  return new ToolMessage({
    content: envelopeContent(result),
    tool_call_id: toolCallId,
    name,
    status: result.status === 'success' ? 'success' : 'error',
    artifact: result,
  });
}

/** Whether `messages` hold a tool message answering `toolCallId` (an earlier step of this run answered it). */
function answeredIn(messages: unknown, toolCallId: string): boolean {
  if (!Array.isArray(messages)) return false;
  return (messages as unknown[]).some(
    (message) => typeof message === 'object' && message !== null && (message as { tool_call_id?: unknown }).tool_call_id === toolCallId,
  );
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** What the tools of one adapter instance share: the call ids already run, and the tool DLQ of its runs (with `deadLetter`). */
export interface ToolCalls {
  repeated: RepeatedCalls;
  deadLetter?: LangChainDeadLetter;
}

/** A JSON Schema every value satisfies: LangChain's own validation lets everything through to toolrun. */
const ACCEPT_ANYTHING: Record<string, never> = {};

/** The longest tool name written into a LangChain tool run (an unknown name is the model's text). */
const MAX_RUN_NAME_CHARS = 128;

/**
 * Builds the LangChain tool that runs one name through toolrun: `schema` is what LangChain validates
 * before calling it (and what it advertises), `name` the name toolrun resolves. Success returns the
 * envelope as content and artifact; a failure throws {@link ToolCallFailedError}.
 */
export function createToolrunTool(
  runtime: ToolRuntime,
  fields: { name: string; runName: string; description: string; schema: Record<string, unknown> },
  scope: LangChainCallScope,
  calls: ToolCalls,
): DynamicStructuredTool {
  const { repeated, deadLetter } = calls;
  return new DynamicStructuredTool({
    name: fields.runName,
    description: fields.description,
    schema: fields.schema,
    responseFormat: 'content_and_artifact',
    func: async (args: unknown, _runManager: unknown, config: unknown) => {
      const toolConfig = (config ?? {}) as LangChainToolConfig;
      const sessionId = scope.sessionId ?? stringOrUndefined(toolConfig.configurable?.thread_id) ?? stringOrUndefined(toolConfig.executionInfo?.threadId);
      const runId =
        scope.runId ??
        (deadLetter !== undefined
          ? invocationRunId(toolConfig)
          : (stringOrUndefined(toolConfig.executionInfo?.runId) ?? stringOrUndefined(toolConfig.configurable?.run_id)));
      const callId = stringOrUndefined(toolConfig.toolCall?.id);
      const messages = toolConfig.state?.messages;
      // the calls of one step answer the same AI message (the state's last); a later step's messages hold the earlier answer
      const delivery = {
        callId,
        scope: Array.isArray(messages) && messages.length > 0 ? (messages as unknown[])[messages.length - 1] : sessionId,
        answeredInConversation: (id: string) => answeredIn(messages, id),
      };
      const input = {
        name: fields.name,
        args,
        ...(callId !== undefined ? { callId } : {}),
        ...(sessionId !== undefined ? { sessionId } : {}),
        ...(runId !== undefined ? { runId } : {}),
        ...(toolConfig.signal !== undefined ? { signal: toolConfig.signal } : {}),
      };
      const result = await repeated.run(delivery, async () => {
        if (deadLetter === undefined || runId === undefined) return runtime.run(input);
        // a replay's continuation is a run of its own for the budgets (its entry is the one being replayed)
        const run = { key: `${runId}\n${stringOrUndefined(toolConfig.configurable?.toolrun_replay_of) ?? ''}`, runId };
        const record = await runtime.execute({ ...input, maxAttempts: deadLetter.maxAttemptsFor(run, runtime.getTool(fields.name)?.spec.name ?? fields.name) });
        await deadLetter.settle(run, { record, config: toolConfig, toolCallId: callId, args });
        return record.result;
      });
      if (result.status !== 'success') throw new ToolCallFailedError(result);
      return [envelopeContent(result), result];
    },
  });
}

/**
 * The name a LangChain tool run of an unregistered name is recorded under: the model's text,
 * redacted (a key pasted as a tool name stays out of traces) and bounded.
 */
export function traceableName(runtime: ToolRuntime, requested: string): string {
  const redacted = runtime.redactor.text(requested.length > 4 * MAX_RUN_NAME_CHARS ? requested.slice(0, 4 * MAX_RUN_NAME_CHARS) : requested);
  return redacted.length > MAX_RUN_NAME_CHARS ? `${redacted.slice(0, MAX_RUN_NAME_CHARS)}…` : redacted;
}

/**
 * The tool that executes `requested` — any name, registered or not — through toolrun, accepting any
 * arguments, so that toolrun (not LangChain) resolves the name and validates the arguments.
 */
export function createPassThroughTool(runtime: ToolRuntime, requested: string, scope: LangChainCallScope, calls: ToolCalls): DynamicStructuredTool {
  const registered = runtime.getTool(requested);
  return createToolrunTool(
    runtime,
    {
      name: requested,
      runName: registered ? requested : traceableName(runtime, requested),
      description: registered?.spec.description ?? '',
      schema: ACCEPT_ANYTHING,
    },
    scope,
    calls,
  );
}

/** Throws `ToolrunError('INVALID_OPTIONS')` unless `runtime` is a toolrun `ToolRuntime`. */
export function assertToolRuntime(runtime: unknown, owner: string): asserts runtime is ToolRuntime {
  const candidate = runtime as Partial<ToolRuntime> | null | undefined;
  if (typeof candidate !== 'object' || candidate === null || typeof candidate.run !== 'function' || !Array.isArray(candidate.specs))
    throw new ToolrunError('INVALID_OPTIONS', `${owner}: runtime must be a toolrun ToolRuntime (createToolRuntime(...) or createToolrun(...).runtime)`);
}

/** Throws `ToolrunError('INVALID_OPTIONS')` unless the scope's ids are absent or non-empty strings. */
export function assertScope(options: unknown, owner: string): LangChainCallScope {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null) throw new ToolrunError('INVALID_OPTIONS', `${owner}: options must be an object`);
  const { sessionId, runId } = options as Record<string, unknown>;
  for (const [key, value] of [
    ['sessionId', sessionId],
    ['runId', runId],
  ] as const) {
    if (value !== undefined && (typeof value !== 'string' || value.length === 0))
      throw new ToolrunError('INVALID_OPTIONS', `${owner}: options.${key} must be a non-empty string`);
  }
  return { ...(typeof sessionId === 'string' ? { sessionId } : {}), ...(typeof runId === 'string' ? { runId } : {}) };
}

/**
 * The runtime's tools as LangChain tools (`DynamicStructuredTool`), one per advertised tool, with
 * its name, description and JSON Schema (`runtime.specs`) — for `model.bindTools(...)` or a
 * LangGraph `ToolNode` of your own. `toolrunMiddleware` registers these itself: with `createAgent`,
 * do not pass them in `tools` as well.
 *
 * Invoking one runs the call through `runtime.run` (retries, timeouts, breakers, the envelope):
 * success returns the envelope as content and artifact; a failure throws
 * {@link ToolCallFailedError} carrying the envelope. A tool-call id delivered again in the same
 * run (twice in one step, or again once the state's messages hold its answer; without a state, in
 * the same `thread_id`) does not run the tool again: the repeat gets the first delivery's envelope
 * (the last 512 ids are remembered). Used on their own, LangChain first checks the
 * arguments against the JSON Schema with its own wording; through `toolrunMiddleware` it does not
 * (toolrun validates, and names the field).
 *
 * @param runtime - a toolrun `ToolRuntime` (`createToolRuntime(...)` or `createToolrun(...).runtime`).
 * @param options - the session and run the calls belong to (defaults: see {@link LangChainCallScope}).
 * @throws ToolrunError `INVALID_OPTIONS` when `runtime` is not a tool runtime or an id is not a non-empty string.
 */
export function toLangChainTools(runtime: ToolRuntime, options?: LangChainCallScope): StructuredToolInterface[] {
  assertToolRuntime(runtime, 'toLangChainTools');
  return buildLangChainTools(runtime, assertScope(options, 'toLangChainTools'), { repeated: createRepeatedCalls() });
}

/** The tools of {@link toLangChainTools}, sharing `calls` (with the middleware's pass-through tools). */
export function buildLangChainTools(runtime: ToolRuntime, scope: LangChainCallScope, calls: ToolCalls): DynamicStructuredTool[] {
  return runtime.specs.map((spec) =>
    createToolrunTool(
      runtime,
      { name: spec.name, runName: spec.name, description: spec.description || spec.name, schema: spec.inputSchema as Record<string, unknown> },
      scope,
      calls,
    ),
  );
}
