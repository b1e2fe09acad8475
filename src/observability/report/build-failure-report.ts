import { redactBounded } from '../../core/build-failure.ts';
import type { FailureType } from '../../ground/failure-codes.ts';
import { createFailurePatternLibrary, type FailurePatternLibrary, type FailureStrategy } from '../../core/failure-patterns.ts';
import type { FailureLogRecord, ToolFailureLogRecord } from '../../ground/ports/failure-log.ts';
import { createRedactor, type Redactor } from '../../core/redact.ts';
import { redactFieldErrors } from '../../core/redact-fields.ts';
import { describeFieldHint } from './field-hints.ts';

/** The failure types in report order. */
export const REPORT_FAILURE_TYPES: readonly FailureType[] = ['invalid_parameter', 'environment', 'permission', 'logic', 'circuit_breaker'];

/** A count with its share of a whole (0..1, 4 decimals). */
export interface CountShare {
  count: number;
  share: number;
}

/** How one argument field failed. Paths fold array indices to `*` (`/passengers/*\/dob`). */
export interface FieldFailureReport {
  toolName: string;
  path: string;
  /** Failed calls with an error on this field. */
  failures: number;
  /** `failures` / the tool's failed calls. */
  shareOfTool: number;
  /** Most common first. */
  problems: Array<{ problem: string; count: number }>;
  /** The commonest `expected` text. */
  expected?: string;
  /** Up to 3 distinct received values (redacted), commonest first. */
  received: string[];
  /** How to fix the field's description. */
  hint: string;
}

/** How one tool failed. */
export interface ToolFailureReport {
  toolName: string;
  failures: number;
  /** Share of all failed calls. */
  share: number;
  /** Non-zero types, in report order. */
  types: Array<{ type: FailureType; count: number }>;
  /** Most common first. */
  codes: Array<{ code: string; count: number }>;
  /** Most failing first. */
  fields: Array<{ path: string; failures: number; problems: Array<{ problem: string; count: number }> }>;
  recovery: { episodes: number; meanRounds: number | null };
  breakerTrips: { session: number; shared: number };
}

/** Failures grouped by failure pattern (`unmatched` for none). */
export interface PatternGroupReport {
  id: string;
  count: number;
  rootCause: string | null;
  strategy: FailureStrategy | null;
  tools: string[];
}

/**
 * What `toolrun report` shows. Counts come straight from the records; shares have 4
 * decimals, means 2; every list is sorted by count (descending), then by name.
 */
export interface FailureReport {
  source: string;
  /** ISO-8601 of the first and last record, or null when there are none. */
  from: string | null;
  to: string | null;
  totals: { records: number; failures: number; runsWithFailures: number; tools: number; recoveries: number; breakerTrips: number };
  /** Every type, in report order, with its share of the failures. */
  types: Array<{ type: FailureType } & CountShare>;
  /** Fields whose errors dominate come first: fix their descriptions first. */
  fields: FieldFailureReport[];
  tools: ToolFailureReport[];
  patterns: PatternGroupReport[];
  recovery: { episodes: number; meanRounds: number | null; meanFailuresPerEpisode: number | null };
  breakers: { trips: number; session: number; shared: number; byTool: Array<{ toolName: string; session: number; shared: number }> };
}

/** Options of {@link buildFailureReport}. */
export interface BuildFailureReportOptions {
  /** Names where the records came from (`sqlite:…`, `log:…`). @defaultValue `'records'` */
  source?: string;
  /** Groups failures. @defaultValue the default patterns */
  patterns?: FailurePatternLibrary;
  /**
   * Redacts every text of every record again before it is counted or shown (records from a log
   * file or a store may predate redaction, or come from elsewhere). @defaultValue `createRedactor()`
   */
  redactor?: Redactor;
}

/** Bounds of the texts of a record the report reads, in UTF-8 bytes (each cut before redaction). */
const REPORT_BOUNDS = { name: 128, id: 256, code: 64, message: 512, value: 200 } as const;
/** Field errors read per record. */
const REPORT_MAX_FIELDS = 20;

/**
 * A failure-log record as the report reads it: every text cut to its bound, then redacted
 * (tool names 128 bytes, ids 256, codes 64, messages 512, field texts 200; at most 20 fields).
 */
