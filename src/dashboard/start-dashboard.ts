import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { serve as ServeFunction } from '@hono/node-server';
import { ToolrunError } from '../ground/toolrun-error.ts';
import { createDashboardApp, type DashboardApp, type DashboardAppOptions } from './dashboard-app.ts';

/** Options of {@link startDashboard}. */
export interface StartDashboardOptions extends Omit<DashboardAppOptions, 'token' | 'loopback'> {
  /** Address to listen on. Anything but `127.0.0.1`, `::1` or `localhost` needs the token for every request. @defaultValue `'127.0.0.1'` */
  host?: string;
  /** Port; 0 picks a free one. @defaultValue 4319 */
  port?: number;
  /** The token of the actions (at least 16 characters). @defaultValue 24 random bytes, base64url */
  token?: string;
}

/** A running dashboard. */
export interface RunningDashboard {
  /** `http://host:port/` */
  url: string;
  /** The page's address with the token in the fragment (`#token=…`): the page keeps it for its actions; the fragment is never sent to the server. */
  urlWithToken: string;
  token: string;
  port: number;
  host: string;
  loopback: boolean;
  dashboard: DashboardApp;
  /** Stops listening, stops the sampler and waits for a replay job in flight. Does not close the stores. */
  close(): Promise<void>;
}

const LOOPBACK_ADDRESSES = new Set(['127.0.0.1', '::1', 'localhost']);

/**
 * Serves the dashboard over HTTP with `@hono/node-server` (an optional peer dependency, loaded
 * here) and starts its sampler.
 *
 * @throws ToolrunError `MISSING_DEPENDENCY` without `hono`/`@hono/node-server`; `INVALID_OPTIONS`
 * for a port outside 0–65535 or a token shorter than 16 characters; `USAGE` when the address is in
 * use or cannot be bound (the system's reason in the message).
 */
export async function startDashboard(options: StartDashboardOptions): Promise<RunningDashboard> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 4319;
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new ToolrunError('INVALID_OPTIONS', `--port must be an integer from 0 to 65535, received ${String(port)}`);
  const token = options.token ?? randomBytes(24).toString('base64url');
  const loopback = LOOPBACK_ADDRESSES.has(host);
  let serve: typeof ServeFunction;
  try {
    ({ serve } = await import('@hono/node-server'));
  } catch (error) {
    throw new ToolrunError('MISSING_DEPENDENCY', 'the dashboard needs the optional peers hono and @hono/node-server: npm install hono @hono/node-server', {
      cause: error,
    });
  }
  const dashboard = createDashboardApp({ ...options, token, loopback });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const started = serve({ fetch: dashboard.app.fetch, hostname: host, port }, () => resolve(started));
    started.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        new ToolrunError(
          'LISTEN_FAILED',
          `the dashboard cannot listen on ${host}:${port}: ${error.code === 'EADDRINUSE' ? 'the port is in use (pass --port N)' : error.message}`,
          { cause: error },
        ),
      );
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host === 'localhost' ? 'localhost' : shownHost}:${address.port}/`;
  dashboard.start();
  return {
    url,
    urlWithToken: `${url}#token=${token}`,
    token,
    port: address.port,
    host,
    loopback,
    dashboard,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      await dashboard.close();
    },
  };
}
