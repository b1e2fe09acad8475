/**
 * What the dashboard reads from the stores, with the caches that keep a large queue from being
 * scanned on every request: the depth and age samples behind the sparklines, the overview, the
 * entry groups, the context of a detail page, and the tool-DLQ entries a filter matches.
 */
import type { Clock } from '../ground/ports/clock.ts';
import type { DeadLetterRecord } from '../ground/ports/stores.ts';
import { readDeadLetterMetrics, type DeadLetterMetrics } from '../worker/dead-letter-metrics.ts';
import type { DetailContext } from './dashboard-detail.ts';
import {
  isFiltering,
  matchesToolFilter,
  planToolList,
  readEntryGroups,
  scanQueue,
  SCAN_PAGE_SIZE,
  type EntryGroups,
  type ToolEntryFilter,
} from './dashboard-entries.ts';
import { alertsOf, createFailureLogCache, readBreakers, type QueueSample } from './dashboard-overview.ts';
import { backendLedgerLookup, DEFAULT_DASHBOARD_BOUNDS, type DashboardSource } from './dashboard-source.ts';

/** Options of {@link createDashboardReads}. */
export interface DashboardReadsOptions {
  source: DashboardSource;
  clock: Clock;
  maxSteps: number;
  /** How often samples are taken, in ms (reported with them). */
  sampleIntervalMs: number;
  /** Samples kept. */
  maxSamples: number;
  /** How long an overview or the groups are reused, in ms (longer when a scan took long). */
  overviewMaxAgeMs: number;
}

/** The dashboard's reads. */
export interface DashboardReads {
  /** Takes one depth and oldest-age sample of both DLQs and keeps it. */
  sample(): Promise<QueueSample>;
  /** The overview; read again when `fresh` or older than the reuse time. */
  overview(fresh: boolean): Promise<Record<string, unknown>>;
  /** The entries by cause; read again when `fresh` or older than the reuse time. */
  groups(fresh?: boolean): Promise<EntryGroups>;
  /** Forgets the cached overview and groups (after an action changed the queues). */
  invalidate(): void;
  /** What a detail page or a page of rows reads, as of now. */
  detailContext(): DetailContext;
  /** The tool-DLQ records `filter` matches, in queue order, at most `limit`. */
  matchingToolRecords(filter: ToolEntryFilter, limit?: number): Promise<DeadLetterRecord<unknown>[]>;
}

function entryAge(record: DeadLetterRecord<unknown> | undefined, field: 'firstSeenAt' | 'receivedAt', nowMs: number): number | null {
  if (!record) return null;
  const own = (record.entry as Record<string, unknown> | null)?.[field];
  const ms = typeof own === 'string' && Number.isFinite(Date.parse(own)) ? Date.parse(own) : Date.parse(record.addedAt);
  return Number.isFinite(ms) ? Math.max(0, nowMs - ms) : null;
}

/** A cached read: reused while younger than `maxAgeMs()`, dropped when it fails. */
function cachedRead<T>(clock: Clock, maxAgeMs: () => number, read: () => Promise<T>): { get(fresh: boolean): Promise<T>; clear(): void } {
  let cached: { atMs: number; value: Promise<T> } | undefined;
  return {
    get(fresh) {
      const nowMs = clock.now();
      if (!fresh && cached && nowMs - cached.atMs < maxAgeMs()) return cached.value;
      const value = read();
      cached = { atMs: nowMs, value };
      value.catch(() => {
        if (cached?.value === value) cached = undefined;
      });
      return value;
    },
    clear() {
      cached = undefined;
    },
  };
}

