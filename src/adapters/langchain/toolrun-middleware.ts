import { createMiddleware, type AgentMiddleware } from 'langchain';
import { AIMessage, type BaseMessage, type InvalidToolCall, type ToolCall } from '@langchain/core/messages';
import type { StructuredToolInterface } from '@langchain/core/tools';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import { createRepeatedCalls } from '../repeated-calls.ts';
import { createLangChainDeadLetter, type LangChainDeadLetterOptions } from './langchain-dead-letter.ts';
import {
  assertScope,
  assertToolRuntime,
  buildLangChainTools,
  createPassThroughTool,
  envelopeToolMessage,
  ToolCallFailedError,
  type LangChainCallScope,
  type ToolCalls,
} from './langchain-tools.ts';
import { checkDeadLetterOption } from '../check-dead-letter-option.ts';

/** Options of {@link toolrunMiddleware}: which conversation and run the calls belong to, and where to dead-letter. */
export interface ToolrunMiddlewareOptions extends LangChainCallScope {
  /**
   * Where to dead-letter what an agent run cannot recover in-band (toolrun's `stores`, e.g.
   * `createToolrun(...).stores`): a failure that spends the tool's retry budget across the run's
   * steps, a misconfiguration (a rejected credential, fed to the shared breaker) or an open shared
   * breaker becomes one resumable tool-DLQ entry for the run; the model still gets the envelope.
   * A run is one `agent.invoke` (its `runId` when the config gives one, else derived from the
   * thread and the invocation's input message). Replay it with `replayLangChainDeadLetter`.
   * @defaultValue none
   */
  deadLetter?: LangChainDeadLetterOptions;
}

/** The middleware's name in the agent (LangChain refuses two middleware of one name). */
const MIDDLEWARE_NAME = 'toolrun';

/**
 * A model answer with `invalid_tool_calls` (arguments LangChain could not parse), rewritten so that
 * each of them with an id is also declared in `tool_calls`, with `{}` as arguments: LangChain then
 * routes it to the tools node (instead of ending the run) and every tool message answers a call the
 * provider sees. The raw text stays in `invalid_tool_calls`, where {@link rawArgumentsOf} finds it.
 * Calls to the app's own tools (`foreign` names) are left as they are: such a tool would run with `{}`.
 * Anything else is returned as it is.
 */
function declareInvalidToolCalls<T>(response: T, foreign: ReadonlySet<string>): T {
  if (!AIMessage.isInstance(response) || response.invalid_tool_calls === undefined || response.invalid_tool_calls.length === 0) return response;
  const declared = new Set((response.tool_calls ?? []).map((call) => call.id));
  const added = response.invalid_tool_calls
    .filter(
      (call): call is InvalidToolCall & { id: string } =>
        typeof call.id === 'string' && call.id.length > 0 && !declared.has(call.id) && !foreign.has(call.name ?? ''),
    )
    .map((call): ToolCall => ({ type: 'tool_call', id: call.id, name: call.name ?? '', args: {} }));
  if (added.length === 0) return response;
  return new AIMessage({
    content: response.content,
    ...(response.id !== undefined ? { id: response.id } : {}),
    ...(response.name !== undefined ? { name: response.name } : {}),
    additional_kwargs: response.additional_kwargs,
    response_metadata: response.response_metadata,
    ...(response.usage_metadata !== undefined ? { usage_metadata: response.usage_metadata } : {}),
    tool_calls: [...(response.tool_calls ?? []), ...added],
    invalid_tool_calls: response.invalid_tool_calls,
  }) as T;
}

/**
 * The raw argument text of `call` when it is one {@link declareInvalidToolCalls} declared: found in
 * the `invalid_tool_calls` of the latest AI message that declares the call's id.
 */
function rawArgumentsOf(messages: readonly BaseMessage[], call: ToolCall): string | undefined {
  if (call.id === undefined || typeof call.args !== 'object' || call.args === null || Object.keys(call.args).length > 0) return undefined;
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (!AIMessage.isInstance(message) || !(message.tool_calls ?? []).some((declared) => declared.id === call.id)) continue;
    const invalid = (message.invalid_tool_calls ?? []).find((entry) => entry.id === call.id);
    return invalid === undefined ? undefined : (invalid.args ?? '');
  }
  return undefined;
}

