import type { ToolCallRepairFunction, ToolSet } from 'ai';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import { createToolNameResolver } from '../../core/resolve-tool-name.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import { createRepeatedCalls } from '../repeated-calls.ts';
import { createAiSdkRunDeadLetter, type AiSdkDeadLetterOptions } from './ai-sdk-dead-letter.ts';
import { aiSdkJsonSchema, repairableErrorName } from './sdk-markers.ts';
import { createSuccessWarnings } from './success-warnings.ts';
import { ToolCallFailure } from './tool-call-failure.ts';
import { checkDeadLetterOption } from '../check-dead-letter-option.ts';

/** Options of {@link toAiSdk}. */
export interface ToAiSdkOptions {
  /**
   * Scope of toolrun's per-session breaker for the calls of these tools: give each conversation
   * its own (call `toAiSdk` per conversation; it is cheap). @defaultValue the runtime's, `'default'`
   */
  sessionId?: string;
  /**
   * The run these calls belong to, in toolrun's records and logs (and the tool-DLQ entry's `runId`).
   * @defaultValue none; with `deadLetter`, a new `run_…` id
   */
  runId?: string;
  /**
   * Where to dead-letter what this run cannot recover in-band (toolrun's `stores`, e.g.
   * `createToolrun(...).stores`): a failure that spends the tool's retry budget across the run's
   * steps, a misconfiguration (a rejected credential, fed to the shared breaker) or an open shared
   * breaker becomes one resumable tool-DLQ entry for the run; the model still gets the envelope.
   * One `toAiSdk` call is then one run. Replay it with `replayAiSdkDeadLetter`. @defaultValue none
   */
  deadLetter?: AiSdkDeadLetterOptions;
}

/** What {@link toAiSdk} returns: pass both to `generateText` / `streamText`. */
export interface AiSdkTools {
  /** One AI SDK tool per registered toolrun tool, keyed by its name. */
  tools: ToolSet;
  /**
   * The tool-call repair function (`experimental_repairToolCall` in `ai` 5 and 6, `repairToolCall`
   * in `ai` 7): it hands unknown tool names and unparsable arguments to toolrun instead of the SDK.
   */
  repairToolCall: ToolCallRepairFunction<ToolSet>;
  /** The run id the calls carry (a new one with `deadLetter` and no `runId`). */
  runId?: string;
  /**
   * Pass it as `prepareStep` (or call it from yours) with `deadLetter`, so a tool-DLQ entry's
   * `tokensSpent` counts the usage of the steps before the failed one. It changes nothing in the
   * step (returns `undefined`); without `deadLetter` it does nothing.
   */
  prepareStep: (options: { steps: readonly unknown[] }) => undefined;
}

/**
 * The key of the input a repaired call carries to one of these tools. The model sees it in the
 * conversation as the input of the call it made (under the tool it was routed to).
 */
export const REPAIRED_CALL_KEY = 'toolrun_repaired_call';

/** What a repaired call carries: the tool name the model asked for (when no tool has it) and its raw arguments. */
interface RepairedCall {
  tool_name?: string;
  arguments: string;
}

interface ToolCallLike {
  toolCallId: string;
  toolName: string;
  input: string;
}

function readRepairedCall(input: unknown): RepairedCall | undefined {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return undefined;
  const keys = Object.keys(input);
  if (keys.length !== 1 || keys[0] !== REPAIRED_CALL_KEY) return undefined;
  const value = (input as Record<string, unknown>)[REPAIRED_CALL_KEY];
  if (typeof value !== 'object' || value === null) return undefined;
  const { tool_name: toolName, arguments: args } = value as { tool_name?: unknown; arguments?: unknown };
  if (typeof args !== 'string' || (toolName !== undefined && typeof toolName !== 'string')) return undefined;
  return toolName === undefined ? { arguments: args } : { tool_name: toolName, arguments: args };
}

function parsesAsJson(text: string): boolean {
  if (text.trim() === '') return true; // the SDK reads an empty input as {}
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AbortSignal).aborted === 'boolean' &&
    typeof (value as AbortSignal).addEventListener === 'function'
  );
}

/** Whether the SDK's `messages` already hold a tool result for `toolCallId` (an earlier step of this run answered it). */
function answeredIn(messages: unknown, toolCallId: string): boolean {
  if (!Array.isArray(messages)) return false;
  for (const message of messages as unknown[]) {
    const { role, content } = (typeof message === 'object' && message !== null ? message : {}) as { role?: unknown; content?: unknown };
    if (role !== 'tool' || !Array.isArray(content)) continue;
    for (const part of content as unknown[]) {
      const { type, toolCallId: id } = (typeof part === 'object' && part !== null ? part : {}) as { type?: unknown; toolCallId?: unknown };
      if (type === 'tool-result' && id === toolCallId) return true;
    }
  }
  return false;
}