export function redactFailureLogRecord(record: FailureLogRecord, redactor: Redactor): FailureLogRecord {
  const bounded = (text: string, maxBytes: number) => redactBounded(redactor, String(text), maxBytes);
  const base = {
    at: bounded(record.at, REPORT_BOUNDS.code),
    toolName: bounded(record.toolName, REPORT_BOUNDS.name),
    runId: record.runId === null ? null : bounded(record.runId, REPORT_BOUNDS.id),
    sessionId: record.sessionId === null ? null : bounded(record.sessionId, REPORT_BOUNDS.id),
  };
  switch (record.kind) {
    case 'tool-failure':
      return {
        ...record,
        ...base,
        traceId: bounded(record.traceId, REPORT_BOUNDS.id),
        callId: bounded(record.callId, REPORT_BOUNDS.id),
        code: bounded(record.code, REPORT_BOUNDS.code),
        message: bounded(record.message, REPORT_BOUNDS.message),
        fields: redactFieldErrors(redactor, Array.isArray(record.fields) ? record.fields : [], {
          maxBytes: REPORT_BOUNDS.value,
          maxFields: REPORT_MAX_FIELDS,
        }).fields.map((field) => ({
          ...field,
          problem: bounded(field.problem, REPORT_BOUNDS.code),
        })),
      };
    case 'recovery':
      return { ...record, ...base, recoveredWith: bounded(record.recoveredWith, REPORT_BOUNDS.name) };
    default:
      return { ...record, ...base };
  }
}

/** Code-unit order: the same on every machine, unlike `localeCompare`. */
const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const round = (value: number, decimals: number) => {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
};

const share = (count: number, whole: number) => (whole === 0 ? 0 : round(count / whole, 4));

function increment(map: Map<string, number>, key: string, by = 1) {
  map.set(key, (map.get(key) ?? 0) + by);
}

function sortedCounts<K extends string>(map: Map<string, number>, keyName: K): Array<Record<K, string> & { count: number }> {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1] || compareText(a[0], b[0]))
    .map(([key, count]) => ({ [keyName]: key, count }) as Record<K, string> & { count: number });
}

/** `/passengers/0/dob` → `/passengers/*\/dob`: one field, whatever the item. */
export function foldArrayIndices(path: string): string {
  return path.replace(/\/\d+(?=\/|$)/g, '/*');
}

function fieldName(path: string): string {
  const tokens = path.split('/').filter((token) => token !== '' && token !== '*');
  return (tokens[tokens.length - 1] ?? '(arguments)').replaceAll('~1', '/').replaceAll('~0', '~');
}

interface FieldAccumulator {
  toolName: string;
  path: string;
  failures: number;
  problems: Map<string, number>;
  expected: Map<string, number>;
  received: Map<string, number>;
}

/**
 * A failure report built one record at a time: {@link FailureReportBuilder.add} each record (in
 * any number of pages, from a store, a log file or a stream), then {@link FailureReportBuilder.build}.
 * It keeps counts, not records: its memory grows with the distinct tools, codes, fields, received
 * values and run ids seen, never with the number of records, so a log of millions of records is
 * reported in bounded memory when read page by page.
 */
export interface FailureReportBuilder {
  /** Counts one record (cut to the report's bounds and redacted again first, as {@link buildFailureReport} does). */
  add(record: FailureLogRecord): void;
  /** The report of every record added so far (the builder can go on taking records afterwards). */
  build(): FailureReport;
}

interface ToolAccumulator {
  failures: number;
  types: Map<string, number>;
  codes: Map<string, number>;
}

/**
 * A {@link FailureReportBuilder}: `build()` after adding records in order gives exactly what
 * {@link buildFailureReport} gives for the same records.
 */
