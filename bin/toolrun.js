#!/usr/bin/env node
// The CLI's own dependencies are optional peers of the toolrun package: say which, not a raw ERR_MODULE_NOT_FOUND.
import process from 'node:process';
try {
  await import('../dist/cli/index.js');
} catch (error) {
  const missing = error?.code === 'ERR_MODULE_NOT_FOUND' && /'(commander|cli-progress|pino|better-sqlite3)'/.exec(String(error.message));
  if (!missing) throw error;
  process.stderr.write(
    `toolrun: the CLI needs ${missing[1]} (an optional peer dependency): npm install --save-dev commander cli-progress pino better-sqlite3\n`,
  );
  process.exit(1);
}
