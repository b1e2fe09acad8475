/**
 * The overview of the dashboard: the two DLQs' numbers (exactly `toolrun stats --json`'s, from
 * `readDeadLetterMetrics`), their bounds and alerts, the shared breakers, and the failure log's
 * type mix, failures per tool over time and the fields that fail most.
 */
import type { FailureLog, FailureLogPage, FailureLogRecord, ToolFailureLogRecord } from '../ground/ports/failure-log.ts';
import type { BreakerStateStore } from '../ground/ports/stores.ts';
import type { Redactor } from '../core/redact.ts';
import { parseSharedBreakerRecord, type SharedBreakerRecord } from '../policies/shared-breaker.ts';
import { createFailureReportBuilder, redactFailureLogRecord, type FailureReport } from '../observability/report/build-failure-report.ts';
import type { DeadLetterMetrics } from '../worker/dead-letter-metrics.ts';
import type { DashboardBounds } from './dashboard-source.ts';

/** One sample of both queues' depth and oldest-entry age, taken by the server while it runs. */
export interface QueueSample {
  /** ms since the epoch. */
  at: number;
  message: { depth: number; oldestAgeMs: number | null };
  tool: { depth: number; oldestAgeMs: number | null };
}

/** An alert the overview raises. */
export interface DashboardAlert {
  /** `dead-letter-full`: a DLQ reached its entry or byte bound (the worker stops taking messages); `breaker-open`: a shared breaker rejects calls. */
  type: 'dead-letter-full' | 'breaker-open';
  /** The queue (`message`, `tool`) or the breaker's key. */
  subject: string;
  text: string;
}

/** A shared breaker as the overview shows it. */
export interface BreakerView extends SharedBreakerRecord {
  key: string;
}

/** The breakers of `keys` that have a stored record, by key order. */
export async function readBreakers(store: BreakerStateStore, keys: Iterable<string>): Promise<BreakerView[]> {
  const unique = [...new Set(keys)].filter((key) => key.length > 0).sort();
  const records = await Promise.all(unique.map(async (key) => ({ key, record: parseSharedBreakerRecord(await store.get(key)) })));
  return records.filter((item) => item.record !== undefined).map(({ key, record }) => ({ key, ...record! }));
}

/** The alerts of the DLQ metrics against their bounds, and of the open breakers. */
export function alertsOf(metrics: DeadLetterMetrics, bounds: DashboardBounds, breakers: readonly BreakerView[]): DashboardAlert[] {
  const alerts: DashboardAlert[] = [];
  for (const queue of ['message', 'tool'] as const) {
    const { depth, bytes } = metrics[queue];
    if (depth >= bounds.maxEntries) {
      alerts.push({
        type: 'dead-letter-full',
        subject: queue,
        text: `the ${queue} DLQ holds ${depth} entries, its bound is ${bounds.maxEntries}: the worker stops taking messages`,
      });
    } else if (bytes !== null && bytes >= bounds.maxBytes) {
      alerts.push({
        type: 'dead-letter-full',
        subject: queue,
        text: `the ${queue} DLQ holds ${bytes} bytes, its bound is ${bounds.maxBytes}: the worker stops taking messages`,
      });
    }
  }
  for (const breaker of breakers) {
    if (breaker.state === 'closed') continue;
    alerts.push({
      type: 'breaker-open',
      subject: breaker.key,
      text: `the shared breaker of ${breaker.key} is ${breaker.state}${breaker.openedAt !== null ? ` since ${new Date(breaker.openedAt).toISOString()}` : ''}: calls are rejected for every run${breaker.lastError ? ` (last error: ${breaker.lastError})` : ''}`,
    });
  }
  return alerts;
}

/** Failures per time bucket, by type and by tool. */
export interface FailureSeries {
  /** Bucket width in ms (the time span over ~48 buckets, whole seconds, at least one). */
  bucketMs: number;
  /** Start of each bucket, ms since the epoch. */
  buckets: number[];
  /** Failed calls per bucket, per failure type. */
  byType: Record<string, number[]>;
  /** Failed calls per bucket of the tools that fail most (up to 8; the rest as `other`). */
  byTool: Record<string, number[]>;
}

