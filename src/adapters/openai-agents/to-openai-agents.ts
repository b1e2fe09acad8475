import { getCurrentSpan, tool } from '@openai/agents';
import type { CallModelInputFilter, FunctionTool, RunContext, ToolErrorFormatter, ToolErrorFormatterArgs } from '@openai/agents';
import { buildFailure, redactBounded } from '../../core/build-failure.ts';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import { createToolNameResolver } from '../../core/resolve-tool-name.ts';
import { parseArguments } from '../../schema/parse-arguments.ts';
import type { ToolFailure, ToolResult } from '../../ground/tool-result.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import { createRepeatedCalls } from '../repeated-calls.ts';
import { createOpenAiAgentsRunDeadLetter, type OpenAiAgentsDeadLetterOptions } from './openai-agents-dead-letter.ts';
import { checkDeadLetterOption } from '../check-dead-letter-option.ts';
import { toolResultJson } from '../tool-result-json.ts';

/** Options of {@link toOpenAiAgents}. */
export interface OpenAiAgentsOptions {
  /**
   * The scope of toolrun's per-session breaker for these calls: a string, or a function of the
   * SDK's run context (read per call, so one set of tools can serve many sessions).
   * @defaultValue toolrun's `'default'` session
   */
  sessionId?: string | ((runContext: RunContext<unknown>) => string | undefined);
  /**
   * The run id passed with every call (joins toolrun's log records to the SDK run), and the
   * tool-DLQ entry's `runId`. @defaultValue none; with `deadLetter`, a new `run_…` id
   */
  runId?: string;
  /**
   * Where to dead-letter what this run cannot recover in-band (toolrun's `stores`, e.g.
   * `createToolrun(...).stores`): a failure that spends the tool's retry budget across the run's
   * steps (`toolRetryBudget`, default 2 retries), a misconfiguration (a rejected credential, fed to
   * the shared breaker) or an open shared breaker becomes one resumable tool-DLQ entry for the
   * run (`originalMessageId` `openai-agents:<runId>`); the model still gets the envelope. One
   * `toOpenAiAgents` call is then one run: pass its `runConfig` to that run (its
   * `callModelInputFilter` records the conversation). Replay with `replayOpenAiAgentsDeadLetter`
   * or the `openai-agents` host of `hosts`. @defaultValue none
   */
  deadLetter?: OpenAiAgentsDeadLetterOptions;
  /**
   * Your own `callModelInputFilter`, run after toolrun's (which renames, in the history sent to the
   * model, calls of names the Chat Completions API refuses to replay).
   */
  callModelInputFilter?: CallModelInputFilter;
}

/** What {@link toOpenAiAgents} returns: the tools for `new Agent({ tools })` and the run configuration. */
export interface OpenAiAgentsTools {
  /** One non-strict function tool per toolrun tool; each hands the model's raw argument string to toolrun. */
  tools: FunctionTool[];
  /** The run id the calls carry (a new one with `deadLetter` and no `runId`). */
  runId?: string;
  /**
   * For `new Runner(runConfig)` or spread into `run(agent, input, { ...runConfig })`:
   * `toolNotFoundBehavior: 'return_error_to_model'`, a `toolErrorFormatter` that answers an unknown
   * name with toolrun's `TOOL_NOT_FOUND` envelope, and a `callModelInputFilter`.
   */
  runConfig: {
    toolNotFoundBehavior: 'return_error_to_model';
    toolErrorFormatter: ToolErrorFormatter;
    callModelInputFilter: CallModelInputFilter;
  };
}

/** A runtime, or a composition root that has one (`createToolrun(...)`). */
export type RuntimeSource = ToolRuntime | { readonly runtime: ToolRuntime };

/** The SDK's `tool()`, typed for a JSON Schema known only at run time (its types want a literal schema). */
const makeTool = tool as unknown as (options: { name: string; description: string; parameters: unknown; strict: false; execute: () => never }) => FunctionTool;

/** Function names the Chat Completions API accepts (and replays) in a conversation. */
const REPLAYABLE_FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

