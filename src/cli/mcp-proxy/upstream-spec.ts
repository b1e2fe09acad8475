import { createHash } from 'node:crypto';

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

/** The upstream for a log line or an error message: its URL, or its command line. */
export function describeUpstream(upstream: UpstreamSpec): string {
  return upstream.kind === 'http' ? upstream.url.toString() : [upstream.command, ...upstream.args].join(' ');
}
