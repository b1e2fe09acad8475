import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const sourceRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const IMPORTS_DRIVER = /(?:from\s+|import\s*\(\s*|require\s*\(\s*)['"]better-sqlite3['"]/;

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('the SQLite driver boundary', () => {
  it('imports better-sqlite3 only under src/stores/sqlite/', () => {
    const importers = sourceFiles(sourceRoot)
      .filter((path) => IMPORTS_DRIVER.test(readFileSync(path, 'utf8')))
      .map((path) => relative(sourceRoot, path).split('\\').join('/'));
    expect(importers.length).toBeGreaterThan(0);
    expect(importers.filter((path) => !path.startsWith('stores/sqlite/'))).toEqual([]);
  });
});
