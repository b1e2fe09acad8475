import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError, type Progress, type Result, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { isMcpToolIdempotent, listAllMcpTools } from '../../adapters/mcp/mcp-tools.ts';
import { failureToCallToolResult } from '../../adapters/mcp/serve-over-mcp.ts';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import { mcpSessionScope } from '../../adapters/mcp/mcp-session-scope.ts';
import type { ToolFailure } from '../../ground/tool-result.ts';
import { buildGuardedRuntime, type GuardedRuntimeOptions, type PendingCall } from './guarded-runtime.ts';
import { idempotencyKeyOf, inFlightFailure, type IdempotentCalls } from './idempotent-calls.ts';
import { deadLetterProxiedCall, type ProxyDeadLetterOptions } from './proxy-dead-letter.ts';

/** The params of a `tools/call` request, as received. */
export interface ToolsCallParams {
  name?: unknown;
  arguments?: unknown;
  _meta?: Record<string, unknown>;
  task?: unknown;
}

/** One guarded `tools/call`: where it came from and how its progress goes back. */
export interface GuardedCall {
  requestId: string | number;
  /** The MCP session (`Mcp-Session-Id`), when the client has one. */
  sessionId: string | undefined;
  /** The connection's label: the per-session breaker's scope when the client names no other (see `mcpSessionScope`). */
  connection: string;
  signal: AbortSignal;
  forwardProgress: (progressToken: string | number) => (progress: Progress) => void;
}

/** Options of {@link createToolGuard}. Durations in milliseconds. */
export interface ToolGuardOptions extends Omit<GuardedRuntimeOptions, 'pending'> {
  /** Add the draft ToolFailure to failure results. */
  toolFailure: boolean;
  /** Runs the calls of tools that are not idempotent at most once per idempotency key. */
  idempotentCalls: IdempotentCalls;
  /** Where calls that exhaust their retries are dead-lettered, and the upstream's description for their origin. @defaultValue nowhere */
  deadLetter?: (ProxyDeadLetterOptions & { upstream: string }) | undefined;
  log: (line: string) => void;
}

/** The runtime that guards the upstream's tools, rebuilt whenever its tool list changes. */
export interface ToolGuard {
  /** Whether the proxy guards this `tools/call` (else it is forwarded as is): a tool it guards, or one the upstream does not have (TOOL_NOT_FOUND). */
  guards(params: ToolsCallParams): params is ToolsCallParams & { name: string };
  /**
   * Runs a guarded `tools/call` through the runtime: the upstream's result on success, toolrun's
   * failure result otherwise.
   * @throws McpError `InternalError` when the runtime is not built yet.
   */
  call(params: ToolsCallParams & { name: string }, call: GuardedCall): Promise<Result>;
  /** The first read of the tools, shared by every session that initializes while it runs; nothing once a runtime is built. */
  readFirst(client: Client): Promise<void>;
  /** Re-reads the tools (after `list_changed` or a restart); one more read when asked again during a read. */
  refreshSoon(client: Client): Promise<void>;
  /** The tool names `tools/call` guards. */
  readonly guardedTools: readonly string[];
  /** Stops re-reading the tools. */
  stop(): void;
}

/**
 * The guard of the proxy's `tools/call`: a toolrun runtime built from the upstream's `tools/list`
 * (tools whose name or schema toolrun cannot take are left unguarded), whose tools send the
 * client's own arguments and `_meta` upstream and keep the upstream's result for the client.
 */
