/**
 * Finds the τ-bench airline data the main job needs, or downloads it.
 *
 * Order: `TOOLRUN_DATA_DIR`; `../shared/data/` beside the checkout (the two places
 * `examples/shared-data.ts` looks); the download cache; else a download of the pinned files from
 * the public τ-bench repository at commit {@link TAU_BENCH_COMMIT} into the cache, each checked
 * against its SHA-256. Offline with no copy, it says exactly which files are missing and how to
 * provide them.
 *
 * The cache folder is `<cache root>/tau-bench/<commit>/`, laid out like the shared data folder
 * (`tau-bench/…` inside), so it can itself be used as `TOOLRUN_DATA_DIR`. The cache root is
 * `TOOLRUN_CACHE_DIR`, else `$XDG_CACHE_HOME/toolrun`, else `~/.cache/toolrun`.
 *
 * `tools.airline.json` is not an upstream file: upstream keeps each tool's schema as the dict
 * literal returned by `get_info()` in `tau_bench/envs/airline/tools/<tool>.py`. A download derives
 * it the way the shared copy was derived (see `../shared/data/tau-bench/SOURCE.md`): the 14 tool
 * files are fetched, each literal is read (parsed, never executed), and the array, in file-name
 * order, is written as JSON with two-space indentation. Its SHA-256 then matches the shared copy's.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readReturnedLiteral } from './workload/python-literal.ts';
import { AIRLINE_TOOL_NAMES } from './operations.ts';

/** The pinned τ-bench commit. */
export const TAU_BENCH_COMMIT = '59a200c6d575d595120f1cb70fea53cef0632f6b';

/** Where raw files of the pinned commit are downloaded from. */
export const TAU_BENCH_RAW_BASE_URL = `https://raw.githubusercontent.com/sierra-research/tau-bench/${TAU_BENCH_COMMIT}`;

/** The 14 airline tool files upstream, in file-name order (the order of `tools.airline.json`). */
export const TAU_BENCH_AIRLINE_TOOL_FILES: readonly string[] = AIRLINE_TOOL_NAMES.map((name) => `tau_bench/envs/airline/tools/${name}.py`);

/**
 * One data file the main job reads.
 * - `path`: inside a data folder, e.g. `tau-bench/airline-db/users.json`;
 * - `sha256`: hex digest of the file's bytes;
 * - `upstream`: the path in the τ-bench repository, or `derived` for `tools.airline.json`.
 */
export interface TauBenchFile {
  path: string;
  sha256: string;
  upstream: { kind: 'file'; path: string } | { kind: 'derived'; from: readonly string[] };
}

/** The five files of the airline workload and their SHA-256. */
export const TAU_BENCH_FILES: readonly TauBenchFile[] = [
  {
    path: 'tau-bench/gpt-4o-airline.trajectories.json',
    sha256: 'e9e6c0297660c537f83d4fd9c476ce7a9a86ecd2784874b7bfc13be598e37bfa',
    upstream: { kind: 'file', path: 'historical_trajectories/gpt-4o-airline.json' },
  },
  {
    path: 'tau-bench/airline-db/flights.json',
    sha256: '444d7565c68434a3e3fb72efd717f9f9cd5c56dce227f6f56e078f1cb0ed233a',
    upstream: { kind: 'file', path: 'tau_bench/envs/airline/data/flights.json' },
  },
  {
    path: 'tau-bench/airline-db/reservations.json',
    sha256: '1cf0bbc58ad984be9de7c24dba6dd27393f94cdbd482d8524f6a54db1f561a8c',
    upstream: { kind: 'file', path: 'tau_bench/envs/airline/data/reservations.json' },
  },
  {
    path: 'tau-bench/airline-db/users.json',
    sha256: 'bd264e2a31e0fa35cdfef8987e70a0dd3776828b582fe90e7a44823a12eb4cea',
    upstream: { kind: 'file', path: 'tau_bench/envs/airline/data/users.json' },
  },
  {
    path: 'tau-bench/tools.airline.json',
    sha256: 'd8e0a4bd8d7dbd81092609d0689ce3872d5967f11315428ba99534e047e7ad3b',
    upstream: { kind: 'derived', from: TAU_BENCH_AIRLINE_TOOL_FILES },
  },
];

/** Where the data was found. `checked` lists files whose SHA-256 differs from the pinned one (a local copy is used anyway). */
export type TauBenchDataLocation =
  | { ok: true; dataDir: string; source: 'TOOLRUN_DATA_DIR' | 'shared' | 'cache' | 'download'; downloaded: string[]; hashMismatches: string[] }
  | { ok: false; missing: string[]; message: string };

