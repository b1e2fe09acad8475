import type { DeadLetterCauseCount, DeadLetterGroupCount } from '../ground/ports/stores.ts';

/**
 * What the SQL backends' dead-letter group counts are keyed by: each count's column, and the
 * `dead_letters` column it counts. A value v is stored as `'+' || v` and a missing one as `'-'` (a
 * primary key column holds no NULL). Shared by the PostgreSQL and SQLite schemas.
 */
export const GROUP_KEYS: ReadonlyArray<readonly [count: string, entry: string]> = [
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

/** The group count columns, comma-separated, in {@link GROUP_KEYS} order. */
export const GROUP_NAMES = GROUP_KEYS.map(([name]) => name).join(', ');

/** A row of `dead_letter_cause_counts`: each key as in {@link GROUP_KEYS}; numbers as the driver returns them (PostgreSQL: `bigint` as text). */
export type CauseCountRow = Record<'kind' | 'tool_name' | 'model_name' | 'reason' | 'code', string> & { entries: number | string };

/** A row of `dead_letter_group_counts`: keys as in {@link GROUP_KEYS}, with the group's tokens. */
export type GroupCountRow = CauseCountRow &
  Record<'error_kind' | 'error_status' | 'field_path' | 'field_problem', string> & { tokens_input: number | string; tokens_output: number | string };

/** The count a cause-count row holds; `decodeText` reads back a stored text value. */
export function causeCountOf(row: CauseCountRow, decodeText: (text: string) => string): DeadLetterCauseCount {
  const decode = (value: string): string | null => (value.startsWith('+') ? decodeText(value.slice(1)) : null);
  return {
    kind: decode(row.kind),
    toolName: decode(row.tool_name),
    modelName: decode(row.model_name),
    reason: decode(row.reason),
    code: decode(row.code),
    entries: Number(row.entries),
  };
}

/** The count a group-count row holds; `decodeText` reads back a stored text value. */
export function groupCountOf(row: GroupCountRow, decodeText: (text: string) => string): DeadLetterGroupCount {
  const decode = (value: string): string | null => (value.startsWith('+') ? decodeText(value.slice(1)) : null);
  const status = decode(row.error_status);
  const { entries, ...cause } = causeCountOf(row, decodeText);
  return {
    ...cause,
    errorKind: decode(row.error_kind),
    errorStatus: status === null ? null : Number(status),
    fieldPath: decode(row.field_path),
    fieldProblem: decode(row.field_problem),
    entries,
    tokensInput: Number(row.tokens_input),
    tokensOutput: Number(row.tokens_output),
  };
}
