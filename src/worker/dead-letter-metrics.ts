import { systemClock, type Clock } from '../core/ports/clock.ts';
import type { DeadLetterQueue, DeadLetterRecord } from '../core/ports/stores.ts';

/** Depth and age of one dead-letter queue. */
export interface DeadLetterQueueMetrics {
  /** Entries in the queue (`size()`). */
  depth: number;
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
  /** Entries per rejection code (`MALFORMED_JSON`, `INVALID_MESSAGE`...; `unknown` when absent). */
  entriesByReason: Record<string, number>;
}

/** Metrics of the tool DLQ. */
export interface ToolDeadLetterMetrics extends DeadLetterQueueMetrics {
  /** Entries per `toolName` (`unknown` when absent). */
  entriesByTool: Record<string, number>;
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

interface Scan {
  oldestMs: number | undefined;
  counts: Record<string, number>;
}

function entryTimeMs(record: DeadLetterRecord<unknown>, field: 'firstSeenAt' | 'receivedAt'): number {
  const entry = record.entry;
  const own = typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>)[field] : undefined;
  const ownMs = typeof own === 'string' ? Date.parse(own) : Number.NaN;
  return Number.isFinite(ownMs) ? ownMs : Date.parse(record.addedAt);
}

async function scan(queue: DeadLetterQueue<unknown>, field: 'firstSeenAt' | 'receivedAt', groupBy: (entry: Record<string, unknown>) => unknown, pageSize: number): Promise<Scan> {
  const result: Scan = { oldestMs: undefined, counts: {} };
  for (let offset = 0; ; offset += pageSize) {
    const page = await queue.list({ limit: pageSize, offset });
    for (const record of page) {
      const timeMs = entryTimeMs(record, field);
      if (Number.isFinite(timeMs) && (result.oldestMs === undefined || timeMs < result.oldestMs)) result.oldestMs = timeMs;
      const entry = typeof record.entry === 'object' && record.entry !== null ? (record.entry as Record<string, unknown>) : {};
      const group = groupBy(entry);
      const key = typeof group === 'string' && group.length > 0 ? group : 'unknown';
      result.counts[key] = (result.counts[key] ?? 0) + 1;
    }
    if (page.length < pageSize) return result;
  }
}

function queueMetrics(depth: number, oldestMs: number | undefined, nowMs: number): DeadLetterQueueMetrics {
  if (depth === 0 || oldestMs === undefined) return { depth, oldestAgeMs: null, oldestAt: null };
  return { depth, oldestAgeMs: Math.max(0, nowMs - oldestMs), oldestAt: new Date(oldestMs).toISOString() };
}

/**
 * Reads the observable state of the two dead-letter queues (SPEC.md §2, §3): depth, age of the
 * oldest entry (alertable), entries per tool (tool DLQ) and per rejection code (message DLQ). Used
 * by `toolrun stats` and by metric exporters.
 *
 * Scans every entry in pages of `pageSize` (O(depth); DLQs are bounded by the worker's
 * `maxDeadLetterEntries`). Read-only and safe to call concurrently with a worker; entries added or
 * removed during the scan may or may not be counted in the per-tool/per-reason tallies, while
 * `depth` is the queue's own `size()`.
 *
 * Rejects when a store call fails (the store's error, unchanged).
 */
export async function readDeadLetterMetrics(
  stores: { messageDlq: DeadLetterQueue<unknown>; toolDlq: DeadLetterQueue<unknown> },
  options: ReadDeadLetterMetricsOptions = {},
): Promise<DeadLetterMetrics> {
  const clock = options.clock ?? systemClock;
  const pageSize = Math.max(1, Math.floor(options.pageSize ?? 500));
  const [messageDepth, toolDepth, messageScan, toolScan] = await Promise.all([
    stores.messageDlq.size(),
    stores.toolDlq.size(),
    scan(stores.messageDlq, 'receivedAt', (entry) => (entry.reason as { code?: unknown } | undefined)?.code, pageSize),
    scan(stores.toolDlq, 'firstSeenAt', (entry) => entry.toolName, pageSize),
  ]);
  const nowMs = clock.now();
  return {
    message: { ...queueMetrics(messageDepth, messageScan.oldestMs, nowMs), entriesByReason: messageScan.counts },
    tool: { ...queueMetrics(toolDepth, toolScan.oldestMs, nowMs), entriesByTool: toolScan.counts },
    measuredAt: new Date(nowMs).toISOString(),
  };
}
