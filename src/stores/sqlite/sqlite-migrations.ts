import type { Database } from 'better-sqlite3';
import { latestSchemaVersion, migrationsToApply, schemaVersionTableSql, type SchemaHistory } from '../schema-migrations.ts';
import { GROUP_KEYS, GROUP_NAMES } from '../dead-letter-group-keys.ts';

const groupEncoded = (row: string) => GROUP_KEYS.map(([, column]) => `ifnull('+' || ${row}${column}, '-')`).join(', ');
const groupMatches = (row: string) => GROUP_KEYS.map(([name, column]) => `${name} = ifnull('+' || ${row}${column}, '-')`).join(' AND ');
const ADD_GROUP_COUNT = `INSERT INTO dead_letter_group_counts (queue, ${GROUP_NAMES}, entries, tokens_input, tokens_output)
      VALUES (NEW.queue, ${groupEncoded('NEW.')}, 1, NEW.tokens_input, NEW.tokens_output)
      ON CONFLICT (queue, ${GROUP_NAMES}) DO UPDATE SET entries = entries + 1,
        tokens_input = tokens_input + excluded.tokens_input, tokens_output = tokens_output + excluded.tokens_output;`;
const REMOVE_GROUP_COUNT = `UPDATE dead_letter_group_counts SET entries = entries - 1,
        tokens_input = tokens_input - OLD.tokens_input, tokens_output = tokens_output - OLD.tokens_output
      WHERE queue = OLD.queue AND ${groupMatches('OLD.')};
    DELETE FROM dead_letter_group_counts WHERE queue = OLD.queue AND ${groupMatches('OLD.')} AND entries <= 0;`;

/** A number of an entry's JSON at `path`, 0 when it holds none. */
const entryNumber = (path: string) =>
  `CASE WHEN NOT json_valid(entry) THEN 0 WHEN json_type(entry, '${path}') IN ('integer', 'real') THEN json_extract(entry, '${path}') ELSE 0 END`;

/**
 * The failure log's table (`createSqliteFailureLog`), part of the baseline. Its statements are
 * written `IF NOT EXISTS` because {@link migrateSqliteSchema} also applies them to a file found at
 * the baseline version: files written at that version before the table joined the baseline have
 * it only when a failure log was opened on them.
 */
const FAILURE_LOG = `
  CREATE TABLE IF NOT EXISTS failure_log (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,  -- arrival order, never reused
    kind      TEXT NOT NULL,                      -- 'tool-failure' | 'recovery' | 'breaker-open'
    tool_name TEXT NOT NULL,
    run_id    TEXT,
    at        TEXT NOT NULL,                      -- ISO-8601, from the record
    record    TEXT NOT NULL                       -- JSON FailureLogRecord
  );
  CREATE INDEX IF NOT EXISTS failure_log_by_tool ON failure_log (tool_name, id);
  -- FailureLog.findByTraceId: a lookup must use this expression exactly (else SQLite scans the table)
  CREATE INDEX IF NOT EXISTS failure_log_by_trace ON failure_log (json_extract(record, '$.traceId'));
`;

/**
 * The schema, whole: what an empty file gets.
 *
 * Times a store compares (TTL, leases, claims) are INTEGER epoch ms from the injected clock; JSON
 * values are TEXT holding `JSON.stringify` output; ids, keys and bodies are TEXT as `toStoredText`
 * writes them (the string itself, unless it holds `\u0000` or a lone surrogate).
 */