export function createFailureReportBuilder(options: BuildFailureReportOptions = {}): FailureReportBuilder {
  const library = options.patterns ?? createFailurePatternLibrary();
  const redactor = options.redactor ?? createRedactor();
  let count = 0;
  let failureCount = 0;
  let from: string | null = null;
  let to: string | null = null;
  const typeCounts = new Map<string, number>();
  const runs = new Set<string>();
  const byTool = new Map<string, ToolAccumulator>();
  const fields = new Map<string, FieldAccumulator>();
  const patterns = new Map<string, { count: number; tools: Set<string> }>();
  // recoveries: rounds summed in arrival order (the mean of buildFailureReport), per tool and overall
  const recoveryByTool = new Map<string, { episodes: number; rounds: number }>();
  const recoveryTotals = { episodes: 0, rounds: 0, failures: 0 };
  const tripsByTool = new Map<string, { session: number; shared: number }>();
  let tripCount = 0;
  let sessionTrips = 0;

  const addFailure = (failure: ToolFailureLogRecord) => {
    failureCount += 1;
    increment(typeCounts, failure.type);
    if (failure.runId !== null) runs.add(failure.runId);
    let tool = byTool.get(failure.toolName);
    if (!tool) {
      tool = { failures: 0, types: new Map(), codes: new Map() };
      byTool.set(failure.toolName, tool);
    }
    tool.failures += 1;
    increment(tool.types, failure.type);
    increment(tool.codes, failure.code);

    const seen = new Set<string>();
    for (const field of failure.fields) {
      const path = foldArrayIndices(field.path);
      const key = `${failure.toolName}\u0000${path}`;
      let accumulator = fields.get(key);
      if (!accumulator) {
        accumulator = { toolName: failure.toolName, path, failures: 0, problems: new Map(), expected: new Map(), received: new Map() };
        fields.set(key, accumulator);
      }
      if (!seen.has(key)) {
        seen.add(key);
        accumulator.failures += 1;
      }
      increment(accumulator.problems, field.problem);
      if (field.expected !== undefined) increment(accumulator.expected, field.expected);
      if (field.received !== undefined) increment(accumulator.received, field.received);
    }

    const pattern = library.match({ toolName: failure.toolName, code: failure.code, message: failure.message, fields: failure.fields });
    const id = pattern?.id ?? 'unmatched';
    let group = patterns.get(id);
    if (!group) {
      group = { count: 0, tools: new Set<string>() };
      patterns.set(id, group);
    }
    group.count += 1;
    group.tools.add(failure.toolName);
  };

  return {
    add(original) {
      const record = redactFailureLogRecord(original, redactor);
      count += 1;
      if (from === null || record.at < from) from = record.at;
      if (to === null || record.at > to) to = record.at;
      if (record.kind === 'tool-failure') addFailure(record);
      else if (record.kind === 'recovery') {
        const entry = recoveryByTool.get(record.toolName) ?? { episodes: 0, rounds: 0 };
        entry.episodes += 1;
        entry.rounds += record.rounds;
        recoveryByTool.set(record.toolName, entry);
        recoveryTotals.episodes += 1;
        recoveryTotals.rounds += record.rounds;
        recoveryTotals.failures += record.failures;
      } else {
        const entry = tripsByTool.get(record.toolName) ?? { session: 0, shared: 0 };
        entry[record.scope] += 1;
        tripsByTool.set(record.toolName, entry);
        tripCount += 1;
        if (record.scope === 'session') sessionTrips += 1;
      }
    },
    build() {
      return assembleReport({
        source: options.source ?? 'records',
        library,
        count,
        failureCount,
        from,
        to,
        typeCounts,
        runs: runs.size,
        byTool,
        fields,
        patterns,
        recoveryByTool,
        recoveryTotals,
        tripsByTool,
        tripCount,
        sessionTrips,
      });
    },
  };
}

/**
 * Builds the failure report from failure-log records, each cut to the report's bounds and
 * redacted again first (tool names 128 bytes, ids 256, codes 64, messages 512, field texts 200, at
 * most 20 fields). Pure and deterministic: the same records give the same report. A failed call counts once per field it has errors on, whatever the
 * number of errors on that field. For records read in pages (a large log), add them to a
 * {@link createFailureReportBuilder} instead of collecting them first.
 */
export function buildFailureReport(records: Iterable<FailureLogRecord>, options: BuildFailureReportOptions = {}): FailureReport {
  const builder = createFailureReportBuilder(options);
  for (const record of records) builder.add(record);
  return builder.build();
}

/** What a {@link FailureReportBuilder} has counted. */
interface ReportCounts {
  source: string;
  library: FailurePatternLibrary;
  count: number;
  failureCount: number;
  from: string | null;
  to: string | null;
  typeCounts: Map<string, number>;
  runs: number;
  byTool: Map<string, ToolAccumulator>;
  fields: Map<string, FieldAccumulator>;
  patterns: Map<string, { count: number; tools: Set<string> }>;
  recoveryByTool: Map<string, { episodes: number; rounds: number }>;
  recoveryTotals: { episodes: number; rounds: number; failures: number };
  tripsByTool: Map<string, { session: number; shared: number }>;
  tripCount: number;
  sessionTrips: number;
}

