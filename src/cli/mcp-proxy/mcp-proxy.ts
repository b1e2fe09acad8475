import { createHash } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError,
  ResultSchema,
  type CallToolResult,
  type ClientCapabilities,
  type Implementation,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type Notification,
  type Progress,
  type Result,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { createMcpConnection, type McpConnection } from '../../adapters/mcp/mcp-connection.ts';
import { createMcpStatusFetch } from '../../adapters/mcp/mcp-status-fetch.ts';
import { errorFromMcpThrown, errorFromToolResult } from '../../adapters/mcp/mcp-failure.ts';
import { isMcpToolIdempotent, listAllMcpTools, TOOL_NAME_PATTERN } from '../../adapters/mcp/mcp-tools.ts';
import { failureToCallToolResult } from '../../adapters/mcp/serve-over-mcp.ts';
import { createToolRuntime, type ToolRuntime, type ToolRuntimeOptions } from '../../core/create-tool-runtime.ts';
import type { ToolContext, ToolDefinition } from '../../core/define-tool.ts';
import { ToolError } from '../../core/tool-error.ts';
import type { SharedBreaker } from '../../policies/shared-breaker.ts';
import { createUpstreamStdioTransport } from './upstream-stdio-transport.ts';

/** The MCP server the proxy guards. */
export type UpstreamSpec =
  | {
      kind: 'stdio';
      command: string;
      args: readonly string[];
      /** The child's environment: the proxy's own, so API keys an MCP client config passes reach the server. */
      env: Readonly<Record<string, string | undefined>>;
      cwd?: string;
    }
  | { kind: 'http'; url: URL; headers?: Readonly<Record<string, string>> };

/**
 * The default prefix of the proxy's shared breaker keys: `mcp:` + the first 12 hex digits of the
 * SHA-256 of the upstream (its command and arguments, or its URL) + `/`. Replicas started with the
 * same command and arguments (or URL) share a breaker per tool; a proxy of another server, or of
 * the same server with other arguments, does not. The environment and working directory are not
 * part of it.
 */
export function defaultBreakerKeyPrefix(upstream: UpstreamSpec): string {
  const identity = upstream.kind === 'http' ? ['http', upstream.url.toString()] : ['stdio', upstream.command, ...upstream.args];
  return `mcp:${createHash('sha256').update(JSON.stringify(identity)).digest('hex').slice(0, 12)}/`;
}

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

/** A downstream session: one MCP client on one transport. */
interface Session {
  readonly label: string;
  server: Server | undefined;
  lastActiveAt: number;
  /** The guarded `tools/call` requests the proxy answers itself (not through `server`), by request id: their cancellation. */
  readonly calls: Map<string | number, AbortController>;
}

/** The prefix of the ids (and progress tokens) of the requests the proxy sends upstream itself. */
const OWN_ID_PREFIX = 'toolrun-';

/**
 * Whether an upstream message is a well-formed response to (or a progress notification of) a
 * request the proxy sent itself: those are read without the SDK's message schema.
 */
function isOwnMessage(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const message = value as { jsonrpc?: unknown; id?: unknown; method?: unknown; result?: unknown; error?: unknown; params?: { progressToken?: unknown } };
  if (message.jsonrpc !== '2.0') return false;
  if (message.method === undefined) {
    if (typeof message.id !== 'string' || !message.id.startsWith(OWN_ID_PREFIX)) return false;
    if (message.error !== undefined) {
      const error = message.error as { code?: unknown; message?: unknown };
      return message.result === undefined && typeof error === 'object' && error !== null && Number.isInteger(error.code) && typeof error.message === 'string';
    }
    return typeof message.result === 'object' && message.result !== null && !Array.isArray(message.result);
  }
  return (
    message.method === 'notifications/progress' &&
    typeof message.params === 'object' &&
    message.params !== null &&
    typeof message.params.progressToken === 'string' &&
    message.params.progressToken.startsWith(OWN_ID_PREFIX)
  );
}

