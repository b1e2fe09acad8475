/**
 * How the dashboard reads dead-letter entries: their cause group, the filters of the lists, and
 * reads of a queue in keyset pages of its own `list({ limit, after, filter })`.
 */
import type { DeadLetterFilter, DeadLetterGroupCount, DeadLetterQueue, DeadLetterRecord } from '../ground/ports/stores.ts';
import { deadLetterGroupFields } from '../stores/memory/memory-dead-letter-queue.ts';
import type { ToolDeadLetterKind } from '../worker/dead-letter-metrics.ts';

/** The fields of a tool-DLQ entry of any kind as read from a store (any may be missing). */
export interface AnyToolEntry {
  kind?: string;
  runId?: string;
  stepIndex?: number;
  toolName?: string;
  modelName?: string;
  attempts?: number;
  deliveries?: number;
  conversationRef?: string;
  reason?: string;
  firstSeenAt?: string;
  originalMessageId?: string;
  tokensSpent?: { input?: number; output?: number };
  lastError?: { kind?: string; status?: number | null; message?: string; code?: string };
  toolArgs?: unknown;
}

/** The fields of a message-DLQ entry as read from a store. */
export interface AnyMessageEntry {
  rawBody?: string;
  rawBodyTruncated?: boolean;
  reason?: { code?: string; detail?: string; fields?: Array<{ path?: string; problem?: string; expected?: string; received?: string }>; deliveries?: number };
  messageId?: string;
  receivedAt?: string;
}

/** The object behind an entry, or an empty one for a value that is not an object. */
export function asToolEntry(entry: unknown): AnyToolEntry {
  return typeof entry === 'object' && entry !== null ? (entry as AnyToolEntry) : {};
}

/** Like {@link asToolEntry}, for a message-DLQ entry. */
export function asMessageEntry(entry: unknown): AnyMessageEntry {
  return typeof entry === 'object' && entry !== null ? (entry as AnyMessageEntry) : {};
}

/** The fields an entry is grouped by: its cause and group fields as the stores count them (`DeadLetterGroupCount`). */
export type EntryGroupFields = Pick<
  DeadLetterGroupCount,
  'kind' | 'toolName' | 'modelName' | 'reason' | 'code' | 'errorKind' | 'errorStatus' | 'fieldPath' | 'fieldProblem'
>;

/** The kind of a tool-DLQ entry from its group fields, as `toolDeadLetterKind` reads it from the entry. */
function kindOfFields(fields: EntryGroupFields): ToolDeadLetterKind {
  return fields.kind === 'tool' || fields.kind === 'model' || fields.kind === 'run' ? fields.kind : 'unknown';
}

/** {@link subjectOf} from an entry's group fields (or a store's group count). */
export function subjectOfFields(fields: EntryGroupFields): string {
  const kind = kindOfFields(fields);
  if (kind === 'model') return `model:${fields.modelName ?? '?'}`;
  if (kind === 'run') return 'run';
  return fields.toolName ?? '?';
}

/** {@link toolCauseOf} from an entry's group fields (or a store's group count). */
export function toolCauseOfFields(fields: EntryGroupFields): string {
  const status = fields.errorStatus !== null ? ` ${fields.errorStatus}` : '';
  return `${fields.reason ?? '?'} · ${fields.errorKind ?? '?'}${status}`;
}

/** {@link toolGroupOf} from an entry's group fields (or a store's group count). */
export function toolGroupOfFields(fields: EntryGroupFields): string {
  return `${toolCauseOfFields(fields)} · ${subjectOfFields(fields)}`;
}

/** {@link messageGroupOf} from an entry's group fields (or a store's group count). */
export function messageGroupOfFields(fields: EntryGroupFields): string {
  const code = fields.code ?? 'unknown';
  return fields.fieldPath === null ? code : `${code} · ${fields.fieldPath || '/'} ${fields.fieldProblem ?? ''}`.trim();
}

