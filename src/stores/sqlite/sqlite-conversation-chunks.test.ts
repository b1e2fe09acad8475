import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createFakeClock } from '../../testing/fake-clock.ts';
import { migrateSqliteSchema, SQLITE_SCHEMA_VERSION } from './sqlite-migrations.ts';
import { createSqliteStores } from './sqlite-stores.ts';

const directory = mkdtempSync(join(tmpdir(), 'toolrun-sqlite-chunks-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let fileCounter = 0;
const freshPath = () => join(directory, `chunks-${++fileCounter}.db`);

describe('SQLite conversation chunks', () => {
  it('keeps chunks in a rowid table, reads chunks written by hand byte for byte, and keeps appending to them', async () => {
    const path = freshPath();
    const clock = createFakeClock();
    const old = new BetterSqlite3(path);
    migrateSqliteSchema(old, clock.now());
    const long = Array.from({ length: 1_000 }, (_, index) => ({ role: index % 2 === 0 ? 'user' : 'assistant', content: `message ${index} `.repeat(20) }));
    // text as an older toolrun (or a hand) wrote it: not what JSON.stringify gives back, kept as is
    const odd = '[ "nul \\u0000 and a lone \\ud800 surrogate" , 1e21 , {"a" :1} ]';
    const chunks: [string, number, number, number, string][] = [
      ['conv_long', 0, 1_000, clock.now() + 60_000, JSON.stringify(long)],
      [
        'conv_long',
        1_000,
        1_002,
        clock.now() + 60_000,
        JSON.stringify([
          { role: 'assistant', content: null },
          { role: 'tool', content: 'ok' },
        ]),
      ],
      ['conv_odd', 0, 3, clock.now() + 60_000, odd],
      ['conv_expired', 0, 1, clock.now(), '[{"role":"user","content":"old"}]'],
    ];
    const insertChunk = old.prepare('INSERT INTO conversation_messages (ref, start, end, expires_at_ms, messages) VALUES (?, ?, ?, ?, ?)');
    const insertHead = old.prepare(
      'INSERT INTO conversations (ref, expires_at_ms) VALUES (?, ?) ON CONFLICT (ref) DO UPDATE SET expires_at_ms = excluded.expires_at_ms',
    );
    for (const chunk of chunks) {
      insertChunk.run(...chunk);
      insertHead.run(chunk[0], chunk[3]);
    }
    old.close();

    const stores = createSqliteStores({ path, clock });
    const { database } = stores;
    expect((database.prepare('SELECT MAX(version) AS version FROM schema_version').get() as { version: number }).version).toBe(SQLITE_SCHEMA_VERSION);
    const table = database.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'conversation_messages'").get() as { sql: string };
    expect(table.sql).not.toMatch(/WITHOUT ROWID/i);
    expect(database.prepare('SELECT ref, start, end, expires_at_ms, messages FROM conversation_messages ORDER BY ref, start').raw().all()).toEqual(
      [...chunks].sort((a, b) => (a[0] === b[0] ? a[1] - b[1] : a[0] < b[0] ? -1 : 1)),
    );
    expect(await stores.conversations.get('conv_long')).toEqual([...long, { role: 'assistant', content: null }, { role: 'tool', content: 'ok' }]);
    expect(await stores.conversations.get('conv_odd')).toEqual(JSON.parse(odd));
    expect(await stores.conversations.get('conv_expired')).toBeUndefined();

    // a conversation written by hand takes appends: the step writes one chunk of its own messages
    const messages = [...((await stores.conversations.get('conv_long')) as unknown[]), { role: 'assistant', content: 'done' }];
    const checkpoint = {
      runId: 'run_long',
      messageId: 'm',
      status: 'completed' as const,
      stepIndex: 3,
      conversationRef: 'conv_long',
      tokensSpent: { input: 1, output: 1 },
      toolAttempts: {},
      updatedAt: new Date(clock.now()).toISOString(),
    };
    await stores.journal.commit({ conversationRef: 'conv_long', messages, storedCount: 1_002, checkpoint, calls: [] });
    expect(database.prepare('SELECT start, end FROM conversation_messages WHERE ref = ? ORDER BY start').all('conv_long')).toEqual([
      { start: 0, end: 1_000 },
      { start: 1_000, end: 1_002 },
      { start: 1_002, end: 1_003 },
    ]);
    expect(await stores.conversations.get('conv_long')).toEqual(messages);
    // the (ref, start) key is still unique: a put replaces the chunks with one
    await stores.conversations.put('conv_long', ['short']);
    expect(database.prepare('SELECT start, end FROM conversation_messages WHERE ref = ?').all('conv_long')).toEqual([{ start: 0, end: 1 }]);
    expect(() =>
      database.prepare("INSERT INTO conversation_messages (ref, start, end, expires_at_ms, messages) VALUES ('conv_long', 0, 1, 0, '[]')").run(),
    ).toThrow(/UNIQUE/);
    await stores.close();
  });

  it('finds the last chunk of a conversation through the (ref, start) index, not a scan', () => {
    const stores = createSqliteStores({ path: freshPath() });
    const plan = stores.database
      .prepare('EXPLAIN QUERY PLAN SELECT end, expires_at_ms FROM conversation_messages WHERE ref = ? ORDER BY start DESC LIMIT 1')
      .all('conv') as { detail: string }[];
    expect(plan.map((row) => row.detail).join(' ')).toMatch(/USING INDEX sqlite_autoindex_conversation_messages_1/);
    void stores.close();
  });
});
