/**
 * The baseline schemas against the databases the migration chains wrote before them
 * (`test/fixtures/schema-main/`: dumps of a SQLite file and a PostgreSQL schema that toolrun wrote
 * at SQLite version 9 and PostgreSQL version 12, with entries in every table): the baseline
 * creates the same catalog, and such a database opens with the current code, every entry kept and
 * read back through the store API.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { FailureLog } from '../src/ground/ports/failure-log.ts';
import type { Stores } from '../src/ground/ports/stores.ts';
import { createPostgresFailureLog } from '../src/stores/postgres/postgres-failure-log.ts';
import { migratePostgresSchema, POSTGRES_SCHEMA_VERSION } from '../src/stores/postgres/postgres-migrations.ts';
import { createPostgresStores } from '../src/stores/postgres/postgres-stores.ts';
import { createSqliteFailureLog } from '../src/stores/sqlite/sqlite-failure-log.ts';
import { migrateSqliteSchema, SQLITE_SCHEMA_VERSION } from '../src/stores/sqlite/sqlite-migrations.ts';
import { createSqliteStores } from '../src/stores/sqlite/sqlite-stores.ts';
import { createFakeClock, type FakeClock } from '../src/testing/fake-clock.ts';
import { createTestPool, dropSchema, uniqueName } from './fixtures/distributed-services.ts';
import * as written from './fixtures/schema-main/entries.ts';

const FIXTURES = new URL('./fixtures/schema-main/', import.meta.url);
const SQLITE_DUMP = readFileSync(new URL('sqlite.sql', FIXTURES), 'utf8');
const POSTGRES_DUMP = readFileSync(new URL('postgres.sql', FIXTURES), 'utf8');
/** The schema the PostgreSQL dump was taken of; each test loads it under a name of its own. */
const DUMPED_SCHEMA = 'toolrun_schema_fixture';

const directory = mkdtempSync(join(tmpdir(), 'toolrun-schema-baseline-'));
let fileCounter = 0;
const freshPath = () => join(directory, `stores-${++fileCounter}.db`);
const admin = createTestPool({ max: 2 });
afterAll(async () => {
  await admin.end();
  rmSync(directory, { recursive: true, force: true });
});

/** SQL text with comments dropped and whitespace, identifier quotes and spacing around punctuation normalised. */
function normalizeSql(sql: string): string {
  return sql
    .replace(/--[^\n]*/g, ' ')
    .replace(/"(\w+)"/g, '$1')
    .replace(/\s+/g, ' ')
    .replace(/\s*([(),;])\s*/g, '$1')
    .trim();
}

/** The catalog of a SQLite file: every object's normalised SQL and every table's and index's columns. */
function sqliteCatalog(database: BetterSqlite3.Database): unknown {
  const objects = database.prepare('SELECT type, name, tbl_name AS tableName, sql FROM sqlite_master ORDER BY type, name').all() as Array<{
    type: string;
    name: string;
    tableName: string;
    sql: string | null;
  }>;
  return objects.map((object) => ({
    ...object,
    sql: object.sql === null ? null : normalizeSql(object.sql),
    columns:
      object.type === 'table'
        ? database.pragma(`table_xinfo(${object.name})`)
        : object.type === 'index'
          ? database.pragma(`index_xinfo(${object.name})`)
          : undefined,
  }));
}