export function createToolGuard(options: ToolGuardOptions): ToolGuard {
  const pending = new Map<string, PendingCall>();
  let runtime: ToolRuntime | undefined;
  let upstreamTools = new Map<string, Tool>();
  let guarded = new Set<string>();
  let callSequence = 0;
  let firstRead: Promise<void> | undefined;
  let refreshing: Promise<void> | undefined;
  let refreshAgain = false;
  let stopped = false;

  /** Reads the upstream's tools and builds the guarding runtime from those toolrun can guard. */
  async function refreshTools(client: Client): Promise<void> {
    const tools = await listAllMcpTools(client);
    const built = buildGuardedRuntime(tools, { ...options, pending });
    runtime = built.runtime;
    upstreamTools = new Map(tools.map((tool) => [tool.name, tool]));
    guarded = new Set(built.guarded);
    const { skipped } = built;
    options.log(`guarding ${built.guarded.length} of ${tools.length} tools${skipped.length > 0 ? `; passed through unguarded: ${skipped.join(', ')}` : ''}`);
  }
  function refreshSoon(client: Client): Promise<void> {
    if (refreshing) {
      refreshAgain = true;
      return refreshing;
    }
    refreshing = (async () => {
      do {
        refreshAgain = false;
        await refreshTools(client).catch((error: unknown) =>
          options.log(`could not read the upstream's tools: ${error instanceof Error ? error.message : String(error)}`),
        );
      } while (refreshAgain && !stopped);
    })().finally(() => {
      refreshing = undefined;
    });
    return refreshing;
  }

  /** The failure answer of a call with it was run: whether the upstream may have seen it (a refusal before it did is not). */
  function answerOf(result: ToolFailure, toolName: string): Result {
    // A failure envelope does not match a tool's outputSchema: it goes in _meta and the text, not structuredContent.
    return failureToCallToolResult(result, {
      nowMs: Date.now(),
      structured: upstreamTools.get(toolName)?.outputSchema === undefined,
      toolFailure: options.toolFailure,
    });
  }

  /** Runs one guarded call through the runtime: its answer, and whether the upstream may have run it. */
  async function runGuarded(current: ToolRuntime, params: ToolsCallParams & { name: string }, call: GuardedCall): Promise<{ result: Result; ran: boolean }> {
    callSequence += 1;
    const callId = `mcp_${callSequence}_${String(call.requestId)}`;
    const { progressToken, ...meta } = params._meta ?? {};
    const args = params.arguments;
    pending.set(callId, {
      arguments: typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : undefined,
      meta: params._meta !== undefined && Object.keys(meta).length > 0 ? meta : undefined,
      onProgress: typeof progressToken === 'string' || typeof progressToken === 'number' ? call.forwardProgress(progressToken) : undefined,
      result: undefined,
    });
    try {
      const sessionId = mcpSessionScope(params._meta, call.sessionId, call.connection);
      const record = await current.execute({ name: params.name, args: args ?? {}, callId, sessionId, signal: call.signal });
      const result = record.result;
      if (result.status === 'failed' && options.deadLetter) await deadLetter(current, record, { callId, params, call });
      if (result.status === 'success') {
        const upstreamResult = pending.get(callId)?.result;
        if (upstreamResult) return { result: upstreamResult, ran: true };
        throw new McpError(ErrorCode.InternalError, 'toolrun mcp-proxy: the call succeeded but its result was lost');
      }
      return { result: answerOf(result, record.toolName), ran: result.attempts > 0 };
    } finally {
      pending.delete(callId);
    }
  }

  /** Dead-letters a failed call when it is exhausted; a store that cannot take it is logged, and the client still gets its answer. */
  async function deadLetter(
    current: ToolRuntime,
    record: Parameters<typeof deadLetterProxiedCall>[0]['record'],
    at: { callId: string; params: ToolsCallParams & { name: string }; call: GuardedCall },
  ): Promise<void> {
    const place = options.deadLetter!;
    const tool = upstreamTools.get(at.params.name);
    try {
      await deadLetterProxiedCall(
        {
          record,
          runtime: current,
          callId: at.callId,
          retryBudget: tool !== undefined && isMcpToolIdempotent(tool) ? options.maxAttempts - 1 : 0,
          arguments: at.params.arguments ?? {},
          origin: { sessionId: at.call.sessionId ?? null, connection: at.call.connection, requestId: at.call.requestId, upstream: place.upstream },
        },
        place,
      );
    } catch (error) {
      options.log(`could not dead-letter a failed call of ${at.params.name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** The answer to a call whose idempotency key is claimed and not answered: it is not run again. */
  function inFlightAnswer(params: ToolsCallParams & { name: string }): Result {
    return answerOf(inFlightFailure(params.name, `mcp_${callSequence}_in_flight`), params.name);
  }

  async function call(params: ToolsCallParams & { name: string }, call: GuardedCall): Promise<Result> {
    const current = runtime;
    if (!current) throw new McpError(ErrorCode.InternalError, 'toolrun mcp-proxy: the upstream tools are not read yet');
    const key = idempotencyKeyOf(params._meta);
    const tool = upstreamTools.get(params.name);
    if (key === undefined || tool === undefined || isMcpToolIdempotent(tool)) return (await runGuarded(current, params, call)).result;
    return options.idempotentCalls.run(
      { tool: params.name, key, arguments: params.arguments },
      () => runGuarded(current, params, call),
      () => inFlightAnswer(params),
    );
  }

  return {
    guards: (params): params is ToolsCallParams & { name: string } =>
      runtime !== undefined && typeof params.name === 'string' && params.task === undefined && (guarded.has(params.name) || !upstreamTools.has(params.name)),
    call,
    async readFirst(client) {
      if (runtime) return;
      firstRead ??= refreshTools(client).finally(() => {
        firstRead = undefined;
      });
      await firstRead;
    },
    refreshSoon,
    get guardedTools() {
      return [...guarded];
    },
    stop() {
      stopped = true;
    },
  };
}
