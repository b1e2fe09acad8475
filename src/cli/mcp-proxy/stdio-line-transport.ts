import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The default bound of one incoming JSON-RPC message, in bytes (4 MiB). */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** Options of {@link createStdioLineTransport}. */
export interface StdioLineTransportOptions {
  input: Readable;
  output: Writable;
  /** Bound of one message (one line), in bytes. @defaultValue 4 MiB */
  maxMessageBytes?: number;
  /** A line that was refused (unparsable, not JSON-RPC, too large): for the proxy's stderr. */
  onRefused?: (reason: string) => void;
}

/** A JSON-RPC error response the proxy sends for input it cannot take (`id` null when it could not be read). */
function errorResponse(id: string | number | null, code: number, message: string): JSONRPCMessage {
  return { jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage;
}

/**
 * Whether `value` is certainly a valid JSON-RPC request by the SDK's schema (`jsonrpc` "2.0", an
 * id that is a string or an integer, a method, params an object without `_meta`, no other key),
 * checked without the schema's parse: the common case, and a guarded `tools/call` is one. Anything
 * else (`_meta`, notifications, responses, invalid input) is left to the schema.
 */
function isPlainRequest(value: unknown): value is JSONRPCMessage {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const message = value as Record<string, unknown>;
  if (message.jsonrpc !== '2.0' || typeof message.method !== 'string') return false;
  const id = message.id;
  if (typeof id !== 'string' && !Number.isInteger(id)) return false;
  const params = message.params;
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params) || '_meta' in params)) return false;
  for (const key in message) if (key !== 'jsonrpc' && key !== 'id' && key !== 'method' && key !== 'params') return false;
  return true;
}

function idOf(value: unknown): string | number | null {
  if (typeof value !== 'object' || value === null) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/**
 * The MCP stdio transport (newline-delimited JSON-RPC on stdin/stdout) of the proxy's server side,
 * which, unlike the SDK's, answers input it cannot take instead of dropping it: a line that is not
 * JSON gets a `-32700` Parse error (id null), a JSON value that is not a JSON-RPC message a
 * `-32600` Invalid Request (with its id when it has one), a line over `maxMessageBytes` a `-32600`
 * naming the bound (the line is skipped without being buffered). The transport stays open.
 * Closes (`onclose`) when the input ends.
 */
/** How many bytes at each end of an oversized line are searched for its id. */
const ID_WINDOW_BYTES = 1024;

/**
 * The top-level `id` of a JSON-RPC request too large to parse, read from its ends: `{"jsonrpc":"2.0","id":7,…`
 * or `…,"id":7}` (the SDK writes it last). `null` when neither end shows one.
 */
export function idOfOversizedLine(head: Buffer, tail: Buffer): string | number | null {
  const value = (text: string | undefined): string | number | null => {
    if (text === undefined) return null;
    if (text.startsWith('"')) {
      try {
        return JSON.parse(text) as string;
      } catch {
        return null;
      }
    }
    const number = Number(text);
    return Number.isSafeInteger(number) ? number : null;
  };
  const ID = String.raw`"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,16})`;
  const last = new RegExp(`,\\s*${ID}\\s*\\}\\s*\\r?$`).exec(tail.toString('utf8'));
  if (last) return value(last[1]);
  const first = new RegExp(`^\\s*\\{\\s*(?:"jsonrpc"\\s*:\\s*"2\\.0"\\s*,\\s*)?${ID}`).exec(head.toString('utf8'));
  return value(first?.[1]);
}

export function createStdioLineTransport(options: StdioLineTransportOptions): Transport {
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const { input, output } = options;
  let chunks: Buffer[] = [];
  let pendingBytes = 0;
  let skipping = false;
  /** The first and the last bytes of the line being skipped. */
  let head = Buffer.alloc(0);
  let tail = Buffer.alloc(0);
  let closed = false;
  let started = false;

  const transport: Transport = {
    async start() {
      if (started) throw new Error('the stdio transport is already started');
      started = true;
      input.on('data', onData);
      input.on('end', onEnd);
      input.on('close', onEnd);
      input.on('error', onInputError);
    },
    async send(message) {
      if (closed) return;
      const line = `${JSON.stringify(message)}\n`;
      if (!output.write(line)) await new Promise<void>((resolve) => output.once('drain', resolve));
    },
    async close() {
      onEnd();
    },
  };

  function refuse(id: string | number | null, code: number, message: string): void {
    options.onRefused?.(message);
    void transport.send(errorResponse(id, code, message)).catch(() => undefined);
  }

  function handleLine(buffer: Buffer): void {
    const text = buffer.toString('utf8').replace(/\r$/, '');
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      refuse(null, -32700, `Parse error: the message is not JSON (${error instanceof Error ? error.message : String(error)})`);
      return;
    }
    if (isPlainRequest(value)) {
      transport.onmessage?.(value);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      refuse(idOf(value), -32600, 'Invalid Request: not a JSON-RPC 2.0 request, notification or response (jsonrpc "2.0", a method or a result/error)');
      return;
    }
    transport.onmessage?.(parsed.data);
  }

  function onData(chunk: Buffer | string): void {
    let data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    while (data.length > 0) {
      const newline = data.indexOf(0x0a);
      const part = newline === -1 ? data : data.subarray(0, newline);
      if (!skipping) {
        pendingBytes += part.length;
        if (pendingBytes > maxMessageBytes) {
          // Skipped without being buffered; only its first and last bytes are kept, to find the
          // request's id (clients write it first or last), so the client fails at once, not at its timeout.
          skipping = true;
          head = Buffer.concat([...chunks, part]).subarray(0, ID_WINDOW_BYTES);
          tail = Buffer.from(part.subarray(Math.max(0, part.length - ID_WINDOW_BYTES)));
          chunks = [];
        } else chunks.push(part);
      } else tail = Buffer.concat([tail, part]).subarray(Math.max(0, tail.length + part.length - ID_WINDOW_BYTES));
      if (newline === -1) break;
      if (!skipping) handleLine(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
      else
        refuse(
          idOfOversizedLine(head, tail),
          -32600,
          `Invalid Request: a message of more than ${maxMessageBytes} bytes was refused (the proxy's --max-message-bytes)`,
        );
      chunks = [];
      pendingBytes = 0;
      skipping = false;
      data = data.subarray(newline + 1);
    }
  }

  function onInputError(error: Error): void {
    transport.onerror?.(error);
  }

  function onEnd(): void {
    if (closed) return;
    closed = true;
    input.off('data', onData);
    input.off('end', onEnd);
    input.off('close', onEnd);
    input.off('error', onInputError);
    transport.onclose?.();
  }

  return transport;
}
