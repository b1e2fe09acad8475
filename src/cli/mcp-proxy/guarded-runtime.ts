import type { CallToolResult, Progress, Tool } from '@modelcontextprotocol/sdk/types.js';
import { errorFromMcpThrown, errorFromToolResult } from '../../adapters/mcp/mcp-failure.ts';
import { isMcpToolIdempotent, TOOL_NAME_PATTERN } from '../../adapters/mcp/mcp-tools.ts';
import { createToolRuntime, type ToolRuntime, type ToolRuntimeOptions } from '../../core/create-tool-runtime.ts';
import type { ToolContext, ToolDefinition } from '../../core/define-tool.ts';
import { ToolError } from '../../core/tool-error.ts';
import type { SharedBreaker } from '../../policies/shared-breaker.ts';
import type { UpstreamTransport } from './upstream-requests.ts';

/** What a guarded `tools/call` keeps while the runtime runs it, by call id. */
export interface PendingCall {
  arguments: Record<string, unknown> | undefined;
  meta: Record<string, unknown> | undefined;
  onProgress: ((progress: Progress) => void) | undefined;
  result: CallToolResult | undefined;
}

/** Options of {@link buildGuardedRuntime}. Durations in milliseconds. */
export interface GuardedRuntimeOptions {
  runtimeOptions: Omit<ToolRuntimeOptions, 'tools' | 'sharedBreaker'> | undefined;
  sharedBreaker: SharedBreaker | undefined;
  maxAttempts: number;
  timeoutMs: number | undefined;
  /** The transport guarded calls are sent on, read at each call (`undefined`: the upstream is restarting). */
  upstream: () => UpstreamTransport | undefined;
  /** The calls under way, by call id: their tools send the client's own arguments and `_meta` and keep the upstream's result there. */
  pending: ReadonlyMap<string, PendingCall>;
}

/** A runtime over the upstream's tools that toolrun can guard, and what it left out with why. */
export interface GuardedRuntime {
  runtime: ToolRuntime;
  guarded: string[];
  skipped: string[];
}

function guardedDefinition(tool: Tool, options: GuardedRuntimeOptions): ToolDefinition {
  const idempotent = isMcpToolIdempotent(tool);
  return {
    name: tool.name,
    description: tool.description ?? '',
    inputSchema: tool.inputSchema as Record<string, unknown>,
    idempotent,
    retry: { maxAttempts: idempotent ? options.maxAttempts : 1 },
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    execute: async (args: Record<string, unknown>, context: ToolContext) => {
      const call = options.pending.get(context.callId);
      const upstream = options.upstream();
      if (!upstream) throw new ToolError({ kind: 'server', message: `the upstream MCP server is not running (restarting after it exited)` });
      let result: CallToolResult;
      try {
        const params = { name: tool.name, arguments: call?.arguments ?? args, ...(call?.meta ? { _meta: call.meta } : {}) };
        result = (await upstream.request('tools/call', params, context.signal, call?.onProgress)) as CallToolResult;
      } catch (thrown) {
        throw errorFromMcpThrown(thrown);
      }
      if (result.isError === true) throw errorFromToolResult(result, Date.now());
      if (call) call.result = result;
      // The envelope's data is not what the client receives (the upstream's result is): keep it small.
      return null;
    },
  };
}

function buildRuntime(definitions: ToolDefinition[], options: GuardedRuntimeOptions): ToolRuntime {
  const timeoutMs = options.timeoutMs ?? 60_000;
  return createToolRuntime({
    defaultTimeoutMs: timeoutMs,
    callBudgetMs: Math.max(120_000, timeoutMs * options.maxAttempts + 10_000),
    ...options.runtimeOptions,
    tools: definitions,
    ...(options.sharedBreaker ? { sharedBreaker: options.sharedBreaker } : {}),
  });
}

/** Builds the runtime that guards the upstream's `tools` (tools whose name or schema toolrun cannot take are skipped). */
export function buildGuardedRuntime(tools: readonly Tool[], options: GuardedRuntimeOptions): GuardedRuntime {
  let definitions: ToolDefinition[] = [];
  const skipped: string[] = [];
  for (const tool of tools) {
    if (TOOL_NAME_PATTERN.test(tool.name)) definitions.push(guardedDefinition(tool, options));
    else skipped.push(`${tool.name} (name)`);
  }
  let runtime: ToolRuntime;
  try {
    // One build compiles every schema once; only when it fails is each tool tried alone to find the ones that cannot be guarded.
    runtime = buildRuntime(definitions, options);
  } catch {
    const guardable: ToolDefinition[] = [];
    for (const definition of definitions) {
      try {
        createToolRuntime({ tools: [definition], sessionBreaker: false });
        guardable.push(definition);
      } catch (error) {
        skipped.push(`${definition.name} (${error instanceof Error ? error.message : String(error)})`);
      }
    }
    definitions = guardable;
    runtime = buildRuntime(definitions, options);
  }
  return { runtime, guarded: definitions.map((definition) => definition.name), skipped };
}