/** Reads the runtime out of a {@link RuntimeSource}. @throws ToolrunError `INVALID_OPTIONS` for anything else. */
export function runtimeOf(source: RuntimeSource, caller: string): ToolRuntime {
  const candidate = typeof source === 'object' && source !== null && 'runtime' in source ? source.runtime : source;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof (candidate as ToolRuntime).run !== 'function' ||
    !Array.isArray((candidate as ToolRuntime).specs)
  ) {
    throw new ToolrunError('INVALID_OPTIONS', `${caller} needs a tool runtime (createToolRuntime) or a toolrun (createToolrun), received ${describe(source)}`);
  }
  return candidate as ToolRuntime;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object without run() and specs' : `a ${typeof value}`;
}

/**
 * toolrun's tools for the OpenAI Agents SDK (`@openai/agents`): every call, an unknown name
 * included, goes through toolrun, and every failure reaches the model as toolrun's envelope in the
 * function output, with the run going on.
 *
 * - Each tool is a non-strict function tool (toolrun's JSON Schema as `parameters`) whose `invoke`
 *   receives the model's raw argument string and passes it to `runtime.run` unparsed, so malformed
 *   or truncated JSON is toolrun's `MALFORMED_ARGUMENTS` and a wrong field is named by JSON Pointer
 *   (the SDK neither parses nor validates). The call id is the SDK's `callId`, the abort signal the
 *   SDK's, the output the envelope JSON (`{"status":"success",…}` or `{"status":"failed",…}`).
 * - A call id delivered again in the same run (the same `RunContext`) does not run the tool again:
 *   the repeat gets the first delivery's envelope. These tools remember the last 512 ids.
 * - A failed envelope marks the SDK's function span as an error (`span.setError`, the SDK's own
 *   non-fatal tool error), so traces show the failure as a failure.
 * - `runConfig.toolErrorFormatter` answers a name no tool has
 *   (`toolNotFoundBehavior: 'return_error_to_model'`) with toolrun's `TOOL_NOT_FOUND` envelope: the available tools and the
 *   closest name. The SDK hands the formatter no arguments, so an equivalent spelling
 *   (`functions.get_weather`) does not run the real tool here: its envelope names the real tool and
 *   asks the model to call it by that exact name.
 * - `runConfig.callModelInputFilter` renames, in the history sent to the model, a call whose name the
 *   Chat Completions API cannot replay (`functions.get_weather` → `functions_get_weather`); without it
 *   the SDK ends the run with "Namespaced function call history is not supported".
 *
 * @example
 * ```ts
 * const { tools, runConfig } = toOpenAiAgents(runtime);
 * const result = await new Runner(runConfig).run(new Agent({ name: 'support', tools }), 'What is the weather in Paris?');
 * ```
 *
 * @throws ToolrunError `INVALID_OPTIONS` when `source` is not a runtime or a toolrun, or `sessionId`
 *   / `runId` / `callModelInputFilter` have the wrong type.
 */
