import type { Clock } from '../../ground/ports/clock.ts';
import type {
  DeadLetterCauseCount,
  DeadLetterFilter,
  DeadLetterGroupCount,
  DeadLetterListOptions,
  DeadLetterQueue,
  DeadLetterRecord,
} from '../../ground/ports/stores.ts';
import { utf8ByteLength } from '../../ground/utf8.ts';
import { toJsonText } from '../json-text.ts';
import { copyStoredValue } from './copy-stored-value.ts';

/** The cause fields of a stored entry that a {@link DeadLetterFilter} compares (`null`: the entry has none). */
export type DeadLetterCauseFields = Omit<DeadLetterCauseCount, 'entries'>;

/** The column of each cause field in the SQL backends (SQLite generated, PostgreSQL written at insert); each is indexed as `(queue, column, id)`. */
export const CAUSE_FILTER_COLUMNS: Record<keyof DeadLetterCauseFields, string> = {
  kind: 'cause_kind',
  toolName: 'cause_tool_name',
  modelName: 'cause_model_name',
  reason: 'cause_reason',
  code: 'cause_code',
};

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const stringOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/**
 * The cause fields of an entry as {@link DeadLetterFilter} defines them (the same expressions the
 * SQLite generated columns compute from the stored JSON): `kind` (inferred from a string
 * `toolName` or `modelName` when the entry has no `kind` at all), `toolName`, `modelName`, a string
 * `reason`, and `code` (`reason.code`, else `lastError.code`). All `null` for a value that is not an
 * object (an array included). Never throws.
 */
export function deadLetterCauseFields(entry: unknown): DeadLetterCauseFields {
  if (!isRecord(entry)) return { kind: null, toolName: null, modelName: null, reason: null, code: null };
  const toolName = stringOrNull(entry.toolName);
  const modelName = stringOrNull(entry.modelName);
  const kind = entry.kind === undefined ? (toolName !== null ? 'tool' : modelName !== null ? 'model' : null) : stringOrNull(entry.kind);
  const reasonCode = isRecord(entry.reason) ? stringOrNull(entry.reason.code) : null;
  const errorCode = isRecord(entry.lastError) ? stringOrNull(entry.lastError.code) : null;
  return { kind, toolName, modelName, reason: stringOrNull(entry.reason), code: reasonCode ?? errorCode };
}

/** The group fields of a stored entry that {@link DeadLetterGroupCount} counts by, besides its cause fields, and the tokens it spent (0 when not a finite number). */
export type DeadLetterGroupFields = Omit<DeadLetterGroupCount, 'entries'>;

const finiteOrNull = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/**
 * The cause fields ({@link deadLetterCauseFields}) and group fields of an entry as
 * {@link DeadLetterGroupCount} defines them (the same expressions the SQLite generated columns and
 * the PostgreSQL insert compute): `lastError.kind` (a string), `lastError.status` (a number), the
 * first of `reason.fields`: its `path` (a string, else `''`; `null` without a first field) and its
 * `problem` (a string), and the spent tokens (`tokensSpent.input`/`output`, numbers, else 0). All
 * `null` (tokens 0) for a value that is not an object. Never throws.
 */
export function deadLetterGroupFields(entry: unknown): DeadLetterGroupFields {
  const cause = deadLetterCauseFields(entry);
  const none = { errorKind: null, errorStatus: null, fieldPath: null, fieldProblem: null, tokensInput: 0, tokensOutput: 0 };
  if (!isRecord(entry)) return { ...cause, ...none };
  const error = isRecord(entry.lastError) ? entry.lastError : undefined;
  const fields = isRecord(entry.reason) && Array.isArray(entry.reason.fields) ? entry.reason.fields : [];
  const field: unknown = fields.length > 0 ? fields[0] : undefined;
  const tokens = isRecord(entry.tokensSpent) ? entry.tokensSpent : undefined;
  return {
    ...cause,
    errorKind: stringOrNull(error?.kind),
    errorStatus: finiteOrNull(error?.status),
    fieldPath: fields.length === 0 ? null : isRecord(field) && typeof field.path === 'string' ? field.path : '',
    fieldProblem: isRecord(field) ? stringOrNull(field.problem) : null,
    tokensInput: finiteOrNull(tokens?.input) ?? 0,
    tokensOutput: finiteOrNull(tokens?.output) ?? 0,
  };
}

/** The key of an entry's group: its cause and group fields (not its tokens), in the fixed order {@link deadLetterGroupFields} sets them. */
function groupKeyOf(fields: DeadLetterGroupFields): string {
  const { tokensInput: _input, tokensOutput: _output, ...keyFields } = fields;
  return JSON.stringify(keyFields);
}

/** The members of a filter that narrow (given and not `undefined`), in a fixed order. */
export function activeFilterFields(filter: DeadLetterFilter | undefined): Array<[keyof DeadLetterCauseFields, string]> {
  if (filter === undefined) return [];
  const fields: Array<keyof DeadLetterCauseFields> = ['kind', 'toolName', 'modelName', 'reason', 'code'];
  return fields.flatMap((field) => (typeof filter[field] === 'string' ? [[field, filter[field]] as [keyof DeadLetterCauseFields, string]] : []));
}

/** Whether an entry matches every member of `filter` ({@link DeadLetterFilter}; `undefined` or empty: every entry). */
export function matchesDeadLetterFilter(entry: unknown, filter: DeadLetterFilter | undefined): boolean {
  const active = activeFilterFields(filter);
  if (active.length === 0) return true;
  const fields = deadLetterCauseFields(entry);
  return active.every(([field, value]) => fields[field] === value);
}