const BASELINE = `
  -- A conversation: one small row for its expiry sweep and inspection, and its messages as
  -- append-only chunks, one per write: the JSON array of the messages from start to end
  -- (exclusive), with the conversation's expiry as of that write (the last chunk's is the
  -- conversation's). The row's expires_at_ms is refreshed lazily (at most a few minutes behind
  -- the last chunk's), so a step does not write it. The chunks are a rowid table: the messages
  -- live in its rows and the (ref, start) key in its own small index, so a seek never reads a
  -- large chunk it passes.
  CREATE TABLE conversations (
    ref           TEXT PRIMARY KEY,
    expires_at_ms INTEGER NOT NULL
  );
  CREATE INDEX conversations_by_expiry ON conversations (expires_at_ms);
  CREATE TABLE conversation_messages (
    ref           TEXT NOT NULL,
    start         INTEGER NOT NULL,         -- index in the conversation of the chunk's first message
    end           INTEGER NOT NULL,         -- start + the number of messages in the chunk
    expires_at_ms INTEGER NOT NULL,         -- the conversation's expiry as of this write
    messages      TEXT NOT NULL,            -- JSON array
    PRIMARY KEY (ref, start)
  );

  CREATE TABLE runs (
    run_id     TEXT PRIMARY KEY,
    message_id TEXT NOT NULL,
    status     TEXT NOT NULL,
    updated_at TEXT NOT NULL,               -- ISO-8601, from the checkpoint
    checkpoint TEXT NOT NULL                -- JSON RunCheckpoint
  );
  CREATE INDEX runs_by_status ON runs (status);
  -- what the retention sweep reads (retainCompletedRunsMs): completed runs oldest first
  CREATE INDEX runs_completed_by_time ON runs (updated_at) WHERE status = 'completed';

  CREATE TABLE ledger (
    key            TEXT PRIMARY KEY,        -- runId:stepIndex:callIndex
    value          TEXT NOT NULL,           -- JSON
    recorded_at_ms INTEGER NOT NULL
  );

  CREATE TABLE breakers (
    key           TEXT PRIMARY KEY,
    state         TEXT NOT NULL,            -- JSON
    updated_at_ms INTEGER NOT NULL
  );

  CREATE TABLE claims (
    key            TEXT PRIMARY KEY,
    holder         TEXT NOT NULL,
    lease_until_ms INTEGER NOT NULL         -- epoch ms of the injected clock; over when <= now
  ) WITHOUT ROWID;
  CREATE INDEX claims_by_lease_end ON claims (lease_until_ms);

  CREATE TABLE queue_messages (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,  -- delivery (FIFO) order
    id             TEXT NOT NULL UNIQUE,
    body           TEXT NOT NULL,           -- emptied on ack
    enqueued_at_ms INTEGER NOT NULL,
    deliveries     INTEGER NOT NULL DEFAULT 0,
    lease_until_ms INTEGER,                 -- NULL: waiting
    acked_at_ms    INTEGER,                 -- NULL: waiting or leased
    delayed        INTEGER NOT NULL DEFAULT 0  -- 1: lease_until_ms ends a release delay (waiting, not leased)
  );
  CREATE INDEX queue_messages_pending ON queue_messages (seq) WHERE acked_at_ms IS NULL;
  -- what the retention sweep reads: acknowledged messages oldest first
  CREATE INDEX queue_messages_acked_by_time ON queue_messages (acked_at_ms) WHERE acked_at_ms IS NOT NULL;

  -- The dead-letter queues. The cause fields of an entry (DeadLetterFilter: kind inferred from
  -- toolName/modelName for entries without one; code from reason.code, else lastError.code) and
  -- the details an operator groups by are VIRTUAL generated columns, computed from entry (rows
  -- inserted by hand have them too); each cause is indexed with the queue and the id, so a
  -- filtered page is an index range read in id order.
  CREATE TABLE dead_letters (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused
    queue       TEXT NOT NULL,              -- 'message' | 'tool'
    entry       TEXT NOT NULL,              -- JSON
    added_at_ms INTEGER NOT NULL,
    cause_kind TEXT GENERATED ALWAYS AS (
      CASE
        WHEN NOT json_valid(entry) THEN NULL
        WHEN json_type(entry, '$.kind') = 'text' THEN json_extract(entry, '$.kind')
        WHEN json_type(entry, '$.kind') IS NULL THEN CASE
          WHEN json_type(entry, '$.toolName') = 'text' THEN 'tool'
          WHEN json_type(entry, '$.modelName') = 'text' THEN 'model'
        END
      END) VIRTUAL,
    cause_tool_name TEXT GENERATED ALWAYS AS (
      CASE WHEN NOT json_valid(entry) THEN NULL WHEN json_type(entry, '$.toolName') = 'text' THEN json_extract(entry, '$.toolName') END) VIRTUAL,
    cause_model_name TEXT GENERATED ALWAYS AS (
      CASE WHEN NOT json_valid(entry) THEN NULL WHEN json_type(entry, '$.modelName') = 'text' THEN json_extract(entry, '$.modelName') END) VIRTUAL,
    cause_reason TEXT GENERATED ALWAYS AS (
      CASE WHEN NOT json_valid(entry) THEN NULL WHEN json_type(entry, '$.reason') = 'text' THEN json_extract(entry, '$.reason') END) VIRTUAL,
    cause_code TEXT GENERATED ALWAYS AS (
      CASE
        WHEN NOT json_valid(entry) THEN NULL
        WHEN json_type(entry, '$.reason.code') = 'text' THEN json_extract(entry, '$.reason.code')
        WHEN json_type(entry, '$.lastError.code') = 'text' THEN json_extract(entry, '$.lastError.code')
      END) VIRTUAL,
    cause_error_kind TEXT GENERATED ALWAYS AS (
      CASE WHEN NOT json_valid(entry) THEN NULL WHEN json_type(entry, '$.lastError.kind') = 'text' THEN json_extract(entry, '$.lastError.kind') END) VIRTUAL,
    cause_error_status GENERATED ALWAYS AS (
      CASE WHEN NOT json_valid(entry) THEN NULL WHEN json_type(entry, '$.lastError.status') IN ('integer', 'real') THEN json_extract(entry, '$.lastError.status') END) VIRTUAL,
    cause_field_path TEXT GENERATED ALWAYS AS (
      CASE
        WHEN NOT json_valid(entry) THEN NULL
        WHEN json_type(entry, '$.reason.fields[0]') IS NULL THEN NULL
        WHEN json_type(entry, '$.reason.fields[0].path') = 'text' THEN json_extract(entry, '$.reason.fields[0].path')
        ELSE ''
      END) VIRTUAL,
    cause_field_problem TEXT GENERATED ALWAYS AS (
      CASE WHEN NOT json_valid(entry) THEN NULL WHEN json_type(entry, '$.reason.fields[0].problem') = 'text' THEN json_extract(entry, '$.reason.fields[0].problem') END) VIRTUAL,
    tokens_input GENERATED ALWAYS AS (${entryNumber('$.tokensSpent.input')}) VIRTUAL,
    tokens_output GENERATED ALWAYS AS (${entryNumber('$.tokensSpent.output')}) VIRTUAL
  );
  CREATE INDEX dead_letters_by_queue ON dead_letters (queue, id);
  CREATE INDEX dead_letters_by_kind ON dead_letters (queue, cause_kind, id);
  CREATE INDEX dead_letters_by_tool_name ON dead_letters (queue, cause_tool_name, id);
  CREATE INDEX dead_letters_by_model_name ON dead_letters (queue, cause_model_name, id);
  CREATE INDEX dead_letters_by_reason ON dead_letters (queue, cause_reason, id);
  CREATE INDEX dead_letters_by_code ON dead_letters (queue, cause_code, id);

  -- keys of pushOnce, a table of their own: a key outlives its entry (removed or purged entries
  -- stay deduplicated)
  CREATE TABLE dead_letter_keys (
    queue    TEXT NOT NULL,                 -- 'message' | 'tool'
    key      TEXT NOT NULL,
    entry_id INTEGER NOT NULL,              -- dead_letters.id of the entry first pushed with the key
    PRIMARY KEY (queue, key)
  ) WITHOUT ROWID;

  -- Running totals of each queue (size(), bytes()), entries per cause (countByCause) and per group
  -- with their tokens (countByGroup), kept by the triggers below in the same transaction as every
  -- insert, delete and update of dead_letters (also by hand in the sqlite3 shell). Cause and
  -- group values are encoded as in GROUP_KEYS; a group that empties is deleted.
  CREATE TABLE dead_letter_totals (
    queue   TEXT PRIMARY KEY,               -- 'message' | 'tool'
    bytes   INTEGER NOT NULL,               -- sum of the UTF-8 lengths of the entries' JSON
    entries INTEGER NOT NULL DEFAULT 0      -- rows of dead_letters with the queue
  ) WITHOUT ROWID;
  CREATE TABLE dead_letter_cause_counts (
    queue      TEXT NOT NULL,
    kind       TEXT NOT NULL,
    tool_name  TEXT NOT NULL,
    model_name TEXT NOT NULL,
    reason     TEXT NOT NULL,
    code       TEXT NOT NULL,
    entries    INTEGER NOT NULL,
    PRIMARY KEY (queue, kind, tool_name, model_name, reason, code)
  ) WITHOUT ROWID;
  CREATE TABLE dead_letter_group_counts (
    queue         TEXT NOT NULL,
    kind          TEXT NOT NULL,
    tool_name     TEXT NOT NULL,
    model_name    TEXT NOT NULL,
    reason        TEXT NOT NULL,
    code          TEXT NOT NULL,
    error_kind    TEXT NOT NULL,
    error_status  TEXT NOT NULL,
    field_path    TEXT NOT NULL,
    field_problem TEXT NOT NULL,
    entries       INTEGER NOT NULL,
    tokens_input  NUMERIC NOT NULL,         -- sum of the entries' tokens_input
    tokens_output NUMERIC NOT NULL,
    PRIMARY KEY (queue, ${GROUP_NAMES})
  ) WITHOUT ROWID;

  CREATE TRIGGER dead_letters_add_totals AFTER INSERT ON dead_letters BEGIN
    INSERT INTO dead_letter_totals (queue, bytes, entries) VALUES (NEW.queue, length(CAST(NEW.entry AS BLOB)), 1)
      ON CONFLICT (queue) DO UPDATE SET bytes = bytes + excluded.bytes, entries = entries + 1;
  END;
  CREATE TRIGGER dead_letters_remove_totals AFTER DELETE ON dead_letters BEGIN
    UPDATE dead_letter_totals SET bytes = bytes - length(CAST(OLD.entry AS BLOB)), entries = entries - 1 WHERE queue = OLD.queue;
  END;
  CREATE TRIGGER dead_letters_change_totals AFTER UPDATE OF queue, entry ON dead_letters BEGIN
    UPDATE dead_letter_totals SET bytes = bytes - length(CAST(OLD.entry AS BLOB)), entries = entries - 1 WHERE queue = OLD.queue;
    INSERT INTO dead_letter_totals (queue, bytes, entries) VALUES (NEW.queue, length(CAST(NEW.entry AS BLOB)), 1)
      ON CONFLICT (queue) DO UPDATE SET bytes = bytes + excluded.bytes, entries = entries + 1;
  END;

  CREATE TRIGGER dead_letters_add_cause_count AFTER INSERT ON dead_letters BEGIN
    INSERT INTO dead_letter_cause_counts (queue, kind, tool_name, model_name, reason, code, entries)
      VALUES (NEW.queue, ifnull('+' || NEW.cause_kind, '-'),
        ifnull('+' || NEW.cause_tool_name, '-'), ifnull('+' || NEW.cause_model_name, '-'), ifnull('+' || NEW.cause_reason, '-'), ifnull('+' || NEW.cause_code, '-'), 1)
      ON CONFLICT (queue, kind, tool_name, model_name, reason, code) DO UPDATE SET entries = entries + 1;
  END;
  CREATE TRIGGER dead_letters_remove_cause_count AFTER DELETE ON dead_letters BEGIN
    UPDATE dead_letter_cause_counts SET entries = entries - 1
      WHERE queue = OLD.queue AND kind = ifnull('+' || OLD.cause_kind, '-')
        AND tool_name = ifnull('+' || OLD.cause_tool_name, '-') AND model_name = ifnull('+' || OLD.cause_model_name, '-')
        AND reason = ifnull('+' || OLD.cause_reason, '-') AND code = ifnull('+' || OLD.cause_code, '-');
    DELETE FROM dead_letter_cause_counts WHERE queue = OLD.queue AND entries <= 0;
  END;
  CREATE TRIGGER dead_letters_change_cause_count AFTER UPDATE OF queue, entry ON dead_letters BEGIN
    UPDATE dead_letter_cause_counts SET entries = entries - 1
      WHERE queue = OLD.queue AND kind = ifnull('+' || OLD.cause_kind, '-')
        AND tool_name = ifnull('+' || OLD.cause_tool_name, '-') AND model_name = ifnull('+' || OLD.cause_model_name, '-')
        AND reason = ifnull('+' || OLD.cause_reason, '-') AND code = ifnull('+' || OLD.cause_code, '-');
    DELETE FROM dead_letter_cause_counts WHERE queue = OLD.queue AND entries <= 0;
    INSERT INTO dead_letter_cause_counts (queue, kind, tool_name, model_name, reason, code, entries)
      VALUES (NEW.queue, ifnull('+' || NEW.cause_kind, '-'),
        ifnull('+' || NEW.cause_tool_name, '-'), ifnull('+' || NEW.cause_model_name, '-'), ifnull('+' || NEW.cause_reason, '-'), ifnull('+' || NEW.cause_code, '-'), 1)
      ON CONFLICT (queue, kind, tool_name, model_name, reason, code) DO UPDATE SET entries = entries + 1;
  END;

  CREATE TRIGGER dead_letters_add_group_count AFTER INSERT ON dead_letters BEGIN
    ${ADD_GROUP_COUNT}
  END;
  CREATE TRIGGER dead_letters_remove_group_count AFTER DELETE ON dead_letters BEGIN
    ${REMOVE_GROUP_COUNT}
  END;
  CREATE TRIGGER dead_letters_change_group_count AFTER UPDATE OF queue, entry ON dead_letters BEGIN
    ${REMOVE_GROUP_COUNT}
    ${ADD_GROUP_COUNT}
  END;
${FAILURE_LOG}`;