export function toOpenAiAgents(source: RuntimeSource, options: OpenAiAgentsOptions = {}): OpenAiAgentsTools {
  const runtime = runtimeOf(source, 'toOpenAiAgents');
  checkOptions(options);
  const runId = options.runId ?? (options.deadLetter !== undefined ? `run_${globalThis.crypto.randomUUID().replaceAll('-', '')}` : undefined);
  const deadLetter = options.deadLetter !== undefined && runId !== undefined ? createOpenAiAgentsRunDeadLetter(runtime, runId, options.deadLetter) : undefined;
  const sessionOf = (runContext: RunContext<unknown> | undefined): string | undefined =>
    typeof options.sessionId === 'function' ? (runContext ? options.sessionId(runContext) : undefined) : options.sessionId;
  const ids = (runContext: RunContext<unknown> | undefined) => {
    const sessionId = sessionOf(runContext);
    return { ...(sessionId !== undefined ? { sessionId } : {}), ...(runId !== undefined ? { runId } : {}) };
  };

  // one run is one RunContext: a call id the run delivers again gets the first delivery's envelope
  const repeated = createRepeatedCalls();
  const tools = runtime.specs.map((spec): FunctionTool => {
    // `tool()` gives the SDK's own defaults (a static "no approval" policy, enabled, error handling);
    // its `invoke` is replaced, because the SDK's JSON.parse would take truncated JSON away from toolrun.
    const base = makeTool({
      name: spec.name,
      description: spec.description,
      parameters: spec.inputSchema,
      strict: false,
      execute: () => {
        throw new Error('a toolrun function tool runs through its invoke, never through execute');
      },
    });
    return {
      ...base,
      // the SDK would send a name `tool()` rewrote; toolrun's name is the registered one
      name: spec.name,
      parameters: spec.inputSchema as FunctionTool['parameters'],
      invoke: async (runContext, input, details) => {
        const callId = details?.toolCall?.callId || undefined;
        const result = await repeated.run({ callId, scope: runContext }, async () => {
          const call = {
            name: spec.name,
            args: input,
            ...(callId !== undefined ? { callId } : {}),
            ...(details?.signal ? { signal: details.signal } : {}),
            ...ids(runContext),
          };
          if (deadLetter === undefined) return runtime.run(call);
          const record = await runtime.execute({ ...call, maxAttempts: deadLetter.maxAttemptsFor(spec.name) });
          await deadLetter.settle({ record, runContext, toolCall: details?.toolCall, args: input });
          return record.result;
        });
        if (result.status === 'failed') markSpanFailed(result);
        return toolResultJson(result);
      },
    };
  });

  const resolve = createToolNameResolver(runtime.names);
  const toolErrorFormatter: ToolErrorFormatter = async (args: ToolErrorFormatterArgs) => {
    if (args.kind !== 'tool_not_found' || args.toolType !== 'function') return undefined;
    const requested = args.toolName;
    const callId = args.callId;
    const resolution = resolve(requested);
    let result: ToolResult;
    if (resolution.match === undefined) {
      // toolrun's own answer for an unknown name (counted by its session breaker); arguments are
      // not handed over by the SDK here, and none are needed for a name that resolves to nothing
      result = await runtime.run({ name: requested, args: {}, callId, ...ids(args.runContext) });
    } else {
      result = equivalentSpelling(runtime, { requested, match: resolution.match }, { callId, sessionId: sessionOf(args.runContext) });
    }
    if (result.status === 'failed') markSpanFailed(result);
    return toolResultJson(result);
  };

  const userFilter = options.callModelInputFilter;
  const callModelInputFilter: CallModelInputFilter = async (filterArgs) => {
    deadLetter?.observeModelInput(filterArgs.modelData.input);
    const input = answerUnparsableArguments(runtime, filterArgs.modelData.input).map((item) => {
      if (!isItemOfType(item, 'function_call')) return item;
      const call = item as { name?: unknown; namespace?: unknown };
      if (typeof call.name !== 'string' || REPLAYABLE_FUNCTION_NAME.test(call.name) || typeof call.namespace === 'string') return item;
      return { ...item, name: replayableName(call.name) } as typeof item;
    });
    const modelData = { ...filterArgs.modelData, input };
    return userFilter ? userFilter({ ...filterArgs, modelData }) : modelData;
  };

  return {
    tools,
    ...(runId !== undefined ? { runId } : {}),
    runConfig: { toolNotFoundBehavior: 'return_error_to_model', toolErrorFormatter, callModelInputFilter },
  };
}

/** The SDK's own answer when it cannot `JSON.parse` a function call's arguments (it then never calls the tool). */
const SDK_PARSE_ERROR_OUTPUT = 'An error occurred while parsing tool arguments. Please try again with valid JSON.';

function isItemOfType(item: unknown, type: string): boolean {
  return typeof item === 'object' && item !== null && (item as { type?: unknown }).type === type;
}

/**
 * Replaces, in the input sent to the model, the SDK's fixed answer to arguments it could not parse
 * with toolrun's `MALFORMED_ARGUMENTS` envelope for the same raw text (truncated, two values glued
 * together, where parsing stopped). Pure: the same history gives the same input every turn, and no
 * tool runs (the SDK never called it; toolrun's parser agrees the text is not one JSON object —
 * text toolrun can read keeps the SDK's answer, since the tool did not run).
 */
