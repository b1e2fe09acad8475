import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isInitializeRequest, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { ToolrunError, type ToolrunConfig } from '../../index.ts';
import type { BreakerStateStore, Stores } from '../../ground/ports/stores.ts';
import type { MetricsServer } from '../../observability/index.ts';
import { createSharedBreaker, type SharedBreakerEvent, type SharedBreakerOptions } from '../../policies/shared-breaker.ts';
import { systemClock } from '../../ground/ports/clock.ts';
import { createCliObservability } from '../cli-observability.ts';
import { usageError } from '../cli-error.ts';
import type { LogOptions } from '../parse-options.ts';
import { resolveStores, writerContext } from '../resolve-stores.ts';
import { serveMetrics } from '../serve-metrics.ts';
import { breakerWorkerEvent, resumableDeadLetterAdded } from '../../worker/worker-events.ts';
import { createMcpProxy, type McpProxy } from './mcp-proxy.ts';
import { defaultBreakerKeyPrefix, type UpstreamSpec } from './upstream-spec.ts';
import { createStdioLineTransport } from './stdio-line-transport.ts';

/** The options of `toolrun mcp-proxy`, parsed. */
export interface McpProxyCommandOptions extends LogOptions {
  url?: string;
  listen?: string;
  db?: string;
  store?: string;
  queue?: string;
  maxAttempts: number;
  timeoutMs: number;
  startupTimeoutMs: number;
  maxMessageBytes: number;
  breakerThreshold: number;
  breakerCooldownMs: number;
  sharedBreaker: boolean;
  /** `--no-tool-failure` sets false: failures carry toolrun's envelope only, not the draft ToolFailure. */
  toolFailure: boolean;
  /** `--breaker-prefix`: the shared breaker keys' prefix (default {@link defaultBreakerKeyPrefix} of the upstream). */
  breakerPrefix?: string;
  /** `--init`: create the database named by `--db`/`--store`/`$TOOLRUN_DB` when it does not exist. */
  init?: boolean;
  metricsPort?: number;
}

/** Where the proxy's process streams are (injectable for tests of the runner itself). */
export interface ProxyStreams {
  stdin: Readable;
  stdout: Writable;
  writeError: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

/** `host:port`, `:port` or `port` → host (127.0.0.1 by default) and port. */
export function parseListen(value: string): { host: string; port: number } {
  const match = /^(?:(\[[^\]]+\]|[^:]*):)?(\d{1,5})$/.exec(value.trim());
  const port = match ? Number(match[2]) : Number.NaN;
  if (!match || !Number.isInteger(port) || port < 0 || port > 65535)
    throw usageError(`--listen expects host:port (e.g. 127.0.0.1:8808), received ${JSON.stringify(value)}`);
  const host = match[1] === undefined || match[1] === '' ? '127.0.0.1' : match[1].replace(/^\[|\]$/g, '');
  return { host, port };
}

