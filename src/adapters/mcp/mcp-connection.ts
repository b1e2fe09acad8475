import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ClientCapabilities, Implementation } from '@modelcontextprotocol/sdk/types.js';
import { ToolrunError } from '../../ground/toolrun-error.ts';

/** What an {@link McpConnection} reports about its server. */
export type McpConnectionEvent =
  | { type: 'connected'; connection: number }
  | { type: 'closed'; connection: number }
  | { type: 'restart-scheduled'; attempt: number; delayMs: number }
  | { type: 'connect-failed'; attempt: number; error: unknown };

/** Options of {@link createMcpConnection}. Durations in milliseconds. */
export interface McpConnectionOptions {
  /** A new transport for each connection (a stdio transport spawns a new server process). */
  transport: () => Transport | Promise<Transport>;
  /** @defaultValue `{ name: 'toolrun', version: '0.1.0' }` */
  clientInfo?: Implementation;
  /** What the client declares (sampling, roots, elicitation…). @defaultValue `{}` */
  capabilities?: ClientCapabilities;
  /** Restart after the server closed the connection (its process exited), with exponential backoff; `false`: never. */
  restart?: { baseDelayMs?: number; maxDelayMs?: number } | false;
  /** The longest wait for one connection (spawn + `initialize`). @defaultValue 20_000 */
  connectTimeoutMs?: number;
  /** Called for every new client before it connects (install notification and request handlers here). */
  setupClient?: (client: Client) => void;
  onEvent?: (event: McpConnectionEvent) => void;
}

/**
 * A client connection to one MCP server that comes back after the server goes away: when the
 * transport closes (a stdio server's process exits, an HTTP session ends) the requests in flight
 * fail (the SDK rejects them with `ConnectionClosed`, classified `UNAVAILABLE`), `client` is
 * `undefined`, and a new connection is made after `baseDelayMs · 2^(attempt−1)` (at most `maxDelayMs`)
 * until one succeeds or {@link McpConnection.close} is called.
 */
export interface McpConnection {
  /** The connected client, or `undefined` while the server is down or restarting. */
  readonly client: Client | undefined;
  /**
   * The connected client: connects (the first time, or while the server is down) or waits for the
   * connection in progress.
   * @throws ToolrunError `INVALID_INPUT` saying why the server did not start.
   */
  connect(): Promise<Client>;
  /** How many connections were made so far. */
  readonly connections: number;
  /** Closes the client and stops restarting. */
  close(): Promise<void>;
}

const DEFAULT_RESTART = { baseDelayMs: 200, maxDelayMs: 10_000 };

/**
 * Creates an {@link McpConnection}. Nothing connects until `connect()`.
 *
 * `connect()` rejects with a `ToolrunError` `INVALID_INPUT` whose message says why the server did
 * not start (spawn failure, exit before `initialize`, no answer within `connectTimeoutMs`); the
 * restart loop keeps trying after a connection was lost, but a first `connect()` that fails does
 * not schedule restarts (call it again).
 */
export function createMcpConnection(options: McpConnectionOptions): McpConnection {
  const restart = options.restart === false ? undefined : { ...DEFAULT_RESTART, ...options.restart };
  const connectTimeoutMs = options.connectTimeoutMs ?? 20_000;
  let current: Client | undefined;
  let pending: Promise<Client> | undefined;
  let closed = false;
  let connections = 0;
  let restartTimer: ReturnType<typeof setTimeout> | undefined;
  let restartAttempt = 0;

  async function open(): Promise<Client> {
    const client = new Client(options.clientInfo ?? { name: 'toolrun', version: '0.1.0' }, { capabilities: options.capabilities ?? {} });
    options.setupClient?.(client);
    let transport: Transport;
    try {
      transport = await options.transport();
    } catch (error) {
      throw new ToolrunError('UPSTREAM_FAILED', `the MCP server could not be started: ${messageOf(error)}`, { cause: error });
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`it did not answer initialize within ${connectTimeoutMs} ms`)), connectTimeoutMs);
    });
    try {
      await Promise.race([client.connect(transport, { timeout: connectTimeoutMs }), timeout]);
    } catch (error) {
      await client.close().catch(() => undefined);
      throw new ToolrunError('UPSTREAM_FAILED', `the MCP server did not start: ${describeStartFailure(error)}`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
    connections += 1;
    const connection = connections;
    client.onclose = () => {
      if (current === client) current = undefined;
      options.onEvent?.({ type: 'closed', connection });
      if (!closed) scheduleRestart();
    };
    if (closed) {
      await client.close().catch(() => undefined);
      throw new ToolrunError('UPSTREAM_FAILED', 'the MCP connection was closed');
    }
    current = client;
    restartAttempt = 0;
    options.onEvent?.({ type: 'connected', connection });
    return client;
  }

  function scheduleRestart(): void {
    if (!restart || closed || restartTimer !== undefined || pending !== undefined) return;
    restartAttempt += 1;
    const delayMs = Math.min(restart.maxDelayMs, restart.baseDelayMs * 2 ** (restartAttempt - 1));
    options.onEvent?.({ type: 'restart-scheduled', attempt: restartAttempt, delayMs });
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      const attempt = restartAttempt;
      connect().catch((error: unknown) => {
        options.onEvent?.({ type: 'connect-failed', attempt, error });
        scheduleRestart();
      });
    }, delayMs);
    restartTimer.unref?.();
  }

  function connect(): Promise<Client> {
    if (current) return Promise.resolve(current);
    if (closed) return Promise.reject(new ToolrunError('UPSTREAM_FAILED', 'the MCP connection was closed'));
    pending ??= open().finally(() => {
      pending = undefined;
    });
    return pending;
  }

  return {
    get client() {
      return current;
    },
    get connections() {
      return connections;
    },
    connect,
    async close() {
      closed = true;
      if (restartTimer !== undefined) clearTimeout(restartTimer);
      restartTimer = undefined;
      const client = current;
      current = undefined;
      await client?.close().catch(() => undefined);
      await pending?.then((late) => late.close()).catch(() => undefined);
    },
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function describeStartFailure(error: unknown): string {
  const message = messageOf(error);
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  if (code === 'ENOENT' || /ENOENT/.test(message)) return `the command was not found (${message})`;
  if (code === -32000 || /Connection closed/i.test(message)) return 'it exited (or closed its output) before it answered initialize';
  return message;
}
