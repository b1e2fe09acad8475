import { createMiddleware, type AgentMiddleware } from 'langchain';
import { AIMessage, ToolMessage, type BaseMessage, type InvalidToolCall, type ToolCall } from '@langchain/core/messages';
import type { StructuredToolInterface } from '@langchain/core/tools';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import {
  assertScope,
  assertToolRuntime,
  createPassThroughTool,
  envelopeToolMessage,
  toLangChainTools,
  ToolCallFailedError,
  type LangChainCallScope,
} from './langchain-tools.ts';

/** Options of {@link toolrunMiddleware}: which conversation and run the calls belong to. */
export type ToolrunMiddlewareOptions = LangChainCallScope;

/** The middleware's name in the agent (LangChain refuses two middleware of one name). */
const MIDDLEWARE_NAME = 'toolrun';

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
 * - **`afterModel`**: a model answer whose tool calls LangChain could not parse (`invalid_tool_calls`:
 *   truncated or malformed JSON, which otherwise ends the run as if the model had answered) is
 *   answered with toolrun's `MALFORMED_ARGUMENTS` envelope per call (`status: 'error'`), and the loop
 *   goes back to the model. When the same answer also has valid calls, they run as usual, and the
 *   AI message is rewritten (same id) to list the invalid calls among its `tool_calls` with `{}` as
 *   arguments, so that every tool message answers a call the provider sees.
 *
 * Ids: `callId` is the model's tool call id; `signal` is the agent invocation's; `sessionId` is
 * `options.sessionId`, else the invocation's `configurable.thread_id`; `runId` is `options.runId`, else
 * LangGraph's run id when it provides one (`configurable.run_id` on LangGraph Platform). The middleware keeps no state of its own: breakers, stores and
 * retries are the runtime's (or the composition root's, with `createToolrun(...).runtime`).
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
  const advertised = toLangChainTools(runtime, scope);
  const ours = new Set<unknown>(advertised);

  // One pass-through tool per registered name, built once; an unregistered name gets a fresh one.
  const registered = new Map<string, StructuredToolInterface>();
  const passThrough = (name: string): StructuredToolInterface => {
    if (runtime.getTool(name) === undefined) return createPassThroughTool(runtime, name, scope);
    let tool = registered.get(name);
    if (tool === undefined) {
      tool = createPassThroughTool(runtime, name, scope);
      registered.set(name, tool);
    }
    return tool;
  };

  const answerInvalidCall = async (call: InvalidToolCall & { id: string }, signal: AbortSignal | undefined): Promise<ToolMessage> => {
    const name = call.name ?? '';
    const toolCall = { type: 'tool_call', id: call.id, name, args: call.args ?? '' } as unknown as ToolCall;
    try {
      const message: unknown = await passThrough(name).invoke(toolCall, signal !== undefined ? { signal } : undefined);
      if (ToolMessage.isInstance(message)) return message;
      return new ToolMessage({ content: String(message), tool_call_id: call.id, name });
    } catch (error) {
      if (ToolCallFailedError.is(error)) return envelopeToolMessage(error.result, call.id, name);
      throw error;
    }
  };

  return createMiddleware({
    name: MIDDLEWARE_NAME,
    tools: advertised,
    wrapToolCall: async (request, handler) => {
      const { toolCall } = request;
      if (request.tool !== undefined && !ours.has(request.tool)) return handler(request);
      try {
        return await handler({ ...request, tool: passThrough(toolCall.name) });
      } catch (error) {
        if (ToolCallFailedError.is(error)) return envelopeToolMessage(error.result, toolCall.id ?? error.result.call_id, toolCall.name);
        throw error;
      }
    },
    afterModel: {
      canJumpTo: ['model'],
      hook: async (state, hookRuntime) => {
        const messages: readonly BaseMessage[] = state.messages;
        const last = messages.at(-1);
        if (!AIMessage.isInstance(last) || last.invalid_tool_calls === undefined || last.invalid_tool_calls.length === 0) return undefined;
        const answered = new Set(messages.filter((message) => ToolMessage.isInstance(message)).map((message) => (message as ToolMessage).tool_call_id));
        const unanswered = last.invalid_tool_calls.filter(
          (call): call is InvalidToolCall & { id: string } => typeof call.id === 'string' && call.id.length > 0 && !answered.has(call.id),
        );
        if (unanswered.length === 0) return undefined;
        const toolMessages = await Promise.all(unanswered.map((call) => answerInvalidCall(call, hookRuntime.signal)));
        const validCalls = last.tool_calls ?? [];
        if (validCalls.some((call) => call.id === undefined || !answered.has(call.id))) {
          // Valid calls go to the tools node as usual; the invalid ones join them as declared calls.
          const rewritten = new AIMessage({
            content: last.content,
            ...(last.id !== undefined ? { id: last.id } : {}),
            ...(last.name !== undefined ? { name: last.name } : {}),
            additional_kwargs: last.additional_kwargs,
            response_metadata: last.response_metadata,
            ...(last.usage_metadata !== undefined ? { usage_metadata: last.usage_metadata } : {}),
            tool_calls: [...validCalls, ...unanswered.map((call): ToolCall => ({ type: 'tool_call', id: call.id, name: call.name ?? '', args: {} }))],
            invalid_tool_calls: last.invalid_tool_calls,
          });
          return { messages: [rewritten, ...toolMessages] };
        }
        return { messages: toolMessages, jumpTo: 'model' as const };
      },
    },
  }) as unknown as AgentMiddleware;
}