/** The catalog of a PostgreSQL schema, with its name replaced by `$schema` and function bodies' comments and whitespace normalised. */
async function postgresCatalog(schema: string): Promise<unknown> {
  const named = (text: string) => text.replaceAll(`"${schema}"`, '$schema').replaceAll(schema, '$schema');
  const query = async (sql: string) => (await admin.query<Record<string, unknown>>(sql, [schema])).rows.map((row) => JSON.parse(named(JSON.stringify(row))));
  return {
    columns: await query(
      `SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS not_null,
          pg_get_expr(d.adbin, d.adrelid) AS default, a.attgenerated AS generated,
          rank() OVER (PARTITION BY c.relname ORDER BY a.attnum) AS position
        FROM pg_attribute AS a JOIN pg_class AS c ON c.oid = a.attrelid JOIN pg_namespace AS n ON n.oid = c.relnamespace
        LEFT JOIN pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE n.nspname = $1 AND c.relkind IN ('r', 'S') AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY 1, a.attnum`,
    ),
    relations: await query(
      `SELECT c.relname AS name, c.relkind AS kind, c.relpersistence AS persistence FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 ORDER BY 1`,
    ),
    constraints: await query(
      `SELECT r.conrelid::regclass::text AS table, r.conname AS name, pg_get_constraintdef(r.oid) AS definition
        FROM pg_constraint AS r JOIN pg_namespace AS n ON n.oid = r.connamespace WHERE n.nspname = $1 ORDER BY 1, 2`,
    ),
    indexes: await query(`SELECT indexname AS name, indexdef AS definition FROM pg_indexes WHERE schemaname = $1 ORDER BY 1`),
    sequenceOwners: await query(
      `SELECT s.relname AS sequence, t.relname AS table, a.attname AS column, d.deptype AS dependency
        FROM pg_depend AS d JOIN pg_class AS s ON s.oid = d.objid JOIN pg_class AS t ON t.oid = d.refobjid
        JOIN pg_attribute AS a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid JOIN pg_namespace AS n ON n.oid = s.relnamespace
        WHERE n.nspname = $1 AND s.relkind = 'S' AND d.refclassid = 'pg_class'::regclass ORDER BY 1`,
    ),
    functions: (
      await query(
        `SELECT p.proname AS name, pg_get_function_identity_arguments(p.oid) AS arguments, pg_get_function_result(p.oid) AS result,
            p.prolang::regproc::text AS language_handler, p.provolatile AS volatility, p.prosrc AS body
          FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace WHERE n.nspname = $1 ORDER BY 1, 2`,
      )
    ).map((row: { body: string }) => ({ ...row, body: normalizeSql(row.body) })),
    triggers: await query(
      `SELECT t.tgname AS name, pg_get_triggerdef(t.oid) AS definition FROM pg_trigger AS t JOIN pg_class AS c ON c.oid = t.tgrelid
        JOIN pg_namespace AS n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND NOT t.tgisinternal ORDER BY 1`,
    ),
  };
}

/** Loads the dump of the SQLite file into a new file, returning its path. */
function loadSqliteDump(): string {
  const path = freshPath();
  const database = new BetterSqlite3(path);
  database.exec(SQLITE_DUMP);
  database.close();
  return path;
}

/** Loads the dump of the PostgreSQL schema under a new schema name, returning it. */
async function loadPostgresDump(): Promise<string> {
  const schema = uniqueName('toolrun_fixture_');
  const client = await admin.connect();
  try {
    await client.query(POSTGRES_DUMP.replaceAll(DUMPED_SCHEMA, schema));
  } finally {
    client.release(true); // the dump sets the session's search_path
  }
  return schema;
}

/** Rows in an order of their own (the count methods promise none). */
const sorted = <T>(rows: readonly T[]): string[] => rows.map((row) => JSON.stringify(row)).sort();

