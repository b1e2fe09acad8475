import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStores } from './sqlite-stores.ts';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const consumerScript = join(projectRoot, 'test/fixtures/sqlite-queue-consumer.ts');
const MESSAGE_COUNT = 1_000;
const CONSUMER_COUNT = 2;
/** Keys every consumer pushes with `pushOnce`, in the same order, once the queue is empty. */
const RACE_KEY_COUNT = 300;

interface Consumer {
  child: ChildProcessWithoutNullStreams;
  ready: Promise<void>;
  /** The queue is empty for this consumer; it waits for the signal to race. */
  consumed: Promise<void>;
  finished: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

function startConsumer(path: string): Consumer {
  const child = spawn(process.execPath, ['--import', 'tsx', consumerScript, path, String(RACE_KEY_COUNT), String(CONSUMER_COUNT)], { cwd: projectRoot });
  let stdout = '';
  let stderr = '';
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolveReady) => {
    markReady = resolveReady;
  });
  let markConsumed: () => void = () => {};
  const consumed = new Promise<void>((resolveConsumed) => {
    markConsumed = resolveConsumed;
  });
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    if (stdout.startsWith('ready\n')) markReady();
    if (stdout.startsWith('ready\nconsumed\n')) markConsumed();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const finished = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolveFinished) => {
    child.on('close', (code) => {
      markReady();
      markConsumed();
      resolveFinished({ code, stdout, stderr });
    });
  });
  return { child, ready, consumed, finished };
}

describe('SQLite stores shared by several processes', () => {
  const directory = mkdtempSync(join(tmpdir(), 'toolrun-sqlite-processes-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it(`reserves each of ${MESSAGE_COUNT} messages exactly once across ${CONSUMER_COUNT} processes and loses no update`, async () => {
    const path = join(directory, 'shared.db');
    const producer = createSqliteStores({ path });
    const enqueued: string[] = [];
    for (let index = 0; index < MESSAGE_COUNT; index++) enqueued.push(await producer.queue.enqueue({ id: `m${index}`, body: `{"n":${index}}` }));

    const consumers = Array.from({ length: CONSUMER_COUNT }, () => startConsumer(path));
    await Promise.all(consumers.map((consumer) => consumer.ready));
    for (const consumer of consumers) consumer.child.stdin.write('go\n');
    await Promise.all(consumers.map((consumer) => consumer.consumed));
    for (const consumer of consumers) consumer.child.stdin.end('race\n');
    const results = await Promise.all(consumers.map((consumer) => consumer.finished));

    const reservedPerConsumer = results.map((result) => {
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout.trimEnd().endsWith('done')).toBe(true);
      return result.stdout
        .split('\n')
        .filter((line) => line.startsWith('reserved '))
        .map((line) => line.split(' '));
    });
    const reservedIds = reservedPerConsumer.flat().map((fields) => fields[1]);
    expect(reservedIds).toHaveLength(MESSAGE_COUNT);
    expect(new Set(reservedIds)).toEqual(new Set(enqueued));
    expect(reservedPerConsumer.flat().every((fields) => fields[2] === '1')).toBe(true);
    // Both processes really competed for the file.
    for (const reserved of reservedPerConsumer) expect(reserved.length).toBeGreaterThan(0);

    expect(await producer.breakers.get('shared-counter')).toBe(MESSAGE_COUNT);
    expect(await producer.queue.size()).toBe(0);
    expect(await producer.ledger.get('consumed:m0')).toEqual(expect.any(Number));

    // pushOnce raced by every process on the same keys: one entry per key, every process got its id
    const pushesPerConsumer = results.map((result) =>
      result.stdout
        .split('\n')
        .filter((line) => line.startsWith('pushed '))
        .map((line) => {
          const [, key, added, id] = line.split(' ');
          return { key: key!, added: added === '1', id: id! };
        }),
    );
    for (const pushes of pushesPerConsumer) expect(pushes).toHaveLength(RACE_KEY_COUNT);
    const added = pushesPerConsumer.flat().filter((push) => push.added);
    expect(new Set(added.map((push) => push.key)).size).toBe(RACE_KEY_COUNT);
    expect(added).toHaveLength(RACE_KEY_COUNT);
    for (let index = 0; index < RACE_KEY_COUNT; index++) {
      expect(new Set(pushesPerConsumer.map((pushes) => pushes[index]!.id)).size, `race:${index}`).toBe(1);
    }
    expect(await producer.messageDlq.size()).toBe(RACE_KEY_COUNT);
    const addedPerConsumer = pushesPerConsumer.map((pushes) => pushes.filter((push) => push.added).length);
    await producer.close();
    console.info(
      `[sqlite multi-process] messages per consumer: ${reservedPerConsumer.map((reserved) => reserved.length).join(', ')}; ` +
        `pushOnce keys added per consumer: ${addedPerConsumer.join(', ')} of ${RACE_KEY_COUNT}`,
    );
  });
});
