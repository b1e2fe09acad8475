import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Implementation } from '@modelcontextprotocol/sdk/types.js';
import { createToolRuntime, type ToolRuntime } from '../../core/create-tool-runtime.ts';
import type { ToolContext } from '../../core/define-tool.ts';
import { ToolError } from '../../core/tool-error.ts';
import type { JsonValue } from '../../ground/ports/run-journal.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import type { HostContinuation, HostToolCall } from '../../worker/host-continuation.ts';
import { resultText } from './mcp-failure.ts';
import { callMcpTool } from './mcp-tools.ts';

/** The host name of the tool-DLQ entries `toolrun mcp-proxy` writes: their `originalMessageId` is `mcp:<runId>`. */
export const MCP_PROXY_HOST = 'mcp';

/** The `_meta` key under which a replayed call carries its idempotency key upstream (as `toolrun mcp-proxy` reads it). */
const IDEMPOTENCY_KEY_META_KEY = 'dev.toolrun/idempotencyKey';

/**
 * The conversation `toolrun mcp-proxy` stores for a dead-lettered call (an MCP client has no
 * conversation the proxy sees): the one `tools/call` as the client sent it (its arguments
 * unredacted: the replay needs them) and where it came from.
 */
export interface McpProxiedCall {
  /** Marks the item as a proxied call. */
  type: 'mcp_tools_call';
  /** The proxy's id of the call (the ledger key of its replay includes it). */
  callId: string;
  /** The tool's name upstream. */
  name: string;
  /** The arguments as the client sent them. */
  arguments: JsonValue;
  /** Where the call came from: the MCP session (`Mcp-Session-Id`, `null` over stdio), the proxy connection's label, the JSON-RPC request id, and the upstream (its URL or redacted command line). */
  origin: { sessionId: string | null; connection: string; requestId: string | number; upstream: string };
}

/** What the replay stores after the call: the upstream's `CallToolResult`. */
export interface McpProxiedResult {
  /** Marks the item as the replay's answer. */
  type: 'mcp_tools_result';
  /** The call it answers (its {@link McpProxiedCall.callId}). */
  callId: string;
  /** The upstream's `CallToolResult`, as sent. */
  result: JsonValue;
}

/** Options of {@link mcpProxyContinuation}. Durations in milliseconds. */
export interface McpProxyContinuationOptions {
  /**
   * A new client transport to the upstream MCP server the proxy guarded, for each replayed call
   * (connected, used for the one `tools/call`, closed), e.g.
   * `() => new StdioClientTransport({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] })`.
   */
  transport: () => Transport | Promise<Transport>;
  /** The replaying client's name and version in `initialize`. @defaultValue `{ name: 'toolrun-replay', version: '0.1.0' }` */
  clientInfo?: Implementation;
  /** Per-attempt timeout of the replayed call (connection included). @defaultValue 60_000 */
  timeoutMs?: number;
}

function isProxiedCall(value: unknown): value is McpProxiedCall {
  const call = value as Partial<McpProxiedCall> | undefined;
  return call?.type === 'mcp_tools_call' && typeof call.callId === 'string' && typeof call.name === 'string';
}

/**
 * The runtime a replay re-issues calls with: one tool per name, made on demand, whose `execute`
 * connects to the upstream, sends the `tools/call` (with the replay's idempotency key under
 * `_meta["dev.toolrun/idempotencyKey"]`) and closes; failures are classified as the proxy's are.
 * One attempt: a replay that fails is `tool_failed`, and the entry stays for the next one.
 */
function replayRuntime(options: McpProxyContinuationOptions): ToolRuntime {
  const base = createToolRuntime({ tools: [], sessionBreaker: false });
  const byName = new Map<string, ToolRuntime>();
  const execute = (name: string) => async (args: Record<string, unknown>, context: ToolContext) => {
    const client = new Client(options.clientInfo ?? { name: 'toolrun-replay', version: '0.1.0' });
    try {
      try {
        await client.connect(await options.transport(), { signal: context.signal });
      } catch (error) {
        throw new ToolError({
          kind: 'server',
          message: `cannot connect to the upstream MCP server: ${error instanceof Error ? error.message : String(error)}`,
          cause: error,
        });
      }
      return await callMcpTool({ client, name, arguments: args, signal: context.signal, meta: { [IDEMPOTENCY_KEY_META_KEY]: context.idempotencyKey } });
    } finally {
      await client.close().catch(() => undefined);
    }
  };
  const runtimeFor = (name: string): ToolRuntime => {
    let runtime = byName.get(name);
    if (runtime === undefined) {
      runtime = createToolRuntime({
        tools: [{ name, description: `the MCP tool ${name}, replayed`, inputSchema: { type: 'object' }, retry: { maxAttempts: 1 }, execute: execute(name) }],
        defaultTimeoutMs: options.timeoutMs ?? 60_000,
        sessionBreaker: false,
      });
      byName.set(name, runtime);
    }
    return runtime;
  };
  return { ...base, run: (input) => runtimeFor(input.name).run(input), execute: (input) => runtimeFor(input.name).execute(input) };
}

/**
 * How toolrun's replay completes a call `toolrun mcp-proxy` dead-lettered (register it once as the
 * `mcp` host, `hosts: { mcp: mcpProxyContinuation({ transport }) }`, in the config that
 * `toolrun dlq replay`, `toolrun dlq drain` and the dashboard load). An MCP client has no loop toolrun can resume: the replay
 * re-issues the recorded `tools/call` upstream, under the run's claim and the idempotency ledger
 * (a call a replay already made is read back, not sent again), and the replay is complete when the
 * upstream answers it (no model is called: `modelCalls` 0). The client that made the call is not
 * told; the upstream's result is stored with the call.
 *
 * @throws ToolrunError `INVALID_OPTIONS` without `transport`.
 */
export function mcpProxyContinuation(options: McpProxyContinuationOptions): HostContinuation {
  if (typeof options?.transport !== 'function')
    throw new ToolrunError('INVALID_OPTIONS', 'mcpProxyContinuation needs transport: () => a client transport to the upstream MCP server');
  return {
    runtime: replayRuntime(options),
    failedCall(messages): HostToolCall | undefined {
      const call = messages.at(-1);
      return isProxiedCall(call) ? { toolCallId: call.callId, toolName: call.name, args: call.arguments ?? {} } : undefined;
    },
    resultMessages(call, result): McpProxiedResult[] {
      return [{ type: 'mcp_tools_result', callId: call.toolCallId, result: (result.data ?? null) as JsonValue }];
    },
    async continueRun({ messages }) {
      const answered = messages.at(-1) as McpProxiedResult | undefined;
      return { text: resultText((answered?.result ?? {}) as { content?: unknown }) || null, modelCalls: 0 };
    },
  };
}