/** What a tool-DLQ entry is about: the tool's name, `model:<name>` for a model failure, `run` for a poison run (`?`: none). */
export function subjectOf(entry: unknown): string {
  return subjectOfFields(deadLetterGroupFields(entry));
}

/** `reason · last error kind [status]`, as `npm start` prints the tool DLQ by cause (`?` for a missing string; the status when it is a number). */
export function toolCauseOf(entry: unknown): string {
  return toolCauseOfFields(deadLetterGroupFields(entry));
}

/** The group of a tool-DLQ entry: cause (reason × last error) × tool, `reason · kind status · tool`. */
export function toolGroupOf(entry: unknown): string {
  return toolGroupOfFields(deadLetterGroupFields(entry));
}

/**
 * The group of a message-DLQ entry: `code` or `code · path problem` of its first field, as `npm
 * start` prints it (`code` is the store's cause code: `reason.code`; `unknown` when it has none).
 */
export function messageGroupOf(entry: unknown): string {
  return messageGroupOfFields(deadLetterGroupFields(entry));
}

/**
 * A filter of the tool-DLQ list. Every member narrows it; all absent: every entry.
 * Text members compare exactly, except `text`, which is a case-insensitive substring of the run
 * id, the entry id, the tool, the cause or the last error's message.
 */
export interface ToolEntryFilter {
  /** A group as {@link toolGroupOf} writes it. */
  group?: string | undefined;
  /** The tool (or `model:<name>`, `run`). */
  tool?: string | undefined;
  /** The entry's `reason`. */
  reason?: string | undefined;
  /** `tool`, `model` or `run`. */
  kind?: ToolDeadLetterKind | undefined;
  text?: string | undefined;
}

/** A filter of the message-DLQ list: a group ({@link messageGroupOf}) and/or a text in the id, message id, code or detail. */
export interface MessageEntryFilter {
  group?: string | undefined;
  text?: string | undefined;
}

/** Whether a filter narrows anything. */
export function isFiltering(filter: ToolEntryFilter | MessageEntryFilter): boolean {
  return Object.values(filter).some((value) => typeof value === 'string' && value.length > 0);
}

/** Whether entries of these group fields pass the members of a filter other than `text`. */
export function matchesToolFilterFields(fields: EntryGroupFields, filter: ToolEntryFilter): boolean {
  if (filter.group && toolGroupOfFields(fields) !== filter.group) return false;
  if (filter.tool && subjectOfFields(fields) !== filter.tool) return false;
  if (filter.reason && fields.reason !== filter.reason) return false;
  if (filter.kind && kindOfFields(fields) !== filter.kind) return false;
  return true;
}

/** Whether a tool-DLQ record passes a filter. */
export function matchesToolFilter(record: DeadLetterRecord<unknown>, filter: ToolEntryFilter): boolean {
  const entry = record.entry;
  const fields = deadLetterGroupFields(entry);
  if (!matchesToolFilterFields(fields, filter)) return false;
  if (filter.text) {
    const tool = asToolEntry(entry);
    const needle = filter.text.toLowerCase();
    const message = typeof tool.lastError?.message === 'string' ? tool.lastError.message : '';
    const haystack = [record.id, typeof tool.runId === 'string' ? tool.runId : '', subjectOfFields(fields), toolCauseOfFields(fields), message]
      .join('\n')
      .toLowerCase();
    if (!haystack.includes(needle)) return false;
  }
  return true;
}

/** Whether a message-DLQ record passes a filter. */
export function matchesMessageFilter(record: DeadLetterRecord<unknown>, filter: MessageEntryFilter): boolean {
  if (filter.group && messageGroupOf(record.entry) !== filter.group) return false;
  if (filter.text) {
    const message = asMessageEntry(record.entry);
    const text = (value: unknown) => (typeof value === 'string' ? value : '');
    const haystack = [record.id, text(message.messageId), text(message.reason?.code), text(message.reason?.detail)].join('\n').toLowerCase();
    if (!haystack.includes(filter.text.toLowerCase())) return false;
  }
  return true;
}

