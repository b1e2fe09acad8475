import { latestSchemaVersion, migrationsToApply, schemaVersionTableSql, type SchemaHistory } from '../schema-migrations.ts';
import { inTransaction, quoteSchema, type PostgresPoolLike } from './postgres-client.ts';
import { GROUP_KEYS, GROUP_NAMES } from '../dead-letter-group-keys.ts';

const GROUP_ENCODED = GROUP_KEYS.map(([name, column]) => `COALESCE('+' || ${column}, '-') AS ${name}`).join(', ');
const GROUP_BY = GROUP_KEYS.map((_, index) => index + 2).join(', ');
const GROUP_MATCH = GROUP_KEYS.map(([name]) => `counts.${name} = gone.${name}`).join(' AND ');

/**
 * The schema, whole: what an empty schema gets (`$schema` stands for the quoted schema name).
 *
 * Times a store compares (TTL, leases, claims) are `bigint` epoch ms from the injected clock; JSON
 * values are `text` holding `JSON.stringify` output (not `jsonb`, which reorders keys and rejects
 * `\u0000`: what goes in comes back exactly, since `JSON.stringify` escapes `\u0000` and lone
 * surrogates); ids, keys and bodies are `text` as `toStoredText` writes them (the string itself
 * unless it holds `\u0000`, which `text` cannot, or a lone surrogate).
 *
 * The writes that must be one statement (one round trip, one transaction) are functions:
 * `conversation_replace` (put), `conversation_delete`, `commit_step` (a step's chunk, ledger rows
 * and checkpoint; the overload with a claim also releases it), `sweep_conversations` (a batch of
 * expired conversations) and `claim_run` (a run's claim and its checkpoint).
 */