function isToolRuntime(value: unknown): value is ToolRuntime {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ToolRuntime).run === 'function' &&
    Array.isArray((value as ToolRuntime).specs) &&
    typeof (value as ToolRuntime).getTool === 'function'
  );
}

/**
 * The tools of a toolrun runtime as Vercel AI SDK tools (`ai` 5, 6 and 7), and the repair
 * function that routes what the SDK cannot parse to toolrun:
 *
 * ```ts
 * const { tools, repairToolCall } = toAiSdk(toolrun.runtime);
 * await generateText({ model, tools, experimental_repairToolCall: repairToolCall, stopWhen: stepCountIs(5), prompt });
 * ```
 *
 * - Each tool advertises the toolrun tool's JSON Schema without a validator, so the SDK only parses
 *   the model's JSON and toolrun validates it (field-level `INVALID_ARGUMENTS` envelopes, formats,
 *   coercion, retries, breakers). `execute` runs `runtime.run` with the SDK's `toolCallId` as
 *   `callId` and its `abortSignal` as `signal`, and returns the envelope's `data` on success. A
 *   success with `warnings` (an argument an open schema let through undeclared) reaches the model
 *   as `{ data, warnings }` through the tool's `toModelOutput` (the host still sees `data`); in
 *   `ai` 5 only when `data` is an object or array (it passes `toModelOutput` the output alone).
 * - A failed call throws a {@link ToolCallFailure}: the SDK records a `tool-error` (the host's UI
 *   and telemetry see a failure) and sends the model its message, the failure envelope's JSON, as
 *   the tool result's `error-text`. The loop goes on.
 * - `repairToolCall` is called by the SDK for a tool name it does not have and for arguments that
 *   are not JSON. An equivalent spelling of an active tool (`functions.get_weather`, `getWeather`)
 *   is routed to that tool and runs it. An unknown name, and unparsable arguments, are routed to a
 *   tool of this set (the closest name, else the first) with the call's name and raw arguments
 *   under `REPAIRED_CALL_KEY`; that tool's `execute` runs toolrun with them, so the model gets
 *   toolrun's `TOOL_NOT_FOUND` (with `closest_tool`) or `MALFORMED_ARGUMENTS` envelope as a
 *   `tool-error`. It returns `null` (the SDK's own error) for errors of tools that are not these,
 *   and for a name that resolves to a toolrun tool left out of the step (`activeTools`).
 * - A tool-call id delivered again in the same run (twice in one model turn, or again in a later
 *   step whose `messages` already hold its result) does not run the tool again: the repeat gets the
 *   first delivery's envelope. These tools remember the last 512 ids.
 *
 * No `ai` import at run time: the schemas carry the SDK's global symbols and the SDK's errors are
 * recognised by name, so a second copy of `ai` in the tree does not matter.
 *
 * @throws ToolrunError `INVALID_OPTIONS` when `runtime` is not a toolrun runtime, or `sessionId` /
 *   `runId` is not a string.
 */