/**
 * The subject of a filter (`tool` or the last part of a `group`) as store filter members, when it
 * names them without doubt: a tool's name is its `toolName`; `run`, `model:…` and `?` say nothing
 * to the store (a tool could be named so).
 */
function subjectFilter(subject: string): DeadLetterFilter {
  return subject === 'run' || subject === '?' || subject.startsWith('model:') ? {} : { toolName: subject };
}

/**
 * The members of the store's indexed {@link DeadLetterFilter} that a dashboard filter implies:
 * every entry the dashboard filter matches also matches the result (the dashboard still checks
 * each entry it reads against its own filter), so a list can ask the store for these entries only
 * instead of reading the whole queue. `kind` (but `unknown`), `reason`, a tool's name (from `tool`,
 * or from a `group` of exactly three parts, `reason · error · subject`) go to the store; `text`
 * and the error part of a group never do. `{}` when nothing does.
 */
export function storeFilterOf(filter: ToolEntryFilter): DeadLetterFilter {
  const result: DeadLetterFilter = {};
  if (filter.kind && filter.kind !== 'unknown') result.kind = filter.kind;
  if (filter.reason) result.reason = filter.reason;
  if (filter.tool) Object.assign(result, subjectFilter(filter.tool));
  if (filter.group) {
    const parts = filter.group.split(' · ');
    if (parts.length === 3) {
      const groupReason = parts[0]!;
      if (groupReason !== '?' && (result.reason === undefined || result.reason === groupReason)) result.reason = groupReason;
      const subject = subjectFilter(parts[2]!);
      if (subject.toolName !== undefined && (result.toolName === undefined || result.toolName === subject.toolName)) result.toolName = subject.toolName;
    }
  }
  return result;
}

/** One page of a (possibly filtered) list. */
export interface EntryPage {
  records: DeadLetterRecord<unknown>[];
  /** Entries that match: exact when `totalExact`, else a lower bound (the read stopped once the page was full). */
  total: number;
  totalExact: boolean;
  /** Whether entries after this page match. */
  hasMore: boolean;
  /** Entries read from the store to build the page. */
  scanned: number;
}

/** Lets the event loop serve other requests between two pages of a scan (SQLite reads are synchronous). */
const yieldToOtherRequests = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Entries read per `list` call while scanning a queue. */
export const SCAN_PAGE_SIZE = 20_000;

/** Whether a store filter narrows anything. */
const narrows = (filter: DeadLetterFilter | undefined): filter is DeadLetterFilter =>
  filter !== undefined && Object.values(filter).some((value) => typeof value === 'string');

/**
 * Reads a queue oldest first in keyset pages (`list({ limit, after, filter })`), handing each page
 * to `visitPage` until it returns `false` or the queue ends; page sizes come from `pageSize(n)` for
 * the n-th read. A queue whose `list` ignores `after` (a custom one written before it existed: its
 * page holds the cursor's entry again) is read on by `offset` from there, so the read still ends.
 */
async function readPages(
  queue: DeadLetterQueue<unknown>,
  options: { start?: string | undefined; filter?: DeadLetterFilter | undefined; pageSize: (read: number) => number },
  visitPage: (page: DeadLetterRecord<unknown>[]) => boolean,
): Promise<void> {
  let cursor = options.start;
  let offset: number | undefined;
  for (let read = 0; ; read += 1) {
    const limit = options.pageSize(read);
    let page = await queue.list({
      limit,
      ...(offset !== undefined ? { offset } : cursor !== undefined ? { after: cursor } : {}),
      ...(options.filter !== undefined ? { filter: options.filter } : {}),
    });
    if (offset === undefined && cursor !== undefined && page.some((record) => record.id === cursor)) {
      offset = page.findIndex((record) => record.id === cursor) + 1;
      page = await queue.list({ limit, offset, ...(options.filter !== undefined ? { filter: options.filter } : {}) });
    }
    if (offset !== undefined) offset += page.length;
    if (!visitPage(page) || page.length < limit) return;
    cursor = page[page.length - 1]!.id;
    await yieldToOtherRequests();
  }
}

