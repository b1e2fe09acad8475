import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import { formatToolResult } from '../../core/format-tool-result.ts';
import type { ToolFailure, ToolResult } from '../../ground/tool-result.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import { mcpSessionScope } from './mcp-session-scope.ts';
import { TOOL_FAILURE_META_KEY, TOOLRUN_ENVELOPE_META_KEY, toolFailureClassification } from './mcp-failure.ts';

/** Options of {@link failureToCallToolResult}. */
export interface FailureResultOptions {
  /** Now, in ms since the epoch: `retryNotBefore` is measured from it. */
  nowMs: number;
  /**
   * Put the envelope in `structuredContent` too; `false` for a tool that declares an
   * `outputSchema` a failure envelope does not match. @defaultValue true
   */
  structured?: boolean;
  /** Add the draft ToolFailure under `_meta["io.modelcontextprotocol/toolFailure"]`. @defaultValue true */
  toolFailure?: boolean;
}

/**
 * A toolrun failure envelope as an MCP `isError` result: the envelope's text (what the model
 * reads, `formatToolResult`) as the content, the envelope itself as `structuredContent` (unless
 * `structured: false`) and under `_meta["dev.toolrun/envelope"]`, and the draft ToolFailure under
 * `_meta["io.modelcontextprotocol/toolFailure"]` (unless `toolFailure: false`; see
 * {@link toolFailureClassification}).
 */
export function failureToCallToolResult(failure: ToolFailure, options: FailureResultOptions): CallToolResult {
  return {
    content: [{ type: 'text', text: formatToolResult(failure) }],
    ...(options.structured === false ? {} : { structuredContent: failure as unknown as Record<string, unknown> }),
    isError: true,
    _meta: {
      ...(options.toolFailure === false ? {} : { [TOOL_FAILURE_META_KEY]: toolFailureClassification(failure, options.nowMs) }),
      [TOOLRUN_ENVELOPE_META_KEY]: failure,
    },
  };
}

/**
 * A toolrun envelope as an MCP tool result: a success carries the envelope as `structuredContent`
 * and as text; a failure is {@link failureToCallToolResult} (with the ToolFailure unless
 * `toolFailure: false`).
 */
export function envelopeToCallToolResult(result: ToolResult, nowMs: number, options: { toolFailure?: boolean } = {}): CallToolResult {
  if (result.status === 'failed') return failureToCallToolResult(result, { nowMs, ...(options.toolFailure === false ? { toolFailure: false } : {}) });
  return { content: [{ type: 'text', text: formatToolResult(result) }], structuredContent: result as unknown as Record<string, unknown> };
}

/** Options of {@link serveOverMcp}. */
export interface ServeOverMcpOptions {
  /**
   * The per-session breaker's scope of a call that names none: a call's scope is, first found,
   * `_meta["dev.toolrun/sessionId"]`, the trace id of `_meta.traceparent`, the MCP session id
   * (Streamable HTTP), else this (see `mcpSessionScope`). @defaultValue `'mcp'`
   */
  defaultSessionId?: string;
  /** Tool annotations to advertise besides `idempotentHint` (e.g. `readOnlyHint`), by tool name. */
  annotations?: Readonly<Record<string, Tool['annotations']>>;
  /**
   * Put the draft ToolFailure (SEP-3313) under `_meta["io.modelcontextprotocol/toolFailure"]` of
   * every failure, beside the envelope. @defaultValue true (while the extension is a draft)
   */
  toolFailure?: boolean;
}

/**
 * Serves every tool of a toolrun runtime on a low-level MCP SDK `Server`: `tools/list` advertises
 * each tool's schema (`runtime.specs`) with `annotations.idempotentHint` from its definition;
 * `tools/call` runs it through the runtime (validation, retries, breakers, `ctx.signal` aborted
 * when the client cancels) and answers with the envelope, as `structuredContent` and as text:
 * `isError` and the draft ToolFailure under `_meta` on failure. An unknown tool is an `isError` result with
 * `TOOL_NOT_FOUND` and the closest name, not a protocol error. Call it before `server.connect()`
 * (it registers the `tools` capability).
 *
 * @throws ToolrunError `INVALID_OPTIONS` when the server is already connected.
 *
 * @example
 * ```ts
 * const server = new Server({ name: 'my-tools', version: '1.0.0' });
 * serveOverMcp(createToolRuntime({ tools }), server);
 * await server.connect(new StdioServerTransport());
 * ```
 */
export function serveOverMcp(runtime: ToolRuntime, server: Server, options: ServeOverMcpOptions = {}): void {
  try {
    server.registerCapabilities({ tools: {} });
  } catch (error) {
    throw new ToolrunError('INVALID_OPTIONS', 'serveOverMcp must be called before server.connect(): capabilities cannot change after connecting', {
      cause: error,
    });
  }
  const defaultSessionId = options.defaultSessionId ?? 'mcp';
  const toolFailure = options.toolFailure ?? true;
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: runtime.specs.map((spec): Tool => {
      const registered = runtime.getTool(spec.name);
      const schema = spec.inputSchema as Record<string, unknown>;
      return {
        name: spec.name,
        description: spec.description,
        inputSchema: { ...schema, type: 'object' } as Tool['inputSchema'],
        annotations: { ...options.annotations?.[spec.name], idempotentHint: registered?.idempotent ?? false },
      };
    }),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const result = await runtime.run({
      name: request.params.name,
      args: request.params.arguments ?? {},
      sessionId: mcpSessionScope(request.params._meta, extra.sessionId, defaultSessionId),
      signal: extra.signal,
    });
    return envelopeToCallToolResult(result, runtime.clock.now(), { toolFailure });
  });
}
