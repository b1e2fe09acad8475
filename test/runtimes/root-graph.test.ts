import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { describe, expect, it } from 'vitest';

/**
 * The root entry (`import … from 'toolrun'`) must run on Node, Bun, Deno and Cloudflare Workers:
 * its whole import graph, bundled for a platform-neutral target, reaches no Node built-in, no
 * native module and none of the heavy packages that are optional peers of the subpaths.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const entry = fileURLToPath(new URL('../../src/index.ts', import.meta.url));

/** Packages that only subpaths may reach (optional peers, or Node-only). */
const FORBIDDEN_PACKAGES = [
  /^better-sqlite3(\/|$)/,
  /^pino(\/|$)/,
  /^@opentelemetry\/sdk-/,
  /^@opentelemetry\/exporter-/,
  /^commander(\/|$)/,
  /^cli-progress(\/|$)/,
  /^pg(\/|$)/,
  /^ioredis(\/|$)/,
  /^bullmq(\/|$)/,
];
const NODE_BUILTINS = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));

interface Reached {
  importer: string;
  path: string;
}

/**
 * Edges known to be pending a change in a file this test does not own, listed so that the test
 * still fails on any other edge, and fails once the pending one is gone (delete it from here then).
 * None today.
 */
const PENDING: Reached[] = [];

/** Bundles `src/index.ts` for `platform: 'neutral'`; every bare import esbuild sees is recorded and the forbidden ones left external. */
async function bundleRootEntry(): Promise<{ forbidden: Reached[]; inputs: string[]; bytes: number; text: string }> {
  const forbidden: Reached[] = [];
  const result = await esbuild.build({
    entryPoints: [entry],
    absWorkingDir: root,
    bundle: true,
    platform: 'neutral',
    format: 'esm',
    // The conditions a Worker bundler uses; `main` for the CommonJS packages (ajv).
    conditions: ['workerd', 'worker', 'browser', 'import'],
    mainFields: ['module', 'main'],
    metafile: true,
    write: false,
    logLevel: 'silent',
    plugins: [
      {
        name: 'record-forbidden',
        setup(build) {
          build.onResolve({ filter: /^[^./]/ }, (args) => {
            const isBuiltin = NODE_BUILTINS.has(args.path) || args.path.startsWith('node:');
            const isForbidden = FORBIDDEN_PACKAGES.some((pattern) => pattern.test(args.path));
            if (!isBuiltin && !isForbidden) return undefined;
            forbidden.push({ importer: args.importer.replace(root, ''), path: args.path });
            return { path: args.path, external: true };
          });
        },
      },
    ],
  });
  const output = result.outputFiles[0];
  return { forbidden, inputs: Object.keys(result.metafile.inputs), bytes: output?.contents.byteLength ?? 0, text: output?.text ?? '' };
}

describe('the root entry’s import graph', () => {
  it('reaches no node: built-in, native module, logger, telemetry SDK, CLI or database driver', async () => {
    const { forbidden, inputs } = await bundleRootEntry();
    expect(forbidden).toEqual(PENDING);
    // The graph is real: the runtime, the agent loop, the worker and the validators are in it.
    expect(inputs).toEqual(
      expect.arrayContaining([
        'src/core/create-tool-runtime.ts',
        'src/agent/run-agent.ts',
        'src/schema/ajv-schema-validator.ts',
        'src/schema/cfworker-schema-validator.ts',
      ]),
    );
    expect(inputs.some((input) => input.includes('node_modules/@cfworker/json-schema/'))).toBe(true);
    expect(inputs.filter((input) => input.includes('node_modules/better-sqlite3') || input.includes('node_modules/pino'))).toEqual([]);
  }, 60_000);

  it('uses no Buffer, no process and no require in the bundled source', async () => {
    const { text } = await bundleRootEntry();
    // Identifiers as code uses them (`Buffer.from`, `process.env`), not words inside strings or comments.
    expect(text.match(/\bBuffer\.(from|alloc|concat|byteLength|isBuffer)\b/g) ?? []).toEqual([]);
    expect(text.match(/\bprocess\.(env|exit|nextTick|on|hrtime|platform|versions)\b/g) ?? []).toEqual([]);
    expect(text.match(/\b__dirname\b|\b__filename\b/g) ?? []).toEqual([]);
  }, 60_000);
});
