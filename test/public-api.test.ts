/**
 * The public API's shape, read from the entries themselves (the signatures are in api/*.api.md,
 * checked by `npm run api:check`):
 * - every entry of package.json "exports" names its exports (no `export *`);
 * - the names users import today are still there, as values;
 * - plumbing left the root entry;
 * - `toolrun/testing` loads in a plain Node process, without vitest in its import graph.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as root from '../src/index.ts';
import * as sqlite from '../src/stores/sqlite/index.ts';
import * as otel from '../src/observability/index.ts';
import * as testing from '../src/testing/index.ts';
import { ToolrunError, type ToolrunErrorCode } from '../src/index.ts';

const PROJECT = join(import.meta.dirname, '..');

/** package.json "exports" subpath → the source file of the entry. */
function entrySources(): Record<string, string> {
  const manifest = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
  const sources: Record<string, string> = {};
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    const types = typeof target === 'object' && target !== null ? (target as { types?: string }).types : undefined;
    if (types === undefined) continue;
    sources[subpath] = types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts');
  }
  return sources;
}

/** Every source file reachable from `file` through relative static and dynamic imports. */
function importGraph(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const match of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)) importGraph(resolve(dirname(file), match[1]!), seen);
  return seen;
}

describe('public API', () => {
  it('every entry of package.json "exports" names its exports', () => {
    const sources = entrySources();
    expect(Object.keys(sources)).toEqual([
      '.',
      './testing',
      './testing/contract',
      './sqlite',
      './postgres',
      './redis',
      './bullmq',
      './otel',
      './openai',
      './ai-sdk',
      './openai-agents',
      './langchain',
      './anthropic',
      './mcp',
      './dbos',
      './restate',
      './temporal',
      './temporal/workflow',
    ]);
    const withStar = Object.entries(sources).filter(([, file]) => /^\s*export\s+\*/m.test(readFileSync(join(PROJECT, file), 'utf8')));
    expect(withStar).toEqual([]);
  });

  it('keeps the names users import, as functions and classes', () => {
    const kept = [
      'defineTool',
      'createToolRuntime',
      'ToolError',
      'ToolrunError',
      'formatToolResult',
      'handleMessage',
      'replayToolFailure',
      'drainToolDlq',
      'createWorker',
      'runAgent',
      'createMemoryStores',
      'createRedactor',
      'createSharedBreaker',
      'readDeadLetterMetrics',
      'defineConfig',
      'createToolrun',
    ] as const;
    expect(kept.filter((name) => typeof (root as Record<string, unknown>)[name] !== 'function')).toEqual([]);
    expect(typeof sqlite.createSqliteStores).toBe('function');
    expect([typeof otel.createObservability, typeof otel.startMetricsServer]).toEqual(['function', 'function']);
    expect([
      typeof testing.createFakeClock,
      typeof testing.createAutoAdvancingClock,
      typeof testing.createScriptedModel,
      typeof testing.createSeededRandom,
    ]).toEqual(['function', 'function', 'function', 'function']);
  });

  it('the root entry is the product: about 20–30 values, no plumbing', () => {
    const values = Object.keys(root);
    expect(values.length).toBeGreaterThanOrEqual(20);
    expect(values.length).toBeLessThanOrEqual(30);
    const plumbing = [
      'buildFailure',
      'damerauLevenshtein',
      'ledgerKey',
      'getDefaultStores',
      'resolveToolrunConfig',
      'assertToolrunConfig',
      'classifyError',
      'toolDeadLetterKind',
      'systemClock',
    ];
    expect(plumbing.filter((name) => name in root)).toEqual([]);
  });

  it('ToolrunError carries a typed code and is recognised across copies by its brand', () => {
    const code: ToolrunErrorCode = 'INVALID_SCHEMA';
    const error = new ToolrunError(code, 'the JSON Schema does not compile');
    // @ts-expect-error a code outside the union does not type-check
    const unknownCode = new ToolrunError('NOT_A_CODE', 'x');
    expect([error.code, ToolrunError.is(error), unknownCode.name]).toEqual(['INVALID_SCHEMA', true, 'ToolrunError']);
    expect(ToolrunError.is({ [Symbol.for('toolrun.ToolrunError')]: true })).toBe(true);
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error('trap');
        },
      },
    );
    expect(ToolrunError.is(hostile)).toBe(false);
  });

  it('toolrun/testing loads in a plain Node process, and no module it reaches imports vitest', () => {
    const script =
      "const testing = await import('./src/testing/index.ts'); console.log(JSON.stringify({ names: Object.keys(testing).sort(), now: testing.createFakeClock(1000).now() }));";
    const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], {
      cwd: PROJECT,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(JSON.parse(output)).toEqual({ names: ['createAutoAdvancingClock', 'createFakeClock', 'createScriptedModel', 'createSeededRandom'], now: 1000 });
    const reached = importGraph(join(PROJECT, 'src/testing/index.ts'));
    expect(reached.size).toBeGreaterThan(4);
    expect(
      [...reached].filter((file) => /from\s+'vitest'|import\(\s*'vitest'/.test(readFileSync(file, 'utf8'))).map((file) => relative(PROJECT, file)),
    ).toEqual([]);
  });

  it('the contract suites fail to register outside vitest, which is why they have their own subpath', () => {
    const script = "await import('./src/testing/contract/index.ts');";
    const run = () =>
      execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], {
        cwd: PROJECT,
        encoding: 'utf8',
        stdio: 'pipe',
        timeout: 20_000,
      });
    expect(run).toThrow(/vitest/i);
  });
});