const BASELINE = `
  -- A conversation: one small row for its lock, its expiry sweep and inspection, and its messages
  -- as append-only chunks, one per write: the JSON array of the messages from start_index to
  -- end_index (exclusive), with the conversation's expiry as of that write (the last chunk's is the
  -- conversation's). Every writer locks the conversations row before it touches the chunks; its
  -- expires_at_ms is refreshed lazily (at most min(ttl / 100, 5 minutes) behind the last chunk's).
  CREATE TABLE $schema.conversations (
    ref           text PRIMARY KEY,
    expires_at_ms bigint NOT NULL
  );
  CREATE INDEX conversations_by_expiry ON $schema.conversations (expires_at_ms);
  CREATE TABLE $schema.conversation_messages (
    ref           text NOT NULL,
    start_index   integer NOT NULL,           -- index in the conversation of the chunk's first message
    end_index     integer NOT NULL,           -- start_index + the chunk's message count (-1: unknown, never appended to)
    expires_at_ms bigint NOT NULL,            -- the conversation's expiry as of this write
    messages      text NOT NULL,              -- JSON array
    PRIMARY KEY (ref, start_index)
  );

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

  CREATE TABLE $schema.claims (
    key            text PRIMARY KEY,
    holder         text NOT NULL,
    lease_until_ms bigint NOT NULL            -- epoch ms of the injected clock; over when <= now
  );
  CREATE INDEX claims_by_lease_end ON $schema.claims (lease_until_ms);

  CREATE TABLE $schema.queue_messages (
    seq            bigserial PRIMARY KEY,     -- delivery (FIFO) order
    id             text NOT NULL UNIQUE,
    body           text NOT NULL,             -- emptied on ack
    enqueued_at_ms bigint NOT NULL,
    deliveries     integer NOT NULL DEFAULT 0,
    lease_until_ms bigint,                    -- NULL: waiting
    acked_at_ms    bigint,                    -- NULL: waiting or leased
    delayed        boolean NOT NULL DEFAULT false  -- lease_until_ms ends a release delay (waiting, not leased)
  );
  CREATE INDEX queue_messages_pending ON $schema.queue_messages (seq) WHERE acked_at_ms IS NULL;

  -- The dead-letter queues. The cause and group fields of an entry (DeadLetterFilter,
  -- deadLetterGroupFields) are columns the store fills on every insert, each cause indexed with the
  -- queue and the id, so a filtered page is an index range read in id order: plain columns, not
  -- expression indexes on entry::jsonb, which refuses \`\\u0000\` and lone surrogates.
  CREATE SEQUENCE $schema.dead_letter_ids;
  CREATE TABLE $schema.dead_letters (
    id                  bigint PRIMARY KEY DEFAULT nextval('$schema.dead_letter_ids'),  -- never reused
    queue               text NOT NULL,        -- 'message' | 'tool'
    entry               text NOT NULL,        -- JSON
    added_at_ms         bigint NOT NULL,
    entry_bytes         bigint NOT NULL DEFAULT 0,  -- UTF-8 length of entry (trigger dead_letters_measure)
    cause_kind          text,
    cause_tool_name     text,
    cause_model_name    text,
    cause_reason        text,
    cause_code          text,
    cause_error_kind    text,
    cause_error_status  text,                 -- the number's JSON text
    cause_field_path    text,
    cause_field_problem text,
    tokens_input        double precision NOT NULL DEFAULT 0,
    tokens_output       double precision NOT NULL DEFAULT 0
  );
  ALTER SEQUENCE $schema.dead_letter_ids OWNED BY $schema.dead_letters.id;
  CREATE INDEX dead_letters_by_queue ON $schema.dead_letters (queue, id);
  CREATE INDEX dead_letters_by_kind ON $schema.dead_letters (queue, cause_kind, id);
  CREATE INDEX dead_letters_by_tool_name ON $schema.dead_letters (queue, cause_tool_name, id);
  CREATE INDEX dead_letters_by_model_name ON $schema.dead_letters (queue, cause_model_name, id);
  CREATE INDEX dead_letters_by_reason ON $schema.dead_letters (queue, cause_reason, id);
  CREATE INDEX dead_letters_by_code ON $schema.dead_letters (queue, cause_code, id);

  -- keys of pushOnce: kept when the entry is removed, so a late duplicate is still recognised
  CREATE TABLE $schema.dead_letter_keys (
    queue    text NOT NULL,
    key      text NOT NULL,
    entry_id bigint NOT NULL,
    PRIMARY KEY (queue, key)
  );

  -- Running totals of each queue (size(), bytes()), entries per cause (countByCause) and per group
  -- with their tokens (countByGroup), kept by the statement-level triggers below in the same
  -- statement as every insert, delete and update of dead_letters, by hand too. Cause and group
  -- values are encoded as in GROUP_KEYS; a group that empties is deleted.
  CREATE TABLE $schema.dead_letter_totals (
    queue   text PRIMARY KEY,                 -- 'message' | 'tool'
    bytes   bigint NOT NULL,                  -- sum of entry_bytes
    entries bigint NOT NULL DEFAULT 0         -- rows of dead_letters with the queue
  );
  CREATE TABLE $schema.dead_letter_cause_counts (
    queue      text NOT NULL,
    kind       text NOT NULL,
    tool_name  text NOT NULL,
    model_name text NOT NULL,
    reason     text NOT NULL,
    code       text NOT NULL,
    entries    bigint NOT NULL,
    PRIMARY KEY (queue, kind, tool_name, model_name, reason, code)
  );
  CREATE TABLE $schema.dead_letter_group_counts (
    queue         text NOT NULL,
    kind          text NOT NULL,
    tool_name     text NOT NULL,
    model_name    text NOT NULL,
    reason        text NOT NULL,
    code          text NOT NULL,
    error_kind    text NOT NULL,
    error_status  text NOT NULL,
    field_path    text NOT NULL,
    field_problem text NOT NULL,
    entries       bigint NOT NULL,
    tokens_input  double precision NOT NULL,  -- sum of the entries' tokens_input
    tokens_output double precision NOT NULL,
    PRIMARY KEY (queue, ${GROUP_NAMES})
  );

  CREATE FUNCTION $schema.dead_letters_measure() RETURNS trigger LANGUAGE plpgsql AS $body$
  BEGIN
    NEW.entry_bytes := octet_length(convert_to(NEW.entry, 'UTF8'));
    RETURN NEW;
  END $body$;
  CREATE TRIGGER dead_letters_measure BEFORE INSERT OR UPDATE OF entry ON $schema.dead_letters
    FOR EACH ROW EXECUTE FUNCTION $schema.dead_letters_measure();

  -- the totals and the cause counts
  CREATE FUNCTION $schema.dead_letters_add_bytes() RETURNS trigger LANGUAGE plpgsql AS $body$
  BEGIN
    INSERT INTO $schema.dead_letter_totals AS totals (queue, bytes, entries)
      SELECT queue, SUM(entry_bytes), COUNT(*) FROM added GROUP BY queue
      ON CONFLICT (queue) DO UPDATE SET bytes = totals.bytes + excluded.bytes, entries = totals.entries + excluded.entries;
    INSERT INTO $schema.dead_letter_cause_counts AS counts (queue, kind, tool_name, model_name, reason, code, entries)
      SELECT queue, COALESCE('+' || cause_kind, '-'), COALESCE('+' || cause_tool_name, '-'), COALESCE('+' || cause_model_name, '-'),
        COALESCE('+' || cause_reason, '-'), COALESCE('+' || cause_code, '-'), COUNT(*)
      FROM added GROUP BY 1, 2, 3, 4, 5, 6
      ON CONFLICT (queue, kind, tool_name, model_name, reason, code) DO UPDATE SET entries = counts.entries + excluded.entries;
    RETURN NULL;
  END $body$;
  CREATE FUNCTION $schema.dead_letters_remove_bytes() RETURNS trigger LANGUAGE plpgsql AS $body$
  BEGIN
    UPDATE $schema.dead_letter_totals AS totals
      SET bytes = totals.bytes - removed_totals.bytes, entries = totals.entries - removed_totals.entries
      FROM (SELECT queue, SUM(entry_bytes) AS bytes, COUNT(*) AS entries FROM removed GROUP BY queue) AS removed_totals
      WHERE totals.queue = removed_totals.queue;
    UPDATE $schema.dead_letter_cause_counts AS counts SET entries = counts.entries - gone.entries
      FROM (
        SELECT queue, COALESCE('+' || cause_kind, '-') AS kind, COALESCE('+' || cause_tool_name, '-') AS tool_name,
          COALESCE('+' || cause_model_name, '-') AS model_name, COALESCE('+' || cause_reason, '-') AS reason,
          COALESCE('+' || cause_code, '-') AS code, COUNT(*) AS entries
        FROM removed GROUP BY 1, 2, 3, 4, 5, 6
      ) AS gone
      WHERE counts.queue = gone.queue AND counts.kind = gone.kind AND counts.tool_name = gone.tool_name
        AND counts.model_name = gone.model_name AND counts.reason = gone.reason AND counts.code = gone.code;
    DELETE FROM $schema.dead_letter_cause_counts WHERE entries <= 0;
    RETURN NULL;
  END $body$;
  CREATE TRIGGER dead_letters_add_bytes AFTER INSERT ON $schema.dead_letters
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION $schema.dead_letters_add_bytes();
  CREATE TRIGGER dead_letters_remove_bytes AFTER DELETE ON $schema.dead_letters
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION $schema.dead_letters_remove_bytes();
  CREATE TRIGGER dead_letters_update_removes_bytes AFTER UPDATE ON $schema.dead_letters
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION $schema.dead_letters_remove_bytes();
  CREATE TRIGGER dead_letters_update_adds_bytes AFTER UPDATE ON $schema.dead_letters
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION $schema.dead_letters_add_bytes();

  -- the group counts
  CREATE FUNCTION $schema.dead_letters_add_group_counts() RETURNS trigger LANGUAGE plpgsql AS $body$
  BEGIN
    INSERT INTO $schema.dead_letter_group_counts AS counts (queue, ${GROUP_NAMES}, entries, tokens_input, tokens_output)
      SELECT queue, ${GROUP_ENCODED}, COUNT(*), SUM(tokens_input), SUM(tokens_output)
      FROM added GROUP BY 1, ${GROUP_BY}
      ON CONFLICT (queue, ${GROUP_NAMES}) DO UPDATE SET entries = counts.entries + excluded.entries,
        tokens_input = counts.tokens_input + excluded.tokens_input, tokens_output = counts.tokens_output + excluded.tokens_output;
    RETURN NULL;
  END $body$;
  CREATE FUNCTION $schema.dead_letters_remove_group_counts() RETURNS trigger LANGUAGE plpgsql AS $body$
  BEGIN
    UPDATE $schema.dead_letter_group_counts AS counts SET entries = counts.entries - gone.entries,
        tokens_input = counts.tokens_input - gone.tokens_input, tokens_output = counts.tokens_output - gone.tokens_output
      FROM (
        SELECT queue, ${GROUP_ENCODED}, COUNT(*) AS entries, SUM(tokens_input) AS tokens_input, SUM(tokens_output) AS tokens_output
        FROM removed GROUP BY 1, ${GROUP_BY}
      ) AS gone
      WHERE counts.queue = gone.queue AND ${GROUP_MATCH};
    DELETE FROM $schema.dead_letter_group_counts WHERE entries <= 0;
    RETURN NULL;
  END $body$;
  CREATE TRIGGER dead_letters_add_group_counts AFTER INSERT ON $schema.dead_letters
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION $schema.dead_letters_add_group_counts();
  CREATE TRIGGER dead_letters_remove_group_counts AFTER DELETE ON $schema.dead_letters
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION $schema.dead_letters_remove_group_counts();
  CREATE TRIGGER dead_letters_update_removes_group_counts AFTER UPDATE ON $schema.dead_letters
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION $schema.dead_letters_remove_group_counts();
  CREATE TRIGGER dead_letters_update_adds_group_counts AFTER UPDATE ON $schema.dead_letters
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION $schema.dead_letters_add_group_counts();

  -- The failure log (FailureLog, what \`toolrun report\` and the dashboard read): one row per
  -- record, the record as JSON text, a few of its members as columns for SQL.
  CREATE TABLE $schema.failure_log (
    id        bigserial PRIMARY KEY,          -- arrival order, never reused
    kind      text NOT NULL,                  -- 'tool-failure' | 'recovery' | 'breaker-open'
    tool_name text NOT NULL,
    run_id    text,
    at        text NOT NULL,                  -- ISO-8601, from the record
    record    text NOT NULL                   -- JSON FailureLogRecord
  );
  CREATE INDEX failure_log_by_tool ON $schema.failure_log (tool_name, id);
  -- FailureLog.findByTraceId: the record's top-level "traceId" as its JSON text, found by a
  -- regular expression (a cast to json/jsonb would refuse records holding \\u0000 or a lone
  -- surrogate, and with them the INSERT), hashed to keep every key small
  CREATE INDEX failure_log_by_trace ON $schema.failure_log
    ((md5(substring(record from '"traceId":("(?:[^"\\\\]|\\\\.)*")'))), id) WHERE kind = 'tool-failure';

  CREATE FUNCTION $schema.conversation_replace(p_ref text, p_messages text, p_count integer, p_expires_at_ms bigint)
  RETURNS void LANGUAGE plpgsql AS $body$
  BEGIN
    INSERT INTO $schema.conversations (ref, expires_at_ms) VALUES (p_ref, p_expires_at_ms)
      ON CONFLICT (ref) DO UPDATE SET expires_at_ms = excluded.expires_at_ms;
    DELETE FROM $schema.conversation_messages WHERE ref = p_ref;
    INSERT INTO $schema.conversation_messages (ref, start_index, end_index, expires_at_ms, messages)
      VALUES (p_ref, 0, p_count, p_expires_at_ms, p_messages);
  END $body$;

  CREATE FUNCTION $schema.conversation_delete(p_ref text) RETURNS void LANGUAGE plpgsql AS $body$
  BEGIN
    DELETE FROM $schema.conversations WHERE ref = p_ref;
    DELETE FROM $schema.conversation_messages WHERE ref = p_ref;
  END $body$;

  -- A step: its chunk (or the whole conversation), its ledger rows (first writer wins) and the
  -- run's checkpoint; false, having written nothing, when the stored conversation is not the one
  -- the step extends.
  CREATE FUNCTION $schema.commit_step(
    p_ref text, p_stored_count integer, p_count integer, p_messages text, p_whole boolean,
    p_now_ms bigint, p_expires_at_ms bigint, p_refresh_lag_ms bigint,
    p_ledger_keys text[], p_ledger_values text[],
    p_run_id text, p_message_id text, p_status text, p_updated_at text, p_checkpoint text
  ) RETURNS boolean LANGUAGE plpgsql AS $body$
  DECLARE
    head_expires_at_ms bigint;
    last_end integer;
    last_expires_at_ms bigint;
  BEGIN
    IF p_whole THEN
      PERFORM $schema.conversation_replace(p_ref, p_messages, p_count, p_expires_at_ms);
    ELSE
      SELECT expires_at_ms INTO head_expires_at_ms FROM $schema.conversations WHERE ref = p_ref FOR UPDATE;
      IF NOT FOUND THEN
        RETURN false;
      END IF;
      SELECT end_index, expires_at_ms INTO last_end, last_expires_at_ms
        FROM $schema.conversation_messages WHERE ref = p_ref ORDER BY start_index DESC LIMIT 1;
      IF NOT FOUND OR last_expires_at_ms <= p_now_ms OR last_end <> p_stored_count THEN
        RETURN false;
      END IF;
      -- a step without new messages writes an empty chunk at the end (its next chunk replaces it)
      INSERT INTO $schema.conversation_messages (ref, start_index, end_index, expires_at_ms, messages)
        VALUES (p_ref, p_stored_count, p_count, p_expires_at_ms, p_messages)
        ON CONFLICT (ref, start_index) DO UPDATE
          SET end_index = excluded.end_index, expires_at_ms = excluded.expires_at_ms, messages = excluded.messages;
      IF head_expires_at_ms < p_expires_at_ms - p_refresh_lag_ms THEN
        UPDATE $schema.conversations SET expires_at_ms = p_expires_at_ms WHERE ref = p_ref;
      END IF;
    END IF;
    -- cardinality of NULL is NULL: no rows either
    IF cardinality(p_ledger_keys) > 0 THEN
      INSERT INTO $schema.ledger (key, value, recorded_at_ms)
        SELECT step_rows.key, step_rows.value, p_now_ms FROM unnest(p_ledger_keys, p_ledger_values) AS step_rows (key, value)
        ON CONFLICT (key) DO NOTHING;
    END IF;
    INSERT INTO $schema.runs (run_id, message_id, status, updated_at, checkpoint)
      VALUES (p_run_id, p_message_id, p_status, p_updated_at, p_checkpoint)
      ON CONFLICT (run_id) DO UPDATE SET message_id = excluded.message_id, status = excluded.status,
        updated_at = excluded.updated_at, checkpoint = excluded.checkpoint;
    RETURN true;
  END $body$;

  -- A run's last step: the step, then the release of its claim, in one transaction.
  CREATE FUNCTION $schema.commit_step(
    p_ref text, p_stored_count integer, p_count integer, p_messages text, p_whole boolean,
    p_now_ms bigint, p_expires_at_ms bigint, p_refresh_lag_ms bigint,
    p_ledger_keys text[], p_ledger_values text[],
    p_run_id text, p_message_id text, p_status text, p_updated_at text, p_checkpoint text,
    p_claim_key text, p_claim_holder text
  ) RETURNS boolean LANGUAGE plpgsql AS $body$
  BEGIN
    -- the step as the overload without a claim writes it (the same transaction); the claim only once it is written
    IF NOT $schema.commit_step(p_ref, p_stored_count, p_count, p_messages, p_whole, p_now_ms, p_expires_at_ms,
        p_refresh_lag_ms, p_ledger_keys, p_ledger_values, p_run_id, p_message_id, p_status, p_updated_at, p_checkpoint) THEN
      RETURN false;
    END IF;
    IF p_claim_key IS NOT NULL THEN
      DELETE FROM $schema.claims WHERE key = p_claim_key AND holder = p_claim_holder;
    END IF;
    RETURN true;
  END $body$;

  CREATE FUNCTION $schema.sweep_conversations(p_now_ms bigint, p_batch integer) RETURNS integer LANGUAGE plpgsql AS $body$
  DECLARE
    expired record;
    last_expires_at_ms bigint;
    handled integer := 0;
  BEGIN
    -- each row is locked before its chunks are read (by a later statement, which sees every
    -- write that held the lock); a conversation being written is skipped
    FOR expired IN
      SELECT ref FROM $schema.conversations WHERE expires_at_ms <= p_now_ms
      ORDER BY expires_at_ms LIMIT p_batch FOR UPDATE SKIP LOCKED
    LOOP
      SELECT expires_at_ms INTO last_expires_at_ms
        FROM $schema.conversation_messages WHERE ref = expired.ref ORDER BY start_index DESC LIMIT 1;
      IF FOUND AND last_expires_at_ms > p_now_ms THEN
        UPDATE $schema.conversations SET expires_at_ms = last_expires_at_ms WHERE ref = expired.ref;  -- written since: only the row lagged
      ELSE
        DELETE FROM $schema.conversation_messages WHERE ref = expired.ref;
        DELETE FROM $schema.conversations WHERE ref = expired.ref;
      END IF;
      handled := handled + 1;
    END LOOP;
    RETURN handled;  -- rows deleted or moved: fewer than p_batch when no expired row is left
  END $body$;

  -- A run's claim and its checkpoint in one round trip. The checkpoint is read by a statement of
  -- its own, after the claim's upsert: in a PL/pgSQL function each statement takes its own
  -- snapshot (READ COMMITTED), so the read sees what the claim's previous holder committed before
  -- it released the claim (one statement reading both would read the run in the snapshot taken
  -- before the claim).
  CREATE FUNCTION $schema.claim_run(
    p_key text, p_holder text, p_until_ms bigint, p_now_ms bigint, p_sweep boolean, p_run_id text
  ) RETURNS TABLE (acquired boolean, checkpoint text) LANGUAGE plpgsql AS $body$
  DECLARE
    taken text;
  BEGIN
    IF p_sweep THEN
      DELETE FROM $schema.claims WHERE key IN (
        SELECT ended.key FROM $schema.claims AS ended
          WHERE ended.lease_until_ms <= p_now_ms AND ended.key <> p_key
          ORDER BY ended.lease_until_ms LIMIT 100 FOR UPDATE SKIP LOCKED
      );
    END IF;
    INSERT INTO $schema.claims AS held (key, holder, lease_until_ms) VALUES (p_key, p_holder, p_until_ms)
      ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, lease_until_ms = excluded.lease_until_ms
      WHERE held.holder = excluded.holder OR held.lease_until_ms <= p_now_ms
      RETURNING held.key INTO taken;
    IF taken IS NULL THEN
      RETURN QUERY SELECT false, NULL::text;
    ELSE
      RETURN QUERY SELECT true, (SELECT run.checkpoint FROM $schema.runs AS run WHERE run.run_id = p_run_id);
    END IF;
  END $body$;
`;

