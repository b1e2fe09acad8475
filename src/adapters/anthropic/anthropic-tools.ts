import { ToolError as AnthropicToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import type { BetaRunnableTool, BetaToolRunContext } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool';
import type { BetaTool } from '@anthropic-ai/sdk/resources/beta';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import type { ToolResult } from '../../ground/tool-result.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import { createHostRunDeadLetter, type HostRunDeadLetter } from '../../worker/host-run-dead-letter.ts';
import { createRepeatedCalls } from '../repeated-calls.ts';
import { ANTHROPIC_HOST, anthropicConversationUpTo, anthropicStepIndex, type AnthropicDeadLetterOptions } from './anthropic-dead-letter.ts';
import { toolResultJson } from '../tool-result-json.ts';

/** Options of {@link toAnthropicTools}. */
export interface AnthropicToolsOptions {
  /** The scope of toolrun's per-session breaker for these calls. @defaultValue toolrun's `'default'` session */
  sessionId?: string;
  /**
   * The run id passed with every call (joins toolrun's log records to this loop), and the tool-DLQ
   * entry's `runId`. @defaultValue none; with `deadLetter`, a new `run_…` id
   */
  runId?: string;
  /**
   * Where to dead-letter what this run cannot recover in-band (toolrun's `stores`, and how to read
   * the runner's conversation): a failure that spends the tool's retry budget across the run's
   * steps, a misconfiguration (fed to the shared breaker) or an open shared breaker becomes one
   * resumable tool-DLQ entry for the run (`originalMessageId` `anthropic:<runId>`); the model still
   * gets the envelope. One `toAnthropicTools` call is then one run. `runAnthropicToolRunner` sets it
   * up for you; replay with `hosts.anthropic` = `anthropicContinuation(...)`. @defaultValue none
   */
  deadLetter?: AnthropicDeadLetterOptions;
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
  if (options.deadLetter !== undefined) problems.push(...deadLetterProblems(options.deadLetter));
  if (problems.length > 0) throw new ToolrunError('INVALID_OPTIONS', `toAnthropicTools: ${problems.join('; ')}`);
  const runId = options.runId ?? (options.deadLetter !== undefined ? `run_${globalThis.crypto.randomUUID().replaceAll('-', '')}` : undefined);
  const ids = {
    ...(options.sessionId !== undefined ? { sessionId: options.sessionId } : {}),
    ...(runId !== undefined ? { runId } : {}),
  };
  const deadLetter =
    options.deadLetter !== undefined && runId !== undefined
      ? createHostRunDeadLetter({ ...options.deadLetter, host: ANTHROPIC_HOST, runId, runtime })
      : undefined;
  const readMessages = options.deadLetter?.messages;
  const readUsage = options.deadLetter?.usage;
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
      const input = {
        name: spec.name,
        args,
        ...(callId !== undefined ? { callId } : {}),
        ...(context?.signal ? { signal: context.signal } : {}),
        ...ids,
      };
      const result = await repeated.run({ callId, scope: undefined }, async () => {
        if (deadLetter === undefined || readMessages === undefined) return runtime.run(input);
        return runDeadLettered(deadLetter, { runtime, input, readMessages, readUsage, toolName: spec.name });
      });
      const text = toolResultJson(result);
      if (result.status === 'failed') throw new AnthropicToolError(text);
      return text;
    },
  }));
}

/** One call under the run's dead-letter side: its retry budget, then the routing of its outcome. */
async function runDeadLettered(
  deadLetter: HostRunDeadLetter,
  call: {
    runtime: ToolRuntime;
    input: Parameters<ToolRuntime['execute']>[0] & { callId?: string };
    readMessages: () => readonly unknown[];
    readUsage: (() => { input: number; output: number }) | undefined;
    toolName: string;
  },
): Promise<ToolResult> {
  const { runtime, input, readMessages, readUsage, toolName } = call;
  const record = await runtime.execute({ ...input, maxAttempts: deadLetter.maxAttemptsFor(toolName) });
  if (record.result.status === 'failed' && readUsage !== undefined) deadLetter.observeUsage(readUsage());
  const toolUse = { id: input.callId ?? '', name: toolName, input: input.args };
  let conversation: unknown[] | undefined;
  const upTo = () => (conversation ??= anthropicConversationUpTo(readMessages(), toolUse));
  await deadLetter.settle({
    record,
    toolCallId: input.callId,
    args: input.args,
    stepIndex: () => anthropicStepIndex(upTo()),
    conversation: () => ({ messages: upTo() }),
  });
  return record.result;
}

function deadLetterProblems(value: unknown): string[] {
  const options = (typeof value === 'object' && value !== null ? value : {}) as Partial<AnthropicDeadLetterOptions>;
  const stores = options.stores as { toolDlq?: { pushOnce?: unknown }; journal?: { putConversation?: unknown } } | undefined;
  const problems: string[] = [];
  if (typeof stores?.toolDlq?.pushOnce !== 'function' || typeof stores.journal?.putConversation !== 'function')
    problems.push('deadLetter.stores must be toolrun stores (with toolDlq and journal), e.g. createToolrun(...).stores');
  if (typeof options.messages !== 'function')
    problems.push('deadLetter.messages must be a function returning the runner’s messages (() => runner.params.messages)');
  if (options.usage !== undefined && typeof options.usage !== 'function') problems.push('deadLetter.usage must be a function');
  const budget = options.toolRetryBudget;
  if (budget !== undefined && !(Number.isInteger(budget) && budget >= 0 && budget <= 100))
    problems.push('deadLetter.toolRetryBudget must be an integer from 0 to 100');
  return problems;
}
