/**
 * The architecture, kept by a test that reads the source (as the MCP SDK tests its layering). Every
 * folder of src/ has a row saying which folders it may import; type-only imports count like the
 * others; no import cycle is allowed between folders or between files.
 *
 *   ground (types, envelope, failure codes, errors, ports) ← schema, policies ← core (the runtime
 *   pipeline) ← agent ← worker ← backends (stores, queues), adapters, observability, testing ← cli
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SOURCE = join(import.meta.dirname, '..', 'src');

function sourceFiles(folder = ''): string[] {
  return readdirSync(join(SOURCE, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The src files a file imports (static, dynamic, `import type`, `export … from`), resolved. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const targets: string[] = [];
  for (const match of text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) {
    const specifier = match[1]!;
    if (specifier.startsWith('.')) targets.push(join(dirname(file), specifier));
  }
  return targets;
}

const folderOf = (file: string) => relative(SOURCE, file).split('/')[0]!;

/** For each folder (and the root entry): the folders of src/ it may import besides itself. */
const ALLOWED: Record<string, readonly string[]> = {
  ground: [],
  schema: ['ground'],
  policies: ['ground'],
  core: ['ground', 'schema', 'policies'],
  agent: ['ground', 'schema', 'policies', 'core'],
  worker: ['ground', 'schema', 'policies', 'core', 'agent', 'stores'],
  stores: ['ground', 'core'],
  queues: ['ground', 'core', 'agent', 'worker', 'stores'],
  adapters: ['ground', 'schema', 'policies', 'core', 'agent', 'worker'],
  engines: ['ground', 'schema', 'policies', 'core', 'agent', 'worker'],
  dashboard: ['ground', 'schema', 'policies', 'core', 'agent', 'worker', 'stores', 'queues', 'observability'],
  observability: ['ground', 'schema', 'policies', 'core', 'agent', 'worker', 'stores'],
  testing: ['ground', 'core', 'agent', 'stores'],
  eval: ['ground', 'schema', 'policies', 'core', 'agent', 'testing'],
  cli: ['ground', 'schema', 'policies', 'core', 'agent', 'worker', 'stores', 'queues', 'observability', 'adapters', 'dashboard', 'eval', 'index.ts'],
  'index.ts': ['ground', 'schema', 'policies', 'core', 'agent', 'worker', 'stores'],
};

describe('layering', () => {
  it('every folder of src/ has a row', () => {
    const folders = readdirSync(SOURCE, { withFileTypes: true }).map((entry) => entry.name);
    expect(folders.filter((folder) => !(folder in ALLOWED)).sort()).toEqual([]);
  });

  for (const [layer, allowed] of Object.entries(ALLOWED)) {
    it(`src/${layer} imports only ${allowed.length > 0 ? allowed.join(', ') : 'itself'}`, () => {
      const files = layer.endsWith('.ts') ? [join(SOURCE, layer)] : sourceFiles(layer);
      const violations = files.flatMap((file) =>
        importsOf(file)
          .map(folderOf)
          .filter((folder) => folder !== layer && !allowed.includes(folder))
          .map((folder) => `${relative(SOURCE, file)} imports src/${folder}`),
      );
      expect(violations).toEqual([]);
    });
  }

  it('the allowed table itself has no cycle between folders', () => {
    const cycles: string[] = [];
    const visit = (folder: string, path: string[]) => {
      if (path.includes(folder)) {
        cycles.push([...path.slice(path.indexOf(folder)), folder].join(' → '));
        return;
      }
      for (const next of ALLOWED[folder] ?? []) visit(next, [...path, folder]);
    };
    for (const folder of Object.keys(ALLOWED)) visit(folder, []);
    expect(cycles).toEqual([]);
  });

  it('no import cycle between files (type-only imports included)', () => {
    const graph = new Map<string, string[]>();
    for (const file of sourceFiles())
      graph.set(
        file,
        importsOf(file).filter((target) => target !== file),
      );
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const stack: string[] = [];
    const visit = (file: string) => {
      state.set(file, 'open');
      stack.push(file);
      for (const next of graph.get(file) ?? []) {
        if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next].map((entry) => relative(SOURCE, entry)).join(' → '));
        else if (!state.has(next) && graph.has(next)) visit(next);
      }
      stack.pop();
      state.set(file, 'done');
    };
    for (const file of graph.keys()) if (!state.has(file)) visit(file);
    expect(cycles).toEqual([]);
  });

  it('src/worker uses only the in-memory stores (the default), never a driver-backed backend', () => {
    const backends = sourceFiles('worker').flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/from '\.\.\/stores\/([a-z]+)\//g)].map((match) => match[1]),
    );
    expect(new Set(backends)).toEqual(new Set(['memory']));
  });

  /**
   * Module-level mutable state, the kind that makes two callers share what they did not share on
   * purpose: a top-level `let`, or a top-level `Map`/`WeakMap` cache. The ones left are memos of
   * pure functions over values that never change, or process-wide facts of the CLI process; each
   * is listed here with why, so a new one shows up in review.
   */
  it('no module-level mutable state but the listed memos', () => {
    const ALLOWED_STATE: Record<string, string> = {
      'worker/parse-run-request.ts': 'the compiled validator of the constant RUN_REQUEST_SCHEMA, compiled on first use',
      'schema/normalise-arguments.ts': 'what each compiled (immutable) schema declares, per schema object',
      'core/resolve-tool-name.ts': 'the name resolver of a registry (immutable name list), rebuilt when the names differ',
      'cli/load-config.ts': 'whether the TypeScript loader was registered in this CLI process (a process-wide fact)',
      'core/create-tool-runtime.ts':
        'a pool of cryptographic random bytes for call ids, drawn 64 KiB at a time (each byte used once: ids stay unguessable and unshared)',
      'core/pipeline/session-breaker-step.ts':
        'the cut-off message text per registered tool name (a pure function of the name; bounded, emptied past 1,024 names)',
    };
    const found = sourceFiles()
      .filter((file) => !file.endsWith('.test.ts'))
      .filter((file) => /^(?:let |(?:export )?const \w+(?:: [^=]+)? = new (?:WeakMap|Map)\b)/m.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SOURCE, file));
    expect(found.filter((file) => !(file in ALLOWED_STATE))).toEqual([]);
    expect(Object.keys(ALLOWED_STATE).filter((file) => !found.includes(file))).toEqual([]);
  });
});