/**
 * The PostgreSQL schema: the baseline (version 12, the version the first databases were written
 * with), then the migrations after it.
 */
export const POSTGRES_SCHEMA: SchemaHistory = {
  backend: 'PostgreSQL',
  baseline: { version: 12, sql: BASELINE },
  migrations: [],
};

/** The schema version this code writes. */
export const POSTGRES_SCHEMA_VERSION = latestSchemaVersion(POSTGRES_SCHEMA);

/**
 * Brings `schema` to {@link POSTGRES_SCHEMA_VERSION}: creates the schema and `schema_version`
 * when missing and applies what {@link migrationsToApply} returns, in one transaction that first
 * takes a transaction-scoped advisory lock on the schema's name. Several processes starting at once
 * therefore migrate one after the other: each version is applied once, and a process that waited
 * finds the work done.
 *
 * @throws SchemaVersionError (a ToolrunError, `STORE_UNAVAILABLE`) when the schema's version is
 * older than the baseline or newer than this code's; the driver's error when the server cannot be
 * reached or refuses a statement.
 */
export async function migratePostgresSchema(pool: PostgresPoolLike, schema: string, nowMs: number): Promise<void> {
  const quoted = quoteSchema(schema);
  await inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`toolrun:migrate:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`);
    await client.query(schemaVersionTableSql(`${quoted}.schema_version`));
    const { rows } = await client.query<{ version: number | null }>(`SELECT MAX(version) AS version FROM ${quoted}.schema_version`);
    const location = { name: `the PostgreSQL schema ${quoted}`, recreate: `DROP SCHEMA ${quoted} CASCADE` };
    for (const migration of migrationsToApply(POSTGRES_SCHEMA, rows[0]?.version ?? null, location)) {
      await client.query(migration.sql.replaceAll('$schema', quoted));
      await client.query(`INSERT INTO ${quoted}.schema_version (version, applied_at) VALUES ($1, $2)`, [migration.version, new Date(nowMs).toISOString()]);
    }
  });
}