/** What the overview shows of the failure log. */
export interface FailureOverview {
  available: boolean;
  /** Why it is not available (no failure log on this backend). */
  note?: string;
  records: number;
  report?: FailureReport;
  series?: FailureSeries;
}

const MAX_SERIES_TOOLS = 8;

/** A Float64Array/Uint32Array twice as long when full (the typed arrays of a {@link FailureSeriesState}). */
function grown<T extends Float64Array | Uint32Array>(array: T, make: (length: number) => T): T {
  const next = make(array.length * 2);
  next.set(array);
  return next;
}

/**
 * What {@link failureSeries} needs of the failed calls, kept as they are read instead of the
 * records: per failed call with a readable time, its time (a Float64Array, 8 bytes) and the indices
 * of its interned type and tool (two Uint32Arrays, 4 bytes each), plus each tool's failed calls
 * (all of them, for the top tools). About 16 bytes a failed call, against a few hundred for a
 * record; {@link FailureSeriesState.series} is one pass over the arrays.
 */
export interface FailureSeriesState {
  /** Counts one failed call (redacted already, as the overview shows it). */
  add(failure: ToolFailureLogRecord): void;
  /** The series of every failed call added so far (the same as {@link failureSeries} of them). */
  series(): FailureSeries;
}

/** An empty {@link FailureSeriesState}. */
export function createFailureSeriesState(): FailureSeriesState {
  let size = 0;
  let times = new Float64Array(1024);
  let typeOf = new Uint32Array(1024);
  let toolOf = new Uint32Array(1024);
  let from = Number.POSITIVE_INFINITY;
  let to = Number.NEGATIVE_INFINITY;
  const typeNames: string[] = [];
  const typeIndex = new Map<string, number>();
  const toolNames: string[] = [];
  const toolIndex = new Map<string, number>();
  const toolFailures: number[] = [];
  const intern = (names: string[], index: Map<string, number>, name: string) => {
    let found = index.get(name);
    if (found === undefined) {
      found = names.length;
      names.push(name);
      index.set(name, found);
    }
    return found;
  };
  return {
    add(failure) {
      const tool = intern(toolNames, toolIndex, failure.toolName);
      toolFailures[tool] = (toolFailures[tool] ?? 0) + 1;
      const at = Date.parse(failure.at);
      if (!Number.isFinite(at)) return;
      if (size === times.length) {
        times = grown(times, (length) => new Float64Array(length));
        typeOf = grown(typeOf, (length) => new Uint32Array(length));
        toolOf = grown(toolOf, (length) => new Uint32Array(length));
      }
      times[size] = at;
      typeOf[size] = intern(typeNames, typeIndex, failure.type);
      toolOf[size] = tool;
      size += 1;
      if (at < from) from = at;
      if (at > to) to = at;
    },
    series() {
      if (size === 0) return { bucketMs: 60_000, buckets: [], byType: {}, byTool: {} };
      const bucketMs = Math.max(1000, Math.ceil((to - from + 1) / 48 / 1000) * 1000);
      const count = Math.floor((to - from) / bucketMs) + 1;
      const buckets = Array.from({ length: count }, (_, index) => from + index * bucketMs);
      const top = new Set(
        toolNames
          .map((name, index) => [name, toolFailures[index]!] as const)
          .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
          .slice(0, MAX_SERIES_TOOLS)
          .map(([name]) => name),
      );
      const shownTool = toolNames.map((name) => (top.has(name) ? name : 'other'));
      // keys in order of first appearance, as the records came
      const byType: Record<string, number[]> = {};
      const byTool: Record<string, number[]> = {};
      const typeRows: Array<number[] | undefined> = [];
      const toolRows: Array<number[] | undefined> = [];
      for (let item = 0; item < size; item += 1) {
        const index = Math.min(count - 1, Math.floor((times[item]! - from) / bucketMs));
        const type = typeOf[item]!;
        const tool = toolOf[item]!;
        (typeRows[type] ??= byType[typeNames[type]!] ??= new Array<number>(count).fill(0))[index]! += 1;
        (toolRows[tool] ??= byTool[shownTool[tool]!] ??= new Array<number>(count).fill(0))[index]! += 1;
      }
      return { bucketMs, buckets, byType, byTool };
    },
  };
}