export function toAiSdk(runtime: ToolRuntime, options: ToAiSdkOptions = {}): AiSdkTools {
  if (!isToolRuntime(runtime)) throw new ToolrunError('INVALID_OPTIONS', 'toAiSdk needs a toolrun runtime (createToolRuntime(...) or toolrun.runtime)');
  const { sessionId, deadLetter: deadLetterOptions } = options ?? {};
  let { runId } = options ?? {};
  if (sessionId !== undefined && typeof sessionId !== 'string') throw new ToolrunError('INVALID_OPTIONS', 'toAiSdk: sessionId must be a string');
  if (runId !== undefined && typeof runId !== 'string') throw new ToolrunError('INVALID_OPTIONS', 'toAiSdk: runId must be a string');
  if (deadLetterOptions !== undefined) checkDeadLetterOption(deadLetterOptions, 'toAiSdk');
  if (deadLetterOptions !== undefined) runId ??= `run_${globalThis.crypto.randomUUID().replaceAll('-', '')}`;
  const deadLetter = deadLetterOptions !== undefined && runId !== undefined ? createAiSdkRunDeadLetter(runtime, runId, deadLetterOptions) : undefined;

  /** The registered name of each tool object this call made (a host may put them under other keys). */
  const registeredNames = new WeakMap<object, string>();
  let runtimeResolver: ((name: string) => { match?: string }) | undefined;
  /** Whether toolrun would run a registered tool for `name` (as sent, or an equivalent spelling). */
  const runtimeResolves = (name: string): boolean => {
    if (runtime.getTool(name) !== undefined) return true;
    runtimeResolver ??= createToolNameResolver(runtime.names);
    return runtimeResolver(name).match !== undefined;
  };

  const repeated = createRepeatedCalls();
  const successWarnings = createSuccessWarnings();
  const toModelOutput = (options: unknown) => successWarnings.toModelOutput(options);
  const runCall = async (name: string, args: unknown, callOptions: unknown): Promise<unknown> => {
    const { toolCallId, abortSignal, messages } = (typeof callOptions === 'object' && callOptions !== null ? callOptions : {}) as {
      toolCallId?: unknown;
      abortSignal?: unknown;
      messages?: unknown;
    };
    const callId = typeof toolCallId === 'string' && toolCallId.length > 0 ? toolCallId : undefined;
    // the calls of one step share the SDK's `messages` array; a later step's holds the earlier answer
    const delivery = { callId, scope: Array.isArray(messages) ? messages : undefined, answeredInConversation: (id: string) => answeredIn(messages, id) };
    const input = {
      name,
      args,
      ...(callId !== undefined ? { callId } : {}),
      ...(isAbortSignal(abortSignal) ? { signal: abortSignal } : {}),
      ...(sessionId !== undefined ? { sessionId } : {}),
      ...(runId !== undefined ? { runId } : {}),
    };
    const result = await repeated.run(delivery, async () => {
      if (deadLetter === undefined) return runtime.run(input);
      const record = await runtime.execute({ ...input, maxAttempts: deadLetter.maxAttemptsFor(runtime.getTool(name)?.spec.name ?? name) });
      await deadLetter.settle({ record, messages, toolCallId: callId, args });
      return record.result;
    });
    if (result.status === 'success') {
      successWarnings.remember({ callId, data: result.data, warnings: result.warnings });
      return result.data;
    }
    throw new ToolCallFailure(result);
  };

  // No prototype: a model asking for `constructor` or `toString` finds no tool (an SDK lookup on a
  // plain object would find Object.prototype's), and a tool may be named `__proto__`.
  const tools = Object.create(null) as Record<string, Record<string | symbol, unknown>>;
  for (const spec of runtime.specs) {
    const registered = spec.name;
    const tool: Record<string | symbol, unknown> = {
      description: spec.description,
      inputSchema: aiSdkJsonSchema(spec.inputSchema),
      execute: async (input: unknown, callOptions: unknown) => {
        const repaired = readRepairedCall(input);
        if (repaired === undefined) return runCall(registered, input, callOptions);
        if (repaired.tool_name === undefined) return runCall(registered, repaired.arguments, callOptions);
        // An unknown name: toolrun answers TOOL_NOT_FOUND. A name toolrun would run is not one
        // the repair routed here (it returns null for those): the input is this tool's arguments.
        if (runtimeResolves(repaired.tool_name)) return runCall(registered, input, callOptions);
        return runCall(repaired.tool_name, repaired.arguments, callOptions);
      },
      toModelOutput,
    };
    registeredNames.set(tool, registered);
    Object.defineProperty(tools, registered, { value: tool, enumerable: true, writable: true, configurable: true });
  }

  const repairToolCall = async (context: { toolCall: ToolCallLike; tools: unknown; error: unknown }): Promise<ToolCallLike | null> => {
    const errorName = repairableErrorName(context.error);
    if (errorName === undefined) return null;
    const { toolCall } = context;
    const stepTools = (typeof context.tools === 'object' && context.tools !== null ? context.tools : {}) as Record<string, unknown>;
    const ours = Object.keys(stepTools).filter((key) => {
      const tool = stepTools[key];
      return typeof tool === 'object' && tool !== null && registeredNames.has(tool);
    });
    if (ours.length === 0) return null;
    const requested = String(toolCall.toolName);
    const raw = typeof toolCall.input === 'string' ? toolCall.input : JSON.stringify(toolCall.input ?? {});
    const carry = (call: RepairedCall) => JSON.stringify({ [REPAIRED_CALL_KEY]: call });

    if (Object.prototype.hasOwnProperty.call(stepTools, requested)) {
      // A tool of the step: its arguments are not JSON (these tools never validate). Another tool's error stays the SDK's.
      if (!ours.includes(requested)) return null;
      return { ...toolCall, toolName: requested, input: carry({ arguments: raw }) };
    }
    const resolution = createToolNameResolver(ours)(requested);
    if (resolution.match !== undefined) {
      return { ...toolCall, toolName: resolution.match, input: parsesAsJson(raw) ? raw : carry({ arguments: raw }) };
    }
    // A toolrun tool the host left out of this step keeps the SDK's answer.
    if (runtimeResolves(requested)) return null;
    return { ...toolCall, toolName: resolution.closest ?? (ours[0] as string), input: carry({ tool_name: requested, arguments: raw }) };
  };

  return {
    tools: tools as unknown as ToolSet,
    repairToolCall: repairToolCall as unknown as ToolCallRepairFunction<ToolSet>,
    ...(runId !== undefined ? { runId } : {}),
    prepareStep: (stepOptions: { steps: readonly unknown[] }) => {
      deadLetter?.observeSteps(Array.isArray(stepOptions?.steps) ? stepOptions.steps : []);
      return undefined;
    },
  };
}
