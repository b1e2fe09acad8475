import { ToolrunError } from '../../ground/toolrun-error.ts';
import { inTransaction, quoteSchema, type PostgresPoolLike } from './postgres-client.ts';

/** One step of the schema; applied once, in order, inside the migration transaction. */
interface Migration {
  version: number;
  /** SQL with `$schema` where the quoted schema name goes. */
  sql: string;
}

/**
 * The schema, as migrations. Times a store compares (TTL, leases, claims) are `bigint` epoch ms from
 * the injected clock; JSON values are `text` holding `JSON.stringify` output (not `jsonb`, which
 * reorders keys and rejects `\u0000`: what goes in comes back exactly, since `JSON.stringify`
 * escapes `\u0000` and lone surrogates); ids, keys and bodies are `text` as `toStoredText` writes
 * them (the string itself unless it holds `\u0000`, which `text` cannot, or a lone surrogate).
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
  {
    // ClaimStore; DeadLetterQueue.bytes() as a running total kept by triggers (statement-level,
    // so a purge of many entries updates the total once), seeded from the entries already there;
    // RunQueue.release with a delay (a delayed message is waiting, not leased: no extendLease).
    // Rows of version 1 stay as they are: ids, keys and bodies are read as before.
    version: 2,
    sql: `
      CREATE TABLE $schema.claims (
        key            text PRIMARY KEY,
        holder         text NOT NULL,
        lease_until_ms bigint NOT NULL            -- epoch ms of the injected clock; over when <= now
      );
      CREATE INDEX claims_by_lease_end ON $schema.claims (lease_until_ms);

      ALTER TABLE $schema.dead_letters ADD COLUMN entry_bytes bigint NOT NULL DEFAULT 0;  -- UTF-8 length of entry
      UPDATE $schema.dead_letters SET entry_bytes = octet_length(convert_to(entry, 'UTF8'));
      CREATE TABLE $schema.dead_letter_totals (
        queue text PRIMARY KEY,                   -- 'message' | 'tool'
        bytes bigint NOT NULL                     -- sum of entry_bytes
      );
      INSERT INTO $schema.dead_letter_totals (queue, bytes)
        SELECT queue, SUM(entry_bytes) FROM $schema.dead_letters GROUP BY queue;

      CREATE FUNCTION $schema.dead_letters_measure() RETURNS trigger LANGUAGE plpgsql AS $body$
      BEGIN
        NEW.entry_bytes := octet_length(convert_to(NEW.entry, 'UTF8'));
        RETURN NEW;
      END $body$;
      CREATE TRIGGER dead_letters_measure BEFORE INSERT OR UPDATE OF entry ON $schema.dead_letters
        FOR EACH ROW EXECUTE FUNCTION $schema.dead_letters_measure();

      CREATE FUNCTION $schema.dead_letters_add_bytes() RETURNS trigger LANGUAGE plpgsql AS $body$
      BEGIN
        INSERT INTO $schema.dead_letter_totals AS totals (queue, bytes)
          SELECT queue, SUM(entry_bytes) FROM added GROUP BY queue
          ON CONFLICT (queue) DO UPDATE SET bytes = totals.bytes + excluded.bytes;
        RETURN NULL;
      END $body$;
      CREATE FUNCTION $schema.dead_letters_remove_bytes() RETURNS trigger LANGUAGE plpgsql AS $body$
      BEGIN
        UPDATE $schema.dead_letter_totals AS totals SET bytes = totals.bytes - removed_totals.bytes
          FROM (SELECT queue, SUM(entry_bytes) AS bytes FROM removed GROUP BY queue) AS removed_totals
          WHERE totals.queue = removed_totals.queue;
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

      ALTER TABLE $schema.queue_messages ADD COLUMN delayed boolean NOT NULL DEFAULT false;  -- lease_until_ms ends a release delay
    `,
  },
  {
    // DeadLetterQueue.list with `after` and `filter`, and size() without a COUNT(*). The cause
    // fields of an entry (DeadLetterFilter) become columns of dead_letters that the store fills on
    // every insert, each indexed with the queue and the id, so a filtered page is an index range
    // read in id order. Plain columns, not expression indexes on `entry::jsonb`: jsonb refuses
    // `\u0000` and lone surrogates, which entries may hold. Rows already there are filled from their
    // JSON (a row jsonb cannot parse keeps NULLs: it is listed, but found by no filter). The totals
    // row counts the entries as well as their bytes; its trigger functions are replaced by ones
    // that keep both.
    version: 3,
    sql: `
      ALTER TABLE $schema.dead_letters
        ADD COLUMN cause_kind text,
        ADD COLUMN cause_tool_name text,
        ADD COLUMN cause_model_name text,
        ADD COLUMN cause_reason text,
        ADD COLUMN cause_code text;
      CREATE FUNCTION $schema.dead_letter_json(entry text) RETURNS jsonb LANGUAGE plpgsql AS $body$
      BEGIN
        RETURN entry::jsonb;
      EXCEPTION WHEN others THEN
        RETURN NULL;
      END $body$;
      UPDATE $schema.dead_letters AS target SET
          cause_kind = CASE
            WHEN jsonb_typeof(j -> 'kind') = 'string' THEN j ->> 'kind'
            WHEN j -> 'kind' IS NULL THEN CASE
              WHEN jsonb_typeof(j -> 'toolName') = 'string' THEN 'tool'
              WHEN jsonb_typeof(j -> 'modelName') = 'string' THEN 'model'
            END
          END,
          cause_tool_name = CASE WHEN jsonb_typeof(j -> 'toolName') = 'string' THEN j ->> 'toolName' END,
          cause_model_name = CASE WHEN jsonb_typeof(j -> 'modelName') = 'string' THEN j ->> 'modelName' END,
          cause_reason = CASE WHEN jsonb_typeof(j -> 'reason') = 'string' THEN j ->> 'reason' END,
          cause_code = CASE
            WHEN jsonb_typeof(j -> 'reason' -> 'code') = 'string' THEN j -> 'reason' ->> 'code'
            WHEN jsonb_typeof(j -> 'lastError' -> 'code') = 'string' THEN j -> 'lastError' ->> 'code'
          END
        FROM (SELECT id, $schema.dead_letter_json(entry) AS j FROM $schema.dead_letters) AS parsed
        WHERE target.id = parsed.id AND jsonb_typeof(parsed.j) = 'object';
      DROP FUNCTION $schema.dead_letter_json(text);
      CREATE INDEX dead_letters_by_kind ON $schema.dead_letters (queue, cause_kind, id);
      CREATE INDEX dead_letters_by_tool_name ON $schema.dead_letters (queue, cause_tool_name, id);
      CREATE INDEX dead_letters_by_model_name ON $schema.dead_letters (queue, cause_model_name, id);
      CREATE INDEX dead_letters_by_reason ON $schema.dead_letters (queue, cause_reason, id);
      CREATE INDEX dead_letters_by_code ON $schema.dead_letters (queue, cause_code, id);

      ALTER TABLE $schema.dead_letter_totals ADD COLUMN entries bigint NOT NULL DEFAULT 0;  -- rows of dead_letters with the queue
      UPDATE $schema.dead_letter_totals AS totals SET entries = (SELECT COUNT(*) FROM $schema.dead_letters AS d WHERE d.queue = totals.queue);
      INSERT INTO $schema.dead_letter_totals (queue, bytes, entries)
        SELECT queue, SUM(entry_bytes), COUNT(*) FROM $schema.dead_letters
        WHERE queue NOT IN (SELECT queue FROM $schema.dead_letter_totals) GROUP BY queue;
      CREATE OR REPLACE FUNCTION $schema.dead_letters_add_bytes() RETURNS trigger LANGUAGE plpgsql AS $body$
      BEGIN
        INSERT INTO $schema.dead_letter_totals AS totals (queue, bytes, entries)
          SELECT queue, SUM(entry_bytes), COUNT(*) FROM added GROUP BY queue
          ON CONFLICT (queue) DO UPDATE SET bytes = totals.bytes + excluded.bytes, entries = totals.entries + excluded.entries;
        RETURN NULL;
      END $body$;
      CREATE OR REPLACE FUNCTION $schema.dead_letters_remove_bytes() RETURNS trigger LANGUAGE plpgsql AS $body$
      BEGIN
        UPDATE $schema.dead_letter_totals AS totals
          SET bytes = totals.bytes - removed_totals.bytes, entries = totals.entries - removed_totals.entries
          FROM (SELECT queue, SUM(entry_bytes) AS bytes, COUNT(*) AS entries FROM removed GROUP BY queue) AS removed_totals
          WHERE totals.queue = removed_totals.queue;
        RETURN NULL;
      END $body$;
    `,
  },
  {
    // DeadLetterQueue.countByCause: entries per combination of their cause columns, kept by the
    // statement-level trigger functions that keep the totals (so in the same statement as every
    // insert, delete and update of dead_letters, by hand too), seeded from the entries already
    // there. A cause value v is stored as '+' || v and a missing one as '-' (a primary key column
    // holds no NULL); a group that empties is deleted.
    version: 4,
    sql: `
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
      INSERT INTO $schema.dead_letter_cause_counts (queue, kind, tool_name, model_name, reason, code, entries)
        SELECT queue, COALESCE('+' || cause_kind, '-'), COALESCE('+' || cause_tool_name, '-'), COALESCE('+' || cause_model_name, '-'),
          COALESCE('+' || cause_reason, '-'), COALESCE('+' || cause_code, '-'), COUNT(*)
        FROM $schema.dead_letters GROUP BY 1, 2, 3, 4, 5, 6;
      CREATE OR REPLACE FUNCTION $schema.dead_letters_add_bytes() RETURNS trigger LANGUAGE plpgsql AS $body$
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
      CREATE OR REPLACE FUNCTION $schema.dead_letters_remove_bytes() RETURNS trigger LANGUAGE plpgsql AS $body$
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
    `,
  },
  {
    // DeadLetterQueue.countByGroup: the entries per combination of their cause columns and of the
    // details an operator groups by (last error kind and status, first failing field's path and
    // problem), with the tokens they spent. New columns of dead_letters, written by every insert
    // (as `deadLetterGroupFields` reads the entry); rows already there are filled from their JSON (a
    // row jsonb cannot parse keeps NULLs and no tokens). The counts table is seeded from the rows and
    // kept by statement-level triggers of their own, so in the same statement as every insert,
    // delete and update of dead_letters. Keys are encoded as in dead_letter_cause_counts ('+' ||
    // value, '-' when missing); a group that empties is deleted.
    version: 5,
    sql: (() => {
      const keys: Array<[string, string]> = [
        ['kind', 'cause_kind'],
        ['tool_name', 'cause_tool_name'],
        ['model_name', 'cause_model_name'],
        ['reason', 'cause_reason'],
        ['code', 'cause_code'],
        ['error_kind', 'cause_error_kind'],
        ['error_status', 'cause_error_status'],
        ['field_path', 'cause_field_path'],
        ['field_problem', 'cause_field_problem'],
      ];
      const names = keys.map(([name]) => name).join(', ');
      const encoded = keys.map(([name, column]) => `COALESCE('+' || ${column}, '-') AS ${name}`).join(', ');
      const groupBy = keys.map((_, index) => index + 2).join(', ');
      const number = (path: string) => `CASE WHEN jsonb_typeof(${path}) = 'number' THEN (${path} #>> '{}')::double precision ELSE 0 END`;
      return `
      ALTER TABLE $schema.dead_letters
        ADD COLUMN cause_error_kind text,
        ADD COLUMN cause_error_status text,   -- the number's JSON text
        ADD COLUMN cause_field_path text,
        ADD COLUMN cause_field_problem text,
        ADD COLUMN tokens_input double precision NOT NULL DEFAULT 0,
        ADD COLUMN tokens_output double precision NOT NULL DEFAULT 0;
      CREATE FUNCTION $schema.dead_letter_json(entry text) RETURNS jsonb LANGUAGE plpgsql AS $body$
      BEGIN
        RETURN entry::jsonb;
      EXCEPTION WHEN others THEN
        RETURN NULL;
      END $body$;
      UPDATE $schema.dead_letters AS target SET
          cause_error_kind = CASE WHEN jsonb_typeof(j -> 'lastError' -> 'kind') = 'string' THEN j -> 'lastError' ->> 'kind' END,
          cause_error_status = CASE WHEN jsonb_typeof(j -> 'lastError' -> 'status') = 'number' THEN j -> 'lastError' ->> 'status' END,
          cause_field_path = CASE
            WHEN jsonb_typeof(j -> 'reason' -> 'fields') IS DISTINCT FROM 'array' OR jsonb_array_length(j -> 'reason' -> 'fields') = 0 THEN NULL
            WHEN jsonb_typeof(j -> 'reason' -> 'fields' -> 0 -> 'path') = 'string' THEN j -> 'reason' -> 'fields' -> 0 ->> 'path'
            ELSE ''
          END,
          cause_field_problem = CASE
            WHEN jsonb_typeof(j -> 'reason' -> 'fields') = 'array' AND jsonb_typeof(j -> 'reason' -> 'fields' -> 0 -> 'problem') = 'string'
            THEN j -> 'reason' -> 'fields' -> 0 ->> 'problem'
          END,
          tokens_input = ${number(`(j -> 'tokensSpent' -> 'input')`)},
          tokens_output = ${number(`(j -> 'tokensSpent' -> 'output')`)}
        FROM (SELECT id, $schema.dead_letter_json(entry) AS j FROM $schema.dead_letters) AS parsed
        WHERE target.id = parsed.id AND jsonb_typeof(parsed.j) = 'object';
      DROP FUNCTION $schema.dead_letter_json(text);

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
        tokens_input  double precision NOT NULL,   -- sum of the entries' tokens_input
        tokens_output double precision NOT NULL,
        PRIMARY KEY (queue, ${names})
      );
      INSERT INTO $schema.dead_letter_group_counts (queue, ${names}, entries, tokens_input, tokens_output)
        SELECT queue, ${encoded}, COUNT(*), SUM(tokens_input), SUM(tokens_output)
        FROM $schema.dead_letters GROUP BY 1, ${groupBy};
      CREATE FUNCTION $schema.dead_letters_add_group_counts() RETURNS trigger LANGUAGE plpgsql AS $body$
      BEGIN
        INSERT INTO $schema.dead_letter_group_counts AS counts (queue, ${names}, entries, tokens_input, tokens_output)
          SELECT queue, ${encoded}, COUNT(*), SUM(tokens_input), SUM(tokens_output)
          FROM added GROUP BY 1, ${groupBy}
          ON CONFLICT (queue, ${names}) DO UPDATE SET entries = counts.entries + excluded.entries,
            tokens_input = counts.tokens_input + excluded.tokens_input, tokens_output = counts.tokens_output + excluded.tokens_output;
        RETURN NULL;
      END $body$;
      CREATE FUNCTION $schema.dead_letters_remove_group_counts() RETURNS trigger LANGUAGE plpgsql AS $body$
      BEGIN
        UPDATE $schema.dead_letter_group_counts AS counts SET entries = counts.entries - gone.entries,
            tokens_input = counts.tokens_input - gone.tokens_input, tokens_output = counts.tokens_output - gone.tokens_output
          FROM (
            SELECT queue, ${encoded}, COUNT(*) AS entries, SUM(tokens_input) AS tokens_input, SUM(tokens_output) AS tokens_output
            FROM removed GROUP BY 1, ${groupBy}
          ) AS gone
          WHERE counts.queue = gone.queue AND ${keys.map(([name]) => `counts.${name} = gone.${name}`).join(' AND ')};
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
    `;
    })(),
  },
  {
    // The failure log (FailureLog, what `toolrun report` and the dashboard read), as SQLite keeps
    // it: one row per record, the record as JSON text, a few of its members as columns for SQL. A
    // new table: rows of earlier versions are not touched.
    version: 6,
    sql: `
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
    `,
  },
  {
    // Append-only conversations: a step writes the messages it added, not the whole conversation
    // again. The messages move to `conversation_messages`, one row per write: a chunk, the JSON
    // array of the messages from `start_index` to `end_index` (exclusive), with the conversation's
    // expiry as of that write (the last chunk's is the conversation's). A whole-conversation row of
    // an older version becomes the chunk at 0, its text byte for byte (not parsed again, so what it
    // held comes back exactly); a row that is not a JSON array gets end_index -1, so it is read as
    // before and the next step replaces it instead of appending. `conversations` keeps one small
    // row per conversation (`ref`, `expires_at_ms`) for the expiry sweep, for inspection and as the
    // conversation's lock: every writer locks it before it touches the chunks. Its `expires_at_ms`
    // is refreshed lazily (at most min(ttl / 100, 5 minutes) behind the last chunk's), so a step
    // rarely writes it.
    //
    // The writes are functions, so that each is one statement (one round trip, one transaction):
    // conversation_replace (put), conversation_delete, commit_step (the step's chunk, its ledger
    // rows and the run's checkpoint; false, having written nothing, when the stored conversation is
    // not the one the step extends) and sweep_conversations (a batch of expired conversations).
    version: 7,
    sql: `
      CREATE TABLE $schema.conversation_messages (
        ref           text NOT NULL,
        start_index   integer NOT NULL,           -- index in the conversation of the chunk's first message
        end_index     integer NOT NULL,           -- start_index + the chunk's message count (-1: unknown, never appended to)
        expires_at_ms bigint NOT NULL,            -- the conversation's expiry as of this write
        messages      text NOT NULL,              -- JSON array
        PRIMARY KEY (ref, start_index)
      );
      CREATE FUNCTION $schema.conversation_length(messages text) RETURNS integer LANGUAGE plpgsql AS $body$
      BEGIN
        RETURN json_array_length(messages::json);
      EXCEPTION WHEN others THEN
        RETURN -1;
      END $body$;
      INSERT INTO $schema.conversation_messages (ref, start_index, end_index, expires_at_ms, messages)
        SELECT ref, 0, $schema.conversation_length(messages), expires_at_ms, messages FROM $schema.conversations;
      DROP FUNCTION $schema.conversation_length(text);
      ALTER TABLE $schema.conversations DROP COLUMN messages;

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
        INSERT INTO $schema.ledger (key, value, recorded_at_ms)
          SELECT step_rows.key, step_rows.value, p_now_ms FROM unnest(p_ledger_keys, p_ledger_values) AS step_rows (key, value)
          ON CONFLICT (key) DO NOTHING;
        INSERT INTO $schema.runs (run_id, message_id, status, updated_at, checkpoint)
          VALUES (p_run_id, p_message_id, p_status, p_updated_at, p_checkpoint)
          ON CONFLICT (run_id) DO UPDATE SET message_id = excluded.message_id, status = excluded.status,
            updated_at = excluded.updated_at, checkpoint = excluded.checkpoint;
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
    `,
  },
  {
    // commit_step runs its ledger statement only for a step that has ledger rows (a step that ran
    // tools): the others, most steps of a run, skip an INSERT of no rows, which still cost the
    // server about a tenth of the step's commit. Same arguments, same writes, same result; rows of
    // version 7 are not touched. Replaced in place, so processes of version 7 still running call the
    // new body (it writes what theirs did).
    version: 8,
    sql: `
      CREATE OR REPLACE FUNCTION $schema.commit_step(
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
    `,
  },
  {
    // claim_run: a run's claim and its checkpoint in one round trip (ClaimStore.acquireWithCheckpoint).
    // The checkpoint is read by a statement of its own, after the claim's upsert: in a PL/pgSQL
    // function each statement takes its own snapshot (READ COMMITTED), so the read sees what the
    // claim's previous holder committed before it released the claim — one statement reading
    // both (a CTE) would read the runs row in the snapshot taken before the claim.
    version: 9,
    sql: `
      CREATE OR REPLACE FUNCTION $schema.claim_run(
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
    `,
  },
  {
    // commit_step with a claim to release (a run's last commit ends its claim: one round trip
    // fewer per run, and no moment where a finished run is still claimed). A new signature beside
    // version 8's, which the store keeps calling for every other step (and processes of version 8
    // still running for every step).
    version: 10,
    sql: `
      CREATE OR REPLACE FUNCTION $schema.commit_step(
        p_ref text, p_stored_count integer, p_count integer, p_messages text, p_whole boolean,
        p_now_ms bigint, p_expires_at_ms bigint, p_refresh_lag_ms bigint,
        p_ledger_keys text[], p_ledger_values text[],
        p_run_id text, p_message_id text, p_status text, p_updated_at text, p_checkpoint text,
        p_claim_key text, p_claim_holder text
      ) RETURNS boolean LANGUAGE plpgsql AS $body$
      BEGIN
        -- the step as version 8's writes it (the same transaction); the claim only once it is written
        IF NOT $schema.commit_step(p_ref, p_stored_count, p_count, p_messages, p_whole, p_now_ms, p_expires_at_ms,
            p_refresh_lag_ms, p_ledger_keys, p_ledger_values, p_run_id, p_message_id, p_status, p_updated_at, p_checkpoint) THEN
          RETURN false;
        END IF;
        IF p_claim_key IS NOT NULL THEN
          DELETE FROM $schema.claims WHERE key = p_claim_key AND holder = p_claim_holder;
        END IF;
        RETURN true;
      END $body$;
    `,
  },
  {
    // Nothing. A development build (never released) used version 11 for a breaker counter kept by
    // a trigger; version 12 removes it from the schemas that build wrote.
    version: 11,
    sql: `SELECT 1;`,
  },
  {
    // Removes what that build's version 11 added, where it did: the trigger on `breakers` took a
    // lock every writer of a breaker waited on. Breaker checks read a fingerprint of the table now.
    version: 12,
    sql: `
      DROP TRIGGER IF EXISTS breakers_bump_generation ON $schema.breakers;
      DROP FUNCTION IF EXISTS $schema.bump_breaker_generation();
      DROP TABLE IF EXISTS $schema.breaker_generation;
    `,
  },
];

/** The schema version this code writes. */
export const POSTGRES_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/**
 * Brings `schema` to {@link POSTGRES_SCHEMA_VERSION} (or to `targetVersion`, which tests use to
 * write schemas of an older version): creates the schema and
 * `schema_version (version, applied_at)` when missing and applies every newer migration, in one
 * transaction that first takes a transaction-scoped advisory lock on the schema's name. Several
 * processes starting at once therefore migrate one after the other: each migration is applied once,
 * and a process that waited finds the work done.
 *
 * @throws ToolrunError `STORE_UNAVAILABLE` when the schema was written by a newer toolrun;
 * the driver's error when the server cannot be reached or refuses a statement.
 */
export async function migratePostgresSchema(
  pool: PostgresPoolLike,
  schema: string,
  nowMs: number,
  targetVersion: number = POSTGRES_SCHEMA_VERSION,
): Promise<void> {
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
      if (migration.version <= current || migration.version > targetVersion) continue;
      await client.query(migration.sql.replaceAll('$schema', quoted));
      await client.query(`INSERT INTO ${quoted}.schema_version (version, applied_at) VALUES ($1, $2)`, [migration.version, new Date(nowMs).toISOString()]);
    }
  });
}
