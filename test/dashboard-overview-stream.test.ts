/**
 * The dashboard's failure overview, read as a stream: the cache counts the failure log's records
 * into one long-lived report builder and a compact series state instead of keeping them, and must
 * show exactly what the former whole-array computation showed (kept below as the reference), over
 * tens of thousands of records, read in several rounds, by cursor or by offset; `byTraceId` asks the
 * log's index, or a bounded map of the most recent tool failures.
 */
import { describe, expect, it, vi } from 'vitest';
import { createRedactor, type Redactor } from '../src/core/redact.ts';
import { createFailureLogCache, createFailureSeriesState, failureSeries, RECENT_TRACES_KEPT, type FailureSeries } from '../src/dashboard/dashboard-overview.ts';
import type { FailureLog, FailureLogRecord, ToolFailureLogRecord } from '../src/ground/ports/failure-log.ts';
import { buildFailureReport, redactFailureLogRecord } from '../src/observability/report/build-failure-report.ts';
import { createMemoryFailureLog } from '../src/stores/memory/memory-failure-log.ts';

/** The series as the dashboard computed it from an array of records (the reference). */
function referenceSeries(failures: readonly ToolFailureLogRecord[]): FailureSeries {
  const times = failures.map((failure) => Date.parse(failure.at)).filter(Number.isFinite);
  if (times.length === 0) return { bucketMs: 60_000, buckets: [], byType: {}, byTool: {} };
  const from = times.reduce((a, b) => Math.min(a, b));
  const to = times.reduce((a, b) => Math.max(a, b));
  const bucketMs = Math.max(1000, Math.ceil((to - from + 1) / 48 / 1000) * 1000);
  const count = Math.floor((to - from) / bucketMs) + 1;
  const buckets = Array.from({ length: count }, (_, index) => from + index * bucketMs);
  const perTool = new Map<string, number>();
  for (const failure of failures) perTool.set(failure.toolName, (perTool.get(failure.toolName) ?? 0) + 1);
  const top = new Set(
    [...perTool.entries()]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, 8)
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

/** The overview as the dashboard computed it from every record held in an array (the reference). */
function referenceOverview(records: readonly FailureLogRecord[], redactor: Redactor, source: string) {
  const redacted = records.map((record) => redactFailureLogRecord(record, redactor));
  const failures = redacted.filter((record): record is ToolFailureLogRecord => record.kind === 'tool-failure');
  return { available: true, records: redacted.length, report: buildFailureReport(redacted, { source, redactor }), series: referenceSeries(failures) };
}

/** The traces map of the former cache: every tool failure by (redacted) trace id, the last one winning. */
function referenceTraces(records: readonly FailureLogRecord[], redactor: Redactor) {
  const traces = new Map<string, ToolFailureLogRecord>();
  for (const record of records) {
    const redacted = redactFailureLogRecord(record, redactor);
    if (redacted.kind === 'tool-failure') traces.set(redacted.traceId, redacted);
  }
  return traces;
}

const TOOLS = Array.from({ length: 13 }, (_unused, index) => `tool_${String.fromCharCode(97 + ((index * 5) % 13))}`);
const TYPES = ['invalid_parameter', 'environment', 'permission', 'logic', 'circuit_breaker', 'from_elsewhere'];

/** Varied records: three kinds, 13 tools (more than the series shows), times out of order and some unreadable, secrets to redact, repeated trace ids. */
function record(index: number): FailureLogRecord {
  const at = index % 997 === 3 ? 'not a time' : new Date(Date.UTC(2026, 10, 1) + ((index * 7919) % 3_600_000) * 1000 + (index % 1000)).toISOString();
  const toolName = TOOLS[(index * index) % 13 < 6 ? index % 3 : index % 13]!;
  const base = { at, toolName, runId: index % 5 === 0 ? null : `run_${index % 211}`, sessionId: null };
  if (index % 17 === 4)
    return {
      ...base,
      kind: 'recovery',
      recoveredWith: TOOLS[(index + 1) % 13]!,
      failedAtStep: 1,
      recoveredAtStep: 2 + (index % 3),
      rounds: 1 + (index % 3),
      failures: 1 + (index % 2),
    };
  if (index % 19 === 6) return { ...base, kind: 'breaker-open', scope: index % 2 === 0 ? 'session' : 'shared' };
  const type = TYPES[index % TYPES.length] as ToolFailureLogRecord['type'];
  return {
    ...base,
    kind: 'tool-failure',
    traceId: `trace_${index % 4_000 === 1 ? 'shared' : index}`,
    callId: `call_${index}`,
    stepIndex: index % 7,
    type,
    code: type === 'invalid_parameter' ? 'INVALID_TYPE' : `CODE_${index % 4}`,
    message: index % 3 === 0 ? `failed with api_key=sk-live-${index}abcdef012345 for user${index % 9}@example.com` : `failure ${index % 11}`,
    fields:
      type === 'invalid_parameter'
        ? [
            { path: `/passengers/${index % 3}/dob`, problem: 'format', expected: 'YYYY-MM-DD', received: `"${index % 7}/20"` },
            { path: '/password', problem: 'type', expected: 'string', received: `"hunter${index % 5}"` },
          ]
        : [],
    attempts: 1 + (index % 3),
    durationMs: index % 100,
  };
}

/** A log with only `append`, `list` and `size` (written elsewhere: no cursor paging, no trace index). */
function plainLog(inner: FailureLog): FailureLog {
  return { append: (item) => inner.append(item), list: (options) => inner.list(options), size: () => inner.size() };
}

describe('the streamed failure overview', () => {
  const redactor = createRedactor();
  const records = Array.from({ length: 20_000 }, (_unused, index) => record(index));
  const rounds = [0, 7_321, 7_322, 15_000, 20_000];

  for (const kind of ['cursor paging (listPage) and findByTraceId', 'offset paging (list) and the bounded map'] as const) {
    it(`equals the whole-array computation over 20,000 records read in rounds: ${kind}`, async () => {
      const memory = createMemoryFailureLog();
      const log = kind.startsWith('cursor') ? memory : plainLog(memory);
      const list = vi.spyOn(memory, 'list');
      const cache = createFailureLogCache(log, redactor, 'sqlite test.db');
      let previous: { overview: unknown; json: string } | undefined;
      for (let round = 1; round < rounds.length; round += 1) {
        for (const item of records.slice(rounds[round - 1], rounds[round])) await log.append(item);
        const overview = await cache.overview();
        const expected = referenceOverview(records.slice(0, rounds[round]), redactor, 'sqlite test.db');
        expect(overview).toEqual(expected);
        // the same JSON, key order included (what the dashboard serves)
        expect(JSON.stringify(overview)).toBe(JSON.stringify(expected));
        expect(await cache.overview()).toBe(overview);
        // an overview handed out earlier stays as it was
        if (previous) expect(JSON.stringify(previous.overview)).toBe(previous.json);
        previous = { overview, json: JSON.stringify(overview) };
      }
      const series = (await cache.overview()).series!;
      expect(Object.keys(series.byTool)).toContain('other');
      expect(Object.keys(series.byTool)).toHaveLength(9);
      expect(Object.keys(series.byType)).toContain('from_elsewhere');
      expect(JSON.stringify(await cache.overview())).not.toContain('sk-live-');
      // by cursor, the log's list (offset paging) is never read
      expect(list.mock.calls.length === 0).toBe(kind.startsWith('cursor'));
    });
  }

  it('byTraceId asks the log’s findByTraceId, without reading the log, and answers as the former map did', async () => {
    const memory = createMemoryFailureLog();
    for (const item of records) await memory.append(item);
    const listPage = vi.spyOn(memory, 'listPage');
    const find = vi.spyOn(memory, 'findByTraceId');
    const cache = createFailureLogCache(memory, redactor, 'memory');
    const traces = referenceTraces(records, redactor);
    for (const traceId of ['trace_shared', 'trace_0', 'trace_2', 'trace_19999', 'trace_4', 'trace_none']) {
      expect(await cache.byTraceId(traceId)).toEqual(traces.get(traceId));
    }
    expect(traces.get('trace_shared')!.callId).toBe('call_12001'); // the last tool failure of that trace (16001 is a recovery)
    expect(JSON.stringify(await cache.byTraceId('trace_0'))).not.toContain('sk-live-');
    expect(find).toHaveBeenCalledTimes(7);
    expect(listPage).not.toHaveBeenCalled();
  });

  it(`byTraceId without findByTraceId: the newest of the last ${RECENT_TRACES_KEPT} tool failures read, older ones not found`, async () => {
    const memory = createMemoryFailureLog();
    for (const item of records) await memory.append(item);
    const cache = createFailureLogCache(plainLog(memory), redactor, 'memory');
    const traces = referenceTraces(records, redactor);
    const failures = records.filter((item): item is ToolFailureLogRecord => item.kind === 'tool-failure');
    const newest = failures[failures.length - 1]!.traceId;
    const oldestKept = failures.slice(-RECENT_TRACES_KEPT).find((item) => item.traceId !== 'trace_shared')!.traceId;
    const dropped = failures.slice(0, -RECENT_TRACES_KEPT - 10).find((item) => item.traceId !== 'trace_shared')!.traceId;
    for (const traceId of [newest, oldestKept, 'trace_shared']) expect(await cache.byTraceId(traceId)).toEqual(traces.get(traceId));
    expect(traces.get(dropped)).toBeDefined();
    expect(await cache.byTraceId(dropped)).toBeUndefined();
    // a trace seen again moves to the newest end instead of being dropped with its first record
    await memory.append({ ...(records[0] as ToolFailureLogRecord), callId: 'again', at: '2026-11-02T00:00:00.000Z' });
    await cache.overview();
    expect((await cache.byTraceId('trace_0'))!.callId).toBe('again');
  });

  it('failureSeries from the compact state equals the whole-array computation, also in edge cases', () => {
    const failures = records.map((item) => redactFailureLogRecord(item, redactor)).filter((item): item is ToolFailureLogRecord => item.kind === 'tool-failure');
    const cases: ToolFailureLogRecord[][] = [
      [],
      failures.slice(0, 1),
      failures.filter((item) => !Number.isFinite(Date.parse(item.at))),
      [{ ...failures[0]!, at: 'never' }, failures[1]!],
      failures.slice(0, 2_000).map((item, index) => ({ ...item, at: new Date(1_700_000_000_123 + index * 17).toISOString() })),
      failures,
    ];
    for (const list of cases) {
      expect(JSON.stringify(failureSeries(list))).toBe(JSON.stringify(referenceSeries(list)));
      const state = createFailureSeriesState();
      for (const [index, item] of list.entries()) {
        state.add(item);
        if (index === 500) expect(state.series()).toEqual(referenceSeries(list.slice(0, 501)));
      }
      expect(state.series()).toEqual(referenceSeries(list));
    }
    expect(failureSeries(failures).buckets.length).toBeGreaterThan(40);
  });
});
