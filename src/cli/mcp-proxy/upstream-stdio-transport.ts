import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** JSON-RPC's invalid-params code, which the SDK's client also raises for a result that fails its schema ("Invalid … result"). */
const INVALID_PARAMS = -32602;

/** The SDK's bound of the bytes buffered from a stdio server (10 MiB). */
const MAX_BUFFERED_BYTES = 10 * 1024 * 1024;

/** How long `close()` waits after ending the server's stdin, then after SIGTERM, before the next step (the SDK's 2 s). */
const CLOSE_STEP_MS = 2000;

/** Options of {@link createUpstreamStdioTransport}. */
export interface UpstreamStdioTransportOptions {
  command: string;
  args: readonly string[];
  /** The server's whole environment. */
  env: Readonly<Record<string, string>>;
  cwd?: string;
  /**
   * Messages this returns `true` for are delivered as parsed, without the SDK's message schema
   * (the proxy's own responses, which it checks itself); every other message is parsed by the
   * schema, as the SDK's transport does, and one that fails it goes to `onerror`.
   */
  trusted?: (value: unknown) => boolean;
}

/** The client side of a stdio MCP server: the server's stderr (piped) and process id besides the transport. */
export interface UpstreamStdioTransport extends Transport {
  /** The server's stderr, available before `start()` (nothing is lost). */
  readonly stderr: PassThrough;
  /** The server's process id, once started. */
  readonly pid: number | undefined;
}

/**
 * The MCP stdio client transport the proxy spawns its upstream with: the SDK's
 * `StdioClientTransport` (same spawn options — no shell; same close sequence: end stdin, SIGTERM
 * after 2 s, SIGKILL after 2 more), except that a message {@link UpstreamStdioTransportOptions.trusted}
 * accepts skips the schema parse. A line that is not JSON, or not a JSON-RPC message, goes to
 * `onerror` and the next line is read; one that answers a request (its `id`, a `result` or `error`,
 * no `method`) is also delivered as a JSON-RPC error of that id (-32602 "Invalid result: …", the
 * server's defect), so the request settles at once instead of waiting out its timeout; more than 10 MiB without a newline closes the transport.
 * For POSIX; on Windows the proxy uses the SDK's transport (which resolves `npx`-style `.cmd` shims).
 */
export function createUpstreamStdioTransport(options: UpstreamStdioTransportOptions): UpstreamStdioTransport {
  const stderr = new PassThrough();
  let child: ChildProcess | undefined;
  let chunks: Buffer[] = [];
  let buffered = 0;

  function deliver(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      transport.onerror?.(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (options.trusted?.(value)) {
      transport.onmessage?.(value as JSONRPCMessage);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (parsed.success) {
      transport.onmessage?.(parsed.data);
      return;
    }
    const problem = `the MCP server sent a line that is not a JSON-RPC message: ${parsed.error.message.slice(0, 300)}`;
    transport.onerror?.(new Error(problem));
    // An answer to a request of ours (its id, no method) that fails the schema settles that request
    // at once, as the server's protocol error: dropped, it would wait out its timeout and be sent again.
    const id = typeof value === 'object' && value !== null && !('method' in value) ? (value as { id?: unknown }).id : undefined;
    if ((typeof id === 'string' || typeof id === 'number') && ('result' in (value as object) || 'error' in (value as object))) {
      transport.onmessage?.({ jsonrpc: '2.0', id, error: { code: INVALID_PARAMS, message: `Invalid result: ${problem}` } });
    }
  }

  function onData(chunk: Buffer): void {
    let data = chunk;
    for (let newline = data.indexOf(0x0a); newline !== -1; newline = data.indexOf(0x0a)) {
      const part = data.subarray(0, newline);
      const line = chunks.length === 0 ? part : Buffer.concat([...chunks, part]);
      chunks = [];
      buffered = 0;
      const text = line.toString('utf8');
      if (text.trim() !== '') deliver(text.endsWith('\r') ? text.slice(0, -1) : text);
      data = data.subarray(newline + 1);
    }
    if (data.length === 0) return;
    buffered += data.length;
    if (buffered > MAX_BUFFERED_BYTES) {
      chunks = [];
      buffered = 0;
      transport.onerror?.(new Error(`the MCP server sent more than ${MAX_BUFFERED_BYTES} bytes without a newline`));
      void transport.close().catch(() => undefined);
      return;
    }
    chunks.push(data);
  }

  const transport: UpstreamStdioTransport = {
    stderr,
    get pid() {
      return child?.pid;
    },
    start() {
      if (child) throw new Error('the stdio transport is already started');
      return new Promise<void>((resolve, reject) => {
        const spawned = spawn(options.command, [...options.args], {
          env: { ...options.env },
          stdio: ['pipe', 'pipe', 'pipe'],
          shell: false,
          ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
        });
        child = spawned;
        spawned.on('error', (error) => {
          reject(error);
          transport.onerror?.(error);
        });
        spawned.on('spawn', () => resolve());
        spawned.on('close', () => {
          if (child === spawned) child = undefined;
          transport.onclose?.();
        });
        spawned.stdin!.on('error', (error) => transport.onerror?.(error));
        spawned.stdout!.on('data', onData);
        spawned.stdout!.on('error', (error) => transport.onerror?.(error));
        spawned.stderr!.pipe(stderr);
      });
    },
    send(message) {
      const stdin = child?.stdin;
      if (!stdin) return Promise.reject(new Error('Not connected'));
      if (stdin.write(`${JSON.stringify(message)}\n`)) return Promise.resolve();
      return new Promise<void>((resolve) => stdin.once('drain', () => resolve()));
    },
    async close() {
      const closing = child;
      child = undefined;
      chunks = [];
      buffered = 0;
      if (!closing) return;
      const closed = new Promise<void>((resolve) => closing.once('close', () => resolve()));
      const step = () => Promise.race([closed, new Promise<void>((resolve) => setTimeout(resolve, CLOSE_STEP_MS).unref())]);
      try {
        closing.stdin?.end();
      } catch {
        // already closed
      }
      await step();
      if (closing.exitCode === null && closing.signalCode === null) {
        closing.kill('SIGTERM');
        await step();
      }
      if (closing.exitCode === null && closing.signalCode === null) closing.kill('SIGKILL');
    },
  };
  return transport;
}
