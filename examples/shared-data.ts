/**
 * The one loader of the real input data in `../shared/data/` (τ-bench, BFCL, the JSON Schema Test
 * Suite, MCP tool schemas), used by the main job, the tests and the benchmarks.
 *
 * Lookup order: `TOOLRUN_DATA_DIR`, then `../shared/data/` beside the checkout. (The main job can
 * also fetch the pinned τ-bench files: see `examples/airline/fetch-tau-bench.ts`.)
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The data folder in use, or `undefined` when none is present.
 *
 * @throws Error when `TOOLRUN_DATA_DIR` is set to a folder that does not exist.
 */
export function findSharedDataDir(): string | undefined {
  const configured = process.env.TOOLRUN_DATA_DIR;
  if (configured !== undefined && configured !== '') {
    // A folder named on purpose that is not there is a mistake to report, never a silent fallback.
    if (!existsSync(configured)) throw new Error(`toolrun: TOOLRUN_DATA_DIR=${configured} does not exist; point it at the shared data folder or unset it.`);
    return resolve(configured);
  }
  const beside = join(projectRoot, '..', 'shared', 'data');
  return existsSync(beside) ? resolve(beside) : undefined;
}

/** Absolute path of a file or folder in the data folder, or `undefined` when it is absent. */
export function sharedDataPath(...segments: string[]): string | undefined {
  const root = findSharedDataDir();
  if (root === undefined) return undefined;
  const path = join(root, ...segments);
  return existsSync(path) ? path : undefined;
}

/** Human-readable statement of what is missing and how to provide it. */
export function describeMissingData(...segments: string[]): string {
  return (
    `toolrun: the shared data file ${join(...segments)} was not found. ` +
    `Set TOOLRUN_DATA_DIR to a folder that holds it, or place the data in ${join(projectRoot, '..', 'shared', 'data')}.`
  );
}

/** Reads and parses a JSON file of the data folder; throws a clear error when it is absent. */
export function readSharedJson<T = unknown>(...segments: string[]): T {
  const path = sharedDataPath(...segments);
  if (path === undefined) throw new Error(describeMissingData(...segments));
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

/** Reads a JSON Lines file of the data folder (one JSON value per non-blank line). */
export function readSharedJsonLines<T = unknown>(...segments: string[]): T[] {
  const path = sharedDataPath(...segments);
  if (path === undefined) throw new Error(describeMissingData(...segments));
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

/**
 * For tests: `true` when the data is present; otherwise prints a visible skip message once and
 * returns `false` (use with `describe.skipIf(!hasSharedData(...))`).
 */
export function hasSharedData(...segments: string[]): boolean {
  if (sharedDataPath(...segments) !== undefined) return true;
  console.warn(`SKIPPED: ${describeMissingData(...segments)}`);
  return false;
}
