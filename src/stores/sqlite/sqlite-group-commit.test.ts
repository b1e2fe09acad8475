import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createSqliteGroupCommit } from './sqlite-group-commit.ts';
import { systemClock, type Clock } from '../../ground/ports/clock.ts';
import { createFakeClock } from '../../testing/fake-clock.ts';
import { createSqliteStores, type SqliteStores } from './sqlite-stores.ts';

const directory = mkdtempSync(join(tmpdir(), 'toolrun-group-commit-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let files = 0;
const open: Database.Database[] = [];
afterEach(() => {
  vi.useRealTimers();
  for (const database of open.splice(0)) if (database.open) database.close();
});

/** A WAL file with `items (id TEXT PRIMARY KEY, n INTEGER)`, and a count of the transactions begun on it (BEGIN IMMEDIATE). */
function fixture(busyTimeoutMs = 1_000) {
  const path = join(directory, `group-${++files}.db`);
  const database = new Database(path, { timeout: busyTimeoutMs });
  open.push(database);
  database.pragma('journal_mode = WAL');
  database.exec('CREATE TABLE items (id TEXT PRIMARY KEY, n INTEGER NOT NULL)');
  const counted = { begun: 0 };
  const transaction = database.transaction.bind(database);
  // every transaction function of the group commit, counted when it begins one (`.immediate`)
  const watched = new Proxy(database, {
    get(target, key) {
      if (key !== 'transaction') {
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      }
      return (fn: (...args: unknown[]) => unknown) => {
        const wrapped = transaction(fn);
        // the group commit calls `.immediate` only
        return {
          immediate: (...args: unknown[]) => {
            counted.begun += 1;
            return wrapped.immediate(...args);
          },
        };
      };
    },
  });
  const insert = database.prepare('INSERT INTO items (id, n) VALUES (?, ?)');
  const count = database.prepare('SELECT COUNT(*) AS count FROM items').pluck();
  const ids = () => (database.prepare('SELECT id FROM items ORDER BY rowid').pluck().all() as string[]).join(',');
  return { path, database, watched, counted, insert: (id: string, n = 0) => insert.run(id, n), count: () => count.get() as number, ids };
}

describe('createSqliteGroupCommit', () => {
  it('commits the writes asked for in one turn in one transaction, in order, each with its own value', async () => {
    const { watched, counted, insert, count, ids, database } = fixture();
    const group = createSqliteGroupCommit(watched, { aloneWrites: 0 });
    const results = await Promise.all([
      group.run(() => insert('a').changes),
      group.run(() => count()), // sees the write before it
      group.run(() => {
        insert('b');
        insert('c');
        return 'two';
      }),
    ]);
    expect(results).toEqual([1, 1, 'two']);
    expect(counted.begun).toBe(1);
    expect(ids()).toBe('a,b,c');
    expect(database.inTransaction).toBe(false);
  });

  it('settles a promise only once its group has committed', async () => {
    const { watched, insert, path } = fixture();
    const group = createSqliteGroupCommit(watched, { aloneWrites: 0 });
    const other = new Database(path);
    open.push(other);
    let settled = false;
    const written = group.run(() => insert('a')).then(() => (settled = true));
    // not written yet: the group waits for the end of the turn
    expect(other.prepare('SELECT COUNT(*) FROM items').pluck().get()).toBe(0);
    expect(settled).toBe(false);
    await written;
    expect(other.prepare('SELECT COUNT(*) FROM items').pluck().get()).toBe(1);
  });

  it('takes a write that throws out of its group: none of its statements is kept, the others are', async () => {
    const { watched, counted, insert, ids } = fixture();
    const group = createSqliteGroupCommit(watched, { aloneWrites: 0 });
    const failure = new Error('the write failed half-way');
    const outcomes = await Promise.allSettled([
      group.run(() => insert('a')),
      group.run(() => {
        insert('half');
        throw failure;
      }),
      group.run(() => insert('a')), // a constraint error: the primary key is taken by the first write
      group.run(() => insert('b').changes),
    ]);
    expect(outcomes[0]).toMatchObject({ status: 'fulfilled' });
    expect(outcomes[1]).toEqual({ status: 'rejected', reason: failure });
    expect(outcomes[2]).toMatchObject({ status: 'rejected', reason: { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' } });
    expect(outcomes[3]).toEqual({ status: 'fulfilled', value: 1 });
    expect(ids()).toBe('a,b');
    // the group, then again without the first failure, then without the second
    expect(counted.begun).toBe(3);
  });

  it('rejects every write of a group whose transaction cannot begin, and keeps none of them', async () => {
    const { watched, insert, path, count } = fixture(20);
    const group = createSqliteGroupCommit(watched, { aloneWrites: 0 });
    const locker = new Database(path);
    open.push(locker);
    locker.exec('BEGIN IMMEDIATE');
    const outcomes = await Promise.allSettled([group.run(() => insert('a')), group.run(() => insert('b'))]);
    locker.exec('ROLLBACK');
    expect(outcomes).toEqual([
      { status: 'rejected', reason: expect.objectContaining({ code: 'SQLITE_BUSY' }) },
      { status: 'rejected', reason: expect.objectContaining({ code: 'SQLITE_BUSY' }) },
    ]);
    expect(count()).toBe(0);
    // and the next write goes through
    await group.run(() => insert('c'));
    expect(count()).toBe(1);
  });

  it('commits at once while alone: on a new connection and after a group of one, then waits for a group again', async () => {
    const { watched, counted, insert, count } = fixture();
    const group = createSqliteGroupCommit(watched, { aloneWrites: 2 });
    const first = group.run(() => insert('a'));
    expect(count()).toBe(1); // committed inside `run`
    await first;
    await group.run(() => insert('b'));
    expect(counted.begun).toBe(2);
    // the third waits for the turn: two asked for together share one transaction
    const together = Promise.all([group.run(() => insert('c')), group.run(() => insert('d'))]);
    expect(count()).toBe(2);
    await together;
    expect(counted.begun).toBe(3);
    // a group of two: the next waits too (and is a group of one)
    const alone = group.run(() => insert('e'));
    expect(count()).toBe(4);
    await alone;
    // after that group of one: at once again
    void group.run(() => insert('f'));
    expect(count()).toBe(6);
  });

  it('rejects a write that throws while alone, and keeps nothing of it', async () => {
    const { watched, insert, count } = fixture();
    const group = createSqliteGroupCommit(watched);
    await expect(
      group.run(() => {
        insert('a');
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(count()).toBe(0);
  });

  it('commits what is waiting at once on flush()', () => {
    const { watched, insert, count } = fixture();
    const group = createSqliteGroupCommit(watched, { aloneWrites: 0 });
    void group.run(() => insert('a'));
    void group.run(() => insert('b'));
    expect(count()).toBe(0);
    group.flush();
    expect(count()).toBe(2);
  });

  it('splits more than 256 writes asked for in one turn into groups of at most 256', async () => {
    const { watched, counted, insert, count } = fixture();
    const group = createSqliteGroupCommit(watched, { aloneWrites: 0 });
    await Promise.all(Array.from({ length: 600 }, (_, index) => group.run(() => insert(`i${index}`))));
    expect(count()).toBe(600);
    expect(counted.begun).toBe(3);
  });

  it('is not held back by fake timers installed before it was loaded: it groups by the clock it is given', { timeout: 5_000 }, async () => {
    const { watched, counted, insert, count } = fixture();
    vi.resetModules();
    vi.useFakeTimers();
    const { createSqliteGroupCommit: loadedUnderFakes } = await import('./sqlite-group-commit.ts');
    const group = loadedUnderFakes(watched, { aloneWrites: 0, clock: createFakeClock() });
    await Promise.all([group.run(() => insert('a')), group.run(() => insert('b'))]);
    expect(count()).toBe(2);
    expect(counted.begun).toBe(1);
  });

  it('commits every write at once with a clock that cannot wait for the end of a turn, and groups by one that can', async () => {
    const withoutEndOfTurn: Clock = { now: systemClock.now, sleep: systemClock.sleep };
    const { watched, counted, insert, count } = fixture();
    const atOnce = createSqliteGroupCommit(watched, { aloneWrites: 0, clock: withoutEndOfTurn });
    const both = Promise.all([atOnce.run(() => insert('a')), atOnce.run(() => insert('b'))]);
    expect(count()).toBe(2); // each committed inside `run`
    await both;
    expect(counted.begun).toBe(2);
    const byNextTick = createSqliteGroupCommit(watched, {
      aloneWrites: 0,
      clock: { ...withoutEndOfTurn, atEndOfTurn: (callback) => process.nextTick(callback) },
    });
    await Promise.all([byNextTick.run(() => insert('c')), byNextTick.run(() => insert('d'))]);
    expect(count()).toBe(4);
    expect(counted.begun).toBe(3);
  });

  it('is not held back by fake timers installed after it was loaded', { timeout: 5_000 }, async () => {
    const { watched, insert, count } = fixture();
    const group = createSqliteGroupCommit(watched, { aloneWrites: 0 });
    vi.useFakeTimers();
    await Promise.all([group.run(() => insert('a')), group.run(() => insert('b'))]);
    expect(count()).toBe(2);
  });
});

describe('group commit in the SQLite stores', () => {
  const step = (ref: string, runId: string, messages: unknown[], storedCount: number, stepIndex: number) => ({
    conversationRef: ref,
    messages,
    storedCount,
    checkpoint: {
      runId,
      messageId: 'm',
      status: 'running' as const,
      stepIndex,
      conversationRef: ref,
      tokensSpent: { input: 1, output: 1 },
      toolAttempts: {},
      updatedAt: new Date(0).toISOString(),
    },
    calls: [{ stepIndex, callIndex: 0, outcome: { stepIndex } }],
  });

  /** Past the first writes of a new connection (which commit at once) and into a group of several: the next writes wait for their turn's group. */
  const groupsFromNowOn = async (stores: SqliteStores) => {
    for (let index = 0; index < 40; index++) await stores.queue.enqueue({ id: `warm${index}`, body: '' });
    await Promise.all(Array.from({ length: 40 }, (_, index) => stores.queue.ack(`warm${index}`)));
  };

  it('commits the steps of many runs asked for in one turn together, each whole, and a failing one alone fails', async () => {
    const stores = createSqliteStores({ path: join(directory, `stores-${++files}.db`), backgroundCheckpoint: false });
    open.push(stores.database);
    await groupsFromNowOn(stores);
    const unserialisable = { role: 'user', content: 'x', size: 1n };
    const commits = Array.from({ length: 20 }, (_, index) =>
      // run 7's step cannot be stored (a BigInt has no JSON): it fails inside the group, as a replacement of its conversation
      stores.journal.commit(
        step(`conv_${index}`, `run_${index}`, index === 7 ? [unserialisable] : [{ role: 'user', content: `run ${index}` }], index === 7 ? Number.NaN : 0, 1),
      ),
    );
    // none is written yet: they wait for the end of the turn, and commit together
    expect(stores.database.prepare('SELECT COUNT(*) FROM conversation_messages').pluck().get()).toBe(0);
    const outcomes = await Promise.allSettled(commits);
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toHaveLength(1);
    expect(outcomes[7]).toMatchObject({ status: 'rejected' });
    for (let index = 0; index < 20; index++) {
      const stored = index === 7 ? undefined : [{ role: 'user', content: `run ${index}` }];
      expect(await stores.conversations.get(`conv_${index}`)).toEqual(stored);
      expect((await stores.runs.get(`run_${index}`))?.stepIndex).toBe(index === 7 ? undefined : 1);
      expect(await stores.ledger.get(`run_${index}:1:0`)).toEqual(index === 7 ? undefined : { stepIndex: 1 });
    }
    await stores.close();
  });

  it.skipIf(!existsSync('/proc/self/fd'))(
    'leaves no connection open after close(), though the write close() commits is the one that starts the checkpoint thread',
    async () => {
      const folder = mkdtempSync(join(directory, 'close-'));
      const stores = createSqliteStores({ path: join(folder, 'stores.db') });
      // the thread starts after the 64th step commit: 62 before, then two waiting for their turn's group when close() is called
      await Promise.all(Array.from({ length: 62 }, (_, index) => stores.journal.commit(step(`conv_${index}`, `run_${index}`, ['x'], 0, 1))));
      const waiting = [62, 63].map((index) => stores.journal.commit(step(`conv_${index}`, `run_${index}`, ['x'], 0, 1)));
      await stores.close();
      await Promise.all(waiting);
      // a thread started now would open the file on its own connection
      await new Promise((resolve) => setTimeout(resolve, 300));
      const openOnFolder = readdirSync('/proc/self/fd')
        .map((fd) => {
          try {
            return readlinkSync(`/proc/self/fd/${fd}`);
          } catch {
            return '';
          }
        })
        .filter((target) => target.startsWith(folder));
      expect(openOnFolder).toEqual([]);
      const reopened = new Database(join(folder, 'stores.db'));
      open.push(reopened);
      expect(reopened.prepare('SELECT COUNT(*) FROM runs').pluck().get()).toBe(64);
    },
  );

  it('writes a step as it was when its commit was called, though its messages grow before the group commits', async () => {
    const stores = createSqliteStores({ path: join(directory, `stores-${++files}.db`), backgroundCheckpoint: false });
    open.push(stores.database);
    await groupsFromNowOn(stores);
    const messages: unknown[] = [{ role: 'user', content: 'first' }];
    const both = Promise.all([
      // not appendable (nothing stored yet at 1): the whole conversation is written, as it was at the call
      stores.journal.commit(step('conv_a', 'run_a', messages, 1, 1)),
      stores.journal.commit(step('conv_b', 'run_b', [{ role: 'user', content: 'b' }], 0, 1)),
    ]);
    messages.push({ role: 'assistant', content: 'added after the call' });
    await both;
    expect(await stores.conversations.get('conv_a')).toEqual([{ role: 'user', content: 'first' }]);
    await stores.close();
  });
});
