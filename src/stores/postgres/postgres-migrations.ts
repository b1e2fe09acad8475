import { ToolrunError } from '../../core/toolrun-error.ts';
import { inTransaction, quoteSchema, type PostgresPoolLike } from './postgres-client.ts';

/** One step of the schema; applied once, in order, inside the migration transaction. */
interface Migration {
  version: number;
  /** SQL with `$schema` where the quoted schema name goes. */
  sql: string;
}

/**
 * The schema, as migrations. Times a store compares (TTL, leases) are `bigint` epoch ms from the
 * injected clock; JSON values are `text` holding `JSON.stringify` output (not `jsonb`, which
 * reorders keys and rejects `\u0000`: what goes in comes back exactly).
 */
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE $schema.conversations (
        ref           text PRIMARY KEY,
        messages      text NOT NULL,              -- JSON array
        expires_at_ms bigint NOT NULL
      );
      CREATE INDEX conversations_by_expiry ON $schema.conversations (expires_at_ms);

      CREATE TABLE $schema.runs (
        run_id     text PRIMARY KEY,
        message_id text NOT NULL,
        status     text NOT NULL,
        updated_at text NOT NULL,                 -- ISO-8601, from the checkpoint
        checkpoint text NOT NULL                  -- JSON RunCheckpoint
      );
      CREATE INDEX runs_by_status ON $schema.runs (status);

      CREATE TABLE $schema.ledger (
        key            text PRIMARY KEY,          -- runId:stepIndex:callIndex
        value          text NOT NULL,             -- JSON
        recorded_at_ms bigint NOT NULL
      );

      CREATE TABLE $schema.breakers (
        key           text PRIMARY KEY,
        state         text,                       -- JSON; NULL: a row created only to be locked
        updated_at_ms bigint NOT NULL
      );

      CREATE SEQUENCE $schema.dead_letter_ids;
      CREATE TABLE $schema.dead_letters (
        id          bigint PRIMARY KEY DEFAULT nextval('$schema.dead_letter_ids'),  -- never reused
        queue       text NOT NULL,                -- 'message' | 'tool'
        entry       text NOT NULL,                -- JSON
        added_at_ms bigint NOT NULL
      );
      ALTER SEQUENCE $schema.dead_letter_ids OWNED BY $schema.dead_letters.id;
      CREATE INDEX dead_letters_by_queue ON $schema.dead_letters (queue, id);

      -- keys of pushOnce: kept when the entry is removed, so a late duplicate is still recognised
      CREATE TABLE $schema.dead_letter_keys (
        queue    text NOT NULL,
        key      text NOT NULL,
        entry_id bigint NOT NULL,
        PRIMARY KEY (queue, key)
      );

      CREATE TABLE $schema.queue_messages (
        seq            bigserial PRIMARY KEY,     -- delivery (FIFO) order
        id             text NOT NULL UNIQUE,
        body           text NOT NULL,             -- emptied on ack
        enqueued_at_ms bigint NOT NULL,
        deliveries     integer NOT NULL DEFAULT 0,
        lease_until_ms bigint,                    -- NULL: waiting
        acked_at_ms    bigint                     -- NULL: waiting or leased
      );
      CREATE INDEX queue_messages_pending ON $schema.queue_messages (seq) WHERE acked_at_ms IS NULL;
    `,
  },
];

/** The schema version this code writes. */
export const POSTGRES_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/**
 * Brings `schema` to {@link POSTGRES_SCHEMA_VERSION}: creates the schema and
 * `schema_version (version, applied_at)` when missing and applies every newer migration, in one
 * transaction that first takes a transaction-scoped advisory lock on the schema's name. Several
 * processes starting at once therefore migrate one after the other: each migration is applied once,
 * and a process that waited finds the work done.
 *
 * @throws ToolrunError `STORE_UNAVAILABLE` when the schema was written by a newer toolrun;
 * the driver's error when the server cannot be reached or refuses a statement.
 */
export async function migratePostgresSchema(pool: PostgresPoolLike, schema: string, nowMs: number): Promise<void> {
  const quoted = quoteSchema(schema);
  await inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`toolrun:migrate:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${quoted}.schema_version (version integer PRIMARY KEY, applied_at text NOT NULL)`);
    const { rows } = await client.query<{ version: number | null }>(`SELECT MAX(version) AS version FROM ${quoted}.schema_version`);
    const current = rows[0]?.version ?? 0;
    if (current > POSTGRES_SCHEMA_VERSION) {
      throw new ToolrunError(
        'STORE_UNAVAILABLE',
        `the PostgreSQL schema ${schema} has version ${current}, newer than the ${POSTGRES_SCHEMA_VERSION} this toolrun knows; upgrade toolrun`,
      );
    }
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      await client.query(migration.sql.replaceAll('$schema', quoted));
      await client.query(`INSERT INTO ${quoted}.schema_version (version, applied_at) VALUES ($1, $2)`, [migration.version, new Date(nowMs).toISOString()]);
    }
  });
}