/** Options of {@link locateTauBenchData}. */
export interface LocateTauBenchDataOptions {
  /** @defaultValue `process.env` */
  env?: Record<string, string | undefined>;
  /** Used for downloads only. @defaultValue `globalThis.fetch` */
  fetch?: typeof fetch;
  /**
   * Data folders to look in first. @defaultValue `TOOLRUN_DATA_DIR`, then `../shared/data` beside the checkout;
   * a `TOOLRUN_DATA_DIR` that does not exist or lacks a file is an error (`ok: false`), not a fall-back
   */
  candidates?: Array<{ dir: string | undefined; source: 'TOOLRUN_DATA_DIR' | 'shared' }>;
  /** Whether a download may be attempted. @defaultValue true */
  download?: boolean;
  /** Progress lines for a person (what is being downloaded). */
  log?: (line: string) => void;
}

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** `TOOLRUN_CACHE_DIR`, else `$XDG_CACHE_HOME/toolrun`, else `~/.cache/toolrun`. */
export function toolrunCacheRoot(env: Record<string, string | undefined> = process.env): string {
  if (env.TOOLRUN_CACHE_DIR) return resolve(env.TOOLRUN_CACHE_DIR);
  if (env.XDG_CACHE_HOME) return join(resolve(env.XDG_CACHE_HOME), 'toolrun');
  return join(homedir(), '.cache', 'toolrun');
}

/** The cache folder of the pinned commit: a data folder (it holds `tau-bench/…`). */
export function tauBenchCacheDir(env: Record<string, string | undefined> = process.env): string {
  return join(toolrunCacheRoot(env), 'tau-bench', TAU_BENCH_COMMIT);
}

/** Hex SHA-256 of bytes. */
export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function hasAllFiles(dataDir: string): boolean {
  return TAU_BENCH_FILES.every((file) => existsSync(join(dataDir, file.path)));
}

function mismatchedFiles(dataDir: string): string[] {
  return TAU_BENCH_FILES.filter((file) => sha256Hex(readFileSync(join(dataDir, file.path))) !== file.sha256).map((file) => file.path);
}

function writeAtomically(path: string, bytes: Uint8Array | string): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.partial`;
  writeFileSync(temporary, bytes);
  renameSync(temporary, path);
}

async function download(url: string, doFetch: typeof fetch): Promise<Uint8Array> {
  const response = await doFetch(url, { signal: AbortSignal.timeout(120_000) });
  if (!response.ok) throw new Error(`GET ${url} answered HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/**
 * Derives `tools.airline.json` from the 14 upstream tool files: each file's `get_info()` literal,
 * in file-name order, as JSON indented by two spaces (no trailing newline).
 *
 * @param sources the texts of {@link TAU_BENCH_AIRLINE_TOOL_FILES}, in that order.
 * @throws PythonLiteralError when a file has no readable `get_info()` literal.
 */
export function deriveAirlineToolsJson(sources: readonly string[]): string {
  return JSON.stringify(
    sources.map((source) => readReturnedLiteral(source, 'get_info')),
    null,
    2,
  );
}

async function fetchFile(file: TauBenchFile, doFetch: typeof fetch): Promise<Uint8Array | string> {
  if (file.upstream.kind === 'file') return download(`${TAU_BENCH_RAW_BASE_URL}/${file.upstream.path}`, doFetch);
  const sources: string[] = [];
  for (const path of file.upstream.from) sources.push(new TextDecoder().decode(await download(`${TAU_BENCH_RAW_BASE_URL}/${path}`, doFetch)));
  return deriveAirlineToolsJson(sources);
}

function describeMissing(missing: readonly string[], cacheDir: string, reason: string): string {
  const lines = [
    `toolrun: the τ-bench airline data is not available (${reason}).`,
    'Missing files:',
    ...missing.map((path) => {
      const file = TAU_BENCH_FILES.find((candidate) => candidate.path === path);
      const from =
        file?.upstream.kind === 'file'
          ? `from ${TAU_BENCH_RAW_BASE_URL}/${file.upstream.path}`
          : `derived from the get_info() literals of the 14 files ${TAU_BENCH_RAW_BASE_URL}/tau_bench/envs/airline/tools/*.py (see docs/main-job.md)`;
      return `  - ${path}  (SHA-256 ${file?.sha256 ?? '?'})\n      ${from}`;
    }),
    'To provide them, do one of:',
    '  - set TOOLRUN_DATA_DIR to a folder that holds these paths (e.g. a copy of the shared data folder);',
    `  - place the shared data folder at ${join(projectRoot, '..', 'shared', 'data')};`,
    `  - connect to the network and run again: the files are downloaded into ${cacheDir}.`,
  ];
  return lines.join('\n');
}

