import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const sourceRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function importsOf(driver: string): RegExp {
  return new RegExp(`(?:from\\s+|import\\s*\\(\\s*|require\\s*\\(\\s*)['"]${driver}['"]`);
}

/** Source files (tests excluded: they may use the drivers to set up and inspect). */
function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

function importersOf(driver: string): string[] {
  const pattern = importsOf(driver);
  return sourceFiles(sourceRoot)
    .filter((path) => pattern.test(readFileSync(path, 'utf8')))
    .map((path) => relative(sourceRoot, path).split('\\').join('/'));
}

/** Files reachable through relative imports from `entry`. */
function reachableFrom(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (path: string) => {
    if (seen.has(path)) return;
    seen.add(path);
    const code = readFileSync(path, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '');
    for (const match of code.matchAll(/(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
      visit(resolve(dirname(path), match[1]!));
    }
  };
  visit(join(sourceRoot, entry));
  return new Set([...seen].map((path) => relative(sourceRoot, path).split('\\').join('/')));
}

describe('the distributed drivers boundary', () => {
  it('imports pg only under src/stores/postgres/', () => {
    const importers = importersOf('pg');
    expect(importers.length).toBeGreaterThan(0);
    expect(importers.filter((path) => !path.startsWith('stores/postgres/'))).toEqual([]);
  });

  it('imports ioredis only under src/stores/redis/ and bullmq only under src/queues/bullmq/', () => {
    const redisImporters = importersOf('ioredis');
    const bullmqImporters = importersOf('bullmq');
    expect(redisImporters.length).toBeGreaterThan(0);
    expect(bullmqImporters.length).toBeGreaterThan(0);
    expect(redisImporters.filter((path) => !path.startsWith('stores/redis/'))).toEqual([]);
    expect(bullmqImporters.filter((path) => !path.startsWith('queues/bullmq/'))).toEqual([]);
  });

  it('keeps every distributed backend out of the root entry', () => {
    const reachable = [...reachableFrom('index.ts')];
    expect(reachable.length).toBeGreaterThan(10);
    expect(reachable.filter((path) => /^(stores\/(postgres|redis)|queues\/bullmq)\//.test(path))).toEqual([]);
  });
});