/** Sum / count, to 2 decimals (null for none), as `mean` of the values summed in order. */
const meanOf = (sum: number, values: number) => (values === 0 ? null : round(sum / values, 2));

function assembleReport(counts: ReportCounts): FailureReport {
  const { library, byTool, fields, patterns, recoveryByTool, tripsByTool, typeCounts } = counts;
  const fieldReports: FieldFailureReport[] = [...fields.values()]
    .map((field) => {
      const problems = sortedCounts(field.problems, 'problem');
      const expected = sortedCounts(field.expected, 'value')[0]?.value;
      const received = sortedCounts(field.received, 'value')
        .slice(0, 3)
        .map((entry) => entry.value);
      const toolFailures = byTool.get(field.toolName)?.failures ?? 0;
      return {
        toolName: field.toolName,
        path: field.path,
        failures: field.failures,
        shareOfTool: share(field.failures, toolFailures),
        problems,
        ...(expected !== undefined ? { expected } : {}),
        received,
        hint: describeFieldHint({ field: fieldName(field.path), problem: problems[0]?.problem ?? 'other', expected, received }),
      };
    })
    .sort((a, b) => b.failures - a.failures || compareText(a.toolName, b.toolName) || compareText(a.path, b.path));

  const toolNames = new Set([...byTool.keys(), ...tripsByTool.keys()]);
  const toolReports: ToolFailureReport[] = [...toolNames]
    .map((toolName) => {
      const tool = byTool.get(toolName) ?? { failures: 0, types: new Map<string, number>(), codes: new Map<string, number>() };
      const recovery = recoveryByTool.get(toolName) ?? { episodes: 0, rounds: 0 };
      return {
        toolName,
        failures: tool.failures,
        share: share(tool.failures, counts.failureCount),
        types: REPORT_FAILURE_TYPES.filter((type) => (tool.types.get(type) ?? 0) > 0).map((type) => ({ type, count: tool.types.get(type) ?? 0 })),
        codes: sortedCounts(tool.codes, 'code'),
        fields: fieldReports
          .filter((field) => field.toolName === toolName)
          .map(({ path, failures: fieldFailures, problems }) => ({ path, failures: fieldFailures, problems })),
        recovery: { episodes: recovery.episodes, meanRounds: meanOf(recovery.rounds, recovery.episodes) },
        breakerTrips: tripsByTool.get(toolName) ?? { session: 0, shared: 0 },
      };
    })
    .sort((a, b) => b.failures - a.failures || compareText(a.toolName, b.toolName));

  const patternById = new Map(library.patterns.map((pattern) => [pattern.id, pattern]));
  const patternReports: PatternGroupReport[] = [...patterns.entries()]
    .map(([id, group]) => ({
      id,
      count: group.count,
      rootCause: patternById.get(id)?.rootCause ?? null,
      strategy: patternById.get(id)?.strategy ?? null,
      tools: [...group.tools].sort(compareText),
    }))
    .sort((a, b) => b.count - a.count || compareText(a.id, b.id));

  const { recoveryTotals, tripCount, sessionTrips } = counts;
  return {
    source: counts.source,
    from: counts.from,
    to: counts.to,
    totals: {
      records: counts.count,
      failures: counts.failureCount,
      runsWithFailures: counts.runs,
      tools: toolNames.size,
      recoveries: recoveryTotals.episodes,
      breakerTrips: tripCount,
    },
    types: REPORT_FAILURE_TYPES.map((type) => ({ type, count: typeCounts.get(type) ?? 0, share: share(typeCounts.get(type) ?? 0, counts.failureCount) })),
    fields: fieldReports,
    tools: toolReports,
    patterns: patternReports,
    recovery: {
      episodes: recoveryTotals.episodes,
      meanRounds: meanOf(recoveryTotals.rounds, recoveryTotals.episodes),
      meanFailuresPerEpisode: meanOf(recoveryTotals.failures, recoveryTotals.episodes),
    },
    breakers: {
      trips: tripCount,
      session: sessionTrips,
      shared: tripCount - sessionTrips,
      byTool: [...tripsByTool.entries()]
        .map(([toolName, entry]) => ({ toolName, ...entry }))
        .sort((a, b) => b.session + b.shared - (a.session + a.shared) || compareText(a.toolName, b.toolName)),
    },
  };
}
