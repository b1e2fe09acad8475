/**
 * The eval's Markdown table: one row per arm, each number with its 95 % interval.
 */
import type { EvalResults } from './run-eval.ts';
import type { Interval } from './statistics.ts';

function percent(interval: Interval, trials: number): string {
  if (trials === 0) return '— (none)';
  const format = (value: number) => `${Math.round(value * 100)} %`;
  return `${format(interval.estimate)} [${format(interval.low)}, ${format(interval.high)}]`;
}

function number(interval: Interval, digits: number): string {
  if (Number.isNaN(interval.estimate)) return '— (no task solved)';
  return `${interval.estimate.toFixed(digits)} [${interval.low.toFixed(digits)}, ${interval.high.toFixed(digits)}]`;
}

/**
 * The results as Markdown: a heading line with the workload, model, SDK and seed, then a table
 * with task success, recovery rate after a failure, wasted calls per task, tokens per success
 * (each `estimate [low, high]`, 95 %) and duplicated writes, then the faults that happened by kind.
 */
export function formatEvalMarkdown(results: EvalResults): string {
  const lines = [
    `Model \`${results.model}\` · ${results.tasks.length} task${results.tasks.length === 1 ? '' : 's'} · seed ${results.seed} · ${results.settings.faultsPerTask} faults per task · first arm: ${results.sdk.name} (${results.sdk.version})`,
    '',
    '| arm (what the model reads) | tasks solved | recovery after a failure | wasted calls / task | tokens / solved task | duplicated writes |',
    '|---|---|---|---|---|---|',
  ];
  for (const arm of results.arms) {
    lines.push(
      `| ${arm.label} | ${arm.successes}/${arm.tasks} · ${percent(arm.taskSuccess, arm.tasks)} | ${arm.recoveredFaults}/${arm.recoverableFaults} · ${percent(arm.recoveryRate, arm.recoverableFaults)} | ${number(arm.wastedCallsPerTask, 2)} | ${number(arm.tokensPerSuccess, 0)} | ${arm.duplicatedWrites} |`,
    );
  }
  lines.push(
    '',
    'Rates: Wilson 95 % interval; means and tokens per solved task: percentile bootstrap (2,000 resamples, seeded). Faults that happened, recovered, per arm:',
    '',
  );
  const kinds = Object.keys(results.arms[0]?.byFault ?? {});
  lines.push(`| arm | ${kinds.join(' | ')} |`, `|---|${kinds.map(() => '---').join('|')}|`);
  for (const arm of results.arms) {
    lines.push(
      `| ${arm.arm} | ${kinds.map((kind) => `${arm.byFault[kind as keyof typeof arm.byFault].recovered}/${arm.byFault[kind as keyof typeof arm.byFault].fired}`).join(' | ')} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}
