import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ToolrunError } from '../../ground/toolrun-error.ts';

/** Options of {@link startRestateServer}. Durations in milliseconds. */
export interface StartRestateServerOptions {
  /**
   * The `restate-server` executable.
   * @defaultValue the binary of the `@restatedev/restate-server` package for this platform, else `restate-server` on the `PATH`
   */
  binaryPath?: string;
  /** The data directory (removed on `stop` only when this function made it). @defaultValue a new directory under the OS temp dir */
  baseDir?: string;
  /** How long the server may take to answer its health checks before the start fails (and the process is killed). @defaultValue 30_000 */
  startTimeoutMs?: number;
  /** Partitions of the new cluster (fewer start faster). @defaultValue 2 */
  partitions?: number;
  /** Called with every line the server writes (stdout and stderr). @defaultValue none */
  onOutput?: (line: string) => void;
}

/** A running restate-server of {@link startRestateServer}. */
export interface RestateServer {
  /** The HTTP ingress, e.g. `http://127.0.0.1:39511` (where invocations are sent). */
  ingressUrl: string;
  /** The admin API, e.g. `http://127.0.0.1:39512` (deployments, invocations, SQL queries). */
  adminUrl: string;
  /** The data directory. */
  baseDir: string;
  /** The server's process id. */
  pid: number;
  /**
   * Registers (or registers again, `force`) the service deployment at `uri` (e.g.
   * `http://127.0.0.1:9080`), so the server discovers its services and sends them invocations.
   * @throws Error when the admin API refuses it (the deployment is down or not a Restate endpoint).
   */
  register(uri: string): Promise<void>;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and removes a data directory it made. Idempotent. */
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (the OS picks it; another process may take it before it is bound again). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The restate-server binary of the installed npm package for this platform, or `restate-server`. */
function defaultBinary(): string {
  try {
    const require = createRequire(import.meta.url);
    const manifest = require.resolve(`@restatedev/restate-server-${process.platform}-${process.arch}/package.json`);
    return join(dirname(manifest), 'bin', 'restate-server');
  } catch {
    return 'restate-server';
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function healthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Starts a single-node restate-server on free ports of 127.0.0.1 (ingress, admin, node-to-node)
 * with its own data directory, and waits until its ingress and admin API answer. For tests,
 * examples and local runs; a production cluster is deployed as Restate documents.
 *
 * @throws ToolrunError `UPSTREAM_FAILED` when the binary cannot be run, exits, or is not
 * healthy within `startTimeoutMs` (the process is killed and its directory removed).
 */
export async function startRestateServer(options: StartRestateServerOptions = {}): Promise<RestateServer> {
  const madeDir = options.baseDir === undefined;
  const baseDir = options.baseDir ?? mkdtempSync(join(tmpdir(), 'toolrun-restate-'));
  const [ingressPort, adminPort, nodePort] = [await freePort(), await freePort(), await freePort()];
  const child = spawn(
    options.binaryPath ?? defaultBinary(),
    ['--base-dir', baseDir, '--node-name', 'toolrun', '--listen-mode', 'tcp', '--no-logo', '--default-num-partitions', String(options.partitions ?? 2)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingressPort}`,
        RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${adminPort}`,
        RESTATE_BIND_ADDRESS: `127.0.0.1:${nodePort}`,
        RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${nodePort}`,
        RESTATE_DISABLE_TELEMETRY: 'true',
        RESTATE_LOG_FORMAT: 'compact',
        RESTATE_LOG_DISABLE_ANSI_CODES: 'true',
      },
    },
  );
  let exited: string | undefined;
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error));
  child.once('exit', (code, signal) => (exited = `exited with ${code ?? signal}`));
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) options.onOutput?.(line);
    });
  }
  const ingressUrl = `http://127.0.0.1:${ingressPort}`;
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  const cleanUp = async () => {
    await stopProcess(child);
    if (madeDir) rmSync(baseDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
  while (!((await healthy(`${adminUrl}/health`)) && (await healthy(`${ingressUrl}/restate/health`)))) {
    if (spawnError !== undefined || exited !== undefined || Date.now() > deadline) {
      await cleanUp();
      const why = spawnError?.message ?? exited ?? `not healthy after ${options.startTimeoutMs ?? 30_000} ms`;
      throw new ToolrunError('UPSTREAM_FAILED', `restate-server did not start: ${why}`);
    }
    await sleep(100);
  }
  let stopped: Promise<void> | undefined;
  return {
    ingressUrl,
    adminUrl,
    baseDir,
    pid: child.pid!,
    async register(uri) {
      const response = await fetch(`${adminUrl}/deployments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ uri, force: true }),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`restate-server refused the deployment ${uri}: ${response.status} ${text.slice(0, 500)}`);
    },
    stop: () => (stopped ??= cleanUp()),
  };
}
