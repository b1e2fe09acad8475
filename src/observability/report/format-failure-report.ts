import type { FailureReport } from './build-failure-report.ts';

/** Options of {@link formatFailureReport}. */
export interface FormatFailureReportOptions {
  /** Fields listed under "Fields whose errors dominate". @defaultValue 10 */
  topFields?: number;
}

const percent = (share: number) => `${(share * 100).toFixed(1)}%`;
const counts = (entries: ReadonlyArray<{ count: number } & Record<string, unknown>>, key: string) =>
  entries.map((entry) => `${String(entry[key])} ${entry.count}`).join(', ');

/**
 * The report as text for a person: the fields to fix first at the top, then the failure-type
 * distribution, each tool (how often and how it failed, its fields, recovery and breaker trips),
 * the failure patterns, recovery rounds and breaker trips. Ends with a newline.
 */
export function formatFailureReport(report: FailureReport, options: FormatFailureReportOptions = {}): string {
  const topFields = options.topFields ?? 10;
  const lines: string[] = [];
  const { totals } = report;
  lines.push(
    `toolrun report — ${totals.failures} failed tool call${totals.failures === 1 ? '' : 's'} in ${totals.runsWithFailures} run${totals.runsWithFailures === 1 ? '' : 's'}, ${totals.tools} tool${totals.tools === 1 ? '' : 's'}`,
  );
  lines.push(`source: ${report.source}${report.from !== null ? ` (${report.from} … ${report.to ?? report.from})` : ''}`);
  if (totals.records === 0) {
    lines.push('', 'No failures recorded.');
    return `${lines.join('\n')}\n`;
  }

  const fields = report.fields.slice(0, topFields);
  lines.push('', 'Fields whose errors dominate (fix their descriptions first)');
  if (fields.length === 0) lines.push('  none: no failure named an argument field');
  fields.forEach((field, index) => {
    lines.push(
      `  ${String(index + 1).padStart(2)}. ${field.toolName} ${field.path || '(arguments)'} — ${field.failures} failed call${field.failures === 1 ? '' : 's'} (${percent(field.shareOfTool)} of the tool's failures): ${counts(field.problems, 'problem')}`,
    );
    const seen = [
      field.expected !== undefined ? `expected ${field.expected}` : undefined,
      field.received.length > 0 ? `received ${field.received.join(', ')}` : undefined,
    ].filter(Boolean);
    if (seen.length > 0) lines.push(`      ${seen.join('; ')}`);
    lines.push(`      hint: ${field.hint}`);
  });
  if (report.fields.length > fields.length) lines.push(`  … ${report.fields.length - fields.length} more field(s) (--json lists all)`);

  lines.push('', 'Failure types');
  const width = Math.max(...report.types.map((entry) => entry.type.length));
  const countWidth = Math.max(...report.types.map((entry) => String(entry.count).length));
  for (const entry of report.types)
    lines.push(`  ${entry.type.padEnd(width)}  ${String(entry.count).padStart(countWidth)}  ${percent(entry.share).padStart(6)}`);

  lines.push('', 'Tools');
  for (const tool of report.tools) {
    lines.push(
      `  ${tool.toolName}: ${tool.failures} failed call${tool.failures === 1 ? '' : 's'} (${percent(tool.share)})${tool.types.length > 0 ? ` — ${counts(tool.types, 'type')}` : ''}`,
    );
    if (tool.codes.length > 0) lines.push(`    codes: ${counts(tool.codes, 'code')}`);
    if (tool.fields.length > 0)
      lines.push(
        `    fields: ${tool.fields.map((field) => `${field.path || '(arguments)'} ${field.failures} (${counts(field.problems, 'problem')})`).join('; ')}`,
      );
    const recovery =
      tool.recovery.episodes > 0 ? `recovered ${tool.recovery.episodes}×, mean ${tool.recovery.meanRounds?.toFixed(2)} rounds` : 'no recovery recorded';
    lines.push(`    ${recovery}; breaker trips: session ${tool.breakerTrips.session}, shared ${tool.breakerTrips.shared}`);
  }

  lines.push('', 'Failure patterns');
  for (const pattern of report.patterns) {
    lines.push(
      `  ${pattern.id.padEnd(26)} ${String(pattern.count).padStart(countWidth)}  ${pattern.strategy ?? '-'}${pattern.rootCause ? ` — ${pattern.rootCause}` : ''}`,
    );
  }

  lines.push('');
  lines.push(
    report.recovery.episodes > 0
      ? `Recovery: ${report.recovery.episodes} episode${report.recovery.episodes === 1 ? '' : 's'}, mean ${report.recovery.meanRounds?.toFixed(2)} rounds (steps from a failure to the next success of the run), mean ${report.recovery.meanFailuresPerEpisode?.toFixed(2)} failed calls per episode`
      : 'Recovery: none recorded',
  );
  const byTool = report.breakers.byTool.map((entry) => `${entry.toolName} (session ${entry.session}, shared ${entry.shared})`).join(', ');
  lines.push(`Breaker trips: ${report.breakers.trips} (session ${report.breakers.session}, shared ${report.breakers.shared})${byTool ? `: ${byTool}` : ''}`);
  return `${lines.join('\n')}\n`;
}
