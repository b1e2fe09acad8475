import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResultSchema, ToolListChangedNotificationSchema, type CallToolResult, type Progress, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolContext, ToolDefinition } from '../../core/define-tool.ts';
import { ToolError } from '../../core/tool-error.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import type { McpConnection } from './mcp-connection.ts';
import { errorFromMcpThrown, errorFromToolResult } from './mcp-failure.ts';

/** The tool names toolrun registers (`defineTool`'s pattern). */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_.:/-]{1,128}$/;

/** The most `tools/list` pages read before giving up (a server that repeats its cursor). */
const MAX_TOOL_PAGES = 1000;

/** The longest wait of one MCP request, in ms: the runtime's own timeout (through `ctx.signal`) decides first. */
const DEFAULT_REQUEST_TIMEOUT_MS = 2_147_483_647;

/**
 * Every tool of an MCP server: `tools/list` page after page (following `nextCursor`).
 *
 * @throws what the client throws (an `McpError`, a transport error); ToolrunError `INVALID_INPUT`
 *   when the server keeps sending cursors past 1,000 pages.
 */
export async function listAllMcpTools(client: Client, options: { signal?: AbortSignal } = {}): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const result = await client.listTools(cursor === undefined ? {} : { cursor }, options.signal ? { signal: options.signal } : undefined);
    tools.push(...result.tools);
    if (result.nextCursor === undefined || result.nextCursor === '' || result.nextCursor === cursor) return tools;
    cursor = result.nextCursor;
  }
  throw new ToolrunError('UPSTREAM_FAILED', `the MCP server sent more than ${MAX_TOOL_PAGES} pages of tools (does it repeat its cursor?)`);
}

/** Whether an MCP tool is safe to repeat: `annotations.idempotentHint`, else `readOnlyHint`, else false. */
export function isMcpToolIdempotent(tool: Pick<Tool, 'annotations'>): boolean {
  return tool.annotations?.idempotentHint ?? tool.annotations?.readOnlyHint ?? false;
}

/** One `tools/call` as {@link callMcpTool} makes it. */
export interface McpToolCall {
  client: Client;
  name: string;
  arguments: Record<string, unknown>;
  /** Aborts the request (the SDK sends `notifications/cancelled` to the server). Pass `ctx.signal`. */
  signal?: AbortSignal;
  /** The request's `_meta` (without `progressToken`: the SDK sets its own when `onProgress` is given). */
  meta?: Record<string, unknown>;
  /** Progress notifications of this call. */
  onProgress?: (progress: Progress) => void;
  /** @defaultValue the longest timer (the caller's signal decides) */
  requestTimeoutMs?: number;
  /** For `retryNotBefore` of a server's classification. @defaultValue `Date.now()` */
  nowMs?: () => number;
}

/**
 * Calls one MCP tool and returns its result exactly as the server sent it (not re-validated
 * against the tool's `outputSchema`: its client does that). An `isError` result and every thrown
 * failure are thrown as errors the toolrun runtime classifies (see `errorFromToolResult` and
 * `errorFromMcpThrown`).
 *
 * @throws ToolError (or the transport's own error) — never returns an `isError` result.
 */
export async function callMcpTool(call: McpToolCall): Promise<CallToolResult> {
  let result: CallToolResult;
  try {
    result = (await call.client.request(
      { method: 'tools/call', params: { name: call.name, arguments: call.arguments, ...(call.meta ? { _meta: call.meta } : {}) } },
      ResultSchema,
      {
        ...(call.signal ? { signal: call.signal } : {}),
        ...(call.onProgress ? { onprogress: call.onProgress } : {}),
        timeout: call.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      },
    )) as CallToolResult;
  } catch (thrown) {
    throw errorFromMcpThrown(thrown);
  }
  if (result.isError === true) throw errorFromToolResult(result, (call.nowMs ?? Date.now)());
  return result;
}

/** Options of {@link mcpTools}. */
export interface McpToolsOptions {
  /** Prepended to every tool name (`github.` → `github.create_issue`); the server is called with its own name. */
  prefix?: string;
  /** Which tools to take. @defaultValue all */
  include?: (tool: Tool) => boolean;
  /** Per-attempt timeout of every tool, in ms. @defaultValue the runtime's `defaultTimeoutMs` */
  timeoutMs?: number;
  /**
   * What a success returns as the envelope's `data`: `'structured'` = `structuredContent` when the
   * server sent it, else the `content` blocks; `'result'` = the whole `CallToolResult`. @defaultValue `'structured'`
   */
  output?: 'structured' | 'result';
  /**
   * Retry environment failures of tools that are neither idempotent nor read-only too. @defaultValue false
   * (such a tool gets `retry: { maxAttempts: 1 }`: its failure goes back to the model at once)
   */
  retryNonIdempotent?: boolean;
  /**
   * Called with the new definitions after the server sent `notifications/tools/list_changed` (the
   * list is read again). Build a new runtime from them. Installed on a `Client` source only.
   */
  onToolsChanged?: (tools: ToolDefinition[]) => void;
  /** A tool whose name toolrun cannot register (not `^[A-Za-z0-9_.:/-]{1,128}$` after the prefix) is left out and passed here. */
  onSkippedTool?: (tool: Tool, reason: string) => void;
  /** Called when re-reading the list after a change failed. */
  onRefreshError?: (error: unknown) => void;
  /**
   * Now, in ms since the epoch: a server's `retryNotBefore` becomes a wait measured from it. Pass
   * the runtime's `clock.now` when the runtime has a clock of its own. @defaultValue `Date.now`
   */
  nowMs?: () => number;
}

