/**
 * `toolrun mcp-proxy`'s cost: the `tools/call` round trip of server-everything's `echo` through the
 * proxy (stdio → proxy process → stdio) against straight to the same server (stdio), as a ratio;
 * and throughput with 8 concurrent clients (Streamable HTTP sessions on one `--listen` proxy)
 * against 8 Streamable HTTP clients straight to the same server on its own HTTP transport (and,
 * for scale, 8 concurrent callers on one stdio connection, where messages are batched per read). Runs the built CLI (`dist/`, what
 * `npm run bench` builds), or bundles the sources with esbuild when there is no build or
 * `TOOLRUN_BENCH_FROM_SOURCE=1`.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { measure, type BenchRow } from './measure.ts';

const ROOT = resolve(import.meta.dirname, '..');
const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const CONCURRENCY = 8;
const THROUGHPUT_MS = 3000;

async function cliEntry(): Promise<string> {
  const built = join(ROOT, 'dist/cli/index.js');
  if (existsSync(built) && process.env.TOOLRUN_BENCH_FROM_SOURCE !== '1') return built;
  const { build } = await import('esbuild');
  const directory = join(ROOT, 'node_modules/.cache/toolrun-mcp-bench');
  mkdirSync(directory, { recursive: true });
  const outfile = join(directory, 'cli.mjs');
  await build({
    entryPoints: [join(ROOT, 'src/cli/index.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outfile,
    logLevel: 'error',
  });
  return outfile;
}

async function stdioClient(args: string[]): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' }));
  return client;
}

/** A TCP port free right now on 127.0.0.1. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', () => resolveListen()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
  return port;
}

/** Resolves with the first match of `pattern` on a child's stderr (rejects after 20 s). */
function stderrMatch(child: ReturnType<typeof spawn>, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  return new Promise((resolveMatch, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start: ${text}`)), 20_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const match = pattern.exec(text);
      if (match) {
        clearTimeout(timer);
        resolveMatch(match);
      }
    });
  });
}

async function httpClients(url: string): Promise<Client[]> {
  return Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      const client = new Client({ name: 'bench-http', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      return client;
    }),
  );
}

/** Calls per second of `concurrency` loops of `call` for `durationMs`. */
async function throughput(calls: Array<() => Promise<unknown>>, durationMs: number): Promise<number> {
  const endAt = Date.now() + durationMs;
  let done = 0;
  await Promise.all(
    calls.map(async (call) => {
      while (Date.now() < endAt) {
        await call();
        done += 1;
      }
    }),
  );
  return (done * 1000) / durationMs;
}

/**
 * The floor of any extra process hop: a Node process that spawns the server and pipes bytes both
 * ways (stdin → child stdin, child stdout → stdout), parsing nothing.
 */
const RELAY = `const { spawn } = require('node:child_process');
const child = spawn(process.argv[1], process.argv.slice(2), { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
process.stdin.on('end', () => child.kill());`;

/** Rounds of the round-trip measurement; the rows alternate in each round and keep their best median. */
const ROUNDS = 5;

/** Runs the MCP proxy benchmark and returns its rows. */
export async function runMcpBench(): Promise<BenchRow[]> {
  const cli = await cliEntry();
  const echo = (client: Client) => () => client.callTool({ name: 'echo', arguments: { message: 'hello' } });
  const straight = await stdioClient([EVERYTHING, 'stdio']);
  const relayed = await stdioClient(['-e', RELAY, process.execPath, EVERYTHING, 'stdio']);
  const through = await stdioClient([cli, 'mcp-proxy', '--', process.execPath, EVERYTHING, 'stdio']);
  const listen = spawn(process.execPath, [cli, 'mcp-proxy', '--listen', '127.0.0.1:0', '--', process.execPath, EVERYTHING, 'stdio'], {
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  // The same server on its own Streamable HTTP transport: what 8 HTTP clients cost without the proxy.
  const everythingPort = await freePort();
  const everythingHttp = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    stdio: ['pipe', 'ignore', 'pipe'],
    env: { ...process.env, PORT: String(everythingPort) },
  });
  try {
    // The machine is shared and noisy: A, relay and B alternate, each round in a rotated order, best median kept.
    const options = { batches: 5, batchSize: 200, warmup: 300 };
    const cases = [echo(straight), echo(relayed), echo(through)];
    const best = [Infinity, Infinity, Infinity];
    for (let round = 0; round < ROUNDS; round++) {
      for (let step = 0; step < cases.length; step++) {
        const index = (round + step) % cases.length;
        best[index] = Math.min(best[index]!, await measure(cases[index]!, options));
      }
    }
    const [directNs, relayNs, proxiedNs] = best as [number, number, number];
    const [, url] = await stderrMatch(listen, /at (http:\/\/\S+\/mcp)/, 'the --listen proxy');
    await stderrMatch(everythingHttp, /listening on port/i, 'server-everything streamableHttp');
    const proxiedHttp = await httpClients(url!);
    const straightHttp = await httpClients(`http://127.0.0.1:${everythingPort}/mcp`);
    const directRate = await throughput(
      Array.from({ length: CONCURRENCY }, () => echo(straight)),
      THROUGHPUT_MS,
    );
    let straightHttpRate = 0;
    let proxiedRate = 0;
    for (let round = 0; round < 3; round++) {
      // Alternated, best of three: the proxy is not measured only when the machine happens to be busy.
      if (round % 2 === 0) straightHttpRate = Math.max(straightHttpRate, await throughput(straightHttp.map(echo), THROUGHPUT_MS));
      proxiedRate = Math.max(proxiedRate, await throughput(proxiedHttp.map(echo), THROUGHPUT_MS));
      if (round % 2 === 1) straightHttpRate = Math.max(straightHttpRate, await throughput(straightHttp.map(echo), THROUGHPUT_MS));
    }
    await Promise.all([...proxiedHttp, ...straightHttp].map((client) => client.close()));
    return [
      { name: 'tools/call echo, straight to server-everything (stdio)', medianNs: directNs },
      {
        name: 'tools/call echo through a byte relay (a Node process piping stdio both ways: the floor of one hop)',
        medianNs: relayNs,
        baseline: 'straight',
        ratio: relayNs / directNs,
      },
      { name: 'tools/call echo through mcp-proxy (stdio → stdio)', medianNs: proxiedNs, baseline: 'straight', ratio: proxiedNs / directNs },
      { name: 'tools/call echo through mcp-proxy vs the byte relay', medianNs: proxiedNs, baseline: 'relay', ratio: proxiedNs / relayNs },
      { name: `${CONCURRENCY} concurrent callers straight (stdio)`, medianNs: 1e9 / directRate, note: `${Math.round(directRate)} calls/s` },
      {
        name: `${CONCURRENCY} Streamable HTTP clients straight to server-everything (its own HTTP transport)`,
        medianNs: 1e9 / straightHttpRate,
        note: `${Math.round(straightHttpRate)} calls/s`,
      },
      {
        name: `${CONCURRENCY} Streamable HTTP clients through one mcp-proxy --listen`,
        medianNs: 1e9 / proxiedRate,
        note: `${Math.round(proxiedRate)} calls/s`,
        baseline: 'straight (HTTP)',
        ratio: straightHttpRate / proxiedRate,
      },
    ];
  } finally {
    await straight.close();
    await relayed.close();
    await through.close();
    listen.kill('SIGTERM');
    everythingHttp.kill('SIGTERM');
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { printTable } = await import('./measure.ts');
  printTable('MCP proxy: round trip and throughput', await runMcpBench());
}