/** Reads back through the store API every entry the fixture's writer put in the stores. */
async function expectEveryEntry(stores: Stores, failureLog: FailureLog, clock: FakeClock, fresh: Stores): Promise<void> {
  const chunked = written.CHUNKED_CONVERSATION;
  expect(await stores.conversations.get(chunked.ref)).toEqual(chunked.messages);
  expect(await stores.conversations.get(written.EXACT_CONVERSATION.ref)).toEqual(written.EXACT_CONVERSATION.messages);
  for (const run of written.RUNS) expect(await stores.runs.get(run.runId)).toEqual(run);
  for (const row of written.LEDGER) expect(await stores.ledger.get(row.key)).toEqual(row.value);
  for (const breaker of written.BREAKERS) expect(await stores.breakers.get(breaker.key)).toEqual(breaker.state);

  // the held claim is kept (another holder cannot take it); the finished run's claim was released
  expect((await stores.claims.get(written.CLAIM.key))?.holder).toBe(written.CLAIM.holder);
  expect(await stores.claims.acquire(written.CLAIM.key, 'worker-z', 60_000)).toBe(false);
  expect(await stores.claims.get('run:run-chunked')).toBeUndefined();

  // the dead letters, their keys (a removed entry's too), totals and counts: as the same pushes
  // give in a store the current code created
  const messages = await stores.messageDlq.list();
  const tools = await stores.toolDlq.list();
  expect(messages.map((record) => record.entry)).toEqual(written.MESSAGE_DEAD_LETTERS);
  expect(tools.map((record) => record.entry)).toEqual(written.TOOL_DEAD_LETTERS.slice(0, -1));
  expect(await stores.messageDlq.pushOnce(written.MESSAGE_DEAD_LETTER_KEY, written.MESSAGE_DEAD_LETTERS[1]!)).toEqual({ id: messages[0]!.id, added: false });
  const removedKey = await stores.toolDlq.pushOnce(written.REMOVED_TOOL_DEAD_LETTER_KEY, written.TOOL_DEAD_LETTERS[0]!);
  expect(removedKey.added).toBe(false);
  expect(await stores.toolDlq.get(removedKey.id)).toBeUndefined();
  await fresh.messageDlq.pushOnce(written.MESSAGE_DEAD_LETTER_KEY, written.MESSAGE_DEAD_LETTERS[0]!);
  await fresh.messageDlq.push(written.MESSAGE_DEAD_LETTERS[1]!);
  for (const entry of written.TOOL_DEAD_LETTERS.slice(0, -1)) await fresh.toolDlq.push(entry);
  for (const queue of ['messageDlq', 'toolDlq'] as const) {
    const [kept, same] = [stores[queue], fresh[queue]];
    expect(await kept.size()).toBe(await same.size());
    expect(await kept.bytes()).toBe(await same.bytes());
    expect(sorted(await kept.countByCause!())).toEqual(sorted(await same.countByCause!()));
    expect(sorted(await kept.countByGroup!())).toEqual(sorted(await same.countByGroup!()));
  }
  expect((await stores.toolDlq.list({ filter: { toolName: 'book_train' } })).map((record) => record.entry)).toEqual([written.TOOL_DEAD_LETTERS[1]]);
  expect((await stores.toolDlq.list({ filter: { code: 'RATE_LIMITED' } })).map((record) => record.entry)).toEqual([written.TOOL_DEAD_LETTERS[2]]);
  // ids are never reused: a new entry comes after the removed one
  const added = await stores.toolDlq.push(written.TOOL_DEAD_LETTERS[0]!);
  expect(Number(added)).toBeGreaterThan(Number(removedKey.id));

  // the queue: the waiting message now, the leased one not, the delayed one once its delay is over
  const queue = written.QUEUE_MESSAGES;
  expect(await stores.queue.size()).toBe(3);
  expect(await stores.queue.reserve(60_000)).toMatchObject({ id: queue.waiting.id, body: queue.waiting.body, deliveries: 1 });
  expect(await stores.queue.reserve(60_000)).toBeUndefined();
  clock.advance(queue.delayed.delayMs);
  expect(await stores.queue.reserve(60_000)).toMatchObject({ id: queue.delayed.id, body: queue.delayed.body });
  await stores.queue.ack(queue.delayed.id);

  expect(await failureLog.list()).toEqual(written.FAILURE_LOG);
  expect(await failureLog.findByTraceId!('trace-1')).toEqual(written.FAILURE_LOG[0]);
}