function answerUnparsableArguments<T>(runtime: ToolRuntime, items: readonly T[]): T[] {
  const calls = new Map<string, { name: string; arguments: string }>();
  for (const item of items) {
    if (!isItemOfType(item, 'function_call')) continue;
    const call = item as { callId?: unknown; name?: unknown; arguments?: unknown };
    if (typeof call.callId === 'string' && typeof call.name === 'string' && typeof call.arguments === 'string' && runtime.getTool(call.name))
      calls.set(call.callId, { name: call.name, arguments: call.arguments });
  }
  if (calls.size === 0) return [...items];
  return items.map((item) => {
    if (!isItemOfType(item, 'function_call_result')) return item;
    const output = item as { callId?: unknown; output?: unknown };
    const text = typeof output.output === 'string' ? output.output : (output.output as { type?: unknown; text?: unknown } | null)?.text;
    const call = typeof output.callId === 'string' ? calls.get(output.callId) : undefined;
    if (call === undefined || text !== SDK_PARSE_ERROR_OUTPUT) return item;
    const parsed = parseArguments(call.arguments, { redactText: (value) => runtime.redactor.text(value) });
    if (parsed.ok) return item;
    const envelope: ToolFailure = {
      status: 'failed',
      tool_name: call.name,
      call_id: output.callId as string,
      duration_ms: 0,
      attempts: 0,
      trace_id: stableTraceId(output.callId as string),
      error: buildFailure(parsed.failure),
    };
    const replaced = typeof output.output === 'string' ? toolResultJson(envelope) : { type: 'text', text: toolResultJson(envelope) };
    return { ...item, output: replaced };
  });
}

/** A trace id that is the same every turn for one call (so the prompt stays the same), 32 hex digits. */
function stableTraceId(callId: string): string {
  let hex = '';
  for (let seed = 0; seed < 4; seed++) {
    let hash = 0x811c9dc5 ^ seed;
    for (let index = 0; index < callId.length; index++) hash = Math.imul(hash ^ callId.charCodeAt(index), 0x01000193);
    hex += (hash >>> 0).toString(16).padStart(8, '0');
  }
  return hex;
}

function checkOptions(options: OpenAiAgentsOptions): void {
  if (typeof options !== 'object' || options === null) throw new ToolrunError('INVALID_OPTIONS', 'toOpenAiAgents: options must be an object');
  const problems: string[] = [];
  if (options.sessionId !== undefined && typeof options.sessionId !== 'string' && typeof options.sessionId !== 'function')
    problems.push('sessionId must be a string or a function of the run context');
  if (options.runId !== undefined && typeof options.runId !== 'string') problems.push('runId must be a string');
  if (options.deadLetter !== undefined) checkDeadLetterOption(options.deadLetter, 'toOpenAiAgents');
  if (options.callModelInputFilter !== undefined && typeof options.callModelInputFilter !== 'function')
    problems.push('callModelInputFilter must be a function');
  if (problems.length > 0) throw new ToolrunError('INVALID_OPTIONS', `toOpenAiAgents: ${problems.join('; ')}`);
}

/** A name the Chat Completions API replays: every other character as `_`, at most 128. */
function replayableName(name: string): string {
  const replaced = name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 128);
  return replaced.length > 0 ? replaced : 'unknown_tool';
}

/**
 * The envelope of a call the SDK could not route whose name is an equivalent spelling of a real
 * tool: `TOOL_NOT_FOUND` naming that tool (the SDK passed no arguments, so it cannot be run for the
 * model). Counted by the session breaker under the requested name, like any unknown name.
 */
function equivalentSpelling(
  runtime: ToolRuntime,
  { requested, match }: { requested: string; match: string },
  { callId, sessionId }: { callId: string; sessionId: string | undefined },
): ToolFailure {
  runtime.sessionBreakers?.recordFailure(sessionId ?? 'default', requested, { kind: 'counted' });
  const shown = redactBounded(runtime.redactor, requested, 128);
  const listed = runtime.names.slice(0, 50);
  return {
    status: 'failed',
    tool_name: shown,
    call_id: callId,
    duration_ms: 0,
    attempts: 0,
    trace_id: globalThis.crypto.randomUUID().replaceAll('-', ''),
    error: buildFailure({
      code: 'TOOL_NOT_FOUND',
      message: `There is no tool named "${shown}"`,
      detail: `Tools are called by their exact name here; "${shown}" is how "${match}" is spelled elsewhere. Available tools: ${listed.join(', ')}${runtime.names.length > listed.length ? ', …' : ''}.`,
      suggestion: `Call "${match}" (exactly this name) with the same arguments.`,
      availableTools: [...listed],
      closestTool: match,
    }),
  };
}

/** Marks the SDK's current span (the function span of this call) as failed, the way the SDK marks a non-fatal tool error. */
function markSpanFailed(result: ToolFailure): void {
  try {
    getCurrentSpan()?.setError({
      message: `${result.error.code}: ${result.error.message}`,
      data: { tool_name: result.tool_name, code: result.error.code, type: result.error.type, retryable: result.error.retryable, trace_id: result.trace_id },
    });
  } catch {
    // tracing must never fail the call
  }
}
