/**
 * The overview of the dashboard: the two DLQs' numbers (exactly `toolrun stats --json`'s, from
 * `readDeadLetterMetrics`), their bounds and alerts, the shared breakers, and the failure log's
 * type mix, failures per tool over time and the fields that fail most.
 */
import type { FailureLog, FailureLogRecord, ToolFailureLogRecord } from '../ground/ports/failure-log.ts';
import type { BreakerStateStore } from '../ground/ports/stores.ts';
import type { Redactor } from '../core/redact.ts';
import { parseSharedBreakerRecord, type SharedBreakerRecord } from '../policies/shared-breaker.ts';
import { buildFailureReport, redactFailureLogRecord, type FailureReport } from '../observability/report/build-failure-report.ts';
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

/** Buckets the failed calls over the span of their times. */
export function failureSeries(failures: readonly ToolFailureLogRecord[]): FailureSeries {
  const times = failures.map((failure) => Date.parse(failure.at)).filter(Number.isFinite);
  if (times.length === 0) return { bucketMs: 60_000, buckets: [], byType: {}, byTool: {} };
  const from = Math.min(...times);
  const to = Math.max(...times);
  const bucketMs = Math.max(1000, Math.ceil((to - from + 1) / 48 / 1000) * 1000);
  const count = Math.floor((to - from) / bucketMs) + 1;
  const buckets = Array.from({ length: count }, (_, index) => from + index * bucketMs);
  const perTool = new Map<string, number>();
  for (const failure of failures) perTool.set(failure.toolName, (perTool.get(failure.toolName) ?? 0) + 1);
  const top = new Set(
    [...perTool.entries()]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, MAX_SERIES_TOOLS)
      .map(([name]) => name),
  );
  const byType: Record<string, number[]> = {};
  const byTool: Record<string, number[]> = {};
  for (const failure of failures) {
    const at = Date.parse(failure.at);
    if (!Number.isFinite(at)) continue;
    const index = Math.min(count - 1, Math.floor((at - from) / bucketMs));
    const tool = top.has(failure.toolName) ? failure.toolName : 'other';
    (byType[failure.type] ??= new Array<number>(count).fill(0))[index]! += 1;
    (byTool[tool] ??= new Array<number>(count).fill(0))[index]! += 1;
  }
  return { bucketMs, buckets, byType, byTool };
}

/**
 * Keeps the failure log's records in memory, reading only what was appended since the last read
 * (the log is append-only), redacted on the way in; rebuilds the report when records were added.
 */
export interface FailureLogCache {
  /** Reads new records, then the overview of all of them. */
  overview(): Promise<FailureOverview>;
  /** The recorded failed call with this trace id (the developer record of an envelope), if any. */
  byTraceId(traceId: string): Promise<ToolFailureLogRecord | undefined>;
}

/** A {@link FailureLogCache} over `log` (none: an overview that says the backend keeps no failure log). */
export function createFailureLogCache(log: FailureLog | undefined, redactor: Redactor, source: string): FailureLogCache {
  const records: FailureLogRecord[] = [];
  const traces = new Map<string, ToolFailureLogRecord>();
  let built: { count: number; overview: FailureOverview } | undefined;
  let reading: Promise<void> | undefined;
  const readNew = async () => {
    if (!log) return;
    for (;;) {
      const page = await log.list({ limit: 5_000, offset: records.length });
      for (const record of page) {
        const redacted = redactFailureLogRecord(record, redactor);
        records.push(redacted);
        if (redacted.kind === 'tool-failure') traces.set(redacted.traceId, redacted);
      }
      if (page.length < 5_000) return;
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
      if (built?.count !== records.length) {
        const report = buildFailureReport(records, { source, redactor });
        const failures = records.filter((record): record is ToolFailureLogRecord => record.kind === 'tool-failure');
        built = { count: records.length, overview: { available: true, records: records.length, report, series: failureSeries(failures) } };
      }
      return built.overview;
    },
    async byTraceId(traceId) {
      if (!log) return undefined;
      await refresh();
      return traces.get(traceId);
    },
  };
}
