import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import { describeStoresContract } from '../../testing/contract/index.ts';
import { createFakeClock } from '../../testing/fake-clock.ts';
import { SchemaVersionError } from '../schema-migrations.ts';
import { migrateSqliteSchema, SQLITE_SCHEMA_VERSION } from './sqlite-migrations.ts';
import { createSqliteStores } from './sqlite-stores.ts';
import type { DeadLetterQueue } from '../../ground/ports/stores.ts';

const directory = mkdtempSync(join(tmpdir(), 'toolrun-sqlite-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let fileCounter = 0;
const freshPath = () => join(directory, `stores-${++fileCounter}.db`);

describeStoresContract('sqlite file', async () => {
  const clock = createFakeClock();
  const stores = createSqliteStores({ path: freshPath(), clock });
  return { stores, clock, cleanup: () => stores.close() };
});

describeStoresContract('sqlite :memory: with a one-hour conversation TTL', async () => {
  const clock = createFakeClock();
  const conversationTtlMs = 60 * 60 * 1000;
  const stores = createSqliteStores({ path: ':memory:', clock, conversationTtlMs });
  return { stores, clock, conversationTtlMs, cleanup: () => stores.close() };
});

function expectStoreUnavailable(open: () => unknown, withCause: boolean): void {
  let thrown: unknown;
  try {
    open();
  } catch (error) {
    thrown = error;
  }
  expect(ToolrunError.is(thrown)).toBe(true);
  expect((thrown as ToolrunError).code).toBe('STORE_UNAVAILABLE');
  if (withCause) expect((thrown as ToolrunError).cause).toBeInstanceOf(Error);
}

describe('SQLite stores', () => {
  it('opens the file in WAL mode with synchronous NORMAL by default, FULL on request', async () => {
    const path = freshPath();
    const stores = createSqliteStores({ path });
    expect(stores.database.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(stores.database.pragma('synchronous', { simple: true })).toBe(1);
    expect(stores.database.pragma('busy_timeout', { simple: true })).toBe(5_000);
    await stores.close();
    const other = new BetterSqlite3(path);
    expect(other.pragma('journal_mode', { simple: true })).toBe('wal');
    other.close();
    const durable = createSqliteStores({ path, synchronous: 'full', busyTimeoutMs: 250 });
    expect(durable.database.pragma('synchronous', { simple: true })).toBe(2);
    expect(durable.database.pragma('busy_timeout', { simple: true })).toBe(250);
    await durable.close();
  });

  it('records the schema version once and does not migrate again on reopen', async () => {
    const path = freshPath();
    await createSqliteStores({ path }).close();
    const stores = createSqliteStores({ path });
    const versions = stores.database.prepare('SELECT version FROM schema_version ORDER BY version').all();
    expect(versions).toEqual([{ version: SQLITE_SCHEMA_VERSION }]);
    await stores.close();
  });

  it('reads dead letters inserted by hand, and pushOnce works beside them', async () => {
    const path = freshPath();
    const clock = createFakeClock();
    const old = new BetterSqlite3(path);
    migrateSqliteSchema(old, clock.now());
    const insert = old.prepare('INSERT INTO dead_letters (queue, entry, added_at_ms) VALUES (?, ?, ?)');
    const oldMessageId = String(insert.run('message', JSON.stringify({ kind: 'message', rawBody: '{not json', messageId: 'm1' }), clock.now()).lastInsertRowid);
    const oldToolId = String(insert.run('tool', JSON.stringify({ runId: 'run_1', stepIndex: 2 }), clock.now()).lastInsertRowid);
    old.close();

    const stores = createSqliteStores({ path, clock });
    const versions = stores.database.prepare('SELECT version FROM schema_version ORDER BY version').all();
    expect(versions).toEqual([{ version: SQLITE_SCHEMA_VERSION }]);
    expect(await stores.messageDlq.list()).toEqual([
      { id: oldMessageId, addedAt: new Date(clock.now()).toISOString(), entry: { kind: 'message', rawBody: '{not json', messageId: 'm1' } },
    ]);
    expect((await stores.toolDlq.get(oldToolId))?.entry).toEqual({ runId: 'run_1', stepIndex: 2 });
    // entries inserted by hand have no key: the first keyed push adds, the second does not
    const keyed = await (stores.messageDlq as DeadLetterQueue<unknown>).pushOnce('message:m1', { kind: 'message', rawBody: '{not json', messageId: 'm1' });
    expect(keyed.added).toBe(true);
    expect(Number(keyed.id)).toBeGreaterThan(Number(oldToolId));
    expect(await (stores.messageDlq as DeadLetterQueue<unknown>).pushOnce('message:m1', 'again')).toEqual({ id: keyed.id, added: false });
    expect(await stores.messageDlq.size()).toBe(2);
    await stores.close();
  });

  it('takes rows written by hand: dead letters count in bytes(), queue rows stay deliverable, claims work', async () => {
    const path = freshPath();
    const clock = createFakeClock();
    const old = new BetterSqlite3(path);
    migrateSqliteSchema(old, clock.now());
    const entries = [
      { kind: 'message', rawBody: 'Grüße 東京 🚀' },
      { runId: 'run_1', stepIndex: 2 },
    ];
    const insert = old.prepare('INSERT INTO dead_letters (queue, entry, added_at_ms) VALUES (?, ?, ?)');
    insert.run('message', JSON.stringify(entries[0]), clock.now());
    insert.run('tool', JSON.stringify(entries[1]), clock.now());
    const enqueue = old.prepare('INSERT INTO queue_messages (id, body, enqueued_at_ms, deliveries, lease_until_ms) VALUES (?, ?, ?, ?, ?)');
    enqueue.run('leased', 'a', clock.now(), 1, clock.now() + 60_000);
    enqueue.run('waiting', 'b', clock.now(), 0, null);
    old.close();

    const stores = createSqliteStores({ path, clock });
    const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');
    expect(await stores.messageDlq.bytes()).toBe(jsonBytes(entries[0]));
    expect(await stores.toolDlq.bytes()).toBe(jsonBytes(entries[1]));
    await (stores.toolDlq as DeadLetterQueue<unknown>).push({ more: 'é' });
    expect(await stores.toolDlq.bytes()).toBe(jsonBytes(entries[1]) + jsonBytes({ more: 'é' }));
    // the lease written by hand is a lease: renewable, then redelivered when it ends
    expect(await stores.queue.extendLease('leased', 1, 60_000)).toBe(true);
    expect(await stores.queue.reserve(60_000)).toMatchObject({ id: 'waiting', body: 'b', deliveries: 1 });
    await clock.advance(60_000);
    expect(await stores.queue.reserve(60_000)).toMatchObject({ id: 'leased', body: 'a', deliveries: 2 });
    expect(await stores.claims.acquire('run:run_1', 'drain-a', 60_000)).toBe(true);
    expect(await stores.claims.acquire('run:run_1', 'drain-b', 60_000)).toBe(false);
    await stores.close();
  });

  it('keeps dead_letter_totals right when rows are deleted by hand, as the sqlite3 shell would', async () => {
    const stores = createSqliteStores({ path: freshPath() });
    await (stores.toolDlq as DeadLetterQueue<unknown>).push('a');
    await (stores.toolDlq as DeadLetterQueue<unknown>).push('bb');
    stores.database.prepare('DELETE FROM dead_letters WHERE entry = \'"a"\'').run();
    stores.database.prepare('UPDATE dead_letters SET entry = \'"cccc"\'').run();
    expect(await stores.toolDlq.bytes()).toBe(6);
    await stores.close();
  });

  it('deletes ended claims on later acquires, so crashed holders leave no rows behind', async () => {
    const clock = createFakeClock();
    const stores = createSqliteStores({ path: freshPath(), clock });
    const countRows = () => (stores.database.prepare('SELECT COUNT(*) AS count FROM claims').get() as { count: number }).count;
    for (let index = 0; index < 150; index++) expect(await stores.claims.acquire(`run:${index}`, 'crashed', 1_000)).toBe(true);
    expect(countRows()).toBe(150);
    await clock.advance(1_000);
    await stores.claims.acquire('run:new-1', 'worker', 1_000);
    await stores.claims.acquire('run:new-2', 'worker', 1_000);
    expect(countRows()).toBe(2);
    expect(await stores.claims.release('run:new-1', 'worker')).toBe(true);
    expect(countRows()).toBe(1);
    await stores.close();
  });

  it('sweeps ended claims on the first acquire and then at most once per second of the clock', async () => {
    const clock = createFakeClock();
    const stores = createSqliteStores({ path: freshPath(), clock });
    const keys = () => (stores.database.prepare('SELECT key FROM claims ORDER BY key').all() as { key: string }[]).map((row) => row.key);
    expect(await stores.claims.acquire('run:first', 'worker', 10)).toBe(true); // sweeps (nothing yet)
    for (let index = 0; index < 5; index++) expect(await stores.claims.acquire(`run:crashed-${index}`, 'crashed', 10)).toBe(true);
    await clock.advance(500);
    // the leases ended, but the last sweep was 500 ms ago: the rows stay (and the keys are free)
    expect(await stores.claims.acquire('run:second', 'worker', 10_000)).toBe(true);
    expect(keys()).toHaveLength(7);
    expect(await stores.claims.acquire('run:crashed-0', 'worker', 10_000)).toBe(true);
    await clock.advance(500);
    // a second after the last sweep: ended claims of other keys are deleted, live ones stay
    expect(await stores.claims.acquire('run:third', 'worker', 10_000)).toBe(true);
    expect(keys()).toEqual(['run:crashed-0', 'run:second', 'run:third']);
    await stores.close();
  });

  it('grants a claim to exactly one of many acquirers through two connections to one file', async () => {
    const path = freshPath();
    const left = createSqliteStores({ path });
    const right = createSqliteStores({ path });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) => (index % 2 === 0 ? left : right).claims.acquire('run:race', `holder-${index}`, 60_000)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await right.claims.get('run:race'))?.holder).toBe(`holder-${results.indexOf(true)}`);
    await left.close();
    await right.close();
  });

  it('pushes once per key through two connections to one file, and keeps the key across reopening', async () => {
    const path = freshPath();
    const left = createSqliteStores({ path });
    const right = createSqliteStores({ path });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        ((index % 2 === 0 ? left : right).toolDlq as DeadLetterQueue<unknown>).pushOnce('tool:run_1:1', { writer: index }),
      ),
    );
    expect(results.filter((result) => result.added)).toHaveLength(1);
    expect(new Set(results.map((result) => result.id)).size).toBe(1);
    expect(await right.toolDlq.remove(results[0]!.id)).toBe(true);
    await left.close();
    await right.close();
    const reopened = createSqliteStores({ path });
    expect(await (reopened.toolDlq as DeadLetterQueue<unknown>).pushOnce('tool:run_1:1', 'late')).toEqual({ id: results[0]!.id, added: false });
    expect(await reopened.toolDlq.size()).toBe(0);
    await reopened.close();
  });

  it('keeps every store across closing and reopening the file', async () => {
    const path = freshPath();
    const clock = createFakeClock();
    const first = createSqliteStores({ path, clock });
    await first.conversations.put('conv_1', [{ role: 'user', content: 'hello' }]);
    await first.runs.put({
      runId: 'run_1',
      messageId: 'm1',
      status: 'running',
      stepIndex: 2,
      conversationRef: 'conv_1',
      tokensSpent: { input: 10, output: 5 },
      toolAttempts: { search: 1 },
      updatedAt: '2026-01-01T00:00:00.000Z',
    });
    await first.ledger.putIfAbsent('run_1:0:0', { status: 'success' });
    await first.breakers.update<{ state: string }>('search', () => ({ state: 'open' }));
    const messageEntryId = await (first.messageDlq as DeadLetterQueue<unknown>).push({ kind: 'message', rawBody: '{not json' });
    const toolEntryId = await (first.toolDlq as DeadLetterQueue<unknown>).push({ runId: 'run_1', stepIndex: 1 });
    await first.queue.enqueue({ id: 'leased', body: 'a' });
    await first.queue.enqueue({ id: 'waiting', body: 'b' });
    await first.queue.enqueue({ id: 'acked', body: 'c' });
    await first.queue.reserve(60_000);
    await first.queue.ack('acked');
    // the consumer holding "leased" dies without acking: close as a crash would leave it
    await first.close();

    await clock.advance(60_000);
    const second = createSqliteStores({ path, clock });
    expect(await second.conversations.get('conv_1')).toEqual([{ role: 'user', content: 'hello' }]);
    expect((await second.runs.get('run_1'))?.stepIndex).toBe(2);
    expect(await second.ledger.putIfAbsent('run_1:0:0', 'again')).toEqual({ stored: false, value: { status: 'success' } });
    expect(await second.breakers.get('search')).toEqual({ state: 'open' });
    expect((await second.messageDlq.get(messageEntryId))?.entry).toEqual({ kind: 'message', rawBody: '{not json' });
    expect((await second.toolDlq.list()).map((record) => record.id)).toEqual([toolEntryId]);
    expect(await second.queue.size()).toBe(2);
    expect(await second.queue.reserve(60_000)).toMatchObject({ id: 'leased', body: 'a', deliveries: 2 });
    expect(await second.queue.reserve(60_000)).toMatchObject({ id: 'waiting', body: 'b', deliveries: 1 });
    expect(await second.queue.reserve(60_000)).toBeUndefined();
    await second.queue.enqueue({ id: 'acked', body: 'c again' });
    expect(await second.queue.size()).toBe(2);
    await second.close();
  });

  it('never reserves one message twice through two connections to one file', async () => {
    const path = freshPath();
    const clock = createFakeClock();
    const left = createSqliteStores({ path, clock });
    const right = createSqliteStores({ path, clock });
    for (let index = 0; index < 40; index++) await (index % 2 === 0 ? left : right).queue.enqueue({ id: `m${index}`, body: String(index) });
    const reservations = await Promise.all(Array.from({ length: 60 }, (_, index) => (index % 2 === 0 ? left : right).queue.reserve(60_000)));
    const ids = reservations.filter((delivery) => delivery !== undefined).map((delivery) => delivery.id);
    expect(ids).toHaveLength(40);
    expect(new Set(ids).size).toBe(40);
    expect([...ids].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)))).toEqual(Array.from({ length: 40 }, (_, index) => `m${index}`));
    // each connection reserves in the queue's order (its reserves of one turn commit as one group, so the two connections' do not alternate)
    for (const side of [0, 1]) {
      const own = reservations.filter((delivery, index) => index % 2 === side && delivery !== undefined).map((delivery) => Number(delivery!.id.slice(1)));
      expect(own).toEqual([...own].sort((a, b) => a - b));
    }
    for (const id of ids.slice(0, 20)) await left.queue.ack(id);
    expect(await right.queue.size()).toBe(20);
    await left.close();
    await right.close();
  });

  it('loses no breaker update and stores one ledger value across two connections', async () => {
    const path = freshPath();
    const left = createSqliteStores({ path });
    const right = createSqliteStores({ path });
    const increment = (current: number | undefined) => (current ?? 0) + 1;
    await Promise.all(Array.from({ length: 50 }, (_, index) => (index % 2 === 0 ? left : right).breakers.update<number>('tool', increment)));
    expect(await left.breakers.get('tool')).toBe(50);
    const results = await Promise.all([left.ledger.putIfAbsent('k', 'left'), right.ledger.putIfAbsent('k', 'right')]);
    expect(results.filter((result) => result.stored)).toHaveLength(1);
    expect(results[1]).toEqual({ stored: false, value: 'left' });
    await left.close();
    await right.close();
  });

  it('deletes expired conversations in bounded batches at the first write and every N writes, chunks included, never a live one', async () => {
    const clock = createFakeClock();
    const stores = createSqliteStores({ path: freshPath(), clock, conversationTtlMs: 1_000, conversationSweep: { everyWrites: 4, batchSize: 2 } });
    const count = (table: string) => (stores.database.prepare(`SELECT COUNT(*) AS count FROM ${table}`).get() as { count: number }).count;
    for (const ref of ['conv_a', 'conv_b', 'conv_c']) await stores.conversations.put(ref, [ref]); // the 1st write swept (nothing expired)
    await clock.advance(1_000);
    expect(await stores.conversations.get('conv_a')).toBeUndefined(); // invisible at once
    expect(count('conversations')).toBe(3);
    await stores.conversations.put('conv_live', ['live']); // the 4th write: no sweep
    expect(count('conversations')).toBe(4);
    await stores.conversations.put('conv_live', ['live']); // the 5th: one batch of 2
    expect(count('conversations')).toBe(2);
    expect(count('conversation_messages')).toBe(2);
    for (let write = 0; write < 4; write += 1) await stores.conversations.put('conv_live', ['live', write]);
    expect(count('conversations')).toBe(1);
    expect(count('conversation_messages')).toBe(1);
    expect(await stores.conversations.get('conv_live')).toEqual(['live', 3]);
    await stores.close();
  });

  it('refreshes the conversation row lazily on appends; the sweep keeps a conversation written since and moves its row', async () => {
    const clock = createFakeClock();
    const stores = createSqliteStores({ path: freshPath(), clock, conversationTtlMs: 1_000, conversationSweep: { everyWrites: 1, batchSize: 10 } });
    const head = () =>
      (stores.database.prepare('SELECT expires_at_ms FROM conversations WHERE ref = ?').get('conv_a') as { expires_at_ms: number }).expires_at_ms;
    const start = clock.now();
    await stores.conversations.put('conv_a', [1]);
    await clock.advance(5);
    const checkpoint = {
      runId: 'run_a',
      messageId: '',
      status: 'running' as const,
      stepIndex: 1,
      conversationRef: 'conv_a',
      tokensSpent: { input: 0, output: 0 },
      toolAttempts: {},
      updatedAt: new Date(clock.now()).toISOString(),
    };
    await stores.journal.commit({ conversationRef: 'conv_a', messages: [1, 2], storedCount: 1, checkpoint, calls: [] });
    expect(head()).toBe(start + 1_000); // lags by 5 ms, under the 10 ms (ttl / 100) a step may leave it behind
    await clock.advance(996);
    await stores.conversations.put('conv_other', [0]); // a write: the sweep finds conv_a's row expired
    expect(await stores.conversations.get('conv_a')).toEqual([1, 2]);
    expect(head()).toBe(start + 1_005);
    await clock.advance(4);
    expect(await stores.conversations.get('conv_a')).toBeUndefined();
    await stores.close();
  });

  it('commits a step as one appended chunk: the stored bytes of a step do not grow with the conversation', async () => {
    const stores = createSqliteStores({ path: freshPath(), clock: createFakeClock() });
    const chunkBytes = () =>
      stores.database.prepare('SELECT start, length(messages) AS bytes FROM conversation_messages WHERE ref = ? ORDER BY start').all('conv_a') as {
        start: number;
        bytes: number;
      }[];
    const checkpoint = (stepIndex: number) => ({
      runId: 'run_a',
      messageId: 'm',
      status: 'running' as const,
      stepIndex,
      conversationRef: 'conv_a',
      tokensSpent: { input: 0, output: 0 },
      toolAttempts: {},
      updatedAt: new Date(0).toISOString(),
    });
    const messages: unknown[] = Array.from({ length: 1_000 }, (_, index) => ({ role: 'user', content: `message ${index}` }));
    await stores.conversations.put('conv_a', messages);
    let storedCount = messages.length;
    for (let step = 0; step < 3; step += 1) {
      messages.push({ role: 'tool', content: `step ${step}` });
      await stores.journal.commit({ conversationRef: 'conv_a', messages, storedCount, checkpoint: checkpoint(step), calls: [] });
      storedCount = messages.length;
    }
    const chunks = chunkBytes();
    expect(chunks.map((chunk) => chunk.start)).toEqual([0, 1_000, 1_001, 1_002]);
    expect(new Set(chunks.slice(1).map((chunk) => chunk.bytes)).size).toBe(1);
    expect(chunks[1]!.bytes).toBeLessThan(64);
    expect(await stores.conversations.get('conv_a')).toEqual(messages);
    expect((await stores.runs.get('run_a'))?.stepIndex).toBe(2);
    await stores.close();
  });

  it('creates a missing folder for the file', async () => {
    const path = join(directory, 'nested', 'deeper', 'toolrun.db');
    const stores = createSqliteStores({ path });
    await stores.queue.enqueue({ id: 'm', body: 'x' });
    expect(await stores.queue.size()).toBe(1);
    await stores.close();
  });

  it('can be closed twice', async () => {
    const stores = createSqliteStores({ path: freshPath() });
    await stores.close();
    await stores.close();
    expect(stores.database.open).toBe(false);
  });

  it('throws STORE_UNAVAILABLE with the cause when the path is a folder', () => {
    const path = join(directory, 'a-folder');
    mkdirSync(path);
    expectStoreUnavailable(() => createSqliteStores({ path }), true);
  });

  it('throws STORE_UNAVAILABLE with the cause when the file is not a database', () => {
    const path = freshPath();
    writeFileSync(path, 'this is not a SQLite database, just some text that is long enough '.repeat(20));
    expectStoreUnavailable(() => createSqliteStores({ path }), true);
  });

  it('throws STORE_UNAVAILABLE when the file has a newer schema, and leaves it alone', () => {
    const path = freshPath();
    const database = new BetterSqlite3(path);
    database.exec('CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
    database.prepare('INSERT INTO schema_version VALUES (?, ?)').run(SQLITE_SCHEMA_VERSION + 1, '2030-01-01T00:00:00.000Z');
    database.close();
    expectStoreUnavailable(() => createSqliteStores({ path }), false);
    const check = new BetterSqlite3(path);
    expect(check.prepare("SELECT name FROM sqlite_master WHERE name = 'queue_messages'").get()).toBeUndefined();
    check.close();
  });

  it('refuses a file older than the baseline, naming the versions, and leaves it alone', () => {
    const path = freshPath();
    const database = new BetterSqlite3(path);
    database.exec('CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
    database.exec("INSERT INTO schema_version VALUES (1, '2026-01-01T00:00:00.000Z'), (8, '2026-01-01T00:00:00.000Z')");
    database.exec("CREATE TABLE runs (run_id TEXT PRIMARY KEY, checkpoint TEXT NOT NULL); INSERT INTO runs VALUES ('run-1', '{}')");
    database.close();
    let thrown: unknown;
    try {
      createSqliteStores({ path });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(SchemaVersionError);
    expect(thrown).toMatchObject({
      code: 'STORE_UNAVAILABLE',
      backend: 'SQLite',
      foundVersion: 8,
      supportedVersions: { oldest: SQLITE_SCHEMA_VERSION, newest: SQLITE_SCHEMA_VERSION },
    });
    expect((thrown as Error).message).toContain(`the SQLite file ${path} has schema version 8; this toolrun opens version ${SQLITE_SCHEMA_VERSION} only`);
    const check = new BetterSqlite3(path);
    expect(check.prepare('SELECT version FROM schema_version ORDER BY version').all()).toEqual([{ version: 1 }, { version: 8 }]);
    expect(check.prepare('SELECT run_id FROM runs').all()).toEqual([{ run_id: 'run-1' }]);
    expect(check.prepare("SELECT name FROM sqlite_master WHERE name = 'queue_messages'").get()).toBeUndefined();
    check.close();
  });
});
