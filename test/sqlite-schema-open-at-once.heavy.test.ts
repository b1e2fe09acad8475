/**
 * Several processes opening one new SQLite stores file at the same moment: the schema is created
 * once (one IMMEDIATE transaction; the others wait for it, then find the schema current) and every
 * process can use the file.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SQLITE_SCHEMA_VERSION } from '../src/stores/sqlite/sqlite-migrations.ts';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const childScript = join(projectRoot, 'test/fixtures/sqlite-open-at-once.ts');
const PROCESSES = 4;

function startChild(path: string, id: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', childScript, path, id], { cwd: projectRoot });
  let stdout = '';
  let stderr = '';
  const ready = new Promise<void>((resolveReady) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.startsWith('ready\n')) resolveReady();
    });
    child.on('close', () => resolveReady());
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const finished = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolveFinished) =>
    child.on('close', (code) => resolveFinished({ code, stdout, stderr })),
  );
  return { child, ready, finished };
}

describe('a new SQLite file opened by several processes at once', () => {
  const directory = mkdtempSync(join(tmpdir(), 'toolrun-sqlite-open-at-once-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it('gets its schema once, and every process uses it', { timeout: 60_000 }, async () => {
    const path = join(directory, 'new.db');
    const children = Array.from({ length: PROCESSES }, (_, index) => startChild(path, `m${index}`));
    await Promise.all(children.map((child) => child.ready));
    for (const { child } of children) child.stdin.end('go\n');
    const results = await Promise.all(children.map((child) => child.finished));
    for (const result of results) expect(result).toEqual({ code: 0, stdout: 'ready\nopened\n', stderr: '' });

    const database = new BetterSqlite3(path, { readonly: true });
    try {
      expect(database.prepare('SELECT version FROM schema_version').all()).toEqual([{ version: SQLITE_SCHEMA_VERSION }]);
      const ids = database.prepare('SELECT id FROM queue_messages ORDER BY id').pluck().all();
      expect(ids).toEqual(Array.from({ length: PROCESSES }, (_, index) => `m${index}`));
      expect(database.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      database.close();
    }
  });
});
