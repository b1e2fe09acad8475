/**
 * `toolrun/mcp`: MCP tools as toolrun tools (`mcpTools`), toolrun tools served over MCP
 * (`serveOverMcp`), and the pieces the `toolrun mcp-proxy` command is built from. Needs
 * `@modelcontextprotocol/sdk` (an optional peer dependency, v1.32 or later).
 *
 * @packageDocumentation
 */
export { createMcpConnection, type McpConnection, type McpConnectionEvent, type McpConnectionOptions } from './mcp-connection.ts';
export {
  errorFromMcpThrown,
  errorFromToolResult,
  kindFromFailureText,
  readToolFailureClassification,
  resultText,
  TOOL_FAILURE_META_KEY,
  toolFailureClassification,
  TOOLRUN_ENVELOPE_META_KEY,
  type McpToolFailureClassification,
} from './mcp-failure.ts';
export { createMcpStatusFetch, McpHttpStatusError, type McpFetch } from './mcp-status-fetch.ts';
export {
  callMcpTool,
  isMcpToolIdempotent,
  listAllMcpTools,
  mcpToolDefinition,
  mcpTools,
  TOOL_NAME_PATTERN,
  type McpToolCall,
  type McpToolsOptions,
} from './mcp-tools.ts';
export { envelopeToCallToolResult, failureToCallToolResult, serveOverMcp, type ServeOverMcpOptions } from './serve-over-mcp.ts';