/** A `tools/call` the proxy sent to the upstream itself, waiting for its response. */
interface UpstreamCall {
  resolve(result: Record<string, unknown>): void;
  reject(error: unknown): void;
  onProgress: ((progress: Progress) => void) | undefined;
}

/**
 * The upstream transport, seen by the SDK client as itself, with a second sender: {@link request}
 * sends a request with an id of the proxy's own (`toolrun-N`; the client's are numbers) and takes
 * its response (and its progress notifications) before the client sees them, so a guarded call
 * costs no SDK request machinery and no schema parse of its result.
 */
interface UpstreamTransport extends Transport {
  request(
    method: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
    onProgress: ((progress: Progress) => void) | undefined,
  ): Promise<Record<string, unknown>>;
}

/** What a guarded `tools/call` keeps while the runtime runs it. */
interface PendingCall {
  arguments: Record<string, unknown> | undefined;
  meta: Record<string, unknown> | undefined;
  onProgress: ((progress: Progress) => void) | undefined;
  result: CallToolResult | undefined;
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

/** The params of a `tools/call` request, as received. */
interface ToolsCallParams {
  name?: unknown;
  arguments?: unknown;
  _meta?: Record<string, unknown>;
  task?: unknown;
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
  const pending = new Map<string, PendingCall>();
  const maxAttempts = options.maxAttempts ?? 3;
  const stderrTailBytes = options.stderrTailBytes ?? 2048;
  let connection: McpConnection | undefined;
  let runtime: ToolRuntime | undefined;
  let upstreamTools = new Map<string, Tool>();
  let guarded = new Set<string>();
  let upstreamPid: number | undefined;
  let stderrTail = '';
  let callSequence = 0;
  let refreshing: Promise<void> | undefined;
  let refreshAgain = false;
  /** The first read of the tools, shared by every session that initializes while it runs. */
  let firstRead: Promise<void> | undefined;
  let closed = false;

  const log = options.log;
  const sharedBreaker = options.sharedBreaker
    ? prefixedBreaker(options.sharedBreaker, options.breakerKeyPrefix ?? defaultBreakerKeyPrefix(options.upstream))
    : undefined;

