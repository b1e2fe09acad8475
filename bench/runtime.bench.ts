/**
 * Issue 2's benchmark: the success-path cost of `runtime.run` against a raw precompiled Ajv
 * validate plus a direct call, and against cockatiel's wrap(retry, circuitBreaker, timeout) around
 * the same call; and the failure path (invalid arguments → envelope: (d) with the session breaker,
 * which cuts the repeated invalid call off — in a session of its own, so that it never cuts (b) off
 * in the later rounds; (e) without it, so every call is validated and its
 * bounded, redacted envelope built); and (f) the success path of a schema whose pattern needs the
 * linear-time RE2 engine (an unbounded quantifier) instead of the native one; (g) the raw invalid
 * call (Ajv's failing validate and its error text, thrown and caught), for reference: the target of
 * (e) is against (a), the raw valid call. Each row is the best median of 3 rounds run in turn, in
 * wall-clock time and (in the note) in the process's CPU time, which load from other processes does not inflate.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { circuitBreaker, ConsecutiveBreaker, handleAll, retry, timeout, TimeoutStrategy, wrap, ExponentialBackoff } from 'cockatiel';
import { pathToFileURL } from 'node:url';
import type { BenchRow } from './measure.ts';
import type * as Toolrun from '../src/index.ts';
import { SEARCH_FLIGHT_ARGS, SEARCH_FLIGHT_SCHEMA, searchFlight } from './search-flight-fixture.ts';

const schema = SEARCH_FLIGHT_SCHEMA;
const args = SEARCH_FLIGHT_ARGS;
const search = searchFlight;

/**
 * The compiled package's entry: `dist/index.js`, or the `index.js` in the folder `TOOLRUN_BENCH_DIST`
 * names (to compare two builds in one session).
 */
export function distEntry(file = 'index.js'): string {
  const folder = process.env.TOOLRUN_BENCH_DIST;
  return folder ? pathToFileURL(`${folder.replace(/\/$/, '')}/${file}`).href : new URL(`../dist/${file}`, import.meta.url).href;
}

/** Median ns per call of an operation: wall-clock, and CPU time of the process (not counting time others had the CPU). */
export interface Timing {
  wallNs: number;
  cpuNs: number;
}

/** {@link Timing} of `operation` in `batches` batches of `batchSize` awaited calls after a warm-up. */
export async function measureTiming(operation: () => unknown, options = { batches: 20, batchSize: 2000, warmup: 5000 }): Promise<Timing> {
  for (let index = 0; index < options.warmup; index++) await operation();
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let batch = 0; batch < options.batches; batch++) {
    const cpuStart = process.cpuUsage();
    const start = process.hrtime.bigint();
    for (let index = 0; index < options.batchSize; index++) await operation();
    wall.push(Number(process.hrtime.bigint() - start) / options.batchSize);
    const used = process.cpuUsage(cpuStart);
    cpu.push(((used.user + used.system) * 1000) / options.batchSize);
  }
  return { wallNs: median(wall), cpuNs: median(cpu) };
}

/** The median of `values` (sorted in place). */
export function median(values: number[]): number {
  values.sort((a, b) => a - b);
  return values[Math.floor(values.length / 2)]!;
}

/**
 * {@link Timing} of each operation: `rounds` rounds, each measuring every operation in turn, the best
 * (lowest) median of the rounds kept, so a burst of load on a shared machine does not decide a row.
 */
export async function measureBestOf(operations: ReadonlyArray<() => unknown>, rounds = 3): Promise<Timing[]> {
  const best: Timing[] = operations.map(() => ({ wallNs: Number.POSITIVE_INFINITY, cpuNs: Number.POSITIVE_INFINITY }));
  for (let round = 0; round < rounds; round++) {
    for (const [which, operation] of operations.entries()) {
      const timing = await measureTiming(operation);
      best[which] = { wallNs: Math.min(best[which]!.wallNs, timing.wallNs), cpuNs: Math.min(best[which]!.cpuNs, timing.cpuNs) };
    }
  }
  return best;
}

/** A row of `timing` against `baseline` (wall-clock), with the CPU-time figures in its note. */
export function timingRow(name: string, timing: Timing, baseline?: { name: string; timing: Timing }, note?: string): BenchRow {
  const cpu = `CPU ${formatNs(timing.cpuNs)}${baseline ? `, ${(timing.cpuNs / baseline.timing.cpuNs).toFixed(2)}×` : ''}`;
  return {
    name,
    medianNs: timing.wallNs,
    ...(baseline ? { baseline: baseline.name, ratio: timing.wallNs / baseline.timing.wallNs } : {}),
    note: note ? `${note}; ${cpu}` : cpu,
  };
}

function formatNs(ns: number): string {
  return ns >= 1e3 ? `${(ns / 1e3).toFixed(2)} µs` : `${ns.toFixed(0)} ns`;
}

