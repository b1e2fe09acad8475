import type { Command } from 'commander';
import { usageError } from '../cli-error.ts';
import { addInitOption, addLogOptions, integerOption } from '../parse-options.ts';
import type { McpProxyCommandOptions } from '../mcp-proxy/run-mcp-proxy.ts';

/** The help text after the options of `toolrun mcp-proxy`. */
export const MCP_PROXY_HELP = `
Examples (an MCP client config entry: "command": "npx", "args": ["toolrun", "mcp-proxy", "--", ...]):
  toolrun mcp-proxy -- npx -y @modelcontextprotocol/server-memory
  toolrun mcp-proxy --db .toolrun/mcp.db -- node ./my-server.js --flag   (shared breaker state + failure log)
  toolrun mcp-proxy --url http://127.0.0.1:3000/mcp                      (guard a Streamable HTTP server)
  toolrun mcp-proxy --listen 127.0.0.1:8808 -- npx -y @modelcontextprotocol/server-everything

Everything after -- is the upstream command, taken verbatim; it inherits this process's environment.
stdout carries only MCP messages; the proxy's own lines (and the upstream's stderr) go to stderr.
State: --db FILE / --store URL (else $TOOLRUN_DB, else memory: nothing is written); a database
that does not exist is an error unless --init; --queue redis://… keeps the shared breaker state in
Redis. toolrun report --db FILE reads the failures it recorded. Shared breaker keys are
mcp:<hash of the upstream>/<tool>: replicas of the same upstream (same command and args, or URL)
share a breaker per tool, different upstreams with the same tool name do not (--breaker-prefix
sets the prefix, e.g. to share across differently started replicas).

Exit codes: 0 stdin closed (or SIGINT/SIGTERM); 1 a store or the metrics port cannot be opened;
2 a usage error. An upstream that fails to start or dies does not end the proxy: the client gets
a JSON-RPC error (initialize) or UNAVAILABLE results (tools/call) and the upstream is restarted.`;

/**
 * `toolrun mcp-proxy [options] -- <command> [args...]`: an MCP server (stdio, or Streamable HTTP
 * with `--listen`) that spawns and guards a stdio MCP server (or `--url`, a Streamable HTTP one).
 * Every message passes through unchanged except `tools/call`, which is validated against the
 * tool's `inputSchema` before the upstream sees it, classified, retried on environment failures
 * only for idempotent or read-only tools, and cut off by a per-session breaker and a breaker
 * shared through the store by every replica. The MCP SDK is loaded only when the command runs.
 */
export function addMcpProxyCommand(program: Command): void {
  const command = program
    .command('mcp-proxy')
    .description('guard any MCP server: validate, classify and retry tools/call, pass everything else through')
    .argument('[command...]', 'the upstream stdio MCP server: everything after -- (or after the first word that is not an option), verbatim')
    .passThroughOptions()
    .option('--url <url>', 'guard a Streamable HTTP MCP server at this URL instead of spawning one')
    .option('--listen <host:port>', 'serve over Streamable HTTP at http://host:port/mcp instead of stdio (host default 127.0.0.1)')
    .option(
      '--db <file>',
      'SQLite database for the shared breaker state, the failure log and the tool DLQ of exhausted calls (default: $TOOLRUN_DB, else memory: no DLQ)',
    )
    .option('--store <url>', 'stores URL: sqlite:PATH, postgres://… or memory: (instead of --db)')
    .option('--queue <url>', 'redis://… : keep the shared breaker state in Redis')
    .option('--max-attempts <n>', 'attempts of an idempotent or read-only tool on an environment failure (others: 1)', integerOption(1), 3)
    .option('--timeout-ms <ms>', 'per-attempt timeout of a tool call', integerOption(1), 60_000)
    .option('--startup-timeout-ms <ms>', 'how long the upstream may take to start and answer initialize', integerOption(1), 20_000)
    .option('--max-message-bytes <n>', 'largest message accepted from the client', integerOption(1024), 4 * 1024 * 1024)
    .option('--breaker-threshold <n>', 'consecutive failures broken for everyone that open the shared breaker', integerOption(1), 2)
    .option('--breaker-cooldown-ms <ms>', 'how long the shared breaker stays open before one probe', integerOption(1), 30_000)
    .option('--no-shared-breaker', 'no shared breaker')
    .option('--no-tool-failure', "failures carry toolrun's envelope only, not the draft MCP ToolFailure under _meta")
    .option(
      '--breaker-prefix <prefix>',
      'prefix of the shared breaker keys (default: mcp:<hash of the upstream command and args, or URL>/): replicas of one upstream share breakers, other upstreams do not',
    )
    .option('--metrics-port <n>', 'serve metrics for Prometheus on 127.0.0.1:N/metrics (0: a free port)', integerOption(0))
    .addHelpText('after', MCP_PROXY_HELP);
  addInitOption(command);
  addLogOptions(command);
  command.action(async (upstreamCommand: string[], options: McpProxyCommandOptions) => {
    const { runMcpProxy } = await import('../mcp-proxy/run-mcp-proxy.ts').catch((error: unknown) => {
      // the MCP SDK is an optional peer of toolrun: the one command that needs it says so
      if ((error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' && String(error).includes('@modelcontextprotocol/sdk'))
        throw usageError('toolrun mcp-proxy needs the MCP SDK: npm install @modelcontextprotocol/sdk');
      throw error;
    });
    await runMcpProxy(options, upstreamCommand, {
      stdin: process.stdin,
      stdout: process.stdout,
      writeError: (text) => void process.stderr.write(text),
      env: process.env,
    });
  });
}
