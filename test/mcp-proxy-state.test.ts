/**
 * `toolrun mcp-proxy`'s state: a `--db` that names no database is refused unless `--init` (as for
 * `worker` and `enqueue`), and the shared breaker keys are namespaced by upstream: two proxies of
 * different servers with one tool name do not share a breaker in a shared store, replicas of the
 * same server do (the upstream is the locked-API fixture, whose one tool always fails "401").
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { TOOLRUN_ENVELOPE_META_KEY } from '../src/adapters/mcp/index.ts';
import type { ToolFailure } from '../src/ground/tool-result.ts';
import { createMemoryBreakerStateStore } from '../src/stores/memory/memory-breaker-state-store.ts';
import { createSharedBreaker } from '../src/policies/shared-breaker.ts';
import { systemClock } from '../src/ground/ports/clock.ts';
import { createMcpProxy } from '../src/cli/mcp-proxy/mcp-proxy.ts';
import { defaultBreakerKeyPrefix, type UpstreamSpec } from '../src/cli/mcp-proxy/upstream-spec.ts';
import { spawnProxy, stop } from './fixtures/mcp-cli.ts';

const LOCKED_SERVER = resolve(import.meta.dirname, 'fixtures/mcp-locked-server.mjs');
const folder = mkdtempSync(join(tmpdir(), 'toolrun-mcp-state-'));
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  rmSync(folder, { recursive: true, force: true });
});

describe('mcp-proxy --db', () => {
  it('refuses a database file that does not exist (exit 2, nothing created) and creates it with --init', { timeout: 30_000 }, async () => {
    const db = join(folder, 'mistyped.db');
    const refused = await spawnProxy(['--db', db, '--', process.execPath, LOCKED_SERVER]);
    cleanups.push(() => stop(refused.child));
    refused.child.stdin.end();
    expect(await refused.exited).toBe(2);
    expect(refused.stderr()).toContain(`no toolrun database at ${db}`);
    expect(refused.stderr()).toContain('--init');
    expect(existsSync(db)).toBe(false);

    const created = await spawnProxy(['--db', db, '--init', '--', process.execPath, LOCKED_SERVER]);
    cleanups.push(() => stop(created.child));
    await created.waitForStderr(/state sqlite:/);
    created.child.stdin.end();
    expect(await created.exited).toBe(0);
    expect(existsSync(db)).toBe(true);

    // the database exists now: no --init needed
    const reopened = await spawnProxy(['--db', db, '--', process.execPath, LOCKED_SERVER]);
    cleanups.push(() => stop(reopened.child));
    await reopened.waitForStderr(/state sqlite:/);
    reopened.child.stdin.end();
    expect(await reopened.exited).toBe(0);
  });
});

describe('mcp-proxy shared breaker keys', () => {
  it('are mcp:<12 hex of the upstream>/: the same for the same command and args, whatever the environment', () => {
    const a: UpstreamSpec = { kind: 'stdio', command: 'node', args: ['server.js'], env: { KEY: '1' } };
    const sameOtherEnv: UpstreamSpec = { kind: 'stdio', command: 'node', args: ['server.js'], env: { KEY: '2' } };
    const otherArgs: UpstreamSpec = { kind: 'stdio', command: 'node', args: ['server.js', '--root', '/srv'], env: {} };
    const http: UpstreamSpec = { kind: 'http', url: new URL('http://127.0.0.1:3000/mcp') };
    expect(defaultBreakerKeyPrefix(a)).toMatch(/^mcp:[0-9a-f]{12}\/$/);
    expect(defaultBreakerKeyPrefix(sameOtherEnv)).toBe(defaultBreakerKeyPrefix(a));
    expect(new Set([a, otherArgs, http].map(defaultBreakerKeyPrefix)).size).toBe(3);
  });

  /** A proxy of the locked server (`extraArgs` make it another upstream) on `breaker`, its client, and its upstream's call count. */
  async function lockedProxy(breaker: ReturnType<typeof createSharedBreaker>, name: string, extraArgs: string[] = [], breakerKeyPrefix?: string) {
    const callsFile = join(folder, `${name}.calls`);
    const proxy = createMcpProxy({
      upstream: { kind: 'stdio', command: process.execPath, args: [LOCKED_SERVER, ...extraArgs], env: { ...process.env, LOCKED_CALLS_FILE: callsFile } },
      sharedBreaker: breaker,
      ...(breakerKeyPrefix !== undefined ? { breakerKeyPrefix } : {}),
      maxAttempts: 1,
      log: () => undefined,
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await proxy.attach(serverSide, { label: name });
    const client = new Client({ name, version: '1.0.0' });
    await client.connect(clientSide);
    cleanups.push(async () => {
      await client.close();
      await proxy.close();
    });
    return {
      code: async () => {
        const result = (await client.callTool({ name: 'search_flights', arguments: { from: 'SFO', to: 'JFK' } })) as CallToolResult;
        expect(result.isError).toBe(true);
        return ((result._meta as Record<string, unknown>)[TOOLRUN_ENVELOPE_META_KEY] as ToolFailure).error.code;
      },
      upstreamCalls: () => (existsSync(callsFile) ? readFileSync(callsFile, 'utf8').trim().split('\n').length : 0),
    };
  }

  it('two upstreams with one tool name do not share a breaker; replicas of one upstream do', { timeout: 30_000 }, async () => {
    const store = createMemoryBreakerStateStore();
    const breaker = createSharedBreaker({ store, clock: systemClock, options: { failureThreshold: 2, halfOpenAfterMs: 60_000 } });
    const replicaA = await lockedProxy(breaker, 'a1');
    const replicaB = await lockedProxy(breaker, 'a2');
    const otherServer = await lockedProxy(breaker, 'other', ['--another-instance']);

    // two rejected keys through replica a1 open the breaker of this upstream's search_flights
    expect([await replicaA.code(), await replicaA.code()]).toEqual(['AUTH_EXPIRED', 'AUTH_EXPIRED']);
    const key = `${defaultBreakerKeyPrefix({ kind: 'stdio', command: process.execPath, args: [LOCKED_SERVER], env: {} })}search_flights`;
    expect((await breaker.state(key))?.state).toBe('open');
    expect(await breaker.state('search_flights')).toBeUndefined();

    // replica a2 (another process of the same command, another environment) is cut off without calling its upstream
    expect(await replicaB.code()).toBe('CIRCUIT_OPEN');
    expect(replicaB.upstreamCalls()).toBe(0);
    // the other server's search_flights is not: its call reaches it
    expect(await otherServer.code()).toBe('AUTH_EXPIRED');
    expect(otherServer.upstreamCalls()).toBe(1);
  });

  it('breakerKeyPrefix set explicitly makes different upstreams share', { timeout: 30_000 }, async () => {
    const breaker = createSharedBreaker({
      store: createMemoryBreakerStateStore(),
      clock: systemClock,
      options: { failureThreshold: 2, halfOpenAfterMs: 60_000 },
    });
    const first = await lockedProxy(breaker, 'p1', [], 'flights/');
    const second = await lockedProxy(breaker, 'p2', ['--another-instance'], 'flights/');
    await first.code();
    await first.code();
    expect((await breaker.state('flights/search_flights'))?.state).toBe('open');
    expect(await second.code()).toBe('CIRCUIT_OPEN');
    expect(second.upstreamCalls()).toBe(0);
  });
});
