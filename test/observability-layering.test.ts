/**
 * Layering of `toolrun/otel`: src/observability imports the OpenTelemetry API only (the SDK and
 * the Prometheus exporter are loaded on demand by `startMetricsServer`, and used by tests), and the
 * core never imports observability, pino or OpenTelemetry.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const sourceRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Module specifiers of static value imports and re-exports (`import type` left out). */
function staticImports(source: string): string[] {
  const specifiers: string[] = [];
  for (const match of source.matchAll(/^\s*(import|export)\s+(type\s+)?[^'";]*?\sfrom\s+['"]([^'"]+)['"]/gm)) {
    if (match[2] === undefined) specifiers.push(match[3]!);
  }
  return specifiers;
}

describe('layering', () => {
  it('src/observability statically imports @opentelemetry/api and no other OpenTelemetry package', () => {
    const files = sourceFiles(join(sourceRoot, 'observability'));
    expect(files.length).toBeGreaterThan(5);
    const offenders = files.flatMap((path) =>
      staticImports(readFileSync(path, 'utf8'))
        .filter((specifier) => specifier.startsWith('@opentelemetry/') && specifier !== '@opentelemetry/api')
        .map((specifier) => `${relative(sourceRoot, path)}: ${specifier}`),
    );
    expect(offenders).toEqual([]);
  });

  it('src/core imports neither observability nor pino nor OpenTelemetry', () => {
    const offenders = sourceFiles(join(sourceRoot, 'core')).flatMap((path) => {
      const source = readFileSync(path, 'utf8');
      return [...source.matchAll(/from\s+['"]([^'"]+)['"]/g)]
        .map((match) => match[1]!)
        .filter((specifier) => specifier.includes('observability') || specifier === 'pino' || specifier.startsWith('@opentelemetry/'))
        .map((specifier) => `${relative(sourceRoot, path)}: ${specifier}`);
    });
    expect(offenders).toEqual([]);
  });
});
