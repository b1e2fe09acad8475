import type { Database } from 'better-sqlite3';
import { ToolrunError } from '../../ground/toolrun-error.ts';

/** One step of the schema; applied once, in order, inside the migration transaction. */
interface Migration {
  version: number;
  sql: string;
}

/**
 * The schema, as migrations. Times a store compares (TTL, leases, claims) are INTEGER epoch ms from
 * the injected clock; JSON values are TEXT holding `JSON.stringify` output; ids, keys and bodies
 * are TEXT as `toStoredText` writes them (the string itself, unless it holds `\u0000` or a lone
 * surrogate).
 */
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE conversations (
        ref           TEXT PRIMARY KEY,
        messages      TEXT NOT NULL,            -- JSON array
        expires_at_ms INTEGER NOT NULL
      );
      CREATE INDEX conversations_by_expiry ON conversations (expires_at_ms);

      CREATE TABLE runs (
        run_id     TEXT PRIMARY KEY,
        message_id TEXT NOT NULL,
        status     TEXT NOT NULL,
        updated_at TEXT NOT NULL,               -- ISO-8601, from the checkpoint
        checkpoint TEXT NOT NULL                -- JSON RunCheckpoint
      );
      CREATE INDEX runs_by_status ON runs (status);

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

      CREATE TABLE dead_letters (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused
        queue       TEXT NOT NULL,              -- 'message' | 'tool'
        entry       TEXT NOT NULL,              -- JSON
        added_at_ms INTEGER NOT NULL
      );
      CREATE INDEX dead_letters_by_queue ON dead_letters (queue, id);

      CREATE TABLE queue_messages (
        seq            INTEGER PRIMARY KEY AUTOINCREMENT,  -- delivery (FIFO) order
        id             TEXT NOT NULL UNIQUE,
        body           TEXT NOT NULL,           -- emptied on ack
        enqueued_at_ms INTEGER NOT NULL,
        deliveries     INTEGER NOT NULL DEFAULT 0,
        lease_until_ms INTEGER,                 -- NULL: waiting
        acked_at_ms    INTEGER                  -- NULL: waiting or leased
      );
      CREATE INDEX queue_messages_pending ON queue_messages (seq) WHERE acked_at_ms IS NULL;
    `,
  },
  {
    // DeadLetterQueue.pushOnce. A table of its own, not a column of dead_letters: a key must
    // outlive its entry (removed or purged entries stay deduplicated). Entries written by
    // version 1 stay as they are, without a key.
    version: 2,
    sql: `
      CREATE TABLE dead_letter_keys (
        queue    TEXT NOT NULL,               -- 'message' | 'tool'
        key      TEXT NOT NULL,
        entry_id INTEGER NOT NULL,            -- dead_letters.id of the entry first pushed with the key
        PRIMARY KEY (queue, key)
      ) WITHOUT ROWID;
    `,
  },
  {
    // ClaimStore; DeadLetterQueue.bytes() as a running total that triggers keep in step with every
    // insert and delete (also by hand in the sqlite3 shell), seeded from the entries already there;
    // RunQueue.release with a delay (a delayed message is waiting, not leased: no extendLease).
    // Rows of older versions stay as they are: ids, keys and bodies are read as before.
    version: 3,
    sql: `
      CREATE TABLE claims (
        key            TEXT PRIMARY KEY,
        holder         TEXT NOT NULL,
        lease_until_ms INTEGER NOT NULL       -- epoch ms of the injected clock; over when <= now
      ) WITHOUT ROWID;
      CREATE INDEX claims_by_lease_end ON claims (lease_until_ms);

      CREATE TABLE dead_letter_totals (
        queue TEXT PRIMARY KEY,               -- 'message' | 'tool'
        bytes INTEGER NOT NULL                -- sum of the UTF-8 lengths of the entries' JSON
      ) WITHOUT ROWID;
      INSERT INTO dead_letter_totals (queue, bytes)
        SELECT queue, SUM(length(CAST(entry AS BLOB))) FROM dead_letters GROUP BY queue;
      CREATE TRIGGER dead_letters_add_bytes AFTER INSERT ON dead_letters BEGIN
        INSERT INTO dead_letter_totals (queue, bytes) VALUES (NEW.queue, length(CAST(NEW.entry AS BLOB)))
          ON CONFLICT (queue) DO UPDATE SET bytes = bytes + excluded.bytes;
      END;
      CREATE TRIGGER dead_letters_remove_bytes AFTER DELETE ON dead_letters BEGIN
        UPDATE dead_letter_totals SET bytes = bytes - length(CAST(OLD.entry AS BLOB)) WHERE queue = OLD.queue;
      END;
      CREATE TRIGGER dead_letters_change_bytes AFTER UPDATE OF queue, entry ON dead_letters BEGIN
        UPDATE dead_letter_totals SET bytes = bytes - length(CAST(OLD.entry AS BLOB)) WHERE queue = OLD.queue;
        INSERT INTO dead_letter_totals (queue, bytes) VALUES (NEW.queue, length(CAST(NEW.entry AS BLOB)))
          ON CONFLICT (queue) DO UPDATE SET bytes = bytes + excluded.bytes;
      END;

      ALTER TABLE queue_messages ADD COLUMN delayed INTEGER NOT NULL DEFAULT 0;  -- 1: lease_until_ms ends a release delay
    `,
  },
  {
    // Append-only conversations: a step writes the messages it added, not the whole conversation
    // again. The messages move to `conversation_messages`, one row per write: a chunk, the JSON
    // array of the messages from index `start` to `end` (exclusive), with the conversation's
    // expiry as of that write (the last chunk's is the conversation's). A whole-conversation row
    // of an older version becomes the chunk at 0, its text byte for byte (not parsed again, so
    // what it held comes back exactly). `conversations` keeps one small row per conversation
    // (`ref`, `expires_at_ms`) for the expiry sweep and for inspection; its `expires_at_ms` is
    // refreshed lazily (at most a few minutes behind the last chunk's), so a step does not write it.
    version: 4,
    sql: `
      CREATE TABLE conversation_messages (
        ref           TEXT NOT NULL,
        start         INTEGER NOT NULL,       -- index in the conversation of the chunk's first message
        end           INTEGER NOT NULL,       -- start + the number of messages in the chunk
        expires_at_ms INTEGER NOT NULL,       -- the conversation's expiry as of this write
        messages      TEXT NOT NULL,          -- JSON array
        PRIMARY KEY (ref, start)
      ) WITHOUT ROWID;
      INSERT INTO conversation_messages (ref, start, end, expires_at_ms, messages)
        SELECT ref, 0, json_array_length(messages), expires_at_ms, messages FROM conversations;
      ALTER TABLE conversations DROP COLUMN messages;
    `,
  },
  {
    // DeadLetterQueue.list with `after` and `filter`, and size() without a COUNT(*): the cause
    // fields of an entry as VIRTUAL generated columns of dead_letters (computed from `entry`, so
    // rows of older versions have them at once and rows inserted by hand too), each indexed with
    // the queue and the id, so a filtered page is an index range read in id order. The totals row
    // counts the entries as well as their bytes; its triggers are replaced by ones that keep both.
    // The column expressions are those of DeadLetterFilter (kind inferred from toolName/modelName
    // for entries without one; code from reason.code, else lastError.code).
    version: 5,
    sql: `
      ALTER TABLE dead_letters ADD COLUMN cause_kind TEXT GENERATED ALWAYS AS (
        CASE
          WHEN NOT json_valid(entry) THEN NULL
          WHEN json_type(entry, '$.kind') = 'text' THEN json_extract(entry, '$.kind')
          WHEN json_type(entry, '$.kind') IS NULL THEN CASE
            WHEN json_type(entry, '$.toolName') = 'text' THEN 'tool'
            WHEN json_type(entry, '$.modelName') = 'text' THEN 'model'
          END
        END) VIRTUAL;
      ALTER TABLE dead_letters ADD COLUMN cause_tool_name TEXT GENERATED ALWAYS AS (
        CASE WHEN NOT json_valid(entry) THEN NULL WHEN json_type(entry, '$.toolName') = 'text' THEN json_extract(entry, '$.toolName') END) VIRTUAL;
      ALTER TABLE dead_letters ADD COLUMN cause_model_name TEXT GENERATED ALWAYS AS (
        CASE WHEN NOT json_valid(entry) THEN NULL WHEN json_type(entry, '$.modelName') = 'text' THEN json_extract(entry, '$.modelName') END) VIRTUAL;
      ALTER TABLE dead_letters ADD COLUMN cause_reason TEXT GENERATED ALWAYS AS (
        CASE WHEN NOT json_valid(entry) THEN NULL WHEN json_type(entry, '$.reason') = 'text' THEN json_extract(entry, '$.reason') END) VIRTUAL;
      ALTER TABLE dead_letters ADD COLUMN cause_code TEXT GENERATED ALWAYS AS (
        CASE
          WHEN NOT json_valid(entry) THEN NULL
          WHEN json_type(entry, '$.reason.code') = 'text' THEN json_extract(entry, '$.reason.code')
          WHEN json_type(entry, '$.lastError.code') = 'text' THEN json_extract(entry, '$.lastError.code')
        END) VIRTUAL;
      CREATE INDEX dead_letters_by_kind ON dead_letters (queue, cause_kind, id);
      CREATE INDEX dead_letters_by_tool_name ON dead_letters (queue, cause_tool_name, id);
      CREATE INDEX dead_letters_by_model_name ON dead_letters (queue, cause_model_name, id);
      CREATE INDEX dead_letters_by_reason ON dead_letters (queue, cause_reason, id);
      CREATE INDEX dead_letters_by_code ON dead_letters (queue, cause_code, id);

      ALTER TABLE dead_letter_totals ADD COLUMN entries INTEGER NOT NULL DEFAULT 0;  -- rows of dead_letters with the queue
      UPDATE dead_letter_totals SET entries = (SELECT COUNT(*) FROM dead_letters WHERE dead_letters.queue = dead_letter_totals.queue);
      INSERT INTO dead_letter_totals (queue, bytes, entries)
        SELECT queue, SUM(length(CAST(entry AS BLOB))), COUNT(*) FROM dead_letters
        WHERE queue NOT IN (SELECT queue FROM dead_letter_totals) GROUP BY queue;
      DROP TRIGGER dead_letters_add_bytes;
      DROP TRIGGER dead_letters_remove_bytes;
      DROP TRIGGER dead_letters_change_bytes;
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
    `,
  },
  {
    // DeadLetterQueue.countByCause: entries per combination of their cause columns, kept by
    // triggers in the same transaction as every insert, delete and update of dead_letters (also
    // by hand), seeded from the entries already there. A cause value v is stored as '+' || v and
    // a missing one as '-' (ifnull('+' || v, '-'): a primary key column holds no NULL); a group
    // that empties is deleted.
    version: 6,
    sql: `
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
      INSERT INTO dead_letter_cause_counts (queue, kind, tool_name, model_name, reason, code, entries)
        SELECT queue, ifnull('+' || d.cause_kind, '-'),
          ifnull('+' || d.cause_tool_name, '-'), ifnull('+' || d.cause_model_name, '-'), ifnull('+' || d.cause_reason, '-'), ifnull('+' || d.cause_code, '-'), COUNT(*)
        FROM dead_letters AS d GROUP BY 1, 2, 3, 4, 5, 6;
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
    `,
  },
  {
    // DeadLetterQueue.countByGroup: the entries per combination of their cause columns and of the
    // details an operator groups by (last error kind and status, first failing field's path and
    // problem), with the tokens they spent. The details and tokens are VIRTUAL generated columns of
    // dead_letters (computed from `entry`: rows of older versions and rows inserted by hand have them
    // at once); the counts table is seeded from the entries already there and kept by triggers in the
    // same transaction as every insert, delete and update of dead_letters. Keys are encoded as in
    // dead_letter_cause_counts ('+' || value, '-' when missing); a group that empties is deleted.
    version: 7,
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
      const encoded = (row: string) => keys.map(([, column]) => `ifnull('+' || ${row}${column}, '-')`).join(', ');
      const matches = (row: string) => keys.map(([name, column]) => `${name} = ifnull('+' || ${row}${column}, '-')`).join(' AND ');
      const add = `INSERT INTO dead_letter_group_counts (queue, ${names}, entries, tokens_input, tokens_output)
          VALUES (NEW.queue, ${encoded('NEW.')}, 1, NEW.tokens_input, NEW.tokens_output)
          ON CONFLICT (queue, ${names}) DO UPDATE SET entries = entries + 1,
            tokens_input = tokens_input + excluded.tokens_input, tokens_output = tokens_output + excluded.tokens_output;`;
      const remove = `UPDATE dead_letter_group_counts SET entries = entries - 1,
            tokens_input = tokens_input - OLD.tokens_input, tokens_output = tokens_output - OLD.tokens_output
          WHERE queue = OLD.queue AND ${matches('OLD.')};
        DELETE FROM dead_letter_group_counts WHERE queue = OLD.queue AND ${matches('OLD.')} AND entries <= 0;`;
      const number = (path: string) =>
        `CASE WHEN NOT json_valid(entry) THEN 0 WHEN json_type(entry, '${path}') IN ('integer', 'real') THEN json_extract(entry, '${path}') ELSE 0 END`;
      return `
      ALTER TABLE dead_letters ADD COLUMN cause_error_kind TEXT GENERATED ALWAYS AS (
        CASE WHEN NOT json_valid(entry) THEN NULL WHEN json_type(entry, '$.lastError.kind') = 'text' THEN json_extract(entry, '$.lastError.kind') END) VIRTUAL;
      ALTER TABLE dead_letters ADD COLUMN cause_error_status GENERATED ALWAYS AS (
        CASE WHEN NOT json_valid(entry) THEN NULL WHEN json_type(entry, '$.lastError.status') IN ('integer', 'real') THEN json_extract(entry, '$.lastError.status') END) VIRTUAL;
      ALTER TABLE dead_letters ADD COLUMN cause_field_path TEXT GENERATED ALWAYS AS (
        CASE
          WHEN NOT json_valid(entry) THEN NULL
          WHEN json_type(entry, '$.reason.fields[0]') IS NULL THEN NULL
          WHEN json_type(entry, '$.reason.fields[0].path') = 'text' THEN json_extract(entry, '$.reason.fields[0].path')
          ELSE ''
        END) VIRTUAL;
      ALTER TABLE dead_letters ADD COLUMN cause_field_problem TEXT GENERATED ALWAYS AS (
        CASE WHEN NOT json_valid(entry) THEN NULL WHEN json_type(entry, '$.reason.fields[0].problem') = 'text' THEN json_extract(entry, '$.reason.fields[0].problem') END) VIRTUAL;
      ALTER TABLE dead_letters ADD COLUMN tokens_input GENERATED ALWAYS AS (${number('$.tokensSpent.input')}) VIRTUAL;
      ALTER TABLE dead_letters ADD COLUMN tokens_output GENERATED ALWAYS AS (${number('$.tokensSpent.output')}) VIRTUAL;

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
        tokens_input  NUMERIC NOT NULL,   -- sum of the entries' tokens_input
        tokens_output NUMERIC NOT NULL,
        PRIMARY KEY (queue, ${names})
      ) WITHOUT ROWID;
      INSERT INTO dead_letter_group_counts (queue, ${names}, entries, tokens_input, tokens_output)
        SELECT queue, ${encoded('')}, COUNT(*), SUM(tokens_input), SUM(tokens_output)
        FROM dead_letters GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10;
      CREATE TRIGGER dead_letters_add_group_count AFTER INSERT ON dead_letters BEGIN
        ${add}
      END;
      CREATE TRIGGER dead_letters_remove_group_count AFTER DELETE ON dead_letters BEGIN
        ${remove}
      END;
      CREATE TRIGGER dead_letters_change_group_count AFTER UPDATE OF queue, entry ON dead_letters BEGIN
        ${remove}
        ${add}
      END;
    `;
    })(),
  },
  {
    // Conversation chunks in a rowid table. In the WITHOUT ROWID table of version 4 a chunk's
    // messages were part of the b-tree key, so every seek that compared against a chunk larger
    // than about 1 KB (one that spills to overflow pages) read the whole chunk: a step of a long
    // conversation got slower with its length. Now the messages live in the table's rows and the
    // (ref, start) key in its own small index. Same name, columns and primary key; every chunk is
    // copied as it is (its text byte for byte).
    version: 8,
    sql: `
      CREATE TABLE conversation_chunks (
        ref           TEXT NOT NULL,
        start         INTEGER NOT NULL,       -- index in the conversation of the chunk's first message
        end           INTEGER NOT NULL,       -- start + the number of messages in the chunk
        expires_at_ms INTEGER NOT NULL,       -- the conversation's expiry as of this write
        messages      TEXT NOT NULL,          -- JSON array
        PRIMARY KEY (ref, start)
      );
      INSERT INTO conversation_chunks (ref, start, end, expires_at_ms, messages)
        SELECT ref, start, end, expires_at_ms, messages FROM conversation_messages ORDER BY ref, start;
      DROP TABLE conversation_messages;
      ALTER TABLE conversation_chunks RENAME TO conversation_messages;
    `,
  },
  {
    // What the retention sweep reads (`retainCompletedRunsMs`): completed runs oldest first, and
    // acknowledged messages oldest first, each through a partial index that only those rows are in
    // (a running run's checkpoint writes and a pending message do not touch it).
    version: 9,
    sql: `
      CREATE INDEX runs_completed_by_time ON runs (updated_at) WHERE status = 'completed';
      CREATE INDEX queue_messages_acked_by_time ON queue_messages (acked_at_ms) WHERE acked_at_ms IS NOT NULL;
    `,
  },
];

/** The schema version this code writes. */
export const SQLITE_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/**
 * Brings the database to {@link SQLITE_SCHEMA_VERSION} (or to `targetVersion`, which tests use to
 * write files of an older version): creates `schema_version (version, applied_at)` when missing and
 * applies every newer migration up to the target, all in one IMMEDIATE transaction, so two
 * processes opening a fresh file at once apply each migration once.
 *
 * @throws ToolrunError `STORE_UNAVAILABLE` when the file was written by a newer schema.
 */
export function migrateSqliteSchema(database: Database, nowMs: number, targetVersion: number = SQLITE_SCHEMA_VERSION): void {
  database
    .transaction(() => {
      database.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)');
      const row = database.prepare('SELECT MAX(version) AS version FROM schema_version').get() as { version: number | null };
      const current = row.version ?? 0;
      if (current > SQLITE_SCHEMA_VERSION) {
        throw new ToolrunError(
          'STORE_UNAVAILABLE',
          `the SQLite store has schema version ${current}, newer than the ${SQLITE_SCHEMA_VERSION} this toolrun knows; upgrade toolrun`,
        );
      }
      const record = database.prepare('INSERT INTO schema_version (version, applied_at) VALUES (?, ?)');
      for (const migration of MIGRATIONS) {
        if (migration.version <= current || migration.version > targetVersion) continue;
        database.exec(migration.sql);
        record.run(migration.version, new Date(nowMs).toISOString());
      }
    })
    .immediate();
}
