import { afterAll, describe, expect, it } from 'vitest';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import { describeStoresContract } from '../../testing/contract/index.ts';
import { createFakeClock } from '../../testing/fake-clock.ts';
import { createTestPool, dropSchema, POSTGRES_URL, uniqueName } from '../../../test/fixtures/distributed-services.ts';
import { SchemaVersionError } from '../schema-migrations.ts';
import { migratePostgresSchema, POSTGRES_SCHEMA_VERSION } from './postgres-migrations.ts';
import { createPostgresStores } from './postgres-stores.ts';
import type { DeadLetterQueue } from '../../ground/ports/stores.ts';

const admin = createTestPool({ max: 4 });
afterAll(() => admin.end());

/** Each contract test gets its own schema, dropped afterwards. */
describeStoresContract('postgres (one schema per test, shared pool)', async () => {
  const clock = createFakeClock();
  const schema = uniqueName('toolrun_test_');
  const stores = await createPostgresStores({ pool: admin, schema, clock });
  return {
    stores,
    clock,
    cleanup: async () => {
      await stores.close();
      await dropSchema(admin, schema);
    },
  };
});

describeStoresContract('postgres from a connection string with a one-hour conversation TTL', async () => {
  const clock = createFakeClock();
  const schema = uniqueName('toolrun_test_');
  const conversationTtlMs = 60 * 60 * 1000;
  const stores = await createPostgresStores({ connectionString: POSTGRES_URL, schema, clock, conversationTtlMs, maxConnections: 4 });
  return {
    stores,
    clock,
    conversationTtlMs,
    cleanup: async () => {
      await stores.close();
      await dropSchema(admin, schema);
    },
  };
});

