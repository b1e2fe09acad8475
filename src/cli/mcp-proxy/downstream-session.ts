import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
  type ClientCapabilities,
  type Implementation,
  type JSONRPCMessage,
  type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { ToolGuard, ToolsCallParams } from './tool-guard.ts';

/**
 * The revisions of the stateless protocol the proxy serves: no `initialize`, every request carries
 * its protocol version, client and capabilities in `_meta`; `server/discover` says what the server is.
 */
export const STATELESS_PROTOCOL_VERSIONS: readonly string[] = ['2026-07-28'];

/** The `_meta` keys of the stateless protocol's per-request envelope. */
const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_INFO_META_KEY = 'io.modelcontextprotocol/clientInfo';
const CLIENT_CAPABILITIES_META_KEY = 'io.modelcontextprotocol/clientCapabilities';
const SERVER_INFO_META_KEY = 'io.modelcontextprotocol/serverInfo';
/** The stateless protocol's error for a version the server does not speak. */
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** What a request says of its client: `initialize`'s params, or the stateless protocol's `_meta` envelope. */
function clientOf(message: JSONRPCRequest): { clientInfo?: Implementation; capabilities?: ClientCapabilities; statelessVersion?: string } {
  const params = (message.params ?? {}) as { clientInfo?: Implementation; capabilities?: ClientCapabilities; _meta?: Record<string, unknown> };
  if (message.method === 'initialize') return params;
  const meta = params._meta ?? {};
  const version = meta[PROTOCOL_VERSION_META_KEY];
  return {
    ...(typeof meta[CLIENT_INFO_META_KEY] === 'object' && meta[CLIENT_INFO_META_KEY] !== null
      ? { clientInfo: meta[CLIENT_INFO_META_KEY] as Implementation }
      : {}),
    ...(typeof meta[CLIENT_CAPABILITIES_META_KEY] === 'object' && meta[CLIENT_CAPABILITIES_META_KEY] !== null
      ? { capabilities: meta[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities }
      : {}),
    ...(typeof version === 'string' ? { statelessVersion: version } : {}),
  };
}

/** The answer to `server/discover`: the revisions the proxy speaks, and the upstream's capabilities and identity. */
function discoverResult(client: Client): Record<string, unknown> {
  const serverInfo = client.getServerVersion();
  const instructions = client.getInstructions();
  return {
    supportedVersions: [...STATELESS_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS],
    capabilities: client.getServerCapabilities() ?? {},
    ...(instructions !== undefined ? { instructions } : {}),
    ...(serverInfo ? { _meta: { [SERVER_INFO_META_KEY]: serverInfo } } : {}),
  };
}

/** A downstream session: one MCP client on one transport. */
export interface Session {
  readonly label: string;
  server: Server | undefined;
  /** The upstream client the session was started with. */
  upstream: Client | undefined;
  /** Started by a request of the stateless protocol (not `initialize`): its results say `resultType`. */
  stateless: boolean;
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

/** Where a session's own answers go: the client's transport, through the session's `send`. */
type ClientLink = Pick<Transport, 'send' | 'sessionId'>;

/** The methods whose results the stateless protocol makes cacheable (`ttlMs`, `cacheScope`). */
const CACHEABLE_METHODS = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/read', 'resources/templates/list']);

/**
 * A result as the stateless protocol has it: `resultType: 'complete'` (the proxy sends no interim
 * results) and, for a list or a read, `ttlMs: 0` and `cacheScope: 'private'` (the upstream said
 * nothing of caching: the client reads again).
 */
function asStatelessResult(message: JSONRPCMessage, method: string | undefined): JSONRPCMessage {
  const result = (message as { result?: unknown }).result;
  if (typeof result !== 'object' || result === null) return message;
  const cacheable = method !== undefined && CACHEABLE_METHODS.has(method) && (result as { ttlMs?: unknown }).ttlMs === undefined;
  return {
    ...message,
    result: { resultType: 'complete', ...(cacheable ? { ttlMs: 0, cacheScope: 'private' } : {}), ...result },
  } as JSONRPCMessage;
}

/** A guarded `tools/call`, answered on the session's transport without the SDK server's request machinery. */
async function answerToolsCall(
  context: SessionContext,
  session: Session,
  transport: ClientLink,
  request: { id: string | number; params: ToolsCallParams & { name: string } },
): Promise<void> {
  const { id } = request;
  const controller = new AbortController();
  session.calls.set(id, controller);
  let response: JSONRPCMessage;
  try {
    const result = await context.guard.call(request.params, {
      requestId: id,
      sessionId: transport.sessionId,
      connection: session.label,
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
function takeFast(context: SessionContext, session: Session, transport: ClientLink, message: JSONRPCMessage): boolean {
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
  const session: Session = { label: options.label, server: undefined, upstream: undefined, stateless: false, lastActiveAt: Date.now(), calls: new Map() };
  context.sessions.add(session);
  let initializing = false;
  const queued: JSONRPCMessage[] = [];
  /** The methods of a stateless session's requests in flight, by id: their results are shaped by method. */
  const methods = new Map<string | number, string>();
  const send = (message: JSONRPCMessage, sendOptions?: TransportSendOptions) => {
    if (!session.stateless) return transport.send(message, sendOptions);
    const id = (message as { id?: string | number }).id;
    const method = id !== undefined ? methods.get(id) : undefined;
    if (id !== undefined && (message as { method?: unknown }).method === undefined) methods.delete(id);
    return transport.send(asStatelessResult(message, method), sendOptions);
  };
  const link: ClientLink = {
    send,
    get sessionId() {
      return transport.sessionId;
    },
  };
  const gate: Transport = {
    start: async () => undefined,
    send,
    close: () => transport.close(),
    get sessionId() {
      return transport.sessionId;
    },
  };
  const reply = (id: string | number, code: number, message: string) =>
    transport.send({ jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage).catch(() => undefined);

  /**
   * Starts the session on its first request: `initialize` (session-based protocol) or any request
   * of the stateless protocol; `server/discover` is answered here. Messages that arrive meanwhile are queued.
   */
  async function start(message: JSONRPCRequest): Promise<void> {
    initializing = true;
    session.stateless = message.method !== 'initialize';
    const client = clientOf(message);
    let upstream: Client;
    try {
      upstream = await context.ensureUpstream(client.clientInfo, client.capabilities);
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      context.log(text);
      await reply(message.id, ErrorCode.InternalError, `toolrun mcp-proxy: ${text}`);
      initializing = false;
      queued.length = 0;
      return;
    }
    const server = context.buildServer(session, upstream);
    await server.connect(gate);
    session.server = server;
    session.upstream = upstream;
    deliver(message);
    for (const next of queued.splice(0)) deliver(next);
    initializing = false;
  }

  /** A message of a started session: `server/discover` and guarded calls here, the rest to the SDK server. */
  function deliver(message: JSONRPCMessage, extra?: Parameters<NonNullable<Transport['onmessage']>>[1]): void {
    const request = message as Partial<JSONRPCRequest>;
    if (session.stateless && request.id !== undefined && request.method !== undefined) methods.set(request.id, request.method);
    if (request.method === 'server/discover' && request.id !== undefined) {
      void send({ jsonrpc: '2.0', id: request.id, result: discoverResult(session.upstream!) } as JSONRPCMessage).catch(() => undefined);
      return;
    }
    if (!takeFast(context, session, link, message)) gate.onmessage?.(message, extra);
  }

  transport.onmessage = (message, extra) => {
    if (session.server) {
      deliver(message, extra);
      return;
    }
    if (initializing) {
      queued.push(message);
      return;
    }
    const request = message as Partial<JSONRPCRequest>;
    if (request.method === undefined || request.id === undefined) return;
    const { statelessVersion } = clientOf(request as JSONRPCRequest);
    if (statelessVersion !== undefined && statelessVersion >= STATELESS_PROTOCOL_VERSIONS[0]! && !STATELESS_PROTOCOL_VERSIONS.includes(statelessVersion)) {
      void transport
        .send({
          jsonrpc: '2.0',
          id: request.id,
          error: {
            code: UNSUPPORTED_PROTOCOL_VERSION,
            message: `Unsupported protocol version ${statelessVersion}`,
            data: { supported: [...STATELESS_PROTOCOL_VERSIONS], requested: statelessVersion },
          },
        } as JSONRPCMessage)
        .catch(() => undefined);
      return;
    }
    if (request.method === 'initialize' || request.method === 'server/discover' || statelessVersion !== undefined) {
      void start(message as JSONRPCRequest);
      return;
    }
    void reply(request.id, ErrorCode.InvalidRequest, 'toolrun mcp-proxy: the session is not initialized (send initialize first)');
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
