import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError,
  ResultSchema,
  type JSONRPCRequest,
  type Notification,
  type Progress,
  type Result,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { ToolRuntimeOptions } from '../../core/create-tool-runtime.ts';
import type { SharedBreaker } from '../../policies/shared-breaker.ts';
import type { IdempotencyLedger } from '../../ground/ports/stores.ts';
import { createMemoryIdempotencyLedger } from '../../stores/memory/memory-idempotency-ledger.ts';
import { attachSession, type Session } from './downstream-session.ts';
import { createIdempotentCalls } from './idempotent-calls.ts';
import { createToolGuard, type ToolsCallParams } from './tool-guard.ts';
import { createUpstream } from './upstream.ts';
import { defaultBreakerKeyPrefix, describeUpstream, type UpstreamSpec } from './upstream-spec.ts';
import type { ProxyDeadLetterOptions } from './proxy-dead-letter.ts';

/** `breaker` with `prefix` prepended to every key. */
function prefixedBreaker(breaker: SharedBreaker, prefix: string): SharedBreaker {
  return {
    acquire: (key) => breaker.acquire(prefix + key),
    recordSuccess: (key, probeId) => breaker.recordSuccess(prefix + key, probeId),
    recordFailure: (key, error, probeId) => breaker.recordFailure(prefix + key, error, probeId),
    releaseProbe: (key, probeId) => breaker.releaseProbe(prefix + key, probeId),
    state: (key) => breaker.state(prefix + key),
  };
}

/** Options of {@link createMcpProxy}. Durations in milliseconds. */
export interface McpProxyOptions {
  upstream: UpstreamSpec;
  /** Options of the runtime that guards `tools/call` (observability hooks, redaction…). */
  runtimeOptions?: Omit<ToolRuntimeOptions, 'tools' | 'sharedBreaker'>;
  /** The breaker shared with other proxy replicas through the store. */
  sharedBreaker?: SharedBreaker;
  /**
   * Prepended to every tool name to make its shared breaker key, so that proxies guarding other
   * servers with a tool of the same name do not share its breaker in a shared store.
   * @defaultValue {@link defaultBreakerKeyPrefix} of `upstream`
   */
  breakerKeyPrefix?: string;
  /** Attempts of an idempotent or read-only tool's call on an environment failure; other tools get one. @defaultValue 3 */
  maxAttempts?: number;
  /**
   * Put the draft ToolFailure (SEP-3313) under `_meta["io.modelcontextprotocol/toolFailure"]` of
   * every failure the proxy answers, beside toolrun's envelope. @defaultValue true (while the extension is a draft)
   */
  toolFailure?: boolean;
  /**
   * Where the answers of calls with an idempotency key (`_meta["dev.toolrun/idempotencyKey"]`) to
   * tools that are not idempotent are recorded, so that a call sent again (a broken stream's
   * request re-sent) runs once; shared by replicas through the store. @defaultValue in memory
   */
  idempotencyLedger?: IdempotencyLedger;
  /**
   * Where a guarded call that exhausts its retries (every attempt of an idempotent or read-only
   * tool, the one attempt of another), is refused by an open breaker or fails as misconfigured is
   * dead-lettered: one tool-DLQ entry per call (host `mcp`, its arguments redacted, the call as
   * sent and its MCP session and request id in the conversation store), replayed by the `mcp`
   * host's continuation (`mcpProxyContinuation` of `toolrun/mcp`). The client still gets the
   * failure. @defaultValue nowhere
   */
  deadLetter?: ProxyDeadLetterOptions;
  /** Per-attempt timeout of a tool call. @defaultValue 60_000 */
  timeoutMs?: number;
  /** The longest wait for the upstream to start and answer `initialize`. @defaultValue 20_000 */
  startupTimeoutMs?: number;
  /** Backoff of upstream restarts. @defaultValue 200 ms doubling to 10 s */
  restart?: { baseDelayMs: number; maxDelayMs: number };
  /** A line for the proxy's stderr. */
  log: (line: string) => void;
  /** Bytes of the upstream's stderr kept to explain a start failure. @defaultValue 2048 */
  stderrTailBytes?: number;
}

