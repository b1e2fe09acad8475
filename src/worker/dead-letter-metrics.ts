import { systemClock, type Clock } from '../ground/ports/clock.ts';
import type { DeadLetterCauseCount, DeadLetterQueue, DeadLetterRecord } from '../ground/ports/stores.ts';

/** Depth, size and age of one dead-letter queue. */
export interface DeadLetterQueueMetrics {
  /** Entries in the queue (`size()`). */
  depth: number;
  /**
   * The stored size of the queue in bytes: the UTF-8 length of every entry's JSON
   * (`DeadLetterQueue.bytes()`), what the worker's `maxDeadLetterBytes` bound is checked against.
   * `null` for a queue without `bytes()` (a custom sink).
   */
  bytes: number | null;
  /**
   * Age of the oldest entry in ms at `measuredAt`, from the entry's own time (`firstSeenAt` of a
   * tool entry, `receivedAt` of a message entry), or the queue's `addedAt` when the entry has none
   * that parses. `null` when the queue is empty. Never negative.
   */
  oldestAgeMs: number | null;
  /** ISO-8601 time of that oldest entry, `null` when the queue is empty. */
  oldestAt: string | null;
}

/** Metrics of the message DLQ. */
export interface MessageDeadLetterMetrics extends DeadLetterQueueMetrics {
  /** Entries per rejection code (`MALFORMED_JSON`, `INVALID_MESSAGE`, `DELIVERY_LIMIT_EXCEEDED`...; `unknown` when absent). */
  entriesByReason: Record<string, number>;
}

/** The kind of a tool-DLQ entry: its `kind` (for an entry of an older toolrun without one, `tool` when it has a `toolName`, `model` when it has a `modelName`), else `unknown`. */
export type ToolDeadLetterKind = 'tool' | 'model' | 'run' | 'unknown';

/** Metrics of the tool DLQ. */
export interface ToolDeadLetterMetrics extends DeadLetterQueueMetrics {
  /**
   * Entries per kind: `tool` (a tool failed past in-band recovery), `model` (the model could not be
   * reached), `run` (a poison run: every delivery of its message failed). Always has the three
   * keys (0 when none); `unknown` only when some entry is none of them.
   */
  entriesByKind: Record<'tool' | 'model' | 'run', number> & { unknown?: number };
  /** Tool-failure entries (kind `tool`) per `toolName` (`unknown` when absent). Model and run entries are not counted here. */
  entriesByTool: Record<string, number>;
  /** Model-failure entries (kind `model`) per `modelName` (`unknown` when absent). */
  entriesByModel: Record<string, number>;
}

/** What {@link readDeadLetterMetrics} returns. */
export interface DeadLetterMetrics {
  message: MessageDeadLetterMetrics;
  tool: ToolDeadLetterMetrics;
  /** ISO-8601 time the ages were measured at. */
  measuredAt: string;
}

/** Options of {@link readDeadLetterMetrics}. */
export interface ReadDeadLetterMetricsOptions {
  /** @defaultValue the system clock */
  clock?: Clock;
  /** Entries read per `list` call while scanning. @defaultValue 500 */
  pageSize?: number;
}

/**
 * The kind of a tool-DLQ entry: its `kind` field when it is `tool`, `model` or `run`; for an entry
 * written without one (an older toolrun), `tool` when it has a `toolName` and `model` when it has a
 * `modelName`; else `unknown`. Never throws.
 */
export function toolDeadLetterKind(entry: unknown): ToolDeadLetterKind {
  if (typeof entry !== 'object' || entry === null) return 'unknown';
  const { kind, toolName, modelName } = entry as Record<string, unknown>;
  if (kind === 'tool' || kind === 'model' || kind === 'run') return kind;
  if (kind !== undefined) return 'unknown';
  if (typeof toolName === 'string') return 'tool';
  if (typeof modelName === 'string') return 'model';
  return 'unknown';
}

type Tally = Record<string, number>;

interface Scan {
  oldestMs: number | undefined;
}

function entryTimeMs(record: DeadLetterRecord<unknown>, field: 'firstSeenAt' | 'receivedAt'): number {
  const entry = record.entry;
  const own = typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>)[field] : undefined;
  const ownMs = typeof own === 'string' ? Date.parse(own) : Number.NaN;
  return Number.isFinite(ownMs) ? ownMs : Date.parse(record.addedAt);
}

function count(tally: Tally, key: unknown): void {
  const name = typeof key === 'string' && key.length > 0 ? key : 'unknown';
  tally[name] = (tally[name] ?? 0) + 1;
}

async function scan(queue: DeadLetterQueue<unknown>, field: 'firstSeenAt' | 'receivedAt', visit: (entry: unknown) => void, pageSize: number): Promise<Scan> {
  const result: Scan = { oldestMs: undefined };
  for (let offset = 0; ; offset += pageSize) {
    const page = await queue.list({ limit: pageSize, offset });
    for (const record of page) {
      const timeMs = entryTimeMs(record, field);
      if (Number.isFinite(timeMs) && (result.oldestMs === undefined || timeMs < result.oldestMs)) result.oldestMs = timeMs;
      visit(record.entry);
    }
    if (page.length < pageSize) return result;
  }
}

function queueMetrics(depth: number, bytes: number | null, oldestMs: number | undefined, nowMs: number): DeadLetterQueueMetrics {
  if (depth === 0 || oldestMs === undefined) return { depth, bytes, oldestAgeMs: null, oldestAt: null };
  return { depth, bytes, oldestAgeMs: Math.max(0, nowMs - oldestMs), oldestAt: new Date(oldestMs).toISOString() };
}

