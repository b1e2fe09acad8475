/**
 * `npm run api:check`: the public API of every entry point of package.json "exports", as API
 * Extractor reports checked in under api/. Fails (exit code 1) when
 * - an entry's exports or their signatures differ from its report (api/<entry>.api.md);
 * - an exported name has no doc comment;
 * - an exported signature uses a type that no entry exports (users could not name it);
 * - API Extractor or the TypeScript compiler reports an error.
 * `npm run api:check -- --update` rewrites the reports instead, after an intended change: the diff
 * of api/*.api.md is then what a reviewer reads.
 *
 * Steps: emit the declarations of src/ (incremental, into api/.cache/dts), then run API Extractor
 * once per entry over one shared compiler state. A type exported by another entry (`Stores` of
 * `toolrun`, used by `toolrun/sqlite`) is not a forgotten export.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CompilerState, Extractor, ExtractorConfig, ExtractorLogLevel, type ExtractorMessage } from '@microsoft/api-extractor';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cache = join(root, 'api', '.cache');
const dts = join(cache, 'dts');
const configPath = join(root, 'api', 'api-extractor.json');
const packageJsonPath = join(root, 'package.json');
const update = process.argv.includes('--update');

interface Entry {
  /** The import specifier users write: `toolrun`, `toolrun/sqlite`. */
  specifier: string;
  /** The report's base name: `toolrun`, `toolrun-sqlite`. */
  reportName: string;
  /** The emitted declaration file of the entry. */
  declaration: string;
}

/** Every entry of package.json "exports" with types, mapped from dist/ to the emitted declarations. */
function readEntries(): Entry[] {
  const manifest = JSON.parse(readFileSync(packageJsonPath, 'utf8')) as { name: string; exports: Record<string, unknown> };
  const entries: Entry[] = [];
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    const types = typeof target === 'object' && target !== null ? (target as { types?: unknown }).types : undefined;
    if (typeof types !== 'string') continue;
    if (!types.startsWith('./dist/')) throw new Error(`package.json exports["${subpath}"].types must point into ./dist/, found ${types}`);
    const rest = subpath === '.' ? '' : subpath.slice(1);
    entries.push({
      specifier: `${manifest.name}${rest}`,
      reportName: `${manifest.name}${rest.replaceAll('/', '-')}`,
      declaration: join(dts, types.slice('./dist/'.length)),
    });
  }
  return entries;
}

