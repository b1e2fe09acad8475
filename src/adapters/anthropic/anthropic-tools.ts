import { ToolError as AnthropicToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import type { BetaRunnableTool, BetaToolRunContext } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool';
import type { BetaTool } from '@anthropic-ai/sdk/resources/beta';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import type { ToolResult } from '../../ground/tool-result.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import { createRepeatedCalls } from '../repeated-calls.ts';

/** Options of {@link toAnthropicTools}. */
export interface AnthropicToolsOptions {
  /** The scope of toolrun's per-session breaker for these calls. @defaultValue toolrun's `'default'` session */
  sessionId?: string;
  /** The run id passed with every call (joins toolrun's log records to this loop). */
  runId?: string;
}

/** A runtime, or a composition root that has one (`createToolrun(...)`). */
export type AnthropicRuntimeSource = ToolRuntime | { readonly runtime: ToolRuntime };

function runtimeOf(source: AnthropicRuntimeSource): ToolRuntime {
  const candidate = typeof source === 'object' && source !== null && 'runtime' in source ? source.runtime : source;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof (candidate as ToolRuntime).run !== 'function' ||
    !Array.isArray((candidate as ToolRuntime).specs)
  ) {
    throw new ToolrunError('INVALID_OPTIONS', 'toAnthropicTools needs a tool runtime (createToolRuntime) or a toolrun (createToolrun)');
  }
  return candidate as ToolRuntime;
}

/**
 * toolrun's tools as runnable tools for the Anthropic SDK's tool runner
 * (`client.beta.messages.toolRunner({ model, max_tokens, messages, tools })`).
 *
 * Each tool advertises toolrun's JSON Schema as `input_schema`; its `parse` passes the model's input
 * through unchanged (toolrun validates, the SDK does not) and its `run` calls `runtime.run` with the
 * `tool_use` id as `callId` and the runner's abort signal. A success is the envelope JSON; a failure
 * is thrown as the SDK's `ToolError` holding the envelope JSON, so the runner sends it as a
 * `tool_result` with `is_error: true` (the SDK then also ends its OpenTelemetry tool span, when it has one, in error).
 *
 * The tools of one call are one tool runner's: a `tool_use` id delivered again (twice in one turn,
 * or again later in the run) does not run the tool again — the repeat gets the first delivery's
 * envelope (the last 512 ids are remembered). Make them per runner (`toAnthropicTools(...)` is
 * cheap): the runner hands a tool no handle on its conversation to tell two runs apart.
 *
 * The runner answers a name no tool has by itself (`Error: Tool '…' not found`, `is_error: true`)
 * before any tool is asked, so toolrun's closest name is not given there; `createAnthropicModel` with
 * toolrun's own loop answers unknown names with toolrun's `TOOL_NOT_FOUND` envelope.
 *
 * @example
 * ```ts
 * const final = await client.beta.messages.toolRunner({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages, tools: toAnthropicTools(runtime) });
 * ```
 *
 * @throws ToolrunError `INVALID_OPTIONS` when `source` is not a runtime or a toolrun, or an option has the wrong type.
 */
export function toAnthropicTools(source: AnthropicRuntimeSource, options: AnthropicToolsOptions = {}): BetaRunnableTool<unknown>[] {
  const runtime = runtimeOf(source);
  if (typeof options !== 'object' || options === null) throw new ToolrunError('INVALID_OPTIONS', 'toAnthropicTools: options must be an object');
  const problems: string[] = [];
  if (options.sessionId !== undefined && typeof options.sessionId !== 'string') problems.push('sessionId must be a string');
  if (options.runId !== undefined && typeof options.runId !== 'string') problems.push('runId must be a string');
  if (problems.length > 0) throw new ToolrunError('INVALID_OPTIONS', `toAnthropicTools: ${problems.join('; ')}`);
  const ids = {
    ...(options.sessionId !== undefined ? { sessionId: options.sessionId } : {}),
    ...(options.runId !== undefined ? { runId: options.runId } : {}),
  };
  // the runner hands a tool no handle on its conversation: these tools are one runner's run
  const repeated = createRepeatedCalls();
  return runtime.specs.map((spec): BetaRunnableTool<unknown> => ({
    type: 'custom',
    name: spec.name,
    description: spec.description,
    input_schema: spec.inputSchema as BetaTool['input_schema'],
    parse: (content: unknown) => content,
    run: async (args: unknown, context?: BetaToolRunContext) => {
      const callId = context?.toolUse?.id || undefined;
      const result = await repeated.run({ callId, scope: undefined }, () =>
        runtime.run({
          name: spec.name,
          args,
          ...(callId !== undefined ? { callId } : {}),
          ...(context?.signal ? { signal: context.signal } : {}),
          ...ids,
        }),
      );
      const text = serialise(result);
      if (result.status === 'failed') throw new AnthropicToolError(text);
      return text;
    },
  }));
}

function serialise(result: ToolResult): string {
  try {
    return JSON.stringify(result);
  } catch {
    return JSON.stringify({
      status: 'failed',
      tool_name: result.tool_name,
      call_id: result.call_id,
      error: { type: 'logic', code: 'TOOL_EXCEPTION', message: 'The tool result could not be serialised', retryable: false },
    });
  }
}