async function bytesOf(queue: DeadLetterQueue<unknown>): Promise<number | null> {
  return typeof queue.bytes === 'function' ? await queue.bytes() : null;
}

function field(entry: unknown, key: string): unknown {
  return typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>)[key] : undefined;
}

/** The kind of a counted group, as {@link toolDeadLetterKind} reads it from an entry. */
function countedKind(count: DeadLetterCauseCount): ToolDeadLetterKind {
  return count.kind === 'tool' || count.kind === 'model' || count.kind === 'run' ? count.kind : 'unknown';
}

/** The oldest entry's own time (by id: the queue's oldest), for a queue read through its counts. */
async function oldestOf(queue: DeadLetterQueue<unknown>, field: 'firstSeenAt' | 'receivedAt'): Promise<Scan> {
  const oldest = await queue.oldest();
  return { oldestMs: oldest === undefined ? undefined : entryTimeMs(oldest, field) };
}

/**
 * Reads the observable state of the two dead-letter queues: depth, stored bytes, age of the oldest
 * entry (alertable), and the tool DLQ's entries per kind (`tool` / `model` / `run`), per tool and
 * per model; the message DLQ's entries per rejection code. Used by `toolrun stats` and by metric
 * exporters.
 *
 * When both queues have `countByCause` (the SQLite and PostgreSQL backends), the tallies come from
 * it and the oldest entry is the queue's `oldest()` (the first by id; its own time): a few indexed
 * reads, whatever the depth. Otherwise every entry is scanned in pages of `pageSize` (O(depth);
 * DLQs are bounded by the worker's `maxDeadLetterEntries` and `maxDeadLetterBytes`). Read-only and safe to call concurrently with a
 * worker; entries added or removed during the scan may or may not be counted in the tallies, while
 * `depth` and `bytes` are the queue's own `size()` and `bytes()`.
 *
 * Rejects when a store call fails (the store's error, unchanged).
 */
export async function readDeadLetterMetrics(
  stores: { messageDlq: DeadLetterQueue<unknown>; toolDlq: DeadLetterQueue<unknown> },
  options: ReadDeadLetterMetricsOptions = {},
): Promise<DeadLetterMetrics> {
  const clock = options.clock ?? systemClock;
  const pageSize = Math.max(1, Math.floor(options.pageSize ?? 500));
  const entriesByReason: Tally = {};
  const entriesByKind: ToolDeadLetterMetrics['entriesByKind'] = { tool: 0, model: 0, run: 0 };
  const entriesByTool: Tally = {};
  const entriesByModel: Tally = {};
  const visitTool = (entry: unknown) => {
    const kind = toolDeadLetterKind(entry);
    entriesByKind[kind] = (entriesByKind[kind] ?? 0) + 1;
    if (kind === 'tool') count(entriesByTool, field(entry, 'toolName'));
    else if (kind === 'model') count(entriesByModel, field(entry, 'modelName'));
  };
  const { messageDlq, toolDlq } = stores;
  if (messageDlq.countByCause !== undefined && toolDlq.countByCause !== undefined) {
    const [messageDepth, toolDepth, messageBytes, toolBytes, messageCounts, toolCounts, messageOldest, toolOldest] = await Promise.all([
      messageDlq.size(),
      toolDlq.size(),
      bytesOf(messageDlq),
      bytesOf(toolDlq),
      messageDlq.countByCause(),
      toolDlq.countByCause(),
      oldestOf(messageDlq, 'receivedAt'),
      oldestOf(toolDlq, 'firstSeenAt'),
    ]);
    const add = (tally: Tally, key: string | null, entries: number) => {
      const name = key !== null && key.length > 0 ? key : 'unknown';
      tally[name] = (tally[name] ?? 0) + entries;
    };
    for (const count of messageCounts) add(entriesByReason, count.code, count.entries);
    for (const count of toolCounts) {
      const kind = countedKind(count);
      entriesByKind[kind] = (entriesByKind[kind] ?? 0) + count.entries;
      if (kind === 'tool') add(entriesByTool, count.toolName, count.entries);
      else if (kind === 'model') add(entriesByModel, count.modelName, count.entries);
    }
    const nowMs = clock.now();
    return {
      message: { ...queueMetrics(messageDepth, messageBytes, messageOldest.oldestMs, nowMs), entriesByReason },
      tool: { ...queueMetrics(toolDepth, toolBytes, toolOldest.oldestMs, nowMs), entriesByKind, entriesByTool, entriesByModel },
      measuredAt: new Date(nowMs).toISOString(),
    };
  }
  const [messageDepth, toolDepth, messageBytes, toolBytes, messageScan, toolScan] = await Promise.all([
    stores.messageDlq.size(),
    stores.toolDlq.size(),
    bytesOf(stores.messageDlq),
    bytesOf(stores.toolDlq),
    scan(stores.messageDlq, 'receivedAt', (entry) => count(entriesByReason, (field(entry, 'reason') as { code?: unknown } | undefined)?.code), pageSize),
    scan(stores.toolDlq, 'firstSeenAt', visitTool, pageSize),
  ]);
  const nowMs = clock.now();
  return {
    message: { ...queueMetrics(messageDepth, messageBytes, messageScan.oldestMs, nowMs), entriesByReason },
    tool: { ...queueMetrics(toolDepth, toolBytes, toolScan.oldestMs, nowMs), entriesByKind, entriesByTool, entriesByModel },
    measuredAt: new Date(nowMs).toISOString(),
  };
}