/**
 * The page `list(options)` returns, from records already in queue order (oldest first, ids as
 * decimal integers): those after `options.after`, matching `options.filter`, past `offset`, at most
 * `limit`. For backends without a query of their own for `after` and `filter` (memory, Redis).
 */
export function pageOfRecords<T>(records: Iterable<DeadLetterRecord<T>>, options: DeadLetterListOptions | undefined): DeadLetterRecord<T>[] {
  const offset = Math.max(0, Math.floor(options?.offset ?? 0));
  const limit = options?.limit === undefined || options.limit < 0 ? Number.POSITIVE_INFINITY : Math.floor(options.limit);
  const after = options?.after;
  if (after !== undefined && !/^[1-9][0-9]*$/.test(after)) return [];
  const page: DeadLetterRecord<T>[] = [];
  if (limit === 0) return page;
  let skipped = 0;
  for (const record of records) {
    // decimal ids: a longer one is larger; of one length, the text order is the numeric order
    if (after !== undefined && (record.id.length < after.length || (record.id.length === after.length && record.id <= after))) continue;
    if (!matchesDeadLetterFilter(record.entry, options?.filter)) continue;
    if (skipped < offset) {
      skipped += 1;
      continue;
    }
    page.push(record);
    if (page.length >= limit) break;
  }
  return page;
}

/**
 * An in-memory {@link DeadLetterQueue}. Ids are increasing decimal strings (`'1'`, `'2'`, …), never
 * reused, so id order is insertion order; `addedAt` comes from the injected clock. Entries are
 * deep-copied on the way in and out. It never drops an entry (the worker enforces `maxEntries`).
 * `pushOnce` keys live in a map that `remove` and `purge` leave alone (see the port). Every method
 * runs without an `await` in between, so calls never interleave inside one process. `bytes()` is
 * a running total of each stored entry's UTF-8 JSON length, measured once on the way in;
 * `countByGroup()` reads a map of group counts kept the same way (the cost is the number of groups,
 * not of entries). It has no `countByCause()`: readers of the cause counts (`readDeadLetterMetrics`)
 * scan a memory queue, which also finds its oldest entry by the entries' own times.
 *
 * `push` and `pushOnce` reject with a `TypeError` for an entry `JSON.stringify` cannot serialise
 * (as every durable backend does), storing nothing.
 */
export function createMemoryDeadLetterQueue<T>(options: { clock: Clock }): DeadLetterQueue<T> {
  const { clock } = options;
  const records = new Map<string, DeadLetterRecord<T>>();
  /** id → UTF-8 bytes of the entry's JSON and its group fields, measured once on the way in. */
  const measured = new Map<string, { bytes: number; fields: DeadLetterGroupFields }>();
  let totalBytes = 0;
  /** group key → its count, kept with every store, remove and purge. */
  const groups = new Map<string, DeadLetterGroupCount>();
  /** pushOnce key → id of the entry first pushed with it. */
  const keys = new Map<string, string>();
  let lastId = 0;

  const copy = (record: DeadLetterRecord<T>): DeadLetterRecord<T> => copyStoredValue(record);
  const store = (entry: T): string => {
    const bytes = utf8ByteLength(toJsonText(entry));
    const stored = copyStoredValue(entry);
    lastId += 1;
    const id = String(lastId);
    records.set(id, { id, addedAt: new Date(clock.now()).toISOString(), entry: stored });
    const fields = deadLetterGroupFields(stored);
    measured.set(id, { bytes, fields });
    totalBytes += bytes;
    const key = groupKeyOf(fields);
    const { tokensInput, tokensOutput, ...keyFields } = fields;
    const group = groups.get(key) ?? { ...keyFields, entries: 0, tokensInput: 0, tokensOutput: 0 };
    group.entries += 1;
    group.tokensInput += tokensInput;
    group.tokensOutput += tokensOutput;
    groups.set(key, group);
    return id;
  };
  /** Takes a removed entry out of the byte total and its group count. */
  const uncount = (id: string) => {
    const { bytes, fields } = measured.get(id)!;
    measured.delete(id);
    totalBytes -= bytes;
    const key = groupKeyOf(fields);
    const group = groups.get(key)!;
    group.entries -= 1;
    group.tokensInput -= fields.tokensInput;
    group.tokensOutput -= fields.tokensOutput;
    if (group.entries <= 0) groups.delete(key);
  };

  return {
    async push(entry) {
      return store(entry);
    },
    async pushOnce(key, entry) {
      const existing = keys.get(key);
      if (existing !== undefined) return { id: existing, added: false };
      const id = store(entry);
      keys.set(key, id);
      return { id, added: true };
    },
    async get(id) {
      const record = records.get(id);
      return record === undefined ? undefined : copy(record);
    },
    async list(listOptions) {
      return pageOfRecords(records.values(), listOptions).map(copy);
    },
    async remove(id) {
      if (!records.delete(id)) return false;
      uncount(id);
      return true;
    },
    async size() {
      return records.size;
    },
    async bytes() {
      return totalBytes;
    },
    async oldest() {
      const first = records.values().next();
      return first.done ? undefined : copy(first.value);
    },
    async purge() {
      const count = records.size;
      records.clear();
      measured.clear();
      totalBytes = 0;
      groups.clear();
      return count;
    },
    async countByGroup() {
      return [...groups.values()].map((group) => ({ ...group }));
    },
  };
}