/** Emits the declarations of src/ with tsc (incremental: a second run re-emits only what changed). */
function emitDeclarations(entries: readonly Entry[]): void {
  const buildInfo = join(cache, 'dts.tsbuildinfo');
  // tsc trusts its build info: without the outputs it would emit nothing.
  if (entries.some((entry) => !existsSync(entry.declaration))) rmSync(buildInfo, { force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const args = ['-p', 'tsconfig.build.json', '--emitDeclarationOnly', '--declaration', '--declarationMap', 'false', '--sourceMap', 'false'];
  args.push('--outDir', relative(root, dts), '--incremental', '--tsBuildInfoFile', relative(root, buildInfo));
  const result = spawnSync(process.execPath, [tsc, ...args], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error('api: tsc could not emit the declarations (see above)');
    process.exit(1);
  }
}

/** The names an entry exports, split into values and types-only. */
function exportsOf(program: ts.Program, declaration: string): { values: string[]; types: string[] } {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(declaration);
  const moduleSymbol = source && checker.getSymbolAtLocation(source);
  const values: string[] = [];
  const types: string[] = [];
  for (const symbol of moduleSymbol ? checker.getExportsOfModule(moduleSymbol) : []) {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    (target.flags & ts.SymbolFlags.Value ? values : types).push(symbol.name);
  }
  return { values, types };
}

/** Top-level declarations of a report without a doc comment (members are indented). */
function undocumentedExports(reportText: string): string[] {
  const lines = reportText.split('\n');
  const names: string[] = [];
  lines.forEach((line, index) => {
    if (!/^\/\/ .*\(undocumented\)$/.test(line)) return;
    const declaration = lines.slice(index + 1).find((next) => next !== '' && !next.startsWith('//'));
    const name = declaration?.match(
      /^(?:export )?(?:declare )?(?:abstract )?(?:class|interface|type|function|const|let|var|enum|namespace) ([A-Za-z_$][\w$]*)/,
    )?.[1];
    names.push(name ?? declaration ?? '?');
  });
  return names;
}

const started = performance.now();
const entries = readEntries();
emitDeclarations(entries);

const configFile = ExtractorConfig.loadFile(configPath);
const compiler = { ...configFile.compiler, overrideTsconfig: { ...configFile.compiler?.overrideTsconfig, files: entries.map((entry) => entry.declaration) } };
const configs = entries.map((entry) =>
  ExtractorConfig.prepare({
    configObject: {
      ...configFile,
      compiler,
      mainEntryPointFilePath: entry.declaration,
      apiReport: { ...configFile.apiReport!, reportFileName: entry.reportName },
    },
    configObjectFullPath: configPath,
    packageJsonFullPath: packageJsonPath,
  }),
);
const compilerState = CompilerState.create(configs[0]!, { additionalEntryPoints: entries.map((entry) => entry.declaration) });
const program = compilerState.program as ts.Program;
const exported = entries.map((entry) => exportsOf(program, entry.declaration));
const exportedAnywhere = new Set(exported.flatMap(({ values, types }) => [...values, ...types]));

let failed = false;
for (const [index, entry] of entries.entries()) {
  const config = configs[index]!;
  const messages: string[] = [];
  const forgotten = new Set<string>();
  const result = Extractor.invoke(config, {
    localBuild: update,
    compilerState,
    messageCallback: (message: ExtractorMessage) => {
      message.handled = true;
      if (message.logLevel === ExtractorLogLevel.None || message.logLevel === ExtractorLogLevel.Verbose || message.logLevel === ExtractorLogLevel.Info) return;
      if (message.messageId === 'ae-forgotten-export') {
        const name = /The symbol "([^"]+)"/.exec(message.text)?.[1] ?? message.text;
        if (!exportedAnywhere.has(name)) forgotten.add(name);
        return;
      }
      if (message.messageId === 'ae-unresolved-link') {
        // A link to a name another entry exports still reads well; a link to an internal name does not.
        const name = /does not have an export "([^"]+)"/.exec(message.text)?.[1];
        if (name !== undefined && exportedAnywhere.has(name)) return;
      }
      if (message.messageId === 'console-api-report-created' || message.messageId === 'console-api-report-copied') return;
      const where = message.sourceFilePath
        ? `${relative(root, message.sourceFilePath)
            .replace(/^api\/\.cache\/dts\//, 'src/')
            .replace(/\.d\.ts$/, '.ts')}: `
        : '';
      messages.push(`  ${message.logLevel} ${message.messageId}: ${where}${message.text}`);
    },
  });
  const report = readFileSync(existsSync(config.reportTempFilePath) ? config.reportTempFilePath : config.reportFilePath, 'utf8');
  const undocumented = undocumentedExports(report);
  const problems: string[] = [];
  if (result.errorCount > 0) problems.push(`${result.errorCount} error(s)`);
  if (undocumented.length > 0) problems.push(`no doc comment on ${undocumented.join(', ')}`);
  if (forgotten.size > 0) problems.push(`signatures use types no entry exports: ${[...forgotten].join(', ')}`);
  if (result.apiReportChanged && !update) problems.push(`the API differs from ${relative(root, config.reportFilePath)}`);
  const { values, types } = exported[index]!;
  const counts = `${values.length} values, ${types.length} types`;
  const status = problems.length > 0 ? problems.join('; ') : result.apiReportChanged ? 'report updated' : 'ok';
  console.log(`api: ${entry.specifier.padEnd(26)} ${counts.padEnd(22)} ${status}`);
  for (const line of messages) console.log(line);
  if (result.apiReportChanged && !update) {
    const from = existsSync(config.reportFilePath) ? config.reportFilePath : '/dev/null';
    const diff = spawnSync('git', ['diff', '--no-index', '--no-color', '--', from, config.reportTempFilePath], { encoding: 'utf8' });
    console.log((diff.stdout || '').split('\n').slice(4).join('\n'));
  }
  if (problems.length > 0) failed = true;
}

const seconds = ((performance.now() - started) / 1000).toFixed(1);
if (failed) {
  console.error(`api: failed in ${seconds} s. After an intended change run \`npm run api:check -- --update\` and commit api/*.api.md.`);
  process.exit(1);
}
console.log(`api: ${entries.length} entry points checked in ${seconds} s`);