async function rejection(promise: Promise<unknown>): Promise<ToolrunError> {
  try {
    await promise;
  } catch (error) {
    if (ToolrunError.is(error)) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('PostgreSQL stores', () => {
  it('migrates once when several processes start on a fresh schema at the same time', async () => {
    const schema = uniqueName('toolrun_test_');
    const opened = await Promise.all(Array.from({ length: 6 }, () => createPostgresStores({ connectionString: POSTGRES_URL, schema, maxConnections: 2 })));
    try {
      const { rows } = await admin.query<{ version: number }>(`SELECT version FROM "${schema}".schema_version ORDER BY version`);
      // the baseline once, at the current version
      const versions = rows.map((row) => row.version);
      expect(versions).toEqual([POSTGRES_SCHEMA_VERSION]);
      await opened[0]!.queue.enqueue({ id: 'm1', body: 'x' });
      expect(await opened[5]!.queue.size()).toBe(1);
      const reopened = await createPostgresStores({ pool: admin, schema });
      expect((await admin.query(`SELECT version FROM "${schema}".schema_version`)).rows).toHaveLength(versions.length);
      await reopened.close();
    } finally {
      await Promise.all(opened.map((stores) => stores.close()));
      await dropSchema(admin, schema);
    }
  });

  it('keeps every store across closing and reopening, and redelivers what a dead consumer leased', async () => {
    const schema = uniqueName('toolrun_test_');
    const clock = createFakeClock();
    try {
      const first = await createPostgresStores({ connectionString: POSTGRES_URL, schema, clock, maxConnections: 2 });
      await first.conversations.put('conv_1', [{ role: 'user', content: 'hello' }]);
      await first.ledger.putIfAbsent('run_1:0:0', { status: 'success' });
      await first.breakers.update<{ state: string }>('search', () => ({ state: 'open' }));
      const toolEntryId = await (first.toolDlq as DeadLetterQueue<unknown>).push({ runId: 'run_1', stepIndex: 1 });
      await first.queue.enqueue({ id: 'leased', body: 'a' });
      await first.queue.enqueue({ id: 'waiting', body: 'b' });
      await first.queue.reserve(60_000);
      await first.close();

      await clock.advance(60_000);
      const second = await createPostgresStores({ connectionString: POSTGRES_URL, schema, clock, maxConnections: 2 });
      expect(await second.conversations.get('conv_1')).toEqual([{ role: 'user', content: 'hello' }]);
      expect(await second.ledger.putIfAbsent('run_1:0:0', 'again')).toEqual({ stored: false, value: { status: 'success' } });
      expect(await second.breakers.get('search')).toEqual({ state: 'open' });
      expect((await second.toolDlq.list()).map((record) => record.id)).toEqual([toolEntryId]);
      expect(await second.queue.reserve(60_000)).toMatchObject({ id: 'leased', deliveries: 2 });
      expect(await second.queue.reserve(60_000)).toMatchObject({ id: 'waiting', deliveries: 1 });
      await second.close();
    } finally {
      await dropSchema(admin, schema);
    }
  });

  it('never reserves one message twice across two pools, and loses no breaker update between them', async () => {
    const schema = uniqueName('toolrun_test_');
    const left = await createPostgresStores({ connectionString: POSTGRES_URL, schema, maxConnections: 5 });
    const right = await createPostgresStores({ connectionString: POSTGRES_URL, schema, maxConnections: 5 });
    try {
      for (let index = 0; index < 60; index++) await left.queue.enqueue({ id: `m${index}`, body: String(index) });
      const reservations = await Promise.all(Array.from({ length: 80 }, (_, index) => (index % 2 === 0 ? left : right).queue.reserve(60_000)));
      const ids = reservations.filter((delivery) => delivery !== undefined).map((delivery) => delivery.id);
      expect(ids).toHaveLength(60);
      expect(new Set(ids).size).toBe(60);
      const increment = (current: number | undefined) => (current ?? 0) + 1;
      await Promise.all(Array.from({ length: 40 }, (_, index) => (index % 2 === 0 ? left : right).breakers.update<number>('tool', increment)));
      expect(await right.breakers.get('tool')).toBe(40);
    } finally {
      await left.close();
      await right.close();
      await dropSchema(admin, schema);
    }
  });

  it('pushes once per key, even after the first entry was removed, and lists pending queue messages in order', async () => {
    const schema = uniqueName('toolrun_test_');
    const stores = await createPostgresStores({ pool: admin, schema });
    try {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, index) => (stores.messageDlq as DeadLetterQueue<unknown>).pushOnce('message:m1', { writer: index })),
      );
      expect(results.filter((result) => result.added)).toHaveLength(1);
      expect(new Set(results.map((result) => result.id)).size).toBe(1);
      expect(await stores.messageDlq.size()).toBe(1);
      expect(await (stores.toolDlq as DeadLetterQueue<unknown>).pushOnce('message:m1', 'other queue')).toMatchObject({ added: true });
      await stores.messageDlq.remove(results[0]!.id);
      expect(await (stores.messageDlq as DeadLetterQueue<unknown>).pushOnce('message:m1', 'late duplicate')).toEqual({ id: results[0]!.id, added: false });
      expect(await stores.messageDlq.size()).toBe(0);

      for (const id of ['a', 'b', 'c', 'd']) await stores.queue.enqueue({ id, body: `body ${id}` });
      await stores.queue.reserve(60_000);
      await stores.queue.ack('b');
      const pending = await stores.queue.pending();
      expect(pending.map((message) => [message.id, message.body])).toEqual([
        ['a', 'body a'],
        ['c', 'body c'],
        ['d', 'body d'],
      ]);
      expect((await stores.queue.pending({ afterSequence: pending[0]!.sequence, limit: 1 })).map((message) => message.id)).toEqual(['c']);
      // past nine messages, sequences still order as numbers; ids and bodies come back exactly
      const more = Array.from({ length: 10 }, (_, index) => `e${index}`);
      for (const id of more) await stores.queue.enqueue({ id, body: `body ${id}` });
      await stores.queue.enqueue({ id: 'nul\u0000\ud800', body: '{"input":"\u0000"}' });
      const all = await stores.queue.pending();
      expect(all.map((message) => message.id)).toEqual(['a', 'c', 'd', ...more, 'nul\u0000\ud800']);
      expect(all.at(-1)?.body).toBe('{"input":"\u0000"}');
      expect(all.map((message) => message.sequence)).toEqual([...all.map((message) => message.sequence)].sort((left, right) => left - right));
    } finally {
      await stores.close();
      await dropSchema(admin, schema);
    }
  });

  it('takes rows written by hand: dead letters count in bytes(), leases stay leases, claims work', async () => {
    const schema = uniqueName('toolrun_test_');
    const clock = createFakeClock();
    try {
      await migratePostgresSchema(admin, schema, clock.now());
      const entries = [
        { kind: 'message', rawBody: 'Grüße 東京 🚀' },
        { runId: 'run_1', stepIndex: 2 },
      ];
      await admin.query(`INSERT INTO "${schema}".dead_letters (queue, entry, added_at_ms) VALUES ('message', $1, $3), ('tool', $2, $3)`, [
        JSON.stringify(entries[0]),
        JSON.stringify(entries[1]),
        clock.now(),
      ]);
      await admin.query(
        `INSERT INTO "${schema}".queue_messages (id, body, enqueued_at_ms, deliveries, lease_until_ms) VALUES ('leased', 'a', $1, 1, $2), ('waiting', 'b', $1, 0, NULL)`,
        [clock.now(), clock.now() + 60_000],
      );
      const stores = await createPostgresStores({ pool: admin, schema, clock });
      try {
        const versions = await admin.query(`SELECT version FROM "${schema}".schema_version ORDER BY version`);
        expect(versions.rows).toEqual([{ version: POSTGRES_SCHEMA_VERSION }]);
        const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');
        expect(await stores.messageDlq.bytes()).toBe(jsonBytes(entries[0]));
        expect(await stores.toolDlq.bytes()).toBe(jsonBytes(entries[1]));
        await (stores.toolDlq as DeadLetterQueue<unknown>).push({ more: 'é' });
        expect(await stores.toolDlq.bytes()).toBe(jsonBytes(entries[1]) + jsonBytes({ more: 'é' }));
        expect((await stores.messageDlq.list()).map((record) => record.entry)).toEqual([entries[0]]);
        expect(await stores.queue.extendLease('leased', 1, 60_000)).toBe(true);
        expect(await stores.queue.reserve(60_000)).toMatchObject({ id: 'waiting', body: 'b', deliveries: 1 });
        await clock.advance(60_000);
        expect(await stores.queue.reserve(60_000)).toMatchObject({ id: 'leased', body: 'a', deliveries: 2 });
        expect(await stores.claims.acquire('run:run_1', 'drain-a', 60_000)).toBe(true);
        expect(await stores.claims.acquire('run:run_1', 'drain-b', 60_000)).toBe(false);
      } finally {
        await stores.close();
      }
    } finally {
      await dropSchema(admin, schema);
    }
  });

  it('keeps dead_letter_totals right for deletes and updates by hand, and for a purge of many entries', async () => {
    const schema = uniqueName('toolrun_test_');
    const stores = await createPostgresStores({ pool: admin, schema });
    try {
      await (stores.toolDlq as DeadLetterQueue<unknown>).push('a');
      await (stores.toolDlq as DeadLetterQueue<unknown>).push('bb');
      await admin.query(`DELETE FROM "${schema}".dead_letters WHERE entry = '"a"'`);
      await admin.query(`UPDATE "${schema}".dead_letters SET entry = '"cccc"'`);
      expect(await stores.toolDlq.bytes()).toBe(6);
      await Promise.all(Array.from({ length: 200 }, (_, index) => (stores.toolDlq as DeadLetterQueue<unknown>).push({ index, text: 'é'.repeat(index) })));
      expect(await stores.toolDlq.bytes()).toBe(
        6 +
          Array.from({ length: 200 }, (_, index) => Buffer.byteLength(JSON.stringify({ index, text: 'é'.repeat(index) }), 'utf8')).reduce(
            (sum, bytes) => sum + bytes,
            0,
          ),
      );
      expect(await stores.toolDlq.purge()).toBe(201);
      expect(await stores.toolDlq.bytes()).toBe(0);
    } finally {
      await stores.close();
      await dropSchema(admin, schema);
    }
  });

  it('deletes ended claims on later acquires, and grants a claim to exactly one of many acquirers across two pools', async () => {
    const schema = uniqueName('toolrun_test_');
    const clock = createFakeClock();
    const left = await createPostgresStores({ connectionString: POSTGRES_URL, schema, clock, maxConnections: 5 });
    const right = await createPostgresStores({ connectionString: POSTGRES_URL, schema, clock, maxConnections: 5 });
    const countRows = async () => Number((await admin.query(`SELECT COUNT(*) AS count FROM "${schema}".claims`)).rows[0].count);
    try {
      for (let index = 0; index < 150; index++) expect(await left.claims.acquire(`run:${index}`, 'crashed', 1_000)).toBe(true);
      expect(await countRows()).toBe(150);
      await clock.advance(1_000);
      await left.claims.acquire('run:new-1', 'worker', 1_000);
      await right.claims.acquire('run:new-2', 'worker', 1_000);
      expect(await countRows()).toBe(2);

      const results = await Promise.all(
        Array.from({ length: 30 }, (_, index) => (index % 2 === 0 ? left : right).claims.acquire('run:race', `holder-${index}`, 60_000)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect((await right.claims.get('run:race'))?.holder).toBe(`holder-${results.indexOf(true)}`);
      // a fractional lease is rounded up to a whole millisecond, not refused by the bigint column
      expect(await left.claims.acquire('run:fraction', 'worker', 1_000.5)).toBe(true);
      expect((await left.claims.get('run:fraction'))?.leaseUntil).toBe(new Date(clock.now() + 1_001).toISOString());
    } finally {
      await left.close();
      await right.close();
      await dropSchema(admin, schema);
    }
  });

  it('rejects a schema name that is not a plain identifier, and both or neither connection option', async () => {
    expect((await rejection(createPostgresStores({ pool: admin, schema: 'x"; DROP TABLE y; --' }))).code).toBe('INVALID_OPTIONS');
    expect((await rejection(createPostgresStores({ pool: admin, schema: 'Upper' }))).code).toBe('INVALID_OPTIONS');
    expect((await rejection(createPostgresStores({ schema: 'toolrun' } as never))).code).toBe('INVALID_OPTIONS');
  });

  it('throws STORE_UNAVAILABLE with the cause when the server cannot be reached', async () => {
    const error = await rejection(createPostgresStores({ connectionString: 'postgres://postgres@127.0.0.1:1/test', schema: 'toolrun' }));
    expect(error.code).toBe('STORE_UNAVAILABLE');
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('throws STORE_UNAVAILABLE when the schema is newer, and leaves it alone', async () => {
    const schema = uniqueName('toolrun_test_');
    try {
      await admin.query(`CREATE SCHEMA "${schema}"`);
      await admin.query(`CREATE TABLE "${schema}".schema_version (version integer PRIMARY KEY, applied_at text NOT NULL)`);
      await admin.query(`INSERT INTO "${schema}".schema_version VALUES ($1, '2030-01-01T00:00:00.000Z')`, [POSTGRES_SCHEMA_VERSION + 1]);
      expect((await rejection(createPostgresStores({ pool: admin, schema }))).code).toBe('STORE_UNAVAILABLE');
      const { rows } = await admin.query(`SELECT to_regclass($1) AS table`, [`"${schema}".queue_messages`]);
      expect(rows).toEqual([{ table: null }]);
    } finally {
      await dropSchema(admin, schema);
    }
  });

  it('refuses a schema older than the baseline, naming the versions, and leaves it alone', async () => {
    const schema = uniqueName('toolrun_test_');
    try {
      await admin.query(`CREATE SCHEMA "${schema}"`);
      await admin.query(`CREATE TABLE "${schema}".schema_version (version integer PRIMARY KEY, applied_at text NOT NULL)`);
      await admin.query(`INSERT INTO "${schema}".schema_version VALUES (1, '2026-01-01T00:00:00.000Z'), (11, '2026-01-01T00:00:00.000Z')`);
      await admin.query(`CREATE TABLE "${schema}".runs (run_id text PRIMARY KEY, checkpoint text NOT NULL)`);
      await admin.query(`INSERT INTO "${schema}".runs VALUES ('run-1', '{}')`);
      const error = await rejection(createPostgresStores({ pool: admin, schema }));
      expect(error).toBeInstanceOf(SchemaVersionError);
      expect(error).toMatchObject({
        code: 'STORE_UNAVAILABLE',
        backend: 'PostgreSQL',
        foundVersion: 11,
        supportedVersions: { oldest: POSTGRES_SCHEMA_VERSION, newest: POSTGRES_SCHEMA_VERSION },
      });
      expect(error.message).toContain(`"${schema}" has schema version 11; this toolrun opens version ${POSTGRES_SCHEMA_VERSION} only`);
      expect(error.message).toContain(`DROP SCHEMA "${schema}" CASCADE`);
      expect((await admin.query(`SELECT version FROM "${schema}".schema_version ORDER BY version`)).rows).toEqual([{ version: 1 }, { version: 11 }]);
      expect((await admin.query(`SELECT run_id FROM "${schema}".runs`)).rows).toEqual([{ run_id: 'run-1' }]);
      expect((await admin.query(`SELECT to_regclass($1) AS table`, [`"${schema}".queue_messages`])).rows).toEqual([{ table: null }]);
    } finally {
      await dropSchema(admin, schema);
    }
  });

  it('can be closed twice', async () => {
    const schema = uniqueName('toolrun_test_');
    const stores = await createPostgresStores({ connectionString: POSTGRES_URL, schema, maxConnections: 1 });
    await stores.close();
    await stores.close();
    await dropSchema(admin, schema);
  });
});