/**
 * A LangChain v1 `createAgent` middleware that runs every tool call through toolrun's runtime:
 *
 * - **Tools**: it registers the runtime's tools (name, description, JSON Schema from
 *   `runtime.specs`), so `createAgent({ model, middleware: [toolrunMiddleware(runtime)] })` needs no
 *   `tools`.
 * - **`wrapToolCall`**: every call — a registered name, an equivalent spelling
 *   (`functions.get_weather`), a hallucinated one — is executed by `runtime.run` with the model's
 *   arguments, unchecked by LangChain: toolrun resolves the name, validates (naming the field),
 *   retries, times out and applies its breakers. The model gets a `ToolMessage` whose content is
 *   toolrun's envelope JSON (also its `artifact`), with `status: 'error'` for a failure; the LangChain
 *   tool run is recorded as an error too (the tool throws {@link ToolCallFailedError}, which the
 *   middleware turns into the message), so LangSmith and `streamEvents` see a failure as a failure.
 *   A call to a LangChain tool of the app's own (passed in `createAgent({ tools })`) goes to it unchanged.
 * - **`wrapModelCall`**: a model answer whose tool calls LangChain could not parse
 *   (`invalid_tool_calls`: truncated or malformed JSON, which otherwise ends the run as if the model
 *   had answered) is rewritten to declare each such call among its `tool_calls` too, with `{}` as
 *   arguments (the raw text stays in `invalid_tool_calls`). LangChain then routes it to the tools
 *   node like any call, and `wrapToolCall` gives toolrun the raw text: the model gets toolrun's
 *   `MALFORMED_ARGUMENTS` envelope (which quotes the text and says where it was cut) with
 *   `status: 'error'`, and the loop goes on. Every tool message answers a call the provider sees
 *   (in a provider's history that call shows `{}` as its arguments). A call without an id, or to a
 *   LangChain tool of the app's own, stays as LangChain left it.
 *
 * Ids: `callId` is the model's tool call id; `signal` is the agent invocation's; `sessionId` is
 * `options.sessionId`, else the invocation's `configurable.thread_id`; `runId` is `options.runId`,
 * else LangGraph's run id when it provides one (`configurable.run_id` on LangGraph Platform). A
 * tool-call id delivered again in the same run (twice in one step, or again once the state's
 * messages hold its answer) runs the tool once: the repeat gets the first delivery's envelope. Beyond
 * the last 512 call ids it remembers, the middleware keeps no state of its own: breakers, stores and retries are the runtime's (or the
 * composition root's, with `createToolrun(...).runtime`).
 *
 * Put it last in `middleware`: a `wrapToolCall` middleware placed after it would see
 * {@link ToolCallFailedError} thrown (and, for `toolRetryMiddleware`, retry what toolrun already retried).
 *
 * @param runtime - a toolrun `ToolRuntime` (`createToolRuntime(...)` or `createToolrun(...).runtime`).
 * @param options - `sessionId` and `runId` for every call (defaults above).
 * @returns the middleware, for `createAgent({ middleware: [...] })`.
 * @throws ToolrunError `INVALID_OPTIONS` when `runtime` is not a tool runtime or an id is not a non-empty string.
 *
 * @example
 * ```ts
 * import { createAgent } from 'langchain';
 * import { toolrunMiddleware } from 'toolrun/langchain';
 *
 * const agent = createAgent({ model: 'openai:gpt-4o-mini', middleware: [toolrunMiddleware(runtime)] });
 * await agent.invoke({ messages: [{ role: 'user', content: 'Weather in Paris on 2024-05-01?' }] }, { configurable: { thread_id: 'chat-42' } });
 * ```
 */
export function toolrunMiddleware(runtime: ToolRuntime, options?: ToolrunMiddlewareOptions): AgentMiddleware {
  assertToolRuntime(runtime, 'toolrunMiddleware');
  const scope = assertScope(options, 'toolrunMiddleware');
  const deadLetterOptions = options?.deadLetter;
  if (deadLetterOptions !== undefined) checkDeadLetterOption(deadLetterOptions, 'toolrunMiddleware', true);
  const calls: ToolCalls = {
    repeated: createRepeatedCalls(),
    ...(deadLetterOptions !== undefined ? { deadLetter: createLangChainDeadLetter(runtime, deadLetterOptions) } : {}),
  };
  const advertised = buildLangChainTools(runtime, scope, calls);
  const ours = new Set<unknown>(advertised);

  // One pass-through tool per registered name, built once; an unregistered name gets a fresh one.
  const registered = new Map<string, StructuredToolInterface>();
  const passThrough = (name: string): StructuredToolInterface => {
    if (runtime.getTool(name) === undefined) return createPassThroughTool(runtime, name, scope, calls);
    let tool = registered.get(name);
    if (tool === undefined) {
      tool = createPassThroughTool(runtime, name, scope, calls);
      registered.set(name, tool);
    }
    return tool;
  };

  return createMiddleware({
    name: MIDDLEWARE_NAME,
    tools: advertised,
    wrapToolCall: async (request, handler) => {
      if (request.tool !== undefined && !ours.has(request.tool)) return handler(request);
      const raw = rawArgumentsOf(request.state.messages, request.toolCall);
      const toolCall = raw === undefined ? request.toolCall : ({ ...request.toolCall, args: raw } as unknown as ToolCall);
      try {
        return await handler({ ...request, toolCall, tool: passThrough(toolCall.name) });
      } catch (error) {
        if (ToolCallFailedError.is(error)) return envelopeToolMessage(error.result, toolCall.id ?? error.result.call_id, toolCall.name);
        throw error;
      }
    },
    wrapModelCall: async (request, handler) => {
      const foreign = new Set<string>();
      for (const tool of request.tools ?? []) {
        const name = (tool as { name?: unknown }).name;
        if (!ours.has(tool) && typeof name === 'string') foreign.add(name);
      }
      return declareInvalidToolCalls(await handler(request), foreign);
    },
  }) as unknown as AgentMiddleware;
}
