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
