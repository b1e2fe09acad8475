/**
 * The architecture, kept by a test that reads the source (as the MCP SDK tests its layering):
 * the core never imports an adapter, a backend, the worker or the CLI; adapters import the core.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SOURCE = join(import.meta.dirname, '..', 'src');

function sourceFiles(folder: string): string[] {
  return readdirSync(join(SOURCE, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

function importedFolders(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const folders: string[] = [];
  for (const match of text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) {
    const specifier = match[1]!;
    if (!specifier.startsWith('.')) continue;
    const target = relative(SOURCE, join(file, '..', specifier));
    folders.push(target.split('/')[0]!);
  }
  return folders;
}

/** For each layer: the top-level folders of src/ it may import. */
const ALLOWED: Record<string, readonly string[]> = {
  core: ['core', 'policies', 'schema'],
  policies: ['core', 'policies'],
  schema: ['core', 'schema'],
  agent: ['core', 'policies', 'schema', 'agent'],
  worker: ['core', 'policies', 'schema', 'agent', 'worker', 'stores'],
};

describe('layering', () => {
  for (const [layer, allowed] of Object.entries(ALLOWED)) {
    it(`src/${layer} imports only ${allowed.join(', ')}`, () => {
      const violations = sourceFiles(layer).flatMap((file) =>
        importedFolders(file)
          .filter((folder) => !allowed.includes(folder))
          .map((folder) => `${relative(SOURCE, file)} imports src/${folder}`),
      );
      expect(violations).toEqual([]);
    });
  }

  it('src/worker uses only the in-memory stores (the default), never a driver-backed backend', () => {
    const backends = sourceFiles('worker').flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/from '\.\.\/stores\/([a-z]+)\//g)].map((match) => match[1]),
    );
    expect(new Set(backends)).toEqual(new Set(['memory']));
  });
});