/**
 * A page of a queue, oldest first.
 * - Neither `matches` nor `storeFilter`: one `list({ limit, offset })` (or `list({ limit, after })`
 *   when `after` is given: a deep page then costs what the first does) plus `size()`; `total` is
 *   the queue's size.
 * - Otherwise the queue is read in keyset pages (`list({ after, filter: storeFilter })`, each read
 *   starting at the last id of the one before: a read is an indexed range, never an OFFSET) until
 *   `offset + limit` entries passing `matches` (and one more, to know there are more) were found.
 *   Reads start at the page's size and double up to {@link SCAN_PAGE_SIZE}. With a `storeFilter`
 *   (see {@link storeFilterOf}) only the entries it matches are read, so a filter on a tool, a
 *   reason or a kind costs the page, not the queue; a `text` filter alone still reads the queue.
 * `matches` must pass only entries that `storeFilter` matches (it is checked on every entry read).
 */
export async function readEntryPage(
  queue: DeadLetterQueue<unknown>,
  options: {
    limit: number;
    offset: number;
    matches?: ((record: DeadLetterRecord<unknown>) => boolean) | undefined;
    storeFilter?: DeadLetterFilter | undefined;
    after?: string | undefined;
  },
): Promise<EntryPage> {
  const { limit, offset, matches, after } = options;
  const storeFilter = narrows(options.storeFilter) ? options.storeFilter : undefined;
  if (!matches && !storeFilter) {
    if (after !== undefined) {
      const [read, size] = await Promise.all([queue.list({ limit: limit + 1, offset, after }), queue.size()]);
      const records = read.slice(0, limit);
      return { records, total: size, totalExact: true, hasMore: read.length > limit, scanned: read.length };
    }
    const [records, size] = await Promise.all([queue.list({ limit, offset }), queue.size()]);
    const hasMore = offset + records.length < size;
    return { records, total: size, totalExact: true, hasMore, scanned: records.length };
  }
  const found: DeadLetterRecord<unknown>[] = [];
  let matched = 0;
  let scanned = 0;
  let full = false;
  const first = Math.min(SCAN_PAGE_SIZE, Math.max(64, offset + limit + 1));
  await readPages(queue, { start: after, filter: storeFilter, pageSize: (read) => Math.min(SCAN_PAGE_SIZE, first * 2 ** read) }, (page) => {
    scanned += page.length;
    for (const record of page) {
      if (matches && !matches(record)) continue;
      matched += 1;
      if (matched > offset + limit) {
        full = true;
        return false;
      }
      if (matched > offset) found.push(record);
    }
    return true;
  });
  return full
    ? { records: found, total: matched, totalExact: false, hasMore: true, scanned }
    : { records: found, total: matched, totalExact: true, hasMore: false, scanned };
}

/**
 * Reads every entry of a queue (or those `storeFilter` matches), oldest first, in keyset pages of
 * {@link SCAN_PAGE_SIZE} (`list({ after })`: each page an indexed range, so the whole read is
 * linear in the queue), calling `visit` for each; returns how many were read. Stops early when
 * `visit` returns `false`.
 */
export async function scanQueue(
  queue: DeadLetterQueue<unknown>,
  visit: (record: DeadLetterRecord<unknown>) => boolean | void,
  storeFilter?: DeadLetterFilter,
): Promise<number> {
  let scanned = 0;
  await readPages(queue, { filter: narrows(storeFilter) ? storeFilter : undefined, pageSize: () => SCAN_PAGE_SIZE }, (page) => {
    for (const record of page) {
      scanned += 1;
      if (visit(record) === false) return false;
    }
    return true;
  });
  return scanned;
}

/** A cause group with its count and what its entries have at stake. */
export interface EntryGroup {
  group: string;
  count: number;
  /** For the tool DLQ: the entries' tool, cause and spent tokens. */
  tool?: string;
  cause?: string;
  tokens?: { input: number; output: number };
}

