import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ClientCapabilities, Implementation } from '@modelcontextprotocol/sdk/types.js';
import { createMcpConnection, type McpConnection, type McpConnectionEvent } from '../../adapters/mcp/mcp-connection.ts';
import { createMcpStatusFetch } from '../../adapters/mcp/mcp-status-fetch.ts';
import { createUpstreamStdioTransport } from './upstream-stdio-transport.ts';
import { interceptUpstream, isOwnMessage, type UpstreamTransport } from './upstream-requests.ts';
import { describeUpstream, type UpstreamSpec } from './upstream-spec.ts';

/** Options of {@link createUpstream}. Durations in milliseconds. */
export interface UpstreamOptions {
  spec: UpstreamSpec;
  log: (line: string) => void;
  stderrTailBytes: number;
  startupTimeoutMs: number;
  restart: { baseDelayMs: number; maxDelayMs: number };
  /** Called for every new client before it connects (its notification and request handlers). */
  setupClient: (client: Client) => void;
  /** Called when the upstream came back after it closed (restarted). */
  onReconnected: (client: Client) => void;
}

/** The guarded MCP server: started at the first `initialize`, restarted when it exits. */
export interface Upstream {
  /** The connected client, `undefined` before the first start and while restarting. */
  readonly client: Client | undefined;
  /** The connected client's transport, on which the proxy sends its own requests. */
  readonly transport: UpstreamTransport | undefined;
  /** The process id of a stdio upstream, once started. */
  readonly pid: number | undefined;
  /**
   * The connected client: starts the upstream (the first time, with that client's name and
   * capabilities) or waits for the start in progress, then `prepare` (the first read of its tools).
   * @throws Error saying why the upstream did not start, with the end of its stderr.
   */
  connect(clientInfo: Implementation | undefined, capabilities: ClientCapabilities | undefined, prepare: (client: Client) => Promise<void>): Promise<Client>;
  close(): Promise<void>;
}

/**
 * The upstream of a proxy: a reconnecting client connection whose transports are wrapped by
 * {@link interceptUpstream}. On POSIX a stdio upstream is spawned by the proxy's own transport
 * (its responses to the proxy's requests skip the SDK's message schema), on Windows by the SDK's.
 */
export function createUpstream(options: UpstreamOptions): Upstream {
  const { spec, log } = options;
  let connection: McpConnection | undefined;
  let pid: number | undefined;
  let stderrTail = '';
  let closed = false;

  function openTransport(): Transport {
    if (spec.kind === 'http') {
      return interceptUpstream(
        new StreamableHTTPClientTransport(spec.url, {
          fetch: createMcpStatusFetch(),
          ...(spec.headers ? { requestInit: { headers: { ...spec.headers } } } : {}),
        }),
      );
    }
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(spec.env)) if (value !== undefined) env[key] = value;
    const cwd = spec.cwd !== undefined ? { cwd: spec.cwd } : {};
    // The SDK's transport on Windows, where it resolves `npx`-style .cmd shims; elsewhere the same spawn without the schema parse of the proxy's own responses.
    const transport =
      process.platform === 'win32'
        ? new StdioClientTransport({ command: spec.command, args: [...spec.args], env, stderr: 'pipe', ...cwd })
        : createUpstreamStdioTransport({ command: spec.command, args: spec.args, env: { ...getDefaultEnvironment(), ...env }, trusted: isOwnMessage, ...cwd });
    stderrTail = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      process.stderr.write(chunk);
      stderrTail = (stderrTail + chunk.toString('utf8')).slice(-options.stderrTailBytes);
    });
    const start = transport.start.bind(transport);
    transport.start = async () => {
      await start();
      pid = transport.pid ?? undefined;
      log(`upstream started (pid ${pid ?? '?'}): ${spec.command}`);
    };
    return interceptUpstream(transport);
  }

  function onEvent(event: McpConnectionEvent): void {
    switch (event.type) {
      case 'connected':
        if (event.connection > 1) {
          log(`upstream reconnected (connection ${event.connection})`);
          const client = connection?.client;
          if (client) options.onReconnected(client);
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
  }

  async function connect(clientInfo: Implementation | undefined, capabilities: ClientCapabilities | undefined, prepare: (client: Client) => Promise<void>) {
    connection ??= createMcpConnection({
      transport: openTransport,
      ...(clientInfo ? { clientInfo } : {}),
      capabilities: capabilities ?? {},
      connectTimeoutMs: options.startupTimeoutMs,
      restart: options.restart,
      setupClient: options.setupClient,
      onEvent,
    });
    try {
      const client = await connection.connect();
      await prepare(client);
      return client;
    } catch (error) {
      const tail = stderrTail.trim();
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(
        `the upstream MCP server (${describeUpstream(spec)}) did not start: ${reason}${tail ? `; its stderr ended with: ${tail.slice(-500)}` : ''}`,
        {
          cause: error,
        },
      );
    }
  }

  return {
    get client() {
      return connection?.client;
    },
    get transport() {
      return connection?.client?.transport as UpstreamTransport | undefined;
    },
    get pid() {
      return pid;
    },
    connect,
    async close() {
      closed = true;
      await connection?.close();
    },
  };
}
