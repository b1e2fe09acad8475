import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRedactor, ToolrunError, type ToolrunConfig } from '../index.ts';
import { resolveToolrunConfig } from '../worker/worker-config.ts';
import { usageError } from './cli-error.ts';

/** File names looked up in the working directory when no `--config` is given, in this order. */
export const DEFAULT_CONFIG_FILES = ['toolrun.config.ts', 'toolrun.config.mjs', 'toolrun.config.js'] as const;

const TYPESCRIPT_EXTENSIONS: ReadonlySet<string> = new Set(['.ts', '.mts', '.cts']);

/** Whether this process already loads TypeScript (started with `--import tsx`, `tsx …`, or registered below). */
let typeScriptLoaderRegistered = false;

function typeScriptLoaderActive(env: NodeJS.ProcessEnv): boolean {
  // bin/toolrun.js in a checkout runs the CLI's TypeScript source through tsx, and says so here
  if (typeScriptLoaderRegistered || (globalThis as Record<symbol, unknown>)[Symbol.for('toolrun.typescriptLoader')] === true) return true;
  const flags = [...process.execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)];
  return flags.some((flag) => /(^|[=/\\])tsx(\/|\\|$|\/esm)/.test(flag) || flag === 'tsx');
}

/** Imports `tsx/esm/api` from the CLI's own install, else from the config file's folder. */
async function importTsxApi(configPath: string): Promise<{ register: () => unknown } | undefined> {
  try {
    return (await import('tsx/esm/api')) as { register: () => unknown };
  } catch {
    try {
      const resolved = createRequire(configPath).resolve('tsx/esm/api');
      return (await import(pathToFileURL(resolved).href)) as { register: () => unknown };
    } catch {
      return undefined;
    }
  }
}

/**
 * Where a config module's syntax error is, as `FILE:LINE[:COLUMN]: message`, or `undefined` when
 * the error is not a syntax error or names no place. esbuild (tsx) puts the place in its message;
 * Node's own ESM loader does not, so a JavaScript file is checked once more with `node --check`.
 */
function syntaxErrorPlace(error: unknown, path: string): string | undefined {
  const message = error instanceof Error ? error.message : String(error);
  const esbuild = /^Transform failed with \d+ errors?:\n(.+?):(\d+):(\d+): ERROR: (.+)$/m.exec(message);
  if (esbuild) return `${esbuild[1]}:${esbuild[2]}:${esbuild[3]}: ${esbuild[4]}`;
  if (!(error instanceof SyntaxError) || TYPESCRIPT_EXTENSIONS.has(extname(path))) return undefined;
  const checked = spawnSync(process.execPath, ['--check', path], { encoding: 'utf8', timeout: 10_000 });
  if (checked.status === 0 || typeof checked.stderr !== 'string') return undefined;
  const place = /^(.+):(\d+)$/m.exec(checked.stderr);
  const reason = /^SyntaxError: (.+)$/m.exec(checked.stderr);
  return place ? `${place[1]}:${place[2]}: ${reason?.[1] ?? message}` : undefined;
}

/** Finds the config file: `--config`, else `TOOLRUN_CONFIG`, else a default name in `cwd`. */
export function findConfigFile(option: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string {
  const given = option ?? (env.TOOLRUN_CONFIG !== undefined && env.TOOLRUN_CONFIG !== '' ? env.TOOLRUN_CONFIG : undefined);
  if (given !== undefined) {
    const path = resolve(cwd, given);
    if (!existsSync(path)) throw usageError(`config file not found: ${path}`, 'NOT_FOUND');
    return path;
  }
  const found = DEFAULT_CONFIG_FILES.map((name) => join(cwd, name)).find((path) => existsSync(path));
  if (found === undefined) {
    throw usageError(
      `missing config: pass --config FILE (a module whose default export is defineConfig({ model, tools })), or create ${DEFAULT_CONFIG_FILES.join(' / ')} here`,
    );
  }
  return found;
}

/**
 * Loads a config module (`export default defineConfig(...)`) and returns the checked config. A
 * `.ts` file is loaded through tsx's ESM API when tsx can be resolved (from the CLI or from the
 * config's folder) and the process does not load TypeScript already.
 *
 * @throws ToolrunError `INVALID_CONFIG` when the module cannot be imported, has no default export,
 * or exports something that is not a config (the message names what is missing); `USAGE` for a
 * `.ts` file without tsx.
 */
export async function loadConfig(path: string, env: NodeJS.ProcessEnv): Promise<ToolrunConfig> {
  if (TYPESCRIPT_EXTENSIONS.has(extname(path)) && !typeScriptLoaderActive(env)) {
    const tsx = await importTsxApi(path);
    if (tsx === undefined) {
      throw usageError(
        `cannot load ${path}: it is TypeScript and tsx is not installed; install it (npm install --save-dev tsx) or compile the config to JavaScript (npx tsc) and pass the .js/.mjs file`,
      );
    }
    tsx.register();
    typeScriptLoaderRegistered = true;
  }
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (error) {
    if (ToolrunError.is(error)) {
      if (error.code === 'INVALID_CONFIG') throw error;
      throw new ToolrunError('INVALID_CONFIG', `${path}: ${error.message}`, { cause: error });
    }
    const place = syntaxErrorPlace(error, path);
    if (place !== undefined) throw new ToolrunError('INVALID_CONFIG', `cannot load config ${path}: syntax error at ${place}`, { cause: error });
    // a module's error often quotes what it read (an API key, a URL with credentials): redacted like every line
    const reason = createRedactor().text(error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error));
    throw new ToolrunError('INVALID_CONFIG', `cannot load config ${path}: ${reason}`, { cause: error });
  }
  if (!('default' in loaded) || loaded.default === undefined) {
    throw new ToolrunError('INVALID_CONFIG', `${path} has no default export: write \`export default defineConfig({ model, tools })\``);
  }
  return resolveToolrunConfig(loaded.default, { env }, path);
}
