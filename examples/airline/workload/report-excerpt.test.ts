import { describe, expect, it } from 'vitest';
import type { ToolFailureLogRecord } from '../../../src/ground/ports/failure-log.ts';
import { buildFailureReport, formatFailureReport } from '../../../src/observability/index.ts';
import { excerptFailureReport } from './report-excerpt.ts';

function failure(toolName: string, index: number): ToolFailureLogRecord {
  return {
    kind: 'tool-failure',
    at: `2026-01-01T00:00:${String(index).padStart(2, '0')}.000Z`,
    toolName,
    runId: `run_${index}`,
    sessionId: `run_${index}`,
    traceId: `trace_${index}`,
    callId: `call_${index}`,
    stepIndex: 0,
    type: 'logic',
    code: 'NOT_FOUND',
    message: `${toolName} found nothing`,
    fields: [],
    attempts: 1,
    durationMs: 3,
  };
}

describe('excerptFailureReport', () => {
  // 6 tools: tool_a fails 6 times, tool_b 5 times, … tool_f once.
  const records = ['tool_a', 'tool_b', 'tool_c', 'tool_d', 'tool_e', 'tool_f'].flatMap((toolName, rank) =>
    Array.from({ length: 6 - rank }, (_, index) => failure(toolName, rank * 10 + index)),
  );
  const text = formatFailureReport(buildFailureReport(records));

  it('keeps the first tools (most failures first) with their detail lines, and says how many were left out', () => {
    const lines = excerptFailureReport(text, { tools: 2 });
    const tools = lines.slice(lines.indexOf('Tools') + 1, lines.indexOf('', lines.indexOf('Tools')));
    expect(tools.filter((line) => /^ {2}\S/.test(line))).toEqual([
      expect.stringMatching(/^ {2}tool_a: 6 failed calls/),
      expect.stringMatching(/^ {2}tool_b: 5 failed calls/),
      '  … 4 more tools',
    ]);
    expect(tools.filter((line) => line.startsWith('    codes:'))).toHaveLength(2);
  });

  it('drops the failure types that never occurred, cuts long lines, and keeps the rest of the report as printed', () => {
    const lines = excerptFailureReport(text, { maxLineLength: 40 });
    const types = lines.slice(lines.indexOf('Failure types') + 1, lines.indexOf('', lines.indexOf('Failure types')));
    expect(types).toEqual([expect.stringMatching(/^ {2}logic\s+21\s+100\.0%$/)]);
    expect(lines.every((line) => line.length <= 40)).toBe(true);
    expect(lines.some((line) => line.endsWith('…'))).toBe(true);
    expect(lines[0]).toBe(`${text.split('\n')[0]!.slice(0, 39)}…`);
    expect(excerptFailureReport(text, { tools: 10, patterns: 10, hideZeroTypes: false, maxLineLength: 1000 })).toEqual(text.trimEnd().split('\n'));
  });
});
