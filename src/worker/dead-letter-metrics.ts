import { systemClock, type Clock } from '../ground/ports/clock.ts';
import type { DeadLetterCauseCount, DeadLetterQueue, DeadLetterRecord } from '../ground/ports/stores.ts';
import { deadLetterCauseFields } from '../stores/memory/memory-dead-letter-queue.ts';

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
  const { kind } = deadLetterCauseFields(entry);
  return kind === 'tool' || kind === 'model' || kind === 'run' ? kind : 'unknown';
}

type Tally = Record<string, number>;

/** A queue's entries counted per cause, and the time of its oldest entry (epoch ms). */
interface Counted {
  counts: Iterable<DeadLetterCauseCount>;
  oldestMs: number | undefined;
}

function entryTimeMs(record: DeadLetterRecord<unknown>, field: 'firstSeenAt' | 'receivedAt'): number {
  const entry = record.entry;
  const own = typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>)[field] : undefined;
  const ownMs = typeof own === 'string' ? Date.parse(own) : Number.NaN;
  return Number.isFinite(ownMs) ? ownMs : Date.parse(record.addedAt);
}

/** The counts the queue keeps (`countByCause`), and its oldest entry by id (`oldest()`, its own time). */
async function readCounts(queue: DeadLetterQueue<unknown>, field: 'firstSeenAt' | 'receivedAt'): Promise<Counted> {
  const [counts, oldest] = await Promise.all([queue.countByCause!(), queue.oldest()]);
  return { counts, oldestMs: oldest === undefined ? undefined : entryTimeMs(oldest, field) };
}

/** The counts and the oldest entry's time, from every entry read in pages of `pageSize`. */
async function scanCounts(queue: DeadLetterQueue<unknown>, field: 'firstSeenAt' | 'receivedAt', pageSize: number): Promise<Counted> {
  const counts = new Map<string, DeadLetterCauseCount>();
  let oldestMs: number | undefined;
  for (let offset = 0; ; offset += pageSize) {
    const page = await queue.list({ limit: pageSize, offset });
    for (const record of page) {
      const timeMs = entryTimeMs(record, field);
      if (Number.isFinite(timeMs) && (oldestMs === undefined || timeMs < oldestMs)) oldestMs = timeMs;
      const cause = deadLetterCauseFields(record.entry);
      const key = JSON.stringify(cause);
      const counted = counts.get(key);
      if (counted) counted.entries += 1;
      else counts.set(key, { ...cause, entries: 1 });
    }
    if (page.length < pageSize) return { counts: counts.values(), oldestMs };
  }
}

function queueMetrics(depth: number, bytes: number | null, oldestMs: number | undefined, nowMs: number): DeadLetterQueueMetrics {
  if (depth === 0 || oldestMs === undefined) return { depth, bytes, oldestAgeMs: null, oldestAt: null };
  return { depth, bytes, oldestAgeMs: Math.max(0, nowMs - oldestMs), oldestAt: new Date(oldestMs).toISOString() };
}

async function bytesOf(queue: DeadLetterQueue<unknown>): Promise<number | null> {
  return typeof queue.bytes === 'function' ? await queue.bytes() : null;
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
  const { messageDlq, toolDlq } = stores;
  const kept = messageDlq.countByCause !== undefined && toolDlq.countByCause !== undefined;
  const countsOf = (queue: DeadLetterQueue<unknown>, field: 'firstSeenAt' | 'receivedAt') =>
    kept ? readCounts(queue, field) : scanCounts(queue, field, pageSize);
  const [messageDepth, toolDepth, messageBytes, toolBytes, message, tool] = await Promise.all([
    messageDlq.size(),
    toolDlq.size(),
    bytesOf(messageDlq),
    bytesOf(toolDlq),
    countsOf(messageDlq, 'receivedAt'),
    countsOf(toolDlq, 'firstSeenAt'),
  ]);
  const add = (tally: Tally, key: string | null, entries: number) => {
    const name = key !== null && key.length > 0 ? key : 'unknown';
    tally[name] = (tally[name] ?? 0) + entries;
  };
  const entriesByReason: Tally = {};
  const entriesByKind: ToolDeadLetterMetrics['entriesByKind'] = { tool: 0, model: 0, run: 0 };
  const entriesByTool: Tally = {};
  const entriesByModel: Tally = {};
  for (const count of message.counts) add(entriesByReason, count.code, count.entries);
  for (const count of tool.counts) {
    const kind = count.kind === 'tool' || count.kind === 'model' || count.kind === 'run' ? count.kind : 'unknown';
    entriesByKind[kind] = (entriesByKind[kind] ?? 0) + count.entries;
    if (kind === 'tool') add(entriesByTool, count.toolName, count.entries);
    else if (kind === 'model') add(entriesByModel, count.modelName, count.entries);
  }
  const nowMs = clock.now();
  return {
    message: { ...queueMetrics(messageDepth, messageBytes, message.oldestMs, nowMs), entriesByReason },
    tool: { ...queueMetrics(toolDepth, toolBytes, tool.oldestMs, nowMs), entriesByKind, entriesByTool, entriesByModel },
    measuredAt: new Date(nowMs).toISOString(),
  };
}
