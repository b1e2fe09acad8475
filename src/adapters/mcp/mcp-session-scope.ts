/**
 * The `_meta` key of a `tools/call` that names its session for toolrun's per-session breaker (a
 * string of at most 256 characters): what a client of the stateless protocol, which has no MCP
 * session, sends to keep its calls in one scope (an agent run's id, a conversation's id).
 */
export const TOOLRUN_SESSION_META_KEY = 'dev.toolrun/sessionId';

/** A W3C `traceparent`: version, trace id, parent id, flags. */
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The per-session breaker scope of one `tools/call`, from what the client sends, first found:
 * 1. `_meta["dev.toolrun/sessionId"]` (see {@link TOOLRUN_SESSION_META_KEY}) → `session:<it>`;
 * 2. the trace id of `_meta.traceparent` (W3C Trace Context, as MCP carries it in `_meta`): one
 *    agent run, across connections and sessions → `trace:<trace id>`;
 * 3. the MCP session (`Mcp-Session-Id` of the session-based protocol) → the session id;
 * 4. `fallback`: the connection (a stdio client), or one scope for every stateless request that
 *    sends none of these.
 */
export function mcpSessionScope(meta: Record<string, unknown> | undefined, sessionId: string | undefined, fallback: string): string {
  const named = meta?.[TOOLRUN_SESSION_META_KEY];
  if (typeof named === 'string' && named.length > 0 && named.length <= 256) return `session:${named}`;
  const traceparent = meta?.traceparent;
  const trace = typeof traceparent === 'string' ? TRACEPARENT.exec(traceparent.trim().toLowerCase()) : null;
  if (trace && !/^0+$/.test(trace[1]!)) return `trace:${trace[1]}`;
  return sessionId ?? fallback;
}
