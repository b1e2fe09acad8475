/**
 * The failure log: a durable, append-only record of what went wrong in tool calls, kept for
 * people: `toolrun report` reads it to show which tools and which argument fields fail
 * most. Every value in it is already redacted and bounded when it is appended; it never holds
 * arguments, stacks or conversation text.
 */
import type { FailureType } from '../failure-codes.ts';

/** One field-level problem of a failed call (JSON Pointer path; `expected`/`received` redacted and bounded). */
export interface FailureLogField {
  path: string;
  /** `required`, `type`, `enum`, `format`, `pattern`, `range`, `length`, `unknown`, `const`, `alternatives`, `other`. */
  problem: string;
  expected?: string;
  received?: string;
}

/** The members every failure-log record has. */
export interface FailureLogRecordBase {
  /** ISO-8601, on the clock of the runtime that saw it. */
  at: string;
  /** The registered tool (or the requested name, redacted, for `TOOL_NOT_FOUND`). */
  toolName: string;
  runId: string | null;
  sessionId: string | null;
}

/** A tool call that ended in a failed envelope. */
export interface ToolFailureLogRecord extends FailureLogRecordBase {
  kind: 'tool-failure';
  traceId: string;
  callId: string;
  /** The agent-loop step of the call, when it ran inside an observed run. */
  stepIndex: number | null;
  type: FailureType;
  /** The envelope's `error.code`. */
  code: string;
  /** The envelope's `error.message` (model-facing, redacted). */
  message: string;
  fields: FailureLogField[];
  attempts: number;
  durationMs: number;
}

/**
 * A run recovered: a tool call succeeded at a later step than the failure that opened the episode
 * (its recovery rounds: the steps from a failure to the next success of the run).
 */
export interface RecoveryLogRecord extends FailureLogRecordBase {
  kind: 'recovery';
  /** `toolName` is the tool whose failure opened the episode; this one succeeded. */
  recoveredWith: string;
  failedAtStep: number;
  recoveredAtStep: number;
  /** `recoveredAtStep - failedAtStep`, at least 1. */
  rounds: number;
  /** Failed calls in the episode. */
  failures: number;
}

/** A circuit breaker opened for a tool: in one session, or for every run (`shared`). */
export interface BreakerOpenLogRecord extends FailureLogRecordBase {
  kind: 'breaker-open';
  scope: 'session' | 'shared';
}

/**
 * One record of the failure log:
 * - `tool-failure`: a failed call;
 * - `recovery`: a run got past its failures;
 * - `breaker-open`: a breaker trip.
 */
export type FailureLogRecord = ToolFailureLogRecord | RecoveryLogRecord | BreakerOpenLogRecord;

/** Options of {@link FailureLog.listPage}. */
export interface FailureLogPageOptions {
  /** Records in the page at most (an integer ≥ 1). */
  limit: number;
  /**
   * Start after this cursor: the `next` of an earlier page of the same log. Absent (or `null`):
   * from the oldest record kept.
   */
  after?: string | null | undefined;
}

/** One page of a {@link FailureLog}, oldest first. */
export interface FailureLogPage {
  /** The records after the cursor, oldest first, at most `limit` of them. */
  records: FailureLogRecord[];
  /**
   * Where the page ended: pass it as `after` for the records that follow (opaque; only meaningful
   * to the log that made it). It is there on the last page too (`records.length < limit`), so a
   * reader can come back later for the records appended since; `null` only when the log has never
   * had a record past `after`.
   */
  next: string | null;
}

/**
 * Where failure records are kept (memory for tests, SQLite beside the embedded stores, PostgreSQL
 * beside its stores). Records are JSON values; what is read back is a copy. Appends from concurrent
 * callers are all kept, in order of arrival.
 */
export interface FailureLog {
  /** Appends one record (already redacted by the caller). */
  append(record: FailureLogRecord): Promise<void>;
  /**
   * Records oldest first; `limit` defaults to all, `offset` to 0. A deep `offset` costs what it
   * skips: to read a large log, page with {@link FailureLog.listPage} instead.
   */
  list(options?: { limit?: number; offset?: number }): Promise<FailureLogRecord[]>;
  /**
   * Keyset paging: the records after the cursor `after`, oldest first, and the cursor to go on
   * from. Each page costs about the same at any depth (the toolrun backends read an index range),
   * so a reader streams a log of millions of records in constant memory. Optional for logs written
   * elsewhere; readers fall back to `list` with `offset` without it (see `streamFailureLog`).
   *
   * @throws ToolrunError `INVALID_OPTIONS` when `limit` is not an integer ≥ 1 or `after` is not a
   * cursor of this kind of log.
   */
  listPage?(options: FailureLogPageOptions): Promise<FailureLogPage>;
  /**
   * The most recently appended `tool-failure` record whose `traceId` is exactly `traceId` (a copy),
   * or `undefined` when there is none (records of other kinds never match). The toolrun backends
   * answer from an index on the trace id, so a lookup costs the same at any log size. Optional for
   * logs written elsewhere: without it, a reader that joins envelopes to their records (the
   * dashboard) keeps its own bounded index of the records it has read.
   */
  findByTraceId?(traceId: string): Promise<ToolFailureLogRecord | undefined>;
  size(): Promise<number>;
}
