#!/usr/bin/env node
// The `toolrun` command. Installed from the package, it runs the compiled CLI (dist/). In a checkout
// of the repository (src/ beside bin/, which the package does not ship), it runs the TypeScript
// source through tsx, so `npx toolrun …` works right after `npm ci`, with no build and no stale dist/.
import { existsSync } from 'node:fs';
import process from 'node:process';
import { URL } from 'node:url';

const source = new URL('../src/cli/index.ts', import.meta.url);
const built = new URL('../dist/cli/index.js', import.meta.url);

async function fromSource() {
  let tsx;
  try {
    tsx = await import('tsx/esm/api');
  } catch {
    return false; // a checkout installed without its devDependencies: the build, if there is one
  }
  tsx.register();
  globalThis[Symbol.for('toolrun.typescriptLoader')] = true; // a .ts config then needs no second loader
  await import(source.href);
  return true;
}

try {
  if (!(existsSync(source) && (await fromSource()))) {
    if (!existsSync(built)) {
      process.stderr.write('toolrun: error: no compiled CLI (dist/cli/index.js): run `npm ci` in this checkout, or `npm run build`\n');
      process.exit(1);
    }
    await import(built.href);
  }
} catch (error) {
  // better-sqlite3 is an optional dependency: an install that could not build it says so here
  const missing = error?.code === 'ERR_MODULE_NOT_FOUND' && /'([^']+)'/.exec(String(error.message));
  if (!missing) throw error;
  process.stderr.write(`toolrun: error: cannot load ${missing[1]}: reinstall toolrun (npm install toolrun) so that its dependencies are there\n`);
  process.exit(1);
}
