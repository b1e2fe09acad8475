import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, type JSONRPCMessage, type Progress } from '@modelcontextprotocol/sdk/types.js';

/** The prefix of the ids (and progress tokens) of the requests the proxy sends upstream itself. */
const OWN_ID_PREFIX = 'toolrun-';

/**
 * Whether an upstream message is a well-formed response to (or a progress notification of) a
 * request the proxy sent itself: those are read without the SDK's message schema.
 */
export function isOwnMessage(value: unknown): boolean {
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

/** A request the proxy sent to the upstream itself, waiting for its response. */
interface OwnRequest {
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
export interface UpstreamTransport extends Transport {
  /**
   * Sends `method` with `params` and resolves with the response's `result`. Rejects with an
   * `McpError` for a JSON-RPC error response or a closed connection, with `signal.reason` when
   * `signal` aborts (the upstream then gets `notifications/cancelled`).
   */
  request(
    method: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
    onProgress: ((progress: Progress) => void) | undefined,
  ): Promise<Record<string, unknown>>;
}

/**
 * Settles the own request `message` answers (or hands it its progress) and returns true; false
 * for any other message (it goes to the SDK client).
 */
function takeOwnMessage(requests: Map<string, OwnRequest>, message: JSONRPCMessage): boolean {
  const value = message as {
    id?: unknown;
    method?: unknown;
    result?: unknown;
    error?: { code: number; message: string; data?: unknown };
    params?: Record<string, unknown>;
  };
  if (value.method === undefined && typeof value.id === 'string') {
    const request = requests.get(value.id);
    if (!request) return false;
    requests.delete(value.id);
    if (value.error) request.reject(McpError.fromError(value.error.code, value.error.message, value.error.data));
    else if (typeof value.result === 'object' && value.result !== null && !Array.isArray(value.result))
      request.resolve(value.result as Record<string, unknown>);
    else request.reject(new McpError(ErrorCode.InternalError, 'the upstream answered tools/call with a result that is not an object'));
    return true;
  }
  if (value.method === 'notifications/progress' && typeof value.params?.progressToken === 'string') {
    const request = requests.get(value.params.progressToken);
    if (!request?.onProgress) return false;
    const { progressToken: _token, ...progress } = value.params;
    request.onProgress(progress as Progress);
    return true;
  }
  return false;
}

/** Wraps the SDK's upstream transport (see {@link UpstreamTransport}). */
export function interceptUpstream(inner: Transport): UpstreamTransport {
  const requests = new Map<string, OwnRequest>();
  let sequence = 0;
  let innerClosed = false;

  function request(method: string, params: Record<string, unknown>, signal: AbortSignal, onProgress: ((progress: Progress) => void) | undefined) {
    // The SDK client's own errors, for the same classification: a closed connection, the caller's abort reason.
    if (innerClosed) return Promise.reject(McpError.fromError(ErrorCode.ConnectionClosed, 'Connection closed'));
    if (signal.aborted) return Promise.reject(signal.reason);
    sequence += 1;
    const id = `${OWN_ID_PREFIX}${sequence}`;
    const message = {
      jsonrpc: '2.0',
      id,
      method,
      params: onProgress ? { ...params, _meta: { ...(params._meta as Record<string, unknown> | undefined), progressToken: id } } : params,
    } as JSONRPCMessage;
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      const onAbort = () => {
        if (!requests.delete(id)) return;
        void inner
          .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: String(signal.reason) } } as JSONRPCMessage)
          .catch(() => undefined);
        reject(signal.reason);
      };
      requests.set(id, {
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
        if (requests.delete(id)) {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        }
      });
    });
  }

  const outer: UpstreamTransport = {
    start: () => inner.start(),
    send: (message, sendOptions) => inner.send(message, sendOptions),
    close: () => inner.close(),
    get sessionId() {
      return inner.sessionId;
    },
    ...(inner.setProtocolVersion ? { setProtocolVersion: (version: string) => inner.setProtocolVersion!(version) } : {}),
    request,
  };
  inner.onmessage = (message, extra) => {
    if (requests.size > 0 && takeOwnMessage(requests, message)) return;
    outer.onmessage?.(message, extra);
  };
  inner.onclose = () => {
    innerClosed = true;
    const error = McpError.fromError(ErrorCode.ConnectionClosed, 'Connection closed');
    for (const pending of requests.values()) pending.reject(error);
    requests.clear();
    outer.onclose?.();
  };
  inner.onerror = (error) => outer.onerror?.(error);
  return outer;
}
