/**
 * Profiling helper for the runtime's hot paths (not part of `npm run bench`): runs `runtime.run` on the
 * benchmark's flight-search tool, on the compiled package (`TOOLRUN_BENCH_DIST` or `dist/`), and the
 * raw precompiled Ajv call in alternating rounds, printing ns per call (wall and CPU) of each.
 * `node --import tsx [--cpu-prof] bench/profile-runtime.mts [success|invalid|open] [calls] [rounds]`.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { distEntry } from './runtime.bench.ts';
import { SEARCH_FLIGHT_ARGS, SEARCH_FLIGHT_SCHEMA, searchFlight } from './search-flight-fixture.ts';
import type * as Toolrun from '../src/index.ts';

const { createToolRuntime, defineTool } = (await import(distEntry())) as typeof Toolrun;
const which = process.argv[2] ?? 'success';
const calls = Number(process.argv[3] ?? 100_000);
const rounds = Number(process.argv[4] ?? 1);
const runtime = createToolRuntime({
  tools: [defineTool({ name: 's', description: '', inputSchema: SEARCH_FLIGHT_SCHEMA, idempotent: true, execute: searchFlight })],
  ...(which === 'invalid' ? { sessionBreaker: false as const } : {}),
});
const args = which === 'success' ? SEARCH_FLIGHT_ARGS : { origin: 'JFK', destination: 'SEA', date: '2024/5/20' };
const ajv = new Ajv2020({ allErrors: true, strict: false });
(addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
const validate = ajv.compile(SEARCH_FLIGHT_SCHEMA);
const raw = async () => {
  if (!validate(SEARCH_FLIGHT_ARGS)) throw new Error('invalid');
  return searchFlight(SEARCH_FLIGHT_ARGS);
};
const viaRuntime = () => runtime.run({ name: 's', args });

async function time(operation: () => unknown): Promise<[number, number]> {
  for (let i = 0; i < 20_000; i++) await operation();
  const t = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  for (let i = 0; i < calls; i++) await operation();
  const used = process.cpuUsage(cpu);
  return [Number(process.hrtime.bigint() - t) / calls, ((used.user + used.system) * 1000) / calls];
}
let best = [Infinity, Infinity, Infinity, Infinity];
for (let round = 0; round < rounds; round++) {
  const [rw, rc] = await time(raw);
  const [w, c] = await time(viaRuntime);
  best = [Math.min(best[0]!, rw), Math.min(best[1]!, rc), Math.min(best[2]!, w), Math.min(best[3]!, c)];
}
const [rw, rc, w, c] = best as [number, number, number, number];
console.log(
  `${which}: runtime ${w.toFixed(0)} ns wall (${(w / rw).toFixed(2)}×), ${c.toFixed(0)} ns CPU (${(c / rc).toFixed(2)}×); raw ${rw.toFixed(0)} / ${rc.toFixed(0)} ns`,
);