function upstreamOf(options: McpProxyCommandOptions, command: readonly string[], env: NodeJS.ProcessEnv): UpstreamSpec {
  if (options.url !== undefined) {
    if (command.length > 0) throw usageError('pass either --url URL or -- <command> [args...], not both');
    let url: URL;
    try {
      url = new URL(options.url);
    } catch {
      throw usageError(`--url is not a URL: ${JSON.stringify(options.url)} (expected e.g. http://127.0.0.1:3000/mcp)`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usageError(`--url must be http:// or https://, received ${url.protocol}`);
    return { kind: 'http', url };
  }
  if (command.length === 0)
    throw usageError('no MCP server to guard: pass -- <command> [args...] (e.g. -- npx -y @modelcontextprotocol/server-memory) or --url URL');
  return { kind: 'stdio', command: command[0]!, args: command.slice(1), env: { ...env } };
}

/** The breaker state store: Redis for `--queue redis://…`, else the stores' own. */
async function openBreakerStore(options: McpProxyCommandOptions, stores: Stores): Promise<{ store: BreakerStateStore; close: () => Promise<void> }> {
  if (options.queue === undefined) return { store: stores.breakers, close: async () => undefined };
  if (!/^rediss?:/i.test(options.queue)) {
    throw usageError('mcp-proxy takes --queue redis://… for its shared breaker state; for SQLite or PostgreSQL use --db FILE or --store postgres://…');
  }
  const { createRedisBreakerStateStore } = await import('../../stores/redis/index.ts');
  const store = await createRedisBreakerStateStore({ url: options.queue });
  return { store, close: () => store.close() };
}

const UNUSED_MODEL: ToolrunConfig['model'] = async () => {
  throw new ToolrunError('INVALID_OPTIONS', 'mcp-proxy runs no model');
};

/**
 * Runs `toolrun mcp-proxy` until its stdin closes (stdio) or it gets SIGINT/SIGTERM (`--listen`).
 * stdout carries only MCP messages; every line of the proxy's own goes to stderr.
 *
 * @throws ToolrunError `USAGE` for bad options; `STORE_UNAVAILABLE` when a store cannot be opened.
 */
export async function runMcpProxy(options: McpProxyCommandOptions, command: readonly string[], streams: ProxyStreams): Promise<void> {
  const upstream = upstreamOf(options, command, streams.env);
  const listen = options.listen !== undefined ? parseListen(options.listen) : undefined;
  if (options.breakerPrefix !== undefined && (options.breakerPrefix.trim() === '' || options.breakerPrefix.startsWith('-'))) {
    // an empty prefix would make the keys bare tool names, shared with every other breaker of the store
    throw usageError(
      `--breaker-prefix needs a non-empty name that does not start with "-" (received ${JSON.stringify(options.breakerPrefix)}), e.g. --breaker-prefix mcp:files/`,
    );
  }
  const log = (line: string) => streams.writeError(`toolrun mcp-proxy: ${line}\n`);
  // No store flag: memory (a proxy started by an MCP client writes no file where it happens to run).
  const useMemory = options.db === undefined && options.store === undefined && (streams.env.TOOLRUN_DB ?? '') === '';
  // A named database that does not exist is an error unless --init, as for `worker` and `enqueue` (a typo would start an empty one).
  const location = { db: options.db, store: useMemory ? 'memory:' : options.store, env: streams.env };
  const resolved = await resolveStores(location, writerContext(location, options.init));
  const { stores } = resolved;
  let breakerStore: Awaited<ReturnType<typeof openBreakerStore>> | undefined;
  let metricsServer: MetricsServer | undefined;
  let observed: Awaited<ReturnType<typeof createCliObservability>>;
  try {
    breakerStore = await openBreakerStore(options, stores);
    metricsServer = options.metricsPort !== undefined ? await serveMetrics(options.metricsPort, stores) : undefined;
    observed = await createCliObservability({
      config: { model: UNUSED_MODEL, tools: [] },
      openFailureLog: resolved.openFailureLog,
      metrics: metricsServer?.metrics,
      logLevel: options.logLevel,
      logFile: options.logFile,
      writeError: streams.writeError,
    });
  } catch (error) {
    await metricsServer?.close();
    await breakerStore?.close();
    await stores.close();
    throw error;
  }
  const { observability } = observed;
  const breakerOptions: Partial<SharedBreakerOptions> = { failureThreshold: options.breakerThreshold, halfOpenAfterMs: options.breakerCooldownMs };
  const breakerKeyPrefix = options.breakerPrefix ?? defaultBreakerKeyPrefix(upstream);
  const toolOf = (key: string) => (key.startsWith(breakerKeyPrefix) ? key.slice(breakerKeyPrefix.length) : key);
  const onBreakerEvent = (event: SharedBreakerEvent) => {
    if (event.type === 'breaker-open') {
      log(`ALERT breaker-open ${toolOf(event.key)} (key ${event.key}): failing for everyone (opening ${event.openings}): ${event.lastError}`);
    } else log(`${event.type} ${toolOf(event.key)} (key ${event.key})`);
    observability.onEvent(breakerWorkerEvent(event, toolOf(event.key), 'tool'));
  };
  const sharedBreaker = options.sharedBreaker
    ? createSharedBreaker({ store: breakerStore.store, clock: systemClock, options: breakerOptions, onEvent: onBreakerEvent })
    : undefined;
  const proxy = createMcpProxy({
    upstream,
    runtimeOptions: observed.runtimeOptions,
    ...(sharedBreaker ? { sharedBreaker, breakerKeyPrefix } : {}),
    maxAttempts: options.maxAttempts,
    timeoutMs: options.timeoutMs,
    startupTimeoutMs: options.startupTimeoutMs,
    toolFailure: options.toolFailure,
    idempotencyLedger: stores.ledger,
    // in memory no other process could list or replay an entry, and a long-lived proxy would only accumulate them
    ...(useMemory
      ? {}
      : {
          deadLetter: {
            stores,
            onDeadLettered: (entry) => {
              log(`dead-lettered ${entry.toolName} (${entry.reason}): tool-DLQ run ${entry.runId}; replay it with toolrun dlq replay (host mcp)`);
              observability.onEvent(resumableDeadLetterAdded(entry, undefined, Date.now()));
            },
          },
        }),
    log,
  });
  log(
    `guarding ${upstream.kind === 'http' ? upstream.url.toString() : upstream.command}; state ${resolved.label}${
      sharedBreaker ? `; shared breaker keys ${breakerKeyPrefix}<tool>` : ''
    }${metricsServer ? `; metrics at ${metricsServer.url}` : ''}`,
  );

  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const onSignal = (signal: NodeJS.Signals) => {
    log(`${signal}: closing`);
    finish();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let httpServer: ReturnType<typeof createServer> | undefined;
  try {
    if (listen) {
      httpServer = await serveHttp(proxy, listen, options.maxMessageBytes, log);
    } else {
      const transport = createStdioLineTransport({
        input: streams.stdin,
        output: streams.stdout,
        maxMessageBytes: options.maxMessageBytes,
        onRefused: (reason) => log(`refused a message: ${reason}`),
      });
      await proxy.attach(transport, { label: 'stdio', onClose: () => finish() });
    }
    await done;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (httpServer) await new Promise<void>((resolve) => httpServer!.close(() => resolve()));
    httpServer?.closeAllConnections?.();
    await proxy.close();
    await observed.flush();
    await metricsServer?.close();
    await breakerStore.close();
    await stores.close();
  }
}

/** Reads a request body up to `maxBytes`; `undefined` when it is larger. */
async function readBody(request: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function jsonRpcError(response: ServerResponse, status: number, code: number, message: string): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}

/** Names a loopback listener answers to (the Host header's name, without its port), besides 127.0.0.0/8. */
const LOOPBACK_NAMES = new Set(['localhost', '[::1]', '::1']);
const isLoopbackName = (name: string) => LOOPBACK_NAMES.has(name) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);

/** The name part of a Host header or an origin's host (`[::1]:8808` → `[::1]`, `localhost:8808` → `localhost`). */
function hostNameOf(host: string): string {
  const value = host.trim().toLowerCase();
  if (value.startsWith('[')) return value.slice(0, value.indexOf(']') + 1);
  const colon = value.lastIndexOf(':');
  return colon === -1 ? value : value.slice(0, colon);
}

/**
 * DNS-rebinding protection, as the MCP transport specification asks of a local server: on a
 * loopback listener the Host header must name a loopback host, and a request that carries an
 * Origin (a browser's) must come from a loopback origin; on any listener an Origin must be the
 * request's own host. `undefined`: allowed; else the reason of the refusal.
 */
export function refusedHttpOrigin(headers: { host?: string | undefined; origin?: string | undefined }, loopback: boolean): string | undefined {
  const host = headers.host ?? '';
  if (loopback && !isLoopbackName(hostNameOf(host))) {
    return `Forbidden: this proxy listens on a loopback address and answers only to Host 127.0.0.1, localhost or [::1] (received ${JSON.stringify(host.slice(0, 100))})`;
  }
  const origin = headers.origin;
  if (origin === undefined) return undefined;
  let originHost: string;
  try {
    const url = new URL(origin);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
    originHost = url.host;
  } catch {
    return `Forbidden: the Origin ${JSON.stringify(origin.slice(0, 100))} is not an http(s) origin`;
  }
  if (loopback ? !isLoopbackName(hostNameOf(originHost)) : originHost.toLowerCase() !== host.trim().toLowerCase()) {
    return `Forbidden: requests from the web page at ${JSON.stringify(origin.slice(0, 100))} are refused (DNS-rebinding protection: only ${loopback ? 'a loopback origin' : 'this host'} may call)`;
  }
  return undefined;
}

/** Whether a POST body is a request of the stateless protocol: `server/discover`, or a request whose `_meta` names a protocol version. */
function isStatelessRequest(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const message = body as { method?: unknown; id?: unknown; params?: { _meta?: Record<string, unknown> } };
  if (typeof message.method !== 'string' || message.id === undefined) return false;
  return message.method === 'server/discover' || typeof message.params?._meta?.['io.modelcontextprotocol/protocolVersion'] === 'string';
}

/**
 * One request of the stateless protocol: no session, so a proxy session of its own on a one-shot
 * transport that answers the request as JSON and closes with the answer. A response stream that
 * breaks first does not cancel the call (the stateless protocol re-sends such a request: with an
 * idempotency key it joins this call or gets its recorded answer). Request-scoped notifications
 * (progress, log messages) are not sent: the answer is one JSON body.
 */
async function serveStatelessRequest(proxy: McpProxy, response: ServerResponse, body: JSONRPCRequest): Promise<void> {
  const transport: Transport = {
    start: async () => undefined,
    send: async (message) => {
      const answer = message as { id?: unknown; result?: unknown; error?: unknown };
      if (answer.id !== body.id || (answer.result === undefined && answer.error === undefined)) return;
      if (!response.headersSent && !response.destroyed) response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(message));
      await transport.close();
    },
    close: async () => transport.onclose?.(),
  };
  await proxy.attach(transport, { label: 'http-stateless' });
  transport.onmessage?.(body);
}

/** Serves the guarded tools over Streamable HTTP on `http://host:port/mcp`, one proxy session per MCP session. */
async function serveHttp(proxy: McpProxy, listen: { host: string; port: number }, maxMessageBytes: number, log: (line: string) => void) {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const loopback = isLoopbackName(listen.host.toLowerCase());
  // Node's default, stated: a small SSE event is written at once, not held for the previous segment's ACK.
  const server = createServer({ noDelay: true }, (request, response) => {
    void (async () => {
      const refused = refusedHttpOrigin({ host: request.headers.host, origin: request.headers.origin }, loopback);
      if (refused !== undefined) return jsonRpcError(response, 403, -32000, refused);
      const url = new URL(request.url ?? '/', 'http://localhost');
      if (url.pathname !== '/mcp') {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('toolrun mcp-proxy serves MCP at /mcp\n');
        return;
      }
      const sessionHeader = request.headers['mcp-session-id'];
      const sessionId = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader;
      const existing = sessionId !== undefined ? transports.get(sessionId) : undefined;
      if (request.method !== 'POST') {
        if (!existing) return jsonRpcError(response, 400, -32000, 'Bad Request: no valid Mcp-Session-Id');
        await existing.handleRequest(request, response);
        return;
      }
      const text = await readBody(request, maxMessageBytes);
      if (text === undefined) return jsonRpcError(response, 413, -32600, `Invalid Request: a message of more than ${maxMessageBytes} bytes was refused`);
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch (error) {
        return jsonRpcError(response, 400, -32700, `Parse error: the body is not JSON (${error instanceof Error ? error.message : String(error)})`);
      }
      if (existing) {
        await existing.handleRequest(request, response, body);
        return;
      }
      if (sessionId === undefined && isStatelessRequest(body)) {
        await serveStatelessRequest(proxy, response, body as JSONRPCRequest);
        return;
      }
      if (sessionId !== undefined || !isInitializeRequest(body)) {
        return jsonRpcError(
          response,
          sessionId !== undefined ? 404 : 400,
          -32000,
          sessionId !== undefined ? 'Session not found' : 'Bad Request: send initialize first',
        );
      }
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          transports.set(id, transport);
        },
      });
      await proxy.attach(transport, {
        label: 'http',
        onClose: () => {
          if (transport.sessionId !== undefined) transports.delete(transport.sessionId);
        },
      });
      await transport.handleRequest(request, response, body);
    })().catch((error: unknown) => {
      log(`HTTP request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!response.headersSent) jsonRpcError(response, 500, -32603, 'Internal error of toolrun mcp-proxy');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  }).catch((error: unknown) => {
    throw new ToolrunError(
      'LISTEN_FAILED',
      `--listen ${listen.host}:${listen.port}: cannot listen (${error instanceof Error ? error.message : String(error)})`,
    );
  });
  const address = server.address() as AddressInfo;
  log(`serving MCP over Streamable HTTP at http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}/mcp`);
  return server;
}