/** Groups of both queues, most entries first (then by name). */
export interface EntryGroups {
  tool: EntryGroup[];
  message: EntryGroup[];
  /** ISO-8601 time of the read. */
  scannedAt: string;
  /** Entries read to build the groups: 0 for a queue whose store counts its groups (`countByGroup`). */
  scanned: { tool: number; message: number };
  /** How each queue's groups were built: `counts` from the store's `countByGroup` (no entry read), `scan` by reading every entry. */
  source: { tool: 'counts' | 'scan'; message: 'counts' | 'scan' };
}

const byCountThenName = (a: EntryGroup, b: EntryGroup) => b.count - a.count || (a.group < b.group ? -1 : a.group > b.group ? 1 : 0);

/** Adds `entries` entries of these fields (and their tokens) to the tool groups. */
function addToolGroup(groups: Map<string, EntryGroup>, fields: EntryGroupFields, entries: number, tokens: { input: number; output: number }): void {
  const name = toolGroupOfFields(fields);
  const group = groups.get(name) ?? { group: name, count: 0, tool: subjectOfFields(fields), cause: toolCauseOfFields(fields), tokens: { input: 0, output: 0 } };
  group.count += entries;
  group.tokens!.input += tokens.input;
  group.tokens!.output += tokens.output;
  groups.set(name, group);
}

/** Adds `entries` entries of these fields to the message groups. */
function addMessageGroup(groups: Map<string, EntryGroup>, fields: EntryGroupFields, entries: number): void {
  const name = messageGroupOfFields(fields);
  const group = groups.get(name) ?? { group: name, count: 0 };
  group.count += entries;
  groups.set(name, group);
}

/**
 * A queue's groups from its store's `countByGroup` (a few rows, whatever the depth), or, for a
 * store without it, from one keyset scan of every entry. `add` gets each group's fields, entries
 * and tokens; returns how the groups were built and the entries read.
 */
async function readGroupsOf(
  queue: DeadLetterQueue<unknown>,
  add: (fields: EntryGroupFields, entries: number, tokens: { input: number; output: number }) => void,
): Promise<{ source: 'counts' | 'scan'; scanned: number }> {
  if (queue.countByGroup !== undefined) {
    for (const count of await queue.countByGroup()) add(count, count.entries, { input: count.tokensInput, output: count.tokensOutput });
    return { source: 'counts', scanned: 0 };
  }
  const scanned = await scanQueue(queue, (record) => {
    const fields = deadLetterGroupFields(record.entry);
    add(fields, 1, { input: fields.tokensInput, output: fields.tokensOutput });
  });
  return { source: 'scan', scanned };
}

/**
 * Groups both queues' entries by cause ({@link toolGroupOf}, {@link messageGroupOf}) with their
 * counts and, for the tool DLQ, the tokens spent: from each store's `countByGroup` when it has one
 * (SQLite, PostgreSQL, memory: no entry is read), else from one scan of the queue.
 */
export async function readEntryGroups(
  stores: { toolDlq: DeadLetterQueue<unknown>; messageDlq: DeadLetterQueue<unknown> },
  nowIso: string,
): Promise<EntryGroups> {
  const tool = new Map<string, EntryGroup>();
  const message = new Map<string, EntryGroup>();
  const [toolRead, messageRead] = await Promise.all([
    readGroupsOf(stores.toolDlq, (fields, entries, tokens) => addToolGroup(tool, fields, entries, tokens)),
    readGroupsOf(stores.messageDlq, (fields, entries) => addMessageGroup(message, fields, entries)),
  ]);
  return {
    tool: [...tool.values()].sort(byCountThenName),
    message: [...message.values()].sort(byCountThenName),
    scannedAt: nowIso,
    scanned: { tool: toolRead.scanned, message: messageRead.scanned },
    source: { tool: toolRead.source, message: messageRead.source },
  };
}

/**
 * How many tool-DLQ entries pass a filter without a `text` member, from the store's group counts
 * (`countByGroup`), without reading an entry; `undefined` when the store has no counts or the
 * filter has a `text` (which only the entries can answer).
 */
