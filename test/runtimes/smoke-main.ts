/**
 * Command-line entry of the smoke test for Node, Bun and Deno: prints the report and sets the exit
 * code (1 when a check failed). Usage: `<runtime> test/runtimes/smoke-main.ts <runtime-name>`.
 */
import { formatSmokeReport, runSmoke } from './smoke.ts';

const runtimeName = (globalThis as { process?: { argv?: string[] } }).process?.argv?.[2] ?? 'unknown';
const report = await runSmoke(runtimeName);
console.log(formatSmokeReport(report));
if (!report.ok) {
  const global = globalThis as { process?: { exitCode?: number }; Deno?: { exit(code: number): never } };
  if (global.Deno) global.Deno.exit(1);
  if (global.process) global.process.exitCode = 1;
}
