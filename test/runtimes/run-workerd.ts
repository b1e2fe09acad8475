/**
 * Runs the smoke test in workerd, the Cloudflare Workers runtime (the `workerd` binary on the PATH,
 * or `$WORKERD`; CI fetches it: `npx -y -p workerd@VERSION -c 'node --import tsx …'`):
 * bundles `worker.ts` with esbuild as a Worker bundler would (`workerd`/`worker`/`browser`
 * conditions, ES module, no Node built-ins, no `nodejs_compat`), writes a workerd config beside it
 * and runs `workerd test`. Exits with workerd's status (non-zero when a check failed).
 *
 * Usage: `npx -y -p workerd -c 'node --import tsx test/runtimes/run-workerd.ts'`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = fileURLToPath(new URL('../..', import.meta.url));
const folder = mkdtempSync(join(tmpdir(), 'toolrun-workerd-'));
try {
  const built = await esbuild.build({
    entryPoints: [fileURLToPath(new URL('./worker.ts', import.meta.url))],
    absWorkingDir: root,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser', 'import'],
    mainFields: ['module', 'main'],
    outfile: join(folder, 'worker.js'),
    metafile: true,
    logLevel: 'warning',
    // Left as imports so that they show; a Worker has them only with the `nodejs_compat` flag.
    external: ['node:*'],
  });
  const bytes = Object.values(built.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
  const nodeImports = [
    ...new Set(Object.values(built.metafile.inputs).flatMap((input) => input.imports.filter((item) => item.path.startsWith('node:')).map((item) => item.path))),
  ];
  console.log(`workerd smoke: bundled ${Object.keys(built.metafile.inputs).length} modules, ${(bytes / 1024).toFixed(0)} KiB`);
  // The root-graph test fails on any node: import but the ones it lists as pending; until those are
  // gone the Worker needs nodejs_compat, and this says so on every run.
  if (nodeImports.length > 0) console.log(`workerd smoke: the root entry still imports ${nodeImports.join(', ')}: running with the nodejs_compat flag`);
  writeFileSync(
    join(folder, 'config.capnp'),
    `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [ (name = "smoke", worker = .smokeWorker) ],
);

const smokeWorker :Workerd.Worker = (
  modules = [ (name = "worker", esModule = embed "worker.js") ],
  compatibilityDate = "2025-09-01",
  compatibilityFlags = [${nodeImports.length > 0 ? '"nodejs_compat"' : ''}],
);
`,
  );
  const workerd = process.env.WORKERD ?? 'workerd';
  const run = spawnSync(workerd, ['test', join(folder, 'config.capnp')], { stdio: 'inherit' });
  if (run.error) throw run.error;
  process.exitCode = run.status ?? 1;
} finally {
  rmSync(folder, { recursive: true, force: true });
}