/**
 * Finds (or downloads) the five data files of the airline workload.
 *
 * Does not change `process.env`: the caller points the loaders at `dataDir` (set
 * `TOOLRUN_DATA_DIR`), which also reaches child processes such as `toolrun dlq drain`.
 *
 * @returns `ok: false` with the list of missing files and a message saying how to provide them
 *   when no complete copy exists and the download failed (offline, HTTP error, or a SHA-256 that
 *   does not match: a bad download is never kept). Never throws for a network failure.
 */
export async function locateTauBenchData(options: LocateTauBenchDataOptions = {}): Promise<TauBenchDataLocation> {
  const env = options.env ?? process.env;
  // A TOOLRUN_DATA_DIR that names nothing usable is a mistake to report, not a reason to fall back
  // to another copy silently (the user would be told nothing about which data ran).
  if (options.candidates === undefined && env.TOOLRUN_DATA_DIR) {
    const dataDir = env.TOOLRUN_DATA_DIR;
    const missing = existsSync(dataDir) ? TAU_BENCH_FILES.filter((file) => !existsSync(join(dataDir, file.path))).map((file) => file.path) : undefined;
    if (missing === undefined || missing.length > 0) {
      const problem = missing === undefined ? 'does not exist' : `lacks ${missing.length} of the τ-bench airline files (${missing.join(', ')})`;
      return {
        ok: false,
        missing: missing ?? TAU_BENCH_FILES.map((file) => file.path),
        message: `toolrun: error: TOOLRUN_DATA_DIR=${dataDir} ${problem}; fix it, or unset it to use ${join(projectRoot, '..', 'shared', 'data')} or the download cache`,
      };
    }
  }
  const candidates = options.candidates ?? [
    { dir: env.TOOLRUN_DATA_DIR, source: 'TOOLRUN_DATA_DIR' as const },
    { dir: join(projectRoot, '..', 'shared', 'data'), source: 'shared' as const },
  ];
  for (const candidate of candidates) {
    if (candidate.dir && hasAllFiles(candidate.dir)) {
      return { ok: true, dataDir: resolve(candidate.dir), source: candidate.source, downloaded: [], hashMismatches: mismatchedFiles(candidate.dir) };
    }
  }

  const cacheDir = tauBenchCacheDir(env);
  const needed = TAU_BENCH_FILES.filter((file) => {
    const path = join(cacheDir, file.path);
    return !existsSync(path) || sha256Hex(readFileSync(path)) !== file.sha256;
  });
  if (needed.length === 0) return { ok: true, dataDir: cacheDir, source: 'cache', downloaded: [], hashMismatches: [] };
  if (options.download === false) {
    return {
      ok: false,
      missing: needed.map((file) => file.path),
      message: describeMissing(
        needed.map((file) => file.path),
        cacheDir,
        'downloads are switched off',
      ),
    };
  }

  const doFetch = options.fetch ?? globalThis.fetch;
  const downloaded: string[] = [];
  for (const [index, file] of needed.entries()) {
    options.log?.(`downloading ${file.path} (${index + 1}/${needed.length}) from τ-bench @ ${TAU_BENCH_COMMIT.slice(0, 7)} …`);
    let bytes: Uint8Array | string;
    try {
      bytes = await fetchFile(file, doFetch);
    } catch (error) {
      const reason = `the download failed: ${error instanceof Error ? error.message : String(error)}${error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : ''}`;
      const missing = needed.slice(index).map((candidate) => candidate.path);
      return { ok: false, missing, message: describeMissing(missing, cacheDir, reason) };
    }
    const digest = sha256Hex(bytes);
    if (digest !== file.sha256) {
      const missing = needed.slice(index).map((candidate) => candidate.path);
      return {
        ok: false,
        missing,
        message: describeMissing(missing, cacheDir, `${file.path} was downloaded but its SHA-256 is ${digest}, not ${file.sha256}; it was not kept`),
      };
    }
    writeAtomically(join(cacheDir, file.path), bytes);
    downloaded.push(file.path);
  }
  return { ok: true, dataDir: cacheDir, source: 'download', downloaded, hashMismatches: [] };
}
