/**
 * The MCP conformance suite (`@modelcontextprotocol/conformance`, server side) against
 * `toolrun mcp-proxy --listen` in front of server-everything, and against server-everything on its
 * own Streamable HTTP transport: every check that passes straight passes through the proxy. Most
 * scenarios need the suite's own fixture tools, resources and prompts, which server-everything
 * does not have, so they fail both ways. The suite needs Node 22 (`fs.globSync`); it runs with Bun
 * (`bun` on the PATH, or `$TOOLRUN_BUN`; `.ci/run` provides it), and the test is skipped, saying so,
 * when Bun cannot run here.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { EVERYTHING_SERVER, spawnProxy, stop } from './fixtures/mcp-cli.ts';

const ROOT = resolve(import.meta.dirname, '..');
const BUN = process.env.TOOLRUN_BUN ?? 'bun';
const CONFORMANCE = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const bunRuns = existsSync(CONFORMANCE) && spawnSync(BUN, ['--version'], { timeout: 20_000 }).status === 0;
if (!bunRuns) console.warn('mcp-conformance: skipped — no bun on the PATH ($TOOLRUN_BUN), or @modelcontextprotocol/conformance cannot run here');

/** Per scenario: checks passed and failed, from the suite's summary lines (`✓ name: 1 passed, 0 failed`). */
async function conformance(url: string): Promise<Map<string, { passed: number; failed: number }>> {
  // the suite exits non-zero when a check fails: its summary is what is read
  const run = await promisify(execFile)(BUN, [CONFORMANCE, 'server', '--url', url], { timeout: 120_000, cwd: ROOT }).catch(
    (error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? '' }),
  );
  const scenarios = new Map<string, { passed: number; failed: number }>();
  for (const match of `${run.stdout}\n${run.stderr}`.matchAll(/^[✓✗] (\S+): (\d+) passed, (\d+) failed$/gmu)) {
    scenarios.set(match[1]!, { passed: Number(match[2]), failed: Number(match[3]) });
  }
  return scenarios;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', () => resolveListen()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
  return port;
}

describe.skipIf(!bunRuns)('MCP conformance suite (server side) against mcp-proxy --listen', () => {
  it('passes every check through the proxy that server-everything passes on its own', { timeout: 300_000 }, async () => {
    const proxy = await spawnProxy(['--listen', '127.0.0.1:0', '--', process.execPath, EVERYTHING_SERVER, 'stdio']);
    const port = await freePort();
    const everything = spawn(process.execPath, [EVERYTHING_SERVER, 'streamableHttp'], {
      stdio: ['pipe', 'ignore', 'pipe'],
      env: { ...process.env, PORT: String(port) },
    });
    try {
      const [, url] = await proxy.waitForStderr(/at (http:\/\/\S+\/mcp)/);
      await new Promise<void>((resolveReady, reject) => {
        let text = '';
        const timer = setTimeout(() => reject(new Error(`server-everything streamableHttp did not start: ${text}`)), 20_000);
        everything.stderr.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
          if (/listening on port/i.test(text)) {
            clearTimeout(timer);
            resolveReady();
          }
        });
      });
      const through = await conformance(url!);
      const straight = await conformance(`http://127.0.0.1:${port}/mcp`);
      const passing = (results: typeof through) => [...results].filter(([, counts]) => counts.failed === 0).map(([name]) => name);
      console.log(`mcp-conformance: through the proxy ${passing(through).length} of ${through.size} scenarios pass: ${passing(through).join(', ')}`);
      console.log(`mcp-conformance: straight to server-everything ${passing(straight).length} of ${straight.size}: ${passing(straight).join(', ')}`);
      expect(through.size).toBeGreaterThan(0);
      expect([...through.keys()].sort()).toEqual([...straight.keys()].sort());
      // every check server-everything passes on its own passes through the proxy (some more do: the proxy's own DNS-rebinding protection)
      for (const [name, counts] of straight) {
        expect({ name, atLeast: (through.get(name)?.passed ?? 0) >= counts.passed }).toEqual({ name, atLeast: true });
      }
      expect(passing(through)).toEqual(
        expect.arrayContaining(['server-initialize', 'ping', 'tools-list', 'tools-call-simple-text', 'tools-call-error', 'dns-rebinding-protection']),
      );
    } finally {
      everything.kill('SIGTERM');
      await stop(proxy.child);
    }
  });

  // The suite's own reference server (examples/servers/typescript/everything-server.ts of the
  // conformance repository at the installed version's tag, v0.1.16) is not on npm: pass its path in
  // TOOLRUN_CONFORMANCE_SERVER (it runs with tsx; its dependencies express, cors and zod are installed).
  const REFERENCE = process.env.TOOLRUN_CONFORMANCE_SERVER;
  it.skipIf(!REFERENCE || !existsSync(REFERENCE))(
    "passes every scenario through the proxy in front of the suite's own reference server",
    { timeout: 300_000 },
    async () => {
      const port = await freePort();
      const reference = spawn(process.execPath, [join(ROOT, 'node_modules/tsx/dist/cli.mjs'), REFERENCE!], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, PORT: String(port) },
      });
      // the reference server answers only to Host localhost (its DNS-rebinding protection)
      const upstream = `http://localhost:${port}/mcp`;
      let proxy: Awaited<ReturnType<typeof spawnProxy>> | undefined;
      try {
        await new Promise<void>((resolveReady, reject) => {
          let text = '';
          const timer = setTimeout(() => reject(new Error(`the reference server did not start: ${text}`)), 60_000);
          reference.stdout.on('data', (chunk: Buffer) => {
            text += chunk.toString('utf8');
            if (/running on/i.test(text)) {
              clearTimeout(timer);
              resolveReady();
            }
          });
        });
        proxy = await spawnProxy(['--listen', '127.0.0.1:0', '--url', upstream]);
        const [, url] = await proxy.waitForStderr(/at (http:\/\/\S+\/mcp)/);
        const through = await conformance(url!);
        const straight = await conformance(upstream);
        const failing = (results: typeof through) => [...results].filter(([, counts]) => counts.failed > 0).map(([name]) => name);
        console.log(`mcp-conformance (reference server): through the proxy ${through.size - failing(through).length} of ${through.size} pass`);
        expect(through.size).toBeGreaterThanOrEqual(30);
        expect(failing(straight)).toEqual([]);
        expect(failing(through)).toEqual([]);
      } finally {
        reference.kill('SIGTERM');
        if (proxy) await stop(proxy.child);
      }
    },
  );
});