/**
 * Runs the runtime benchmark and returns its rows. It measures the compiled package (`dist/`, what
 * users run; `npm run bench` builds it first), not the TypeScript sources through tsx, whose
 * transform adds a `__name` call to every closure on the hot path.
 */
export async function runRuntimeBench(): Promise<BenchRow[]> {
  const { createToolRuntime, defineTool } = (await import(distEntry())) as typeof Toolrun;
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
  const validate = ajv.compile(schema);
  const raw = async () => {
    if (!validate(args)) throw new Error('invalid');
    return search(args);
  };

  const runtime = createToolRuntime({
    tools: [defineTool({ name: 'search_direct_flight', description: 'Search direct flights', inputSchema: schema, idempotent: true, execute: search })],
  });
  const viaRuntime = () => runtime.run({ name: 'search_direct_flight', args });
  const invalid = { origin: 'JFK', destination: 'SEA', date: '2024/5/20' };
  // A session of its own: the breaker it opens must not cut off (b)'s calls in the later rounds.
  const failurePath = () => runtime.run({ name: 'search_direct_flight', args: invalid, sessionId: 'looping-model' });
  const unguarded = createToolRuntime({
    tools: [defineTool({ name: 'search_direct_flight', description: 'Search direct flights', inputSchema: schema, idempotent: true, execute: search })],
    sessionBreaker: false,
  });
  const validationFailure = () => unguarded.run({ name: 'search_direct_flight', args: invalid });
  const slugSchema = { ...schema, properties: { ...schema.properties, origin: { type: 'string', pattern: '^[A-Z]+(-[A-Z]+)*$' } } };
  const re2Runtime = createToolRuntime({
    tools: [defineTool({ name: 'search_direct_flight', description: 'Search direct flights', inputSchema: slugSchema, idempotent: true, execute: search })],
  });
  const re2Path = () => re2Runtime.run({ name: 'search_direct_flight', args });

  const policy = wrap(
    retry(handleAll, { maxAttempts: 2, backoff: new ExponentialBackoff({ initialDelay: 500 }) }),
    circuitBreaker(handleAll, { halfOpenAfter: 30_000, breaker: new ConsecutiveBreaker(3) }),
    timeout(30_000, TimeoutStrategy.Cooperative),
  );
  const viaCockatiel = () => policy.execute(() => raw());

  // The same invalid call without toolrun: the precompiled validate fails, its errors become a thrown message.
  const rawInvalid = async () => {
    if (!validate(invalid)) throw new Error(ajv.errorsText(validate.errors));
    return search(invalid);
  };
  const rawInvalidCaught = () => rawInvalid().catch((error: unknown) => error);

  const operations = [raw, viaRuntime, viaCockatiel, failurePath, validationFailure, re2Path, rawInvalidCaught];
  const [a, b, c, d, e, f, g] = (await measureBestOf(operations)) as [Timing, Timing, Timing, Timing, Timing, Timing, Timing];
  // Each row measured the path it names, in every round: checked once more after the last round.
  await expectOutcomes({ b: viaRuntime, d: failurePath, e: validationFailure, f: re2Path });
  const A = { name: '(a)', timing: a };
  return [
    timingRow('(a) raw precompiled Ajv validate + direct call', a),
    timingRow('(b) runtime.run, success path', b, A),
    timingRow('(c) cockatiel wrap(retry, circuitBreaker, timeout) around (a)', c, A),
    timingRow('(b) vs (c)', b, { name: '(c)', timing: c }),
    timingRow('(d) runtime.run, invalid date → envelope (session breaker open after 3)', d, A),
    timingRow('(e) runtime.run, invalid date → bounded, redacted field-level envelope (no breaker)', e, A),
    timingRow('(f) runtime.run, success, a pattern on the RE2 engine', f, { name: '(b)', timing: b }),
    timingRow('(g) raw precompiled Ajv validate that fails + Error(ajv.errorsText), for reference', g, A),
    timingRow('(e) vs (g)', e, { name: '(g)', timing: g }),
  ];
}

/**
 * Throws unless (b) and (f) still succeed, (d) is cut off by the session breaker and (e) fails
 * with the field-level `DATE_FORMAT_ERROR`: a row measuring another path than its name says is an error.
 */
async function expectOutcomes(operations: Record<'b' | 'd' | 'e' | 'f', () => Promise<Toolrun.ToolResult>>): Promise<void> {
  const expected = { b: 'success', d: 'TOO_MANY_FAILURES', e: 'DATE_FORMAT_ERROR', f: 'success' } as const;
  for (const [row, operation] of Object.entries(operations) as Array<[keyof typeof expected, () => Promise<Toolrun.ToolResult>]>) {
    const result = await operation();
    const outcome = result.status === 'success' ? 'success' : result.error.code;
    if (outcome !== expected[row]) throw new Error(`runtime bench: row (${row}) measured ${outcome}, not ${expected[row]}`);
  }
}
