/**
 * What a `fetch` wrapped by {@link createMcpStatusFetch} throws for a 429 or 5xx answer of a
 * Streamable HTTP MCP server: the status and the response's headers (for `Retry-After`), which the
 * SDK's own transport error drops. `errorFromMcpThrown` turns it into a classified `ToolError`.
 */
export class McpHttpStatusError extends Error {
  /** The HTTP status of the answer. */
  readonly status: number;
  /** The answer's headers. */
  readonly headers: Headers;

  constructor(status: number, headers: Headers, body: string) {
    super(`the MCP server answered HTTP ${status}${body ? `: ${body.slice(0, 500)}` : ''}`);
    this.name = 'McpHttpStatusError';
    this.status = status;
    this.headers = headers;
  }
}

/** The `fetch` shape the SDK's Streamable HTTP client transport takes. */
export type McpFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A `fetch` for `StreamableHTTPClientTransport({ fetch })` that throws an {@link McpHttpStatusError}
 * (status and headers kept) when a POST is answered 429 or 5xx, so a rate-limited or unavailable
 * server is classified `RATE_LIMITED` (with its `Retry-After`) or `UNAVAILABLE` and retried when
 * the tool is idempotent. Other answers are returned unchanged to the transport.
 *
 * @example
 * ```ts
 * new StreamableHTTPClientTransport(new URL(url), { fetch: createMcpStatusFetch() });
 * ```
 */
export function createMcpStatusFetch(fetchFunction: McpFetch = (url, init) => fetch(url, init)): McpFetch {
  return async (url, init) => {
    const response = await fetchFunction(url, init);
    if ((init?.method ?? 'GET').toUpperCase() === 'POST' && (response.status === 429 || response.status >= 500)) {
      const body = await response.text().catch(() => '');
      throw new McpHttpStatusError(response.status, response.headers, body);
    }
    return response;
  };
}
