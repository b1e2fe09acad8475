/**
 * The end-of-run summary of the airline demo: plain text a person reads at a glance, in sections
 * (runs, in-band recoveries, the two DLQs by cause, the breaker, timings and tokens, the drain, side
 * effects). See docs/main-job.md for the format.
 */
import type { SharedBreakerRecord } from '../../../src/policies/shared-breaker.ts';
import type { AirlineWorkloadReport } from './run-airline-workload.ts';
import { countMessageDlqByCause, countToolDlqByCause } from './run-airline-workload.ts';
import { excerptFailureReport } from './report-excerpt.ts';
import { describeToolFailureCause } from './resumed-runs.ts';
import { percentile, type WorkloadCounts } from './workload-observer.ts';

const number = (value: number) => value.toLocaleString('en-US');
const seconds = (milliseconds: number) => `${(milliseconds / 1000).toFixed(1)} s`;

function table(rows: ReadonlyArray<readonly [string, string]>, indent = '  '): string[] {
  const width = Math.max(0, ...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${indent}${label.padEnd(width)}  ${value}`);
}

function byCount(record: Record<string, number>): Array<[string, string]> {
  return Object.entries(record)
    .sort(([labelA, a], [labelB, b]) => b - a || labelA.localeCompare(labelB))
    .map(([label, count]) => [label, number(count).padStart(5)]);
}

function codes(record: Record<string, number>): string {
  const entries = Object.entries(record).sort(([, a], [, b]) => b - a);
  return entries.length === 0 ? 'none' : entries.map(([code, count]) => `${code} ${number(count)}`).join(', ');
}

function describeBreaker(toolName: string, counts: WorkloadCounts, before: SharedBreakerRecord | undefined, after: SharedBreakerRecord | undefined): string[] {
  const transitions = counts.breaker.filter((transition) => transition.toolName === toolName);
  const opened = transitions.filter((transition) => transition.type === 'breaker-open');
  const probes = transitions.filter((transition) => transition.type === 'breaker-half-open').length;
  const reopened = transitions.filter((transition) => transition.type === 'breaker-reopen').length;
  const lines = [
    `${toolName}: opened ${opened.length}× → ${opened.length} alert${opened.length === 1 ? '' : 's'}${opened[0]?.lastError ? ` ("${opened[0].lastError}")` : ''}`,
    `  while the credential was broken: ${probes} half-open probe${probes === 1 ? '' : 's'} after the cool-down, ${reopened} failed and re-opened it (no new alert)`,
  ];
  if (before !== undefined && after !== undefined)
    lines.push(
      `  state before the drain: ${before.state}; after the drain: ${after.state}${after.state === 'closed' && before.state !== 'closed' ? " (the drain's probe succeeded and closed it)" : ''}`,
    );
  return lines;
}

/** Formats the report as the lines `npm start` prints at the end. */
export function formatWorkloadSummary(report: AirlineWorkloadReport): string[] {
  const phase = report.faultPhase.counts;
  const status = phase.byStatus;
  const tools = phase.toolCalls;
  const wall = phase.runWallTimesMs;
  const lines: string[] = [];
  const section = (title: string) => lines.push('', `── ${title} ${'─'.repeat(Math.max(3, 72 - title.length))}`);

  section(`with faults: ${number(phase.handled)} messages in ${seconds(report.faultPhase.durationMs)}`);
  lines.push(
    ...table([
      ['runs completed', number(status.completed ?? 0)],
      ['runs in the tool DLQ', `${number(status.tool_failed ?? 0)}  (their conversations wait for the drain)`],
      ['messages in the message DLQ', `${number(status.rejected ?? 0)}  (malformed; model calls for them: ${number(report.modelCallsOutsideRuns.length)})`],
      ...Object.entries(status)
        .filter(([name]) => !['completed', 'tool_failed', 'rejected'].includes(name))
        .map(([name, count]) => [`runs ended ${name}`, number(count)] as [string, string]),
    ]),
  );

  section('in-band recoveries (inside the tool runtime, invisible to the model)');
  lines.push(
    ...table([
      ['tool calls', `${number(tools.calls)} (${number(tools.succeeded)} succeeded)`],
      ['retried, then succeeded', `${number(tools.recovered)}  (failed attempts before success: ${codes(tools.recoveredAttemptsByCode)})`],
      ['Retry-After waits honoured', `${number(tools.retryAfterWaits)}  (${seconds(tools.retryAfterWaitMs)} waited in all)`],
      ['backoff waits', number(tools.backoffWaits)],
      ['failures handed to the model', codes(tools.failedByCode)],
    ]),
  );

  section('message DLQ by cause (never retried, model never called)');
  lines.push(...table(byCount(countMessageDlqByCause(report.messageDlq))));

  section('tool DLQ by cause (reason · last error)');
  lines.push(...table(byCount(countToolDlqByCause(report.toolDlqBeforeDrain))));

  section('shared breaker and alerts');
  const breakerTools = [...new Set([...phase.breaker.map((transition) => transition.toolName), ...Object.keys(report.breakersBeforeDrain)])];
  if (breakerTools.length === 0) lines.push('  no shared breaker opened');
  for (const toolName of breakerTools)
    lines.push(...describeBreaker(toolName, phase, report.breakersBeforeDrain[toolName], report.breakersAfterDrain[toolName]).map((line) => `  ${line}`));
  lines.push(`  alerts raised (breaker-open events): ${phase.breaker.filter((transition) => transition.type === 'breaker-open').length}`);

  section('time and tokens');
  lines.push(
    ...table([
      [
        'run wall time',
        `p50 ${number(percentile(wall, 0.5) ?? 0)} ms · p95 ${number(percentile(wall, 0.95) ?? 0)} ms · max ${number(Math.max(0, ...wall))} ms (${number(wall.length)} runs)`,
      ],
      [
        'tokens spent on failed runs',
        `${number(phase.tokensOnFailedRuns.input)} input · ${number(phase.tokensOnFailedRuns.output)} output, by the ${number(phase.handled - (status.completed ?? 0) - (status.rejected ?? 0))} runs that did not complete${report.modelKind === 'recorded' ? ' (estimated: characters / 4)' : ''}`,
      ],
    ]),
  );

  section('drain: faults cleared, tool DLQ drained by the CLI');
  lines.push(`  $ ${report.drain.command}`);
  if (report.coolDownWaitMs > 0) lines.push(`  waited ${seconds(report.coolDownWaitMs)} for the breaker's cool-down first`);
  lines.push(`  ran as its own process in ${seconds(report.drain.durationMs)}, exit code ${report.drain.exitCode}; its output:`);
  lines.push(
    ...report.drain.output
      .trimEnd()
      .split('\n')
      .map((line) => `  │ ${line}`),
  );
  const resumedCompleted = report.resumed.filter((run) => run.status === 'completed' && !run.stillInDlq);
  const matching = report.resumed.filter((run) => run.stepsMatchRecording).length;
  lines.push(
    `  resumed from their failed step and completed: ${number(resumedCompleted.length)} of ${number(report.resumed.length)}; tool DLQ now ${number(report.toolDlqAfterDrain)}`,
  );
  if (report.modelKind === 'recorded')
    lines.push(`  steps of the resumed runs equal the recording (none repeated, none skipped): ${number(matching)} of ${number(report.resumed.length)}`);
  for (const run of report.resumed.slice(0, 5)) {
    lines.push(`    ${run.runId.padEnd(16)} failed at step ${run.failedStep} (${run.toolName}, ${run.cause}) → ${run.status} after ${run.steps} steps`);
  }
  if (report.resumed.length > 5) lines.push(`    … and ${number(report.resumed.length - 5)} more`);

  const resume = report.resumePhase;
  section(`after the drain: ${number(resume.conversationsResumed)} parked conversations go on`);
  lines.push(
    ...table([
      [
        'runs handled',
        `${number(resume.counts.handled)} in ${seconds(resume.durationMs)}: ${
          Object.entries(resume.counts.byStatus)
            .map(([name, count]) => `${name} ${number(count)}`)
            .join(', ') || 'none'
        }`,
      ],
    ]),
  );

  section('side effects, checked against the airline service');
  const effects = report.sideEffects;
  const applied = Object.values(effects.appliedByTool).reduce((sum, count) => sum + count, 0);
  lines.push(
    ...table([
      ['writes applied', `${number(applied)}: ${codes(effects.appliedByTool)}`],
      ['answered from the idempotency store', `${number(effects.idempotentReplays)} (retries of writes that had been applied: not applied again)`],
      ['max applications per idempotency key', `${effects.maxApplicationsPerKey} ${effects.maxApplicationsPerKey <= 1 ? '✓' : '✗'}`],
      [
        'new reservations / bookings applied',
        `${number(effects.reservationsCreated)} / ${number(effects.bookingsApplied)} ${effects.reservationMismatches.length === 0 ? '✓' : '✗'}`,
      ],
      ...(report.modelKind === 'recorded'
        ? [["writes per tool ≤ the recordings'", effects.problems.some((problem) => problem.includes('more than the')) ? '✗' : '✓'] as [string, string]]
        : []),
    ]),
  );
  for (const problem of effects.problems) lines.push(`  ✗ ${problem}`);

  section('what fails most (toolrun report)');
  const failureReport = report.failureReport;
  const rows = report.failureLogRows;
  lines.push(`  $ ${failureReport.command}`);
  lines.push(
    `  the failure log holds ${number(rows.faultPhase + rows.drain + rows.resumePhase)} records (worker with faults ${number(rows.faultPhase)}, drain ${number(rows.drain)}, after the drain ${number(rows.resumePhase)})`,
  );
  lines.push(
    `  ran as its own process in ${seconds(failureReport.durationMs)}, exit code ${failureReport.exitCode}; its output, cut to the top tools and patterns:`,
  );
  const printed =
    failureReport.exitCode === 0 ? excerptFailureReport(failureReport.stdout) : `${failureReport.stdout}${failureReport.stderr}`.trimEnd().split('\n');
  lines.push(...printed.map((line) => `  │ ${line}`.trimEnd()));

  section('in the end');
  lines.push(
    ...table([
      [
        'conversations finished',
        `${number(report.conversationsFinished)} of ${number(report.conversations)}${report.conversationsParked > 0 ? ` (${number(report.conversationsParked)} still parked behind a tool-DLQ entry)` : ''}`,
      ],
      [
        'runs completed',
        `${number(report.runsCompleted)} of ${number(report.runs)}${
          report.runsCompleted === report.runs
            ? ''
            : ` (${Object.entries(report.runsByFinalStatus)
                .filter(([status]) => status !== 'completed')
                .map(
                  ([status, count]) =>
                    `${status === 'tool_failed' ? 'in the tool DLQ' : status === 'not started' ? 'waiting behind them' : status} ${number(count)}`,
                )
                .join(', ')})`
        }`,
      ],
      ['queue', `${number(report.queueLeft)} messages left (nothing lost)`],
      ['DLQs', `message ${number(report.messageDlqAtEnd)} (the malformed messages) · tool ${number(report.toolDlqAtEnd)}`],
      ['total time', seconds(report.durationMs)],
    ]),
  );
  if (report.toolDlqLeft.length > 0)
    lines.push('  left in the tool DLQ (runs that failed after the drain, as their conversations went on; for a person to look at):');
  for (const record of report.toolDlqLeft) {
    lines.push(
      `    ${record.entry.runId.padEnd(16)} step ${record.entry.stepIndex} ${record.entry.toolName}: ${describeToolFailureCause(record.entry)} — "${record.entry.lastError.message}"`,
    );
  }
  return lines;
}