  function makeTransport(): Transport {
    const upstream = options.upstream;
    if (upstream.kind === 'http') {
      return interceptUpstream(
        new StreamableHTTPClientTransport(upstream.url, {
          fetch: createMcpStatusFetch(),
          ...(upstream.headers ? { requestInit: { headers: { ...upstream.headers } } } : {}),
        }),
      );
    }
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(upstream.env)) if (value !== undefined) env[key] = value;
    const cwd = upstream.cwd !== undefined ? { cwd: upstream.cwd } : {};
    // The SDK's transport on Windows, where it resolves `npx`-style .cmd shims; elsewhere the same spawn without the schema parse of the proxy's own responses.
    const transport =
      process.platform === 'win32'
        ? new StdioClientTransport({ command: upstream.command, args: [...upstream.args], env, stderr: 'pipe', ...cwd })
        : createUpstreamStdioTransport({
            command: upstream.command,
            args: upstream.args,
            env: { ...getDefaultEnvironment(), ...env },
            trusted: isOwnMessage,
            ...cwd,
          });
    stderrTail = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      process.stderr.write(chunk);
      stderrTail = (stderrTail + chunk.toString('utf8')).slice(-stderrTailBytes);
    });
    const start = transport.start.bind(transport);
    transport.start = async () => {
      await start();
      upstreamPid = transport.pid ?? undefined;
      log(`upstream started (pid ${upstreamPid ?? '?'}): ${upstream.command}`);
    };
    return interceptUpstream(transport);
  }

  let upstreamSequence = 0;

  /** Wraps the SDK's upstream transport (see {@link UpstreamTransport}). */
  function interceptUpstream(inner: Transport): UpstreamTransport {
    const calls = new Map<string, UpstreamCall>();
    let innerClosed = false;
    const outer: UpstreamTransport = {
      start: () => inner.start(),
      send: (message, sendOptions) => inner.send(message, sendOptions),
      close: () => inner.close(),
      get sessionId() {
        return inner.sessionId;
      },
      ...(inner.setProtocolVersion ? { setProtocolVersion: (version: string) => inner.setProtocolVersion!(version) } : {}),
      request(method, params, signal, onProgress) {
        // The SDK client's own errors, for the same classification: a closed connection, the caller's abort reason.
        if (innerClosed) return Promise.reject(McpError.fromError(ErrorCode.ConnectionClosed, 'Connection closed'));
        if (signal.aborted) return Promise.reject(signal.reason);
        upstreamSequence += 1;
        const id = `${OWN_ID_PREFIX}${upstreamSequence}`;
        const message = {
          jsonrpc: '2.0',
          id,
          method,
          params: onProgress ? { ...params, _meta: { ...(params._meta as Record<string, unknown> | undefined), progressToken: id } } : params,
        } as JSONRPCMessage;
        return new Promise((resolve, reject) => {
          const onAbort = () => {
            if (!calls.delete(id)) return;
            void inner
              .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: String(signal.reason) } } as JSONRPCMessage)
              .catch(() => undefined);
            reject(signal.reason);
          };
          calls.set(id, {
            resolve: (result) => {
              signal.removeEventListener('abort', onAbort);
              resolve(result);
            },
            reject: (error) => {
              signal.removeEventListener('abort', onAbort);
              reject(error);
            },
            onProgress,
          });
          signal.addEventListener('abort', onAbort, { once: true });
          inner.send(message).catch((error: unknown) => {
            if (calls.delete(id)) {
              signal.removeEventListener('abort', onAbort);
              reject(error);
            }
          });
        });
      },
    };
    inner.onmessage = (message, extra) => {
      if (calls.size > 0) {
        const value = message as {
          id?: unknown;
          method?: unknown;
          result?: unknown;
          error?: { code: number; message: string; data?: unknown };
          params?: Record<string, unknown>;
        };
        if (value.method === undefined && typeof value.id === 'string') {
          const call = calls.get(value.id);
          if (call) {
            calls.delete(value.id);
            if (value.error) call.reject(McpError.fromError(value.error.code, value.error.message, value.error.data));
            else if (typeof value.result === 'object' && value.result !== null && !Array.isArray(value.result))
              call.resolve(value.result as Record<string, unknown>);
            else call.reject(new McpError(ErrorCode.InternalError, 'the upstream answered tools/call with a result that is not an object'));
            return;
          }
        } else if (value.method === 'notifications/progress' && typeof value.params?.progressToken === 'string') {
          const call = calls.get(value.params.progressToken);
          if (call?.onProgress) {
            const { progressToken: _token, ...progress } = value.params;
            call.onProgress(progress as Progress);
            return;
          }
        }
      }
      outer.onmessage?.(message, extra);
    };
    inner.onclose = () => {
      innerClosed = true;
      const error = McpError.fromError(ErrorCode.ConnectionClosed, 'Connection closed');
      for (const call of calls.values()) call.reject(error);
      calls.clear();
      outer.onclose?.();
    };
    inner.onerror = (error) => outer.onerror?.(error);
    return outer;
  }

  function describeUpstream(): string {
    const upstream = options.upstream;
    return upstream.kind === 'http' ? upstream.url.toString() : [upstream.command, ...upstream.args].join(' ');
  }

  function guardedDefinition(tool: Tool): ToolDefinition {
    const idempotent = isMcpToolIdempotent(tool);
    return {
      name: tool.name,
      description: tool.description ?? '',
      inputSchema: tool.inputSchema as Record<string, unknown>,
      idempotent,
      retry: { maxAttempts: idempotent ? maxAttempts : 1 },
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      execute: async (args: Record<string, unknown>, context: ToolContext) => {
        const call = pending.get(context.callId);
        const upstream = connection?.client?.transport as UpstreamTransport | undefined;
        if (!upstream) throw new ToolError({ kind: 'server', message: `the upstream MCP server is not running (restarting after it exited)` });
        let result: CallToolResult;
        try {
          const params = { name: tool.name, arguments: call?.arguments ?? args, ...(call?.meta ? { _meta: call.meta } : {}) };
          result = (await upstream.request('tools/call', params, context.signal, call?.onProgress)) as CallToolResult;
        } catch (thrown) {
          throw errorFromMcpThrown(thrown);
        }
        if (result.isError === true) throw errorFromToolResult(result, Date.now());
        if (call) call.result = result;
        // The envelope's data is not what the client receives (the upstream's result is): keep it small.
        return null;
      },
    };
  }

  function buildRuntime(definitions: ToolDefinition[]): ToolRuntime {
    return createToolRuntime({
      defaultTimeoutMs: options.timeoutMs ?? 60_000,
      callBudgetMs: Math.max(120_000, (options.timeoutMs ?? 60_000) * maxAttempts + 10_000),
      ...options.runtimeOptions,
      tools: definitions,
      ...(sharedBreaker ? { sharedBreaker } : {}),
    });
  }

  /** Reads the upstream's tools and builds the guarding runtime from those toolrun can guard. */
  async function refreshTools(client: Client): Promise<void> {
    const tools = await listAllMcpTools(client);
    let definitions: ToolDefinition[] = [];
    const skipped: string[] = [];
    for (const tool of tools) {
      if (TOOL_NAME_PATTERN.test(tool.name)) definitions.push(guardedDefinition(tool));
      else skipped.push(`${tool.name} (name)`);
    }
    let built: ToolRuntime;
    try {
      // One build compiles every schema once; only when it fails is each tool tried alone to find the ones that cannot be guarded.
      built = buildRuntime(definitions);
    } catch {
      const guardable: ToolDefinition[] = [];
      for (const definition of definitions) {
        try {
          createToolRuntime({ tools: [definition], sessionBreaker: false });
          guardable.push(definition);
        } catch (error) {
          skipped.push(`${definition.name} (${error instanceof Error ? error.message : String(error)})`);
        }
      }
      definitions = guardable;
      built = buildRuntime(definitions);
    }
    runtime = built;
    upstreamTools = new Map(tools.map((tool) => [tool.name, tool]));
    guarded = new Set(definitions.map((definition) => definition.name));
    log(`guarding ${definitions.length} of ${tools.length} tools${skipped.length > 0 ? `; passed through unguarded: ${skipped.join(', ')}` : ''}`);
  }

  /**
   * Re-reads the tools once for any number of `list_changed` notifications and restarts: a request
   * while a read is in flight makes one more read after it (the list may have changed since it was asked).
   */
  function refreshSoon(client: Client): Promise<void> {
    if (refreshing) {
      refreshAgain = true;
      return refreshing;
    }
    refreshing = (async () => {
      do {
        refreshAgain = false;
        await refreshTools(client).catch((error: unknown) =>
          log(`could not read the upstream's tools: ${error instanceof Error ? error.message : String(error)}`),
        );
      } while (refreshAgain && !closed);
    })().finally(() => {
      refreshing = undefined;
    });
    return refreshing;
  }

  function latestSession(): Session | undefined {
    let latest: Session | undefined;
    for (const session of sessions) if (session.server && (!latest || session.lastActiveAt >= latest.lastActiveAt)) latest = session;
    return latest;
  }

  function setupUpstreamClient(client: Client): void {
    // Upstream → downstream: notifications to every session, requests (sampling, elicitation, roots) to the latest one.
    client.fallbackNotificationHandler = async (notification: Notification) => {
      if (notification.method === 'notifications/tools/list_changed') await refreshSoon(client);
      for (const session of sessions) {
        await session.server?.notification(notification as ServerNotification).catch(() => undefined);
      }
    };
    client.fallbackRequestHandler = async (request: JSONRPCRequest, extra) => {
      const session = latestSession();
      if (!session?.server) throw new McpError(ErrorCode.InternalError, 'toolrun mcp-proxy: no client is connected to answer this request');
      return session.server.request({ method: request.method, params: request.params } as ServerRequest, ResultSchema, {
        signal: extra.signal,
        timeout: 2_147_483_647,
      });
    };
  }

  async function ensureUpstream(clientInfo: Implementation | undefined, capabilities: ClientCapabilities | undefined): Promise<Client> {
    connection ??= createMcpConnection({
      transport: makeTransport,
      ...(clientInfo ? { clientInfo } : {}),
      capabilities: capabilities ?? {},
      connectTimeoutMs: options.startupTimeoutMs ?? 20_000,
      restart: options.restart ?? { baseDelayMs: 200, maxDelayMs: 10_000 },
      setupClient: setupUpstreamClient,
      onEvent: (event) => {
        switch (event.type) {
          case 'connected':
            if (event.connection > 1) {
              log(`upstream reconnected (connection ${event.connection})`);
              const client = connection?.client;
              if (client) void refreshSoon(client);
            }
            break;
          case 'closed':
            if (!closed) log(`upstream closed the connection (it exited?); calls in flight fail UNAVAILABLE`);
            break;
          case 'restart-scheduled':
            log(`restarting the upstream in ${event.delayMs} ms (attempt ${event.attempt})`);
            break;
          case 'connect-failed':
            log(`upstream restart failed: ${event.error instanceof Error ? event.error.message : String(event.error)}`);
            break;
        }
      },
    });
    if (connection.client && runtime) return connection.client;
    try {
      const client = await connection.connect();
      if (!runtime) {
        firstRead ??= refreshTools(client).finally(() => {
          firstRead = undefined;
        });
        await firstRead;
      }
      return client;
    } catch (error) {
      const tail = stderrTail.trim();
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`the upstream MCP server (${describeUpstream()}) did not start: ${reason}${tail ? `; its stderr ended with: ${tail.slice(-500)}` : ''}`, {
        cause: error,
      });
    }
  }

  /** A request the proxy does not guard: sent upstream as is, its answer (or JSON-RPC error) returned as is. */
  async function forward(request: JSONRPCRequest, extra: Extra): Promise<Result> {
    const client = connection?.client;
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

  function progressForwarder(progressToken: string | number, extra: Extra): (progress: Progress) => void {
    return (progress) => {
      void extra.sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken } }).catch(() => undefined);
    };
  }

  async function callTool(session: Session, request: JSONRPCRequest, extra: Extra): Promise<Result> {
    const params = (request.params ?? {}) as ToolsCallParams;
    if (typeof params.name !== 'string') throw new McpError(ErrorCode.InvalidParams, 'tools/call needs params.name, the tool name (a string)');
    const current = runtime;
    if (!current || !guards(params)) return forward(request, extra);
    return guardedCall(current, params as ToolsCallParams & { name: string }, {
      requestId: extra.requestId,
      sessionId: extra.sessionId ?? session.label,
      signal: extra.signal,
      forwardProgress: (progressToken) => progressForwarder(progressToken, extra),
    });
  }

  /** Whether the proxy guards this `tools/call` (else it is forwarded as is): a tool it guards, or one the upstream does not have (TOOL_NOT_FOUND). */
  function guards(params: ToolsCallParams): boolean {
    return typeof params.name === 'string' && params.task === undefined && (guarded.has(params.name) || !upstreamTools.has(params.name));
  }

  /** Runs a guarded `tools/call` through the runtime: the upstream's result on success, toolrun's failure result otherwise. */
  async function guardedCall(
    current: ToolRuntime,
    params: ToolsCallParams & { name: string },
    call: {
      requestId: string | number;
      sessionId: string;
      signal: AbortSignal;
      forwardProgress: (progressToken: string | number) => (progress: Progress) => void;
    },
  ): Promise<Result> {
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
      const record = await current.execute({ name: params.name, args: args ?? {}, callId, sessionId: call.sessionId, signal: call.signal });
      const result = record.result;
      if (result.status === 'success') {
        const upstreamResult = pending.get(callId)?.result;
        if (upstreamResult) return upstreamResult;
      }
      if (result.status === 'failed') {
        const tool = upstreamTools.get(record.toolName);
        // A failure envelope does not match a tool's outputSchema: it goes in _meta and the text, not structuredContent.
        return failureToCallToolResult(result, { nowMs: Date.now(), structured: tool?.outputSchema === undefined });
      }
      throw new McpError(ErrorCode.InternalError, 'toolrun mcp-proxy: the call succeeded but its result was lost');
    } finally {
      pending.delete(callId);
    }
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
      return forward(request, extra);
    };
    server.fallbackNotificationHandler = async (notification) => {
      await connection?.client?.notification(notification as never).catch(() => undefined);
    };
    return server;
  }

  async function attach(transport: Transport, attachOptions: { label: string; onClose?: () => void }): Promise<void> {
    const session: Session = { label: attachOptions.label, server: undefined, lastActiveAt: Date.now(), calls: new Map() };
    sessions.add(session);
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
        client = await ensureUpstream(params.clientInfo, params.capabilities);
      } catch (error) {
        const text = error instanceof Error ? error.message : String(error);
        log(text);
        await reply(message.id, ErrorCode.InternalError, `toolrun mcp-proxy: ${text}`);
        initializing = false;
        queued.length = 0;
        return;
      }
      const server = buildServer(session, client);
      await server.connect(gate);
      session.server = server;
      gate.onmessage?.(message);
      for (const next of queued.splice(0)) gate.onmessage?.(next);
      initializing = false;
    }

    /** A guarded `tools/call`, answered here without the SDK server's request machinery. */
    async function answerToolsCall(current: ToolRuntime, id: string | number, params: ToolsCallParams & { name: string }): Promise<void> {
      const controller = new AbortController();
      session.calls.set(id, controller);
      let response: JSONRPCMessage;
      try {
        const result = await guardedCall(current, params, {
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

    /** The messages the proxy takes before the SDK server: guarded `tools/call` requests and their cancellation. */
    function takeFast(message: JSONRPCMessage): boolean {
      const value = message as { method?: unknown; id?: unknown; params?: Record<string, unknown> };
      if (value.method === 'tools/call' && (typeof value.id === 'string' || typeof value.id === 'number')) {
        const params = (value.params ?? {}) as ToolsCallParams;
        const current = runtime;
        if (!current || !guards(params) || session.calls.has(value.id)) return false;
        session.lastActiveAt = Date.now();
        void answerToolsCall(current, value.id, params as ToolsCallParams & { name: string });
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

    transport.onmessage = (message, extra) => {
      if (session.server) {
        if (!takeFast(message)) gate.onmessage?.(message, extra);
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
      sessions.delete(session);
      for (const controller of session.calls.values()) controller.abort(new Error('the client closed the session'));
      gate.onclose?.();
      attachOptions.onClose?.();
    };
    transport.onerror = (error) => {
      if (gate.onerror) gate.onerror(error);
      else log(`transport error: ${error.message}`);
    };
    await transport.start();
  }

  return {
    attach,
    get upstreamPid() {
      return upstreamPid;
    },
    get guardedTools() {
      return [...guarded];
    },
    async close() {
      closed = true;
      for (const session of sessions) await session.server?.close().catch(() => undefined);
      sessions.clear();
      await connection?.close();
    },
  };
}