/**
 * The SQLite schema: the baseline (version 9, the version the first files were written with),
 * then the migrations after it.
 */
export const SQLITE_SCHEMA: SchemaHistory = {
  backend: 'SQLite',
  baseline: { version: 9, sql: BASELINE },
  migrations: [],
};

/** The schema version this code writes. */
export const SQLITE_SCHEMA_VERSION = latestSchemaVersion(SQLITE_SCHEMA);

/**
 * Brings the database to {@link SQLITE_SCHEMA_VERSION}: creates `schema_version` when missing and
 * applies what {@link migrationsToApply} returns, all in one IMMEDIATE transaction, so two
 * processes opening a fresh file at once apply each version once. A file found at the baseline
 * version also gets the failure log's table and indexes when it lacks them (nothing is recorded).
 *
 * @throws SchemaVersionError (a ToolrunError, `STORE_UNAVAILABLE`) when the file's schema version
 * is older than the baseline or newer than this code's; the driver's error when a statement fails.
 */
export function migrateSqliteSchema(database: Database, nowMs: number): void {
  database
    .transaction(() => {
      database.exec(schemaVersionTableSql('schema_version'));
      const row = database.prepare('SELECT MAX(version) AS version FROM schema_version').get() as { version: number | null };
      const location = { name: `the SQLite file ${database.name}`, recreate: 'delete it (with its -wal and -shm files)' };
      const record = database.prepare('INSERT INTO schema_version (version, applied_at) VALUES (?, ?)');
      if (row.version === SQLITE_SCHEMA.baseline.version) database.exec(FAILURE_LOG);
      for (const migration of migrationsToApply(SQLITE_SCHEMA, row.version, location)) {
        database.exec(migration.sql);
        record.run(migration.version, new Date(nowMs).toISOString());
      }
    })
    .immediate();
}
