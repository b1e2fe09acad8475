import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { FailureType } from '../../ground/failure-codes.ts';
import type { FailureLogField, FailureLogRecord } from '../../ground/ports/failure-log.ts';
import { REPORT_FAILURE_TYPES } from './build-failure-report.ts';

/** What was read from a log file. */
export interface FailureLogFileContents {
  records: FailureLogRecord[];
  /** Non-empty lines read. */
  lines: number;
  /** Lines that are not JSON, or toolrun lines missing what a record needs. Other JSON lines are ignored, not counted. */
  skipped: number;
}

type Line = Record<string, unknown>;

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const integer = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);
const TYPES: ReadonlySet<string> = new Set(REPORT_FAILURE_TYPES);

function timestampOf(line: Line): string | null {
  const timestamp = text(line.timestamp);
  if (timestamp !== null) return timestamp;
  const time = integer(line.time);
  return time === null ? null : new Date(time).toISOString();
}

function fieldsOf(value: unknown): FailureLogField[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item: unknown) => {
    if (typeof item !== 'object' || item === null) return [];
    const field = item as Line;
    const path = text(field.path);
    const problem = text(field.problem);
    if (path === null || problem === null) return [];
    const expected = text(field.expected);
    const received = text(field.received);
    return [{ path, problem, ...(expected !== null ? { expected } : {}), ...(received !== null ? { received } : {}) }];
  });
}

/**
 * The failure-log record a toolrun log line stands for (see `createToolCallLogger`): a failed
 * `tool_call`, a `tool_recovery` or a `breaker_open`. `null` for a successful call or any other
 * line; `undefined` for a toolrun line that lacks what a record needs.
 */
export function failureRecordFromLogLine(line: Line): FailureLogRecord | null | undefined {
  const at = timestampOf(line);
  const toolName = text(line.tool_name);
  const base = () => ({ at: at ?? '', toolName: toolName ?? '', runId: text(line.run_id), sessionId: text(line.session_id) });
  switch (line.event) {
    case 'tool_call': {
      if (line.status !== 'failed') return null;
      const type = text(line.error_type);
      const code = text(line.error_code);
      if (at === null || toolName === null || type === null || !TYPES.has(type) || code === null) return undefined;
      return {
        kind: 'tool-failure',
        ...base(),
        traceId: text(line.trace_id) ?? '',
        callId: text(line.call_id) ?? '',
        stepIndex: integer(line.step_index),
        type: type as FailureType,
        code,
        message: text(line.message) ?? '',
        fields: fieldsOf(line.fields),
        attempts: integer(line.attempts) ?? 0,
        durationMs: integer(line.duration_ms) ?? 0,
      };
    }
    case 'tool_recovery': {
      const rounds = integer(line.rounds);
      const failedAtStep = integer(line.failed_at_step);
      const recoveredAtStep = integer(line.recovered_at_step);
      if (at === null || toolName === null || rounds === null || failedAtStep === null || recoveredAtStep === null) return undefined;
      return {
        kind: 'recovery',
        ...base(),
        recoveredWith: text(line.recovered_with) ?? '',
        failedAtStep,
        recoveredAtStep,
        rounds,
        failures: integer(line.failures) ?? 1,
      };
    }
    case 'breaker_open': {
      const scope = line.scope;
      if (at === null || toolName === null || (scope !== 'session' && scope !== 'shared')) return undefined;
      return { kind: 'breaker-open', ...base(), scope };
    }
    default:
      return null;
  }
}

/** What {@link scanFailureLogFile} read, beside the records it handed on. */
export interface FailureLogFileScan {
  /** Non-empty lines read. */
  lines: number;
  /** Lines that are not JSON, or toolrun lines missing what a record needs. */
  skipped: number;
}

/**
 * Reads a pino log file (NDJSON, as written by `createToolCallLogger`) line by line and hands
 * each failure record to `onRecord` as soon as its line is read, so a file of any size is read in
 * bounded memory (one line at a time, plus what `onRecord` keeps). Other lines are ignored.
 *
 * @throws the file system error (`ENOENT`, `EACCES`) when the file cannot be read.
 */
export async function scanFailureLogFile(path: string, onRecord: (record: FailureLogRecord) => void): Promise<FailureLogFileScan> {
  let lines = 0;
  let skipped = 0;
  const stream = createReadStream(path, { encoding: 'utf8' });
  const reader = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const raw of reader) {
      const trimmed = raw.trim();
      if (trimmed === '') continue;
      lines += 1;
      let parsed: unknown;
      try {
        parsed = JSON.parse(trimmed);
      } catch {
        skipped += 1;
        continue;
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        skipped += 1;
        continue;
      }
      const record = failureRecordFromLogLine(parsed as Line);
      if (record === undefined) skipped += 1;
      else if (record !== null) onRecord(record);
    }
  } finally {
    reader.close();
    stream.destroy();
  }
  return { lines, skipped };
}

/**
 * Reads the failure records out of a pino log file (NDJSON, as written by `createToolCallLogger`),
 * line by line, and returns them all (for a large file, {@link scanFailureLogFile} hands them on
 * one by one instead). Other lines are ignored.
 *
 * @throws the file system error (`ENOENT`, `EACCES`) when the file cannot be read.
 */
export async function readFailureLogFile(path: string): Promise<FailureLogFileContents> {
  const records: FailureLogRecord[] = [];
  const { lines, skipped } = await scanFailureLogFile(path, (record) => records.push(record));
  return { records, lines, skipped };
}