/** Buckets the failed calls over the span of their times (~48 buckets; the top 8 tools, the rest as `other`). */
export function failureSeries(failures: Iterable<ToolFailureLogRecord>): FailureSeries {
  const state = createFailureSeriesState();
  for (const failure of failures) state.add(failure);
  return state.series();
}

/** Tool-failure records kept for {@link FailureLogCache.byTraceId} when the log has no `findByTraceId`. */
export const RECENT_TRACES_KEPT = 10_000;

/** Records read per page of the failure log. */
const OVERVIEW_PAGE_SIZE = 5_000;

/**
 * The failure log as the overview reads it, in bounded memory: only what was appended since the
 * last read (the log is append-only; by `listPage` cursor, or `list` with an offset for a log
 * without it), each record redacted and counted into one long-lived report builder and a
 * {@link FailureSeriesState}; the records themselves are not kept. The overview is built again
 * only when records were added.
 */
export interface FailureLogCache {
  /** Reads new records, then the overview of all of them. */
  overview(): Promise<FailureOverview>;
  /**
   * The recorded failed call with this trace id (the developer record of an envelope; redacted),
   * if any: the log's `findByTraceId` when it has one (an index lookup on the toolrun backends),
   * else the newest of the last 10,000 tool failures read (older ones are not found).
   */
  byTraceId(traceId: string): Promise<ToolFailureLogRecord | undefined>;
}

/** A {@link FailureLogCache} over `log` (none: an overview that says the backend keeps no failure log). */
export function createFailureLogCache(log: FailureLog | undefined, redactor: Redactor, source: string): FailureLogCache {
  const builder = createFailureReportBuilder({ source, redactor });
  const series = createFailureSeriesState();
  // only for a log without findByTraceId: the newest RECENT_TRACES_KEPT tool failures, oldest first
  const recent = log?.findByTraceId ? undefined : new Map<string, ToolFailureLogRecord>();
  let count = 0;
  let after: string | null = null;
  let built: { count: number; overview: FailureOverview } | undefined;
  let reading: Promise<void> | undefined;
  const take = (records: readonly FailureLogRecord[]) => {
    for (const record of records) {
      const redacted = redactFailureLogRecord(record, redactor);
      builder.add(redacted);
      count += 1;
      if (redacted.kind !== 'tool-failure') continue;
      series.add(redacted);
      if (recent) {
        recent.delete(redacted.traceId);
        recent.set(redacted.traceId, redacted);
        if (recent.size > RECENT_TRACES_KEPT) recent.delete(recent.keys().next().value!);
      }
    }
  };
  const readNew = async () => {
    if (!log) return;
    for (;;) {
      if (log.listPage) {
        const page: FailureLogPage = await log.listPage({ limit: OVERVIEW_PAGE_SIZE, after });
        take(page.records);
        after = page.next;
        if (page.records.length < OVERVIEW_PAGE_SIZE) return;
      } else {
        const page = await log.list({ limit: OVERVIEW_PAGE_SIZE, offset: count });
        take(page);
        if (page.length < OVERVIEW_PAGE_SIZE) return;
      }
    }
  };
  const refresh = async () => {
    reading ??= readNew().finally(() => {
      reading = undefined;
    });
    await reading;
  };
  return {
    async overview() {
      if (!log)
        return { available: false, note: 'this backend keeps no failure log (SQLite keeps one in the same file): no failure mix or field report', records: 0 };
      await refresh();
      if (built?.count !== count) {
        const report = builder.build();
        // the builder hands out its live breaker-trip counts: copy them, so this overview stays as it is
        report.tools = report.tools.map((tool) => ({ ...tool, breakerTrips: { ...tool.breakerTrips } }));
        built = { count, overview: { available: true, records: count, report, series: series.series() } };
      }
      return built.overview;
    },
    async byTraceId(traceId) {
      if (!log) return undefined;
      if (log.findByTraceId) {
        const record = await log.findByTraceId(traceId);
        return record === undefined ? undefined : (redactFailureLogRecord(record, redactor) as ToolFailureLogRecord);
      }
      await refresh();
      return recent!.get(traceId);
    },
  };
}
