import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStores } from './sqlite-stores.ts';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const storesModule = pathToFileURL(join(projectRoot, 'src/stores/sqlite/index.ts')).href;
const KEY_COUNT = 2_000;
const PROCESS_COUNT = 2;

/** Keys per round: every process waits at a barrier in the file after each round, so no process can
 * take every key before the other has started — both race for each round, on any load. */
const ROUND_SIZE = 50;

/**
 * A child process: opens the file, prints `ready`, waits for a line `go` on stdin, then tries to
 * claim `run:0` … `run:<n − 1>` in order, in rounds of ROUND_SIZE keys with a barrier in the file
 * (a counter per round in the breaker store) before each round, and prints `<key> <1|0>` per try.
 */
const CHILD = `
import { createInterface } from 'node:readline';
import { createSqliteStores } from ${JSON.stringify(storesModule)};
const [path, count, processes, roundSize] = process.argv.slice(1).map((value, index) => (index === 0 ? value : Number(value)));
const stores = createSqliteStores({ path });
process.stdout.write('ready\\n');
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
await lines.next();
const barrier = async (name) => {
  await stores.breakers.update(name, (current) => (current ?? 0) + 1);
  while ((await stores.breakers.get(name)) < processes) await new Promise((resolve) => setTimeout(resolve, 1));
};
const out = [];
for (let index = 0; index < count; index++) {
  if (index % roundSize === 0) await barrier('round:' + index / roundSize);
  out.push('run:' + index + ' ' + ((await stores.claims.acquire('run:' + index, 'pid-' + process.pid, 60000)) ? 1 : 0));
}
await lines.return?.();
await stores.close();
process.stdout.write(out.join('\\n') + '\\ndone\\n');
`;

function startChild(path: string) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', CHILD, path, String(KEY_COUNT), String(PROCESS_COUNT), String(ROUND_SIZE)],
    { cwd: projectRoot },
  );
  let stdout = '';
  let stderr = '';
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolveReady) => {
    markReady = resolveReady;
  });
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    if (stdout.startsWith('ready\n')) markReady();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const finished = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolveFinished) => {
    child.on('close', (code) => {
      markReady();
      resolveFinished({ code, stdout, stderr });
    });
  });
  return { child, ready, finished };
}

describe('SQLite claims shared by several processes', () => {
  const directory = mkdtempSync(join(tmpdir(), 'toolrun-sqlite-claims-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it(`grants each of ${KEY_COUNT} claims to exactly one of ${PROCESS_COUNT} processes racing for them`, async () => {
    const path = join(directory, 'claims.db');
    const opener = createSqliteStores({ path });
    const children = Array.from({ length: PROCESS_COUNT }, () => startChild(path));
    await Promise.all(children.map((child) => child.ready));
    for (const { child } of children) child.stdin.end('go\n');
    const results = await Promise.all(children.map((child) => child.finished));

    const grantedPerProcess = results.map((result) => {
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout.trimEnd().endsWith('done')).toBe(true);
      return result.stdout
        .split('\n')
        .filter((line) => line.startsWith('run:') && line.endsWith(' 1'))
        .map((line) => line.split(' ')[0]!);
    });
    // both processes really competed for the keys
    for (const keys of grantedPerProcess) expect(keys.length).toBeGreaterThan(0);
    const granted = grantedPerProcess.flat();
    expect(granted).toHaveLength(KEY_COUNT);
    expect(new Set(granted).size).toBe(KEY_COUNT);
    // the holder recorded for every key is the process that was told it won
    const pids = children.map(({ child }) => child.pid);
    for (const [index, keys] of grantedPerProcess.entries()) {
      for (const key of keys.slice(0, 20)) expect((await opener.claims.get(key))?.holder).toBe(`pid-${pids[index]}`);
    }
    await opener.close();
    console.info(`[sqlite claims] claims won per process: ${grantedPerProcess.map((keys) => keys.length).join(', ')} of ${KEY_COUNT}`);
  });
});
