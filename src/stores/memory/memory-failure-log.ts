import type { FailureLog, FailureLogRecord } from '../../ground/ports/failure-log.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import { failureLogCursor } from '../failure-log-cursor.ts';
import { copyStoredValue } from './copy-stored-value.ts';

/** Options of {@link createMemoryFailureLog}. */
export interface MemoryFailureLogOptions {
  /**
   * Records kept; beyond it the oldest are dropped (counted in `dropped()`), so a long-lived
   * process cannot grow without bound. @defaultValue 100_000
   */
  maxRecords?: number;
}

/** An in-memory {@link FailureLog}, plus how many records it dropped at its bound. */
export interface MemoryFailureLog extends FailureLog {
  /** Records dropped because `maxRecords` was reached. */
  dropped(): number;
}

/**
 * An in-memory {@link FailureLog} for tests and short-lived processes. Records are deep-copied on
 * the way in and out; appends keep arrival order. A `listPage` cursor counts the records ever
 * appended before the page's end, so a reader whose next records were dropped at the bound goes on
 * from the oldest record kept. `findByTraceId` scans the records kept, newest first (memory logs
 * are small; the SQL backends use an index).
 *
 * @throws ToolrunError `INVALID_OPTIONS` when `maxRecords` is not an integer ≥ 1.
 */
export function createMemoryFailureLog(options: MemoryFailureLogOptions = {}): MemoryFailureLog {
  const maxRecords = options.maxRecords ?? 100_000;
  if (!Number.isInteger(maxRecords) || maxRecords < 1) {
    throw new ToolrunError('INVALID_OPTIONS', `maxRecords must be an integer ≥ 1, received ${String(maxRecords)}`);
  }
  let records: FailureLogRecord[] = [];
  let dropped = 0;
  return {
    async append(record) {
      records.push(copyStoredValue(record));
      if (records.length > maxRecords * 1.25) {
        const excess = records.length - maxRecords;
        records = records.slice(excess);
        dropped += excess;
      }
    },
    async list(listOptions) {
      const offset = Math.max(0, listOptions?.offset ?? 0);
      const visible = records.length > maxRecords ? records.slice(records.length - maxRecords) : records;
      const end = listOptions?.limit === undefined ? visible.length : offset + Math.max(0, listOptions.limit);
      return visible.slice(offset, end).map(copyStoredValue);
    },
    async listPage(pageOptions) {
      const after = failureLogCursor(pageOptions, 15);
      // absolute positions: records ever appended; `dropped` of them are no longer in `records`
      const firstKept = dropped + Math.max(0, records.length - maxRecords);
      const start = Math.max(after === null ? 0 : Number(after), firstKept);
      const page = records.slice(start - dropped, start - dropped + pageOptions.limit);
      const next = page.length > 0 ? String(start + page.length) : after;
      return { records: page.map(copyStoredValue), next };
    },
    async findByTraceId(traceId) {
      // newest first, over the records kept (the last maxRecords)
      const firstVisible = Math.max(0, records.length - maxRecords);
      for (let index = records.length - 1; index >= firstVisible; index -= 1) {
        const record = records[index]!;
        if (record.kind === 'tool-failure' && record.traceId === traceId) return copyStoredValue(record);
      }
      return undefined;
    },
    async size() {
      return Math.min(records.length, maxRecords);
    },
    dropped: () => dropped + Math.max(0, records.length - maxRecords),
  };
}