/** The dashboard's reads over `options.source`. */
export function createDashboardReads(options: DashboardReadsOptions): DashboardReads {
  const { source, clock, maxSteps, sampleIntervalMs, maxSamples, overviewMaxAgeMs } = options;
  const stores = source.stores;
  const bounds = source.bounds ?? DEFAULT_DASHBOARD_BOUNDS;
  const failures = createFailureLogCache(source.failureLog, source.redactor, source.label);
  const samples: QueueSample[] = [];
  const ledgerValues = backendLedgerLookup(stores);
  // a scan of a large queue takes a while: its result is reused for five times as long as it took
  let lastScanMs = 0;
  const reuseMs = () => Math.max(overviewMaxAgeMs, 5 * lastScanMs);

  const sample = async (): Promise<QueueSample> => {
    const [messageDepth, toolDepth, messageOldest, toolOldest] = await Promise.all([
      stores.messageDlq.size(),
      stores.toolDlq.size(),
      stores.messageDlq.oldest(),
      stores.toolDlq.oldest(),
    ]);
    const nowMs = clock.now();
    const taken: QueueSample = {
      at: nowMs,
      message: { depth: messageDepth, oldestAgeMs: entryAge(messageOldest, 'receivedAt', nowMs) },
      tool: { depth: toolDepth, oldestAgeMs: entryAge(toolOldest, 'firstSeenAt', nowMs) },
    };
    samples.push(taken);
    if (samples.length > maxSamples) samples.splice(0, samples.length - maxSamples);
    return taken;
  };

  const groups = cachedRead(clock, reuseMs, () => {
    const startedMs = Date.now();
    return readEntryGroups(stores, new Date(clock.now()).toISOString()).then((read) => {
      lastScanMs = Date.now() - startedMs;
      return read;
    });
  });

  const readOverview = async (): Promise<Record<string, unknown>> => {
    const [metrics, queueSize, runs, failureOverview, entryGroups]: [
      DeadLetterMetrics,
      number,
      Record<string, number> | undefined,
      Awaited<ReturnType<typeof failures.overview>>,
      EntryGroups,
    ] = await Promise.all([
      readDeadLetterMetrics(stores, { clock, pageSize: SCAN_PAGE_SIZE }),
      stores.queue.size(),
      source.countRunsByStatus?.(),
      failures.overview(),
      groups.get(true),
    ]);
    const keys = new Set<string>(source.toolNames ?? []);
    if (source.modelName) keys.add(`model:${source.modelName}`);
    for (const name of Object.keys(metrics.tool.entriesByTool)) keys.add(name);
    for (const name of Object.keys(metrics.tool.entriesByModel)) keys.add(`model:${name}`);
    for (const tool of failureOverview.report?.tools ?? []) keys.add(tool.toolName);
    const breakers = await readBreakers(stores.breakers, keys);
    if (samples.length === 0) await sample();
    return {
      store: source.label,
      queue: { size: queueSize },
      deadLetters: metrics,
      runs: runs ?? null,
      bounds,
      alerts: alertsOf(metrics, bounds, breakers),
      breakers,
      samples,
      sampleIntervalMs,
      groups: entryGroups,
      failures: failureOverview,
    };
  };
  const overview = cachedRead(clock, reuseMs, readOverview);

  return {
    sample,
    overview: (fresh) => overview.get(fresh),
    groups: (fresh = false) => groups.get(fresh),
    invalidate() {
      overview.clear();
      groups.clear();
    },
    detailContext: () => ({
      stores,
      nowMs: clock.now(),
      maxSteps,
      conversationExpiry: source.conversationExpiry,
      conversationTtlMs: source.conversationTtlMs,
      developerRecord: source.failureLog ? (traceId) => failures.byTraceId(traceId) : undefined,
      ledgerValues,
    }),
    async matchingToolRecords(filter, limit) {
      const found: DeadLetterRecord<unknown>[] = [];
      const { storeFilter } = isFiltering(filter) ? await planToolList(stores.toolDlq, filter) : { storeFilter: {} };
      await scanQueue(
        stores.toolDlq,
        (record) => {
          if (matchesToolFilter(record, filter)) found.push(record);
          return limit === undefined || found.length < limit;
        },
        storeFilter,
      );
      return found;
    },
  };
}
