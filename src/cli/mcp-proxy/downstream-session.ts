import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError,
  type ClientCapabilities,
  type Implementation,
  type JSONRPCMessage,
  type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { ToolGuard, ToolsCallParams } from './tool-guard.ts';

/** A downstream session: one MCP client on one transport. */
export interface Session {
  readonly label: string;
  server: Server | undefined;
  lastActiveAt: number;
  /** The guarded `tools/call` requests the proxy answers itself (not through `server`), by request id: their cancellation. */
  readonly calls: Map<string | number, AbortController>;
}

/** What a downstream session needs of the proxy. */
export interface SessionContext {
  sessions: Set<Session>;
  guard: ToolGuard;
  /** The upstream's client: started (or waited for) at a session's first `initialize`. */
  ensureUpstream(clientInfo: Implementation | undefined, capabilities: ClientCapabilities | undefined): Promise<Client>;
  /** The SDK server that answers this session for the upstream (everything but a guarded `tools/call`). */
  buildServer(session: Session, client: Client): Server;
  log: (line: string) => void;
}

/** A guarded `tools/call`, answered on the session's transport without the SDK server's request machinery. */
async function answerToolsCall(
  context: SessionContext,
  session: Session,
  transport: Transport,
  request: { id: string | number; params: ToolsCallParams & { name: string } },
): Promise<void> {
  const { id } = request;
  const controller = new AbortController();
  session.calls.set(id, controller);
  let response: JSONRPCMessage;
  try {
    const result = await context.guard.call(request.params, {
      requestId: id,
      sessionId: transport.sessionId ?? session.label,
      signal: controller.signal,
      forwardProgress: (progressToken) => (progress) => {
        void transport
          .send({ jsonrpc: '2.0', method: 'notifications/progress', params: { ...progress, progressToken } } as JSONRPCMessage, { relatedRequestId: id })
          .catch(() => undefined);
      },
    });
    response = { jsonrpc: '2.0', id, result } as JSONRPCMessage;
  } catch (error) {
    const code = error instanceof McpError && Number.isSafeInteger(error.code) ? error.code : ErrorCode.InternalError;
    response = { jsonrpc: '2.0', id, error: { code, message: error instanceof Error ? error.message : 'Internal error' } } as JSONRPCMessage;
  } finally {
    session.calls.delete(id);
  }
  // A request the client cancelled gets no response (as the SDK's server does).
  if (!controller.signal.aborted) await transport.send(response, { relatedRequestId: id }).catch(() => undefined);
}

/** Takes the messages the proxy handles before the SDK server: guarded `tools/call` requests and their cancellation. */
function takeFast(context: SessionContext, session: Session, transport: Transport, message: JSONRPCMessage): boolean {
  const value = message as { method?: unknown; id?: unknown; params?: Record<string, unknown> };
  if (value.method === 'tools/call' && (typeof value.id === 'string' || typeof value.id === 'number')) {
    const params = (value.params ?? {}) as ToolsCallParams;
    if (!context.guard.guards(params) || session.calls.has(value.id)) return false;
    session.lastActiveAt = Date.now();
    void answerToolsCall(context, session, transport, { id: value.id, params });
    return true;
  }
  if (value.method === 'notifications/cancelled' && session.calls.size > 0) {
    const requestId = value.params?.requestId as string | number | undefined;
    const controller = requestId !== undefined ? session.calls.get(requestId) : undefined;
    if (!controller) return false;
    controller.abort(value.params?.reason);
    return true;
  }
  return false;
}

/**
 * Serves one downstream session on `transport` (not yet started): its first `initialize` starts
 * (or waits for) the upstream and builds the session's SDK server, messages that arrive meanwhile
 * are queued, a request before `initialize` is refused; an upstream that cannot start answers the
 * `initialize` with a JSON-RPC error saying why (the client may send it again).
 */
export async function attachSession(context: SessionContext, transport: Transport, options: { label: string; onClose?: () => void }): Promise<void> {
  const session: Session = { label: options.label, server: undefined, lastActiveAt: Date.now(), calls: new Map() };
  context.sessions.add(session);
  let initializing = false;
  const queued: JSONRPCMessage[] = [];
  const gate: Transport = {
    start: async () => undefined,
    send: (message: JSONRPCMessage, sendOptions?: TransportSendOptions) => transport.send(message, sendOptions),
    close: () => transport.close(),
    get sessionId() {
      return transport.sessionId;
    },
  };
  const reply = (id: string | number, code: number, message: string) =>
    transport.send({ jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage).catch(() => undefined);

  async function initialize(message: JSONRPCRequest): Promise<void> {
    initializing = true;
    const params = (message.params ?? {}) as { clientInfo?: Implementation; capabilities?: ClientCapabilities };
    let client: Client;
    try {
      client = await context.ensureUpstream(params.clientInfo, params.capabilities);
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      context.log(text);
      await reply(message.id, ErrorCode.InternalError, `toolrun mcp-proxy: ${text}`);
      initializing = false;
      queued.length = 0;
      return;
    }
    const server = context.buildServer(session, client);
    await server.connect(gate);
    session.server = server;
    gate.onmessage?.(message);
    for (const next of queued.splice(0)) gate.onmessage?.(next);
    initializing = false;
  }

  transport.onmessage = (message, extra) => {
    if (session.server) {
      if (!takeFast(context, session, transport, message)) gate.onmessage?.(message, extra);
      return;
    }
    if (initializing) {
      queued.push(message);
      return;
    }
    const request = message as Partial<JSONRPCRequest>;
    if (request.method === 'initialize' && request.id !== undefined) {
      void initialize(message as JSONRPCRequest);
      return;
    }
    if (request.method !== undefined && request.id !== undefined) {
      void reply(request.id, ErrorCode.InvalidRequest, 'toolrun mcp-proxy: the session is not initialized (send initialize first)');
    }
  };
  transport.onclose = () => {
    context.sessions.delete(session);
    for (const controller of session.calls.values()) controller.abort(new Error('the client closed the session'));
    gate.onclose?.();
    options.onClose?.();
  };
  transport.onerror = (error) => {
    if (gate.onerror) gate.onerror(error);
    else context.log(`transport error: ${error.message}`);
  };
  await transport.start();
}