describe('the SQLite baseline', () => {
  it('creates the catalog the migration chain left at the same version', () => {
    const fresh = new BetterSqlite3(':memory:');
    migrateSqliteSchema(fresh, written.WRITTEN_AT_MS);
    createSqliteFailureLog(fresh); // its table, as every file with a failure log has it
    const chained = new BetterSqlite3(loadSqliteDump());
    try {
      expect(sqliteCatalog(fresh)).toEqual(sqliteCatalog(chained));
      expect(fresh.prepare('SELECT version FROM schema_version').all()).toEqual([{ version: SQLITE_SCHEMA_VERSION }]);
    } finally {
      fresh.close();
      chained.close();
    }
  });

  it('opens a file the migration chain wrote with every entry kept, and migrates nothing', async () => {
    const path = loadSqliteDump();
    const clock = createFakeClock(written.WRITTEN_AT_MS + 60_000);
    const stores = createSqliteStores({ path, clock });
    const fresh = createSqliteStores({ path: ':memory:', clock });
    try {
      const versions = stores.database.prepare('SELECT version, applied_at AS appliedAt FROM schema_version ORDER BY version').all();
      expect(versions).toEqual(Array.from({ length: SQLITE_SCHEMA_VERSION }, (_, index) => ({ version: index + 1, appliedAt: '2026-12-01T12:00:00.000Z' })));
      await expectEveryEntry(stores, createSqliteFailureLog(stores.database), clock, fresh);
    } finally {
      await stores.close();
      await fresh.close();
    }
  });

  it('gives a file of the baseline version that has no failure log its table when it opens, every entry kept and no version recorded', async () => {
    const path = loadSqliteDump();
    const beforeTable = new BetterSqlite3(path);
    beforeTable.exec('DROP TABLE failure_log'); // a file no failure log was opened on, as main wrote them before the table joined the baseline
    beforeTable.close();
    const clock = createFakeClock(written.WRITTEN_AT_MS + 60_000);
    const stores = createSqliteStores({ path, clock });
    const fresh = new BetterSqlite3(':memory:');
    try {
      migrateSqliteSchema(fresh, written.WRITTEN_AT_MS);
      expect(sqliteCatalog(stores.database)).toEqual(sqliteCatalog(fresh));
      const versions = stores.database.prepare('SELECT version, applied_at AS appliedAt FROM schema_version ORDER BY version').all();
      expect(versions).toEqual(Array.from({ length: SQLITE_SCHEMA_VERSION }, (_, index) => ({ version: index + 1, appliedAt: '2026-12-01T12:00:00.000Z' })));
      expect((await stores.messageDlq.list()).map((record) => record.entry)).toEqual(written.MESSAGE_DEAD_LETTERS);
      for (const run of written.RUNS) expect(await stores.runs.get(run.runId)).toEqual(run);
      const failureLog = createSqliteFailureLog(stores.database);
      await failureLog.append(written.FAILURE_LOG[0]!);
      expect(await failureLog.list()).toEqual([written.FAILURE_LOG[0]]);
      expect(await failureLog.findByTraceId!('trace-1')).toEqual(written.FAILURE_LOG[0]);
    } finally {
      await stores.close();
      fresh.close();
    }
  });
});

describe('the PostgreSQL baseline', () => {
  it('creates the catalog the migration chain left at the same version', async () => {
    const fresh = uniqueName('toolrun_baseline_');
    const chained = await loadPostgresDump();
    try {
      await migratePostgresSchema(admin, fresh, written.WRITTEN_AT_MS);
      expect(await postgresCatalog(fresh)).toEqual(await postgresCatalog(chained));
      expect((await admin.query(`SELECT version FROM "${fresh}".schema_version`)).rows).toEqual([{ version: POSTGRES_SCHEMA_VERSION }]);
    } finally {
      await dropSchema(admin, fresh);
      await dropSchema(admin, chained);
    }
  });

  it('opens a schema the migration chain wrote with every entry kept, and migrates nothing', async () => {
    const schema = await loadPostgresDump();
    const freshSchema = uniqueName('toolrun_baseline_');
    const clock = createFakeClock(written.WRITTEN_AT_MS + 60_000);
    const stores = await createPostgresStores({ pool: admin, schema, clock });
    const fresh = await createPostgresStores({ pool: admin, schema: freshSchema, clock });
    try {
      const { rows } = await admin.query(`SELECT version, applied_at AS "appliedAt" FROM "${schema}".schema_version ORDER BY version`);
      expect(rows).toEqual(Array.from({ length: POSTGRES_SCHEMA_VERSION }, (_, index) => ({ version: index + 1, appliedAt: '2026-12-01T12:00:00.000Z' })));
      await expectEveryEntry(stores, createPostgresFailureLog(admin, { schema }), clock, fresh);
    } finally {
      await stores.close();
      await fresh.close();
      await dropSchema(admin, schema);
      await dropSchema(admin, freshSchema);
    }
  });
});