export async function countToolEntries(queue: DeadLetterQueue<unknown>, filter: ToolEntryFilter): Promise<number | undefined> {
  if (queue.countByGroup === undefined || filter.text) return undefined;
  let total = 0;
  for (const count of await queue.countByGroup()) if (matchesToolFilterFields(count, filter)) total += count.entries;
  return total;
}

/** Like {@link countToolEntries}, for the message DLQ's `group` filter. */
export async function countMessageEntries(queue: DeadLetterQueue<unknown>, filter: MessageEntryFilter): Promise<number | undefined> {
  if (queue.countByGroup === undefined || filter.text) return undefined;
  let total = 0;
  for (const count of await queue.countByGroup()) if (!filter.group || messageGroupOfFields(count) === filter.group) total += count.entries;
  return total;
}

/** How a filtered tool-DLQ list reads the store: the store filter to pass, and the exact total when the counts know it. */
export interface ToolListPlan {
  storeFilter: DeadLetterFilter;
  /** Entries the filter matches, from `countByGroup`; absent without counts or with a `text` filter. */
  total?: number;
}

/**
 * The store filter of a tool-DLQ list ({@link storeFilterOf}), narrowed with the store's group
 * counts (`countByGroup`, when it has them) to its single most selective member: each member is
 * an indexed equality on its own, and a store given two may walk the index of the less selective
 * one (a reason shared by 200,000 entries instead of a tool with 100). Also the filter's exact
 * total from the same counts when it has no `text`. Without counts: `storeFilterOf(filter)`.
 */
export async function planToolList(queue: DeadLetterQueue<unknown>, filter: ToolEntryFilter): Promise<ToolListPlan> {
  const storeFilter = storeFilterOf(filter);
  if (queue.countByGroup === undefined) return { storeFilter };
  const counts = await queue.countByGroup();
  const members = (Object.entries(storeFilter) as Array<[keyof DeadLetterFilter, string | undefined]>).filter(
    (member): member is [keyof DeadLetterFilter, string] => typeof member[1] === 'string',
  );
  let narrowest: DeadLetterFilter = storeFilter;
  let fewest = Number.POSITIVE_INFINITY;
  for (const [field, value] of members) {
    const entries = counts.reduce((sum, count) => (count[field] === value ? sum + count.entries : sum), 0);
    if (entries < fewest) {
      fewest = entries;
      narrowest = { [field]: value };
    }
  }
  if (filter.text) return { storeFilter: narrowest };
  const total = counts.reduce((sum, count) => (matchesToolFilterFields(count, filter) ? sum + count.entries : sum), 0);
  return { storeFilter: narrowest, total };
}

/** How a filtered message-DLQ list reads the store: the store filter to pass, and the exact total when the counts know it. */
export interface MessageListPlan {
  storeFilter: DeadLetterFilter;
  /** Entries the filter matches, from `countByGroup`; absent without counts or with a `text` filter. */
  total?: number;
}

/**
 * The store filter of a message-DLQ list from the store's group counts (`countByGroup`): a `group`
 * filter whose groups all have one code reads only the entries of that code (the indexed
 * `code`); the exact total when there is no `text`. Without counts: no store filter (the list
 * reads the queue).
 */
export async function planMessageList(queue: DeadLetterQueue<unknown>, filter: MessageEntryFilter): Promise<MessageListPlan> {
  if (queue.countByGroup === undefined) return { storeFilter: {} };
  const counts = await queue.countByGroup();
  const matching = filter.group ? counts.filter((count) => messageGroupOfFields(count) === filter.group) : counts;
  const codes = new Set(matching.map((count) => count.code));
  const [code] = [...codes];
  const storeFilter: DeadLetterFilter = filter.group && codes.size === 1 && typeof code === 'string' ? { code } : {};
  if (filter.text) return { storeFilter };
  return { storeFilter, total: matching.reduce((sum, count) => sum + count.entries, 0) };
}