function isConnection(source: Client | McpConnection): source is McpConnection {
  return typeof (source as Partial<McpConnection>).connections === 'number';
}

/**
 * The definition of one MCP tool for a toolrun runtime: its `inputSchema` validated before the
 * server is called (a failing call never reaches it), `idempotent` from the tool's annotations,
 * `execute` calling `tools/call` with `ctx.signal` and throwing classified failures.
 * `client` is read at each call (`undefined`: the server is down → `UNAVAILABLE`).
 */
export function mcpToolDefinition(
  tool: Tool,
  client: () => Client | undefined,
  options: Omit<McpToolsOptions, 'include' | 'onToolsChanged' | 'onSkippedTool'> = {},
): ToolDefinition {
  const idempotent = isMcpToolIdempotent(tool);
  const output = options.output ?? 'structured';
  return {
    name: `${options.prefix ?? ''}${tool.name}`,
    description: tool.description ?? tool.title ?? '',
    inputSchema: tool.inputSchema as Record<string, unknown>,
    idempotent,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(!idempotent && options.retryNonIdempotent !== true ? { retry: { maxAttempts: 1 } } : {}),
    execute: async (args: Record<string, unknown>, context: ToolContext) => {
      const current = client();
      if (!current) throw new ToolError({ kind: 'server', message: `the MCP server of ${tool.name} is not connected (it is restarting)` });
      const result = await callMcpTool({
        client: current,
        name: tool.name,
        arguments: args,
        signal: context.signal,
        ...(options.nowMs ? { nowMs: options.nowMs } : {}),
      });
      if (output === 'result') return result;
      return result.structuredContent ?? result.content;
    },
  };
}

/**
 * The tools of an MCP server as toolrun tool definitions, for `createToolRuntime({ tools })` or a
 * config's `tools`: every page of `tools/list`, each tool's `inputSchema` as its schema (validated
 * by toolrun before the server is called), `idempotent` from
 * `annotations.idempotentHint ?? readOnlyHint`, and failures classified — `isError` results by the server's
 * ToolFailure (`_meta["io.modelcontextprotocol/toolFailure"]`: its class and code, `retryable: false`
 * not retried, `retryNotBefore` waited for before an in-band retry) or, without one, their text (a missing file → `NOT_FOUND`, "Access denied" →
 * `PERMISSION_DENIED`, never retried as transient), JSON-RPC errors by code, request timeouts,
 * HTTP 429 (with `Retry-After`, through `createMcpStatusFetch`) and 5xx, a closed connection →
 * `UNAVAILABLE`. `source` is a connected SDK `Client` or an {@link McpConnection} (which restarts
 * a server that exits).
 *
 * @throws what `tools/list` throws; ToolrunError `INVALID_INPUT` for an endless cursor.
 *
 * @example
 * ```ts
 * const client = new Client({ name: 'agent', version: '1.0.0' });
 * await client.connect(new StdioClientTransport({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] }));
 * const runtime = createToolRuntime({ tools: await mcpTools(client) });
 * ```
 */
export async function mcpTools(source: Client | McpConnection, options: McpToolsOptions = {}): Promise<ToolDefinition[]> {
  const client = isConnection(source) ? () => source.client : () => source;
  const initial = isConnection(source) ? await source.connect() : source;
  const build = async (from: Client): Promise<ToolDefinition[]> => {
    const definitions: ToolDefinition[] = [];
    for (const tool of await listAllMcpTools(from)) {
      if (options.include && !options.include(tool)) continue;
      const name = `${options.prefix ?? ''}${tool.name}`;
      if (!TOOL_NAME_PATTERN.test(name)) {
        options.onSkippedTool?.(tool, `the name ${JSON.stringify(name)} does not match ${TOOL_NAME_PATTERN.source}`);
        continue;
      }
      definitions.push(mcpToolDefinition(tool, client, options));
    }
    return definitions;
  };
  const definitions = await build(initial);
  const onToolsChanged = options.onToolsChanged;
  if (onToolsChanged && !isConnection(source)) {
    source.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      try {
        onToolsChanged(await build(source));
      } catch (error) {
        options.onRefreshError?.(error);
      }
    });
  }
  return definitions;
}