/** The guarding proxy: one upstream MCP server, any number of downstream sessions. */
export interface McpProxy {
  /**
   * Serves one downstream session on `transport` (not yet started). The first `initialize` starts
   * the upstream (with that client's name and capabilities); when it cannot start, the client gets
   * a JSON-RPC error saying why and may send `initialize` again.
   */
  attach(transport: Transport, options: { label: string; onClose?: () => void }): Promise<void>;
  /** The upstream's process id (stdio), once started. */
  readonly upstreamPid: number | undefined;
  /** The tool names `tools/call` guards (validation, classification, breakers). */
  readonly guardedTools: readonly string[];
  /** Closes every session and the upstream. */
  close(): Promise<void>;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** A request the proxy does not guard: sent upstream as is, its answer (or JSON-RPC error) returned as is. */
async function forward(client: Client | undefined, request: JSONRPCRequest, extra: Extra): Promise<Result> {
  if (!client)
    throw new McpError(ErrorCode.InternalError, 'toolrun mcp-proxy: the upstream MCP server is not running (it is being restarted); try again shortly');
  const params = request.params as { _meta?: { progressToken?: unknown } } | undefined;
  const progressToken = params?._meta?.progressToken;
  try {
    return await client.request({ method: request.method, params: request.params }, ResultSchema, {
      signal: extra.signal,
      timeout: 2_147_483_647,
      ...(progressToken !== undefined ? { onprogress: progressForwarder(progressToken as string | number, extra) } : {}),
    });
  } catch (error) {
    if (error instanceof McpError) throw error;
    throw new McpError(ErrorCode.InternalError, `toolrun mcp-proxy: the upstream failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Sends the upstream's progress of a request to the downstream session, under the client's own token. */
function progressForwarder(progressToken: string | number, extra: Extra): (progress: Progress) => void {
  return (progress) => {
    void extra.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken } }).catch(() => undefined);
  };
}

/** The session that was active last: the one the upstream's own requests (sampling, elicitation, roots) go to. */
function latestSession(sessions: Set<Session>): Session | undefined {
  let latest: Session | undefined;
  for (const session of sessions) if (session.server && (!latest || session.lastActiveAt >= latest.lastActiveAt)) latest = session;
  return latest;
}

/**
 * Creates the proxy. Everything passes through unchanged except `tools/call` of a tool in the
 * upstream's `tools/list`: its arguments are validated against the tool's `inputSchema` before
 * the upstream sees them (a failing call never reaches it), failures are classified and answered
 * as `isError` results with toolrun's envelope and a `_meta` classification, environment failures
 * are retried only for idempotent or read-only tools, a per-session breaker cuts off a tool that
 * keeps failing in one session and the shared breaker one that fails for everyone. Successes are
 * the upstream's result, unchanged. A tool that cannot be guarded (a name toolrun cannot
 * register, a schema that does not compile, a task-augmented call) is passed through unguarded.
 */
export function createMcpProxy(options: McpProxyOptions): McpProxy {
  const sessions = new Set<Session>();
  const log = options.log;
  const sharedBreaker = options.sharedBreaker
    ? prefixedBreaker(options.sharedBreaker, options.breakerKeyPrefix ?? defaultBreakerKeyPrefix(options.upstream))
    : undefined;
  const upstream = createUpstream({
    spec: options.upstream,
    log,
    stderrTailBytes: options.stderrTailBytes ?? 2048,
    startupTimeoutMs: options.startupTimeoutMs ?? 20_000,
    restart: options.restart ?? { baseDelayMs: 200, maxDelayMs: 10_000 },
    setupClient: setupUpstreamClient,
    onReconnected: (client) => void guard.refreshSoon(client),
  });
  const guard = createToolGuard({
    runtimeOptions: options.runtimeOptions,
    sharedBreaker,
    maxAttempts: options.maxAttempts ?? 3,
    timeoutMs: options.timeoutMs,
    toolFailure: options.toolFailure ?? true,
    idempotentCalls: createIdempotentCalls({
      ledger: options.idempotencyLedger ?? createMemoryIdempotencyLedger(),
      keyPrefix: options.breakerKeyPrefix ?? defaultBreakerKeyPrefix(options.upstream),
    }),
    upstream: () => upstream.transport,
    ...(options.deadLetter ? { deadLetter: { ...options.deadLetter, upstream: describeUpstream(options.upstream) } } : {}),
    log,
  });

  function setupUpstreamClient(client: Client): void {
    // Upstream → downstream: notifications to every session, requests (sampling, elicitation, roots) to the latest one.
    client.fallbackNotificationHandler = async (notification: Notification) => {
      if (notification.method === 'notifications/tools/list_changed') await guard.refreshSoon(client);
      for (const session of sessions) {
        await session.server?.notification(notification as ServerNotification).catch(() => undefined);
      }
    };
    client.fallbackRequestHandler = async (request: JSONRPCRequest, extra) => {
      const session = latestSession(sessions);
      if (!session?.server) throw new McpError(ErrorCode.InternalError, 'toolrun mcp-proxy: no client is connected to answer this request');
      return session.server.request({ method: request.method, params: request.params } as ServerRequest, ResultSchema, {
        signal: extra.signal,
        timeout: 2_147_483_647,
      });
    };
  }

  /** A `tools/call` that reached the session's SDK server (not taken before it): guarded when the guard takes it, else forwarded. */
  async function callTool(session: Session, request: JSONRPCRequest, extra: Extra): Promise<Result> {
    const params = (request.params ?? {}) as ToolsCallParams;
    if (typeof params.name !== 'string') throw new McpError(ErrorCode.InvalidParams, 'tools/call needs params.name, the tool name (a string)');
    if (!guard.guards(params)) return forward(upstream.client, request, extra);
    return guard.call(params, {
      requestId: extra.requestId,
      sessionId: extra.sessionId,
      connection: session.label,
      signal: extra.signal,
      forwardProgress: (progressToken) => progressForwarder(progressToken, extra),
    });
  }

  function buildServer(session: Session, client: Client): Server {
    const server = new Server(client.getServerVersion() ?? { name: 'toolrun-mcp-proxy', version: '0.1.0' }, {
      capabilities: client.getServerCapabilities() ?? {},
      ...(client.getInstructions() !== undefined ? { instructions: client.getInstructions()! } : {}),
    });
    // logging/setLevel is the upstream's to answer, like everything but initialize and ping.
    server.removeRequestHandler('logging/setLevel');
    server.fallbackRequestHandler = async (request, extra) => {
      session.lastActiveAt = Date.now();
      if (request.method === 'tools/call') return callTool(session, request, extra);
      return forward(upstream.client, request, extra);
    };
    server.fallbackNotificationHandler = async (notification) => {
      await upstream.client?.notification(notification as never).catch(() => undefined);
    };
    return server;
  }

  const context = {
    sessions,
    guard,
    ensureUpstream: (clientInfo: Parameters<typeof upstream.connect>[0], capabilities: Parameters<typeof upstream.connect>[1]) =>
      upstream.connect(clientInfo, capabilities, (client) => guard.readFirst(client)),
    buildServer,
    log,
  };
  return {
    attach: (transport: Transport, attachOptions: { label: string; onClose?: () => void }) => attachSession(context, transport, attachOptions),
    get upstreamPid() {
      return upstream.pid;
    },
    get guardedTools() {
      return guard.guardedTools;
    },
    async close() {
      guard.stop();
      for (const session of sessions) await session.server?.close().catch(() => undefined);
      sessions.clear();
      await upstream.close();
    },
  };
}
