/**
 * `toolrun/mcp`: MCP tools as toolrun tools (`mcpTools`), toolrun tools served over MCP
 * (`serveOverMcp`), a client connection that restarts its server (`createMcpConnection`), and the
 * draft MCP ToolFailure both sides read and write under `_meta`. Needs
 * `@modelcontextprotocol/sdk` (an optional peer dependency, v1.32 or later). The
 * `toolrun mcp-proxy` command is built from these.
 *
 * @packageDocumentation
 */
export { createMcpConnection, type McpConnection, type McpConnectionEvent, type McpConnectionOptions } from './mcp-connection.ts';
export {
  readToolFailureClassification,
  TOOL_FAILURE_CLASS_OF_CODE,
  TOOL_FAILURE_META_KEY,
  toolFailureClassification,
  TOOLRUN_ENVELOPE_META_KEY,
  type McpToolFailureClassification,
  type ToolFailureClass,
} from './mcp-failure.ts';
export { mcpSessionScope, TOOLRUN_SESSION_META_KEY } from './mcp-session-scope.ts';
export { createMcpStatusFetch, McpHttpStatusError, type McpFetch } from './mcp-status-fetch.ts';
export { mcpTools, type McpToolsOptions } from './mcp-tools.ts';
export { serveOverMcp, type ServeOverMcpOptions } from './serve-over-mcp.ts';
export {
  MCP_PROXY_HOST,
  mcpProxyContinuation,
  type McpProxiedCall,
  type McpProxiedResult,
  type McpProxyContinuationOptions,
} from './mcp-proxy-continuation.ts';
