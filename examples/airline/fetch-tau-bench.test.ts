import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hasSharedData, sharedDataPath } from '../shared-data.ts';
import {
  TAU_BENCH_AIRLINE_TOOL_FILES,
  TAU_BENCH_COMMIT,
  TAU_BENCH_FILES,
  TAU_BENCH_RAW_BASE_URL,
  deriveAirlineToolsJson,
  locateTauBenchData,
  sha256Hex,
  tauBenchCacheDir,
} from './fetch-tau-bench.ts';

const dataPresent = TAU_BENCH_FILES.every((file) => hasSharedData(...file.path.split('/')));

/** A Python literal of `value` in the style of the upstream tool files (black: double quotes, trailing commas). */
function toPythonSource(value: unknown, indent = ''): string {
  const inner = `${indent}    `;
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') {
    const quoted = (text: string) => JSON.stringify(text);
    // long descriptions as two adjacent literals, as a formatter may wrap them
    if (value.length > 80) return `(\n${inner}${quoted(value.slice(0, 40))}\n${inner}${quoted(value.slice(40))}\n${indent})`;
    return quoted(value);
  }
  if (Array.isArray(value)) return `[\n${value.map((item) => `${inner}${toPythonSource(item, inner)},\n`).join('')}${indent}]`;
  const entries = Object.entries(value as Record<string, unknown>);
  return `{\n${entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${toPythonSource(item, inner)},  # ${key}\n`).join('')}${indent}}`;
}

function toolFileSource(info: unknown): string {
  return [
    'from typing import Any, Dict',
    '',
    '',
    'class SomeTool:',
    '    @staticmethod',
    '    def invoke(data: Dict[str, Any]) -> str:',
    "        return 'Error: not in a test'",
    '',
    '    @staticmethod',
    '    def get_info() -> Dict[str, Any]:',
    `        return ${toPythonSource(info, '        ')}`,
    '',
  ].join('\n');
}

/** What the raw GitHub URLs of the pinned commit answer, built from the shared data folder. */
function upstreamFiles(): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  const tools = JSON.parse(readFileSync(sharedDataPath('tau-bench', 'tools.airline.json')!, 'utf8')) as unknown[];
  TAU_BENCH_AIRLINE_TOOL_FILES.forEach((path, index) => files.set(`${TAU_BENCH_RAW_BASE_URL}/${path}`, new TextEncoder().encode(toolFileSource(tools[index]))));
  for (const file of TAU_BENCH_FILES) {
    if (file.upstream.kind === 'file') files.set(`${TAU_BENCH_RAW_BASE_URL}/${file.upstream.path}`, readFileSync(sharedDataPath(...file.path.split('/'))!));
  }
  return files;
}

function fakeFetch(files: Map<string, Uint8Array>, requested: string[]): typeof fetch {
  return (async (input: string | URL | Request) => {
    const url = String(input);
    requested.push(url);
    const body = files.get(url);
    return body === undefined ? new Response('not found', { status: 404 }) : new Response(body);
  }) as typeof fetch;
}

let cacheRoots: string[] = [];
afterEach(() => {
  for (const root of cacheRoots) rmSync(root, { recursive: true, force: true });
  cacheRoots = [];
});
function newCacheRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'toolrun-cache-'));
  cacheRoots.push(root);
  return root;
}

describe('locateTauBenchData', () => {
  it('offline with no copy: names every missing file, its SHA-256 and source, and how to provide it', async () => {
    const cacheRoot = newCacheRoot();
    const offline = (async () => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('getaddrinfo ENOTFOUND raw.githubusercontent.com'), { code: 'ENOTFOUND' }) });
    }) as typeof fetch;
    const location = await locateTauBenchData({ env: { TOOLRUN_CACHE_DIR: cacheRoot }, candidates: [], fetch: offline });
    expect(location.ok).toBe(false);
    if (location.ok) return;
    expect(location.missing).toEqual(TAU_BENCH_FILES.map((file) => file.path));
    for (const file of TAU_BENCH_FILES) {
      expect(location.message).toContain(file.path);
      expect(location.message).toContain(file.sha256);
    }
    expect(location.message).toContain('ENOTFOUND');
    expect(location.message).toContain('TOOLRUN_DATA_DIR');
    expect(location.message).toContain(`${TAU_BENCH_RAW_BASE_URL}/historical_trajectories/gpt-4o-airline.json`);
    expect(location.message).toContain(tauBenchCacheDir({ TOOLRUN_CACHE_DIR: cacheRoot }));
  });

  it('uses the cache folder under TOOLRUN_CACHE_DIR, named by the pinned commit', () => {
    expect(tauBenchCacheDir({ TOOLRUN_CACHE_DIR: '/var/cache/x' })).toBe(join('/var/cache/x', 'tau-bench', TAU_BENCH_COMMIT));
    expect(tauBenchCacheDir({ XDG_CACHE_HOME: '/home/u/.cache' })).toBe(join('/home/u/.cache', 'toolrun', 'tau-bench', TAU_BENCH_COMMIT));
  });

  it.skipIf(!dataPresent)('finds a complete local copy first and checks its SHA-256', async () => {
    const requested: string[] = [];
    const sharedRoot = dirname(dirname(sharedDataPath('tau-bench', 'tools.airline.json')!));
    const location = await locateTauBenchData({ candidates: [{ dir: sharedRoot, source: 'shared' }], fetch: fakeFetch(new Map(), requested) });
    expect(location).toMatchObject({ ok: true, dataDir: sharedRoot, source: 'shared', downloaded: [], hashMismatches: [] });
    expect(requested).toEqual([]);
  });

  it.skipIf(!dataPresent)(
    'downloads the pinned files, derives tools.airline.json from the tool files, verifies every SHA-256, then reuses the cache',
    async () => {
      const cacheRoot = newCacheRoot();
      const files = upstreamFiles();
      const requested: string[] = [];
      const env = { TOOLRUN_CACHE_DIR: cacheRoot };
      const location = await locateTauBenchData({ env, candidates: [], fetch: fakeFetch(files, requested) });
      expect(location).toMatchObject({ ok: true, source: 'download', dataDir: tauBenchCacheDir(env), downloaded: TAU_BENCH_FILES.map((file) => file.path) });
      expect(new Set(requested)).toEqual(new Set(files.keys()));
      for (const file of TAU_BENCH_FILES) expect(sha256Hex(readFileSync(join(tauBenchCacheDir(env), file.path)))).toBe(file.sha256);
      expect(readFileSync(join(tauBenchCacheDir(env), 'tau-bench', 'tools.airline.json'))).toEqual(
        readFileSync(sharedDataPath('tau-bench', 'tools.airline.json')!),
      );

      requested.length = 0;
      const again = await locateTauBenchData({ env, candidates: [], fetch: fakeFetch(files, requested) });
      expect(again).toMatchObject({ ok: true, source: 'cache', downloaded: [] });
      expect(requested).toEqual([]);
    },
  );

  it.skipIf(!dataPresent)('keeps no file whose SHA-256 differs, and re-downloads a corrupted cached file', async () => {
    const cacheRoot = newCacheRoot();
    const env = { TOOLRUN_CACHE_DIR: cacheRoot };
    const files = upstreamFiles();
    const usersUrl = `${TAU_BENCH_RAW_BASE_URL}/tau_bench/envs/airline/data/users.json`;
    const tampered = new Map(files).set(usersUrl, new TextEncoder().encode('{"tampered": true}'));
    const location = await locateTauBenchData({ env, candidates: [], fetch: fakeFetch(tampered, []) });
    expect(location.ok).toBe(false);
    if (location.ok) return;
    expect(location.message).toContain('tau-bench/airline-db/users.json was downloaded but its SHA-256 is');
    expect(location.missing).toContain('tau-bench/airline-db/users.json');
    expect(existsSync(join(tauBenchCacheDir(env), 'tau-bench', 'airline-db', 'users.json'))).toBe(false);

    // the good files before it were kept; a corrupted cached file is fetched again, with the rest
    const flights = join(tauBenchCacheDir(env), 'tau-bench', 'airline-db', 'flights.json');
    mkdirSync(dirname(flights), { recursive: true });
    writeFileSync(flights, '{}');
    const requested: string[] = [];
    const repaired = await locateTauBenchData({ env, candidates: [], fetch: fakeFetch(files, requested) });
    expect(repaired).toMatchObject({
      ok: true,
      source: 'download',
      downloaded: ['tau-bench/airline-db/flights.json', 'tau-bench/airline-db/users.json', 'tau-bench/tools.airline.json'],
    });
    expect(requested).toHaveLength(2 + TAU_BENCH_AIRLINE_TOOL_FILES.length);
  });

  it('derives the schema array in file order, indented by two spaces', () => {
    const sources = [
      toolFileSource({ type: 'function', function: { name: 'a' } }),
      toolFileSource({ type: 'function', function: { name: 'b', description: 'x'.repeat(90) } }),
    ];
    expect(deriveAirlineToolsJson(sources)).toBe(
      JSON.stringify(
        [
          { type: 'function', function: { name: 'a' } },
          { type: 'function', function: { name: 'b', description: 'x'.repeat(90) } },
        ],
        null,
        2,
      ),
    );
  });
});
