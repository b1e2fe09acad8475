/**
 * Every sink of toolrun/otel and the tool-DLQ entry cut model- and tool-controlled text to its
 * bound BEFORE it is redacted: a spy redactor sees no text longer than the bound plus the margin,
 * whatever the size of the input (the 80 KB error text with one `@`, 1 MB names, ids,
 * stacks, arguments), and what comes out is bounded. Metric labels never carry a name the model
 * invented or one that looks like a secret.
 */
import { describe, expect, it } from 'vitest';
import type { AgentRunResult } from '../src/agent/run-agent.ts';
import type { ToolFailureInfo } from '../src/agent/run-state.ts';
import { utf8ByteLength } from '../src/ground/utf8.ts';
import { createRedactor, type Redactor } from '../src/core/redact.ts';
import type { ToolCallRecord } from '../src/core/tool-call-record.ts';
import {
  createFailureRecorder,
  createMemoryFailureLog,
  createObservability,
  createToolCallLogger,
  createToolCallTracer,
  METRIC_NAMES,
  readAllFailures,
} from '../src/observability/index.ts';
import { redactFailureLogRecord } from '../src/observability/report/build-failure-report.ts';
import { buildToolFailureEntry, MAX_TOOL_ARGS_BYTES, type ToolArgsPreview } from '../src/worker/build-tool-failure-entry.ts';
import { createTestTelemetry, sumOf } from './observability-telemetry.ts';

const MEGABYTE = 1_000_000;
/** The largest bound of any sink (the developer stack, 16 KiB) plus the widest margin redactBounded may take. */
const MAX_SCANNED_UNITS = 16_384 + 2 * 4096;

function spyRedactor() {
  const base = createRedactor();
  const seen = { longestText: 0, textCalls: 0, valueLimits: [] as Array<number | undefined> };
  const redactor: Redactor = {
    text: (text) => {
      seen.textCalls += 1;
      seen.longestText = Math.max(seen.longestText, text.length);
      return base.text(text);
    },
    value: (value, extraKeys, limits) => {
      seen.valueLimits.push(limits?.maxTextBytes);
      return base.value(value, extraKeys, limits);
    },
    isSensitiveKey: (key, extraKeys) => base.isSensitiveKey!(key, extraKeys),
  };
  return { redactor, seen };
}

/** A failed call whose every model- or tool-controlled text is huge. */
function hostileRecord(): ToolCallRecord {
  const oneAt = `${'a'.repeat(80_000)}@`;
  const huge = (label: string) => `${label} ${'x'.repeat(MEGABYTE)} mia.li3818@example.com`;
  return {
    result: {
      status: 'failed',
      tool_name: 'lookup',
      call_id: 'c',
      duration_ms: 1,
      attempts: 1,
      trace_id: 't',
      error: {
        type: 'invalid_parameter',
        code: 'INVALID_TYPE',
        message: oneAt,
        detail: oneAt,
        retryable: true,
        suggestion: 'fix it',
        fields: Array.from({ length: 50 }, (_, index) => ({
          path: `/${'k'.repeat(MEGABYTE / 10)}${index}`,
          problem: 'type',
          expected: huge('expected'),
          received: huge('received'),
        })),
      },
    },
    traceId: 't',
    callId: huge('call'),
    sessionId: huge('session'),
    runId: huge('run'),
    requestedName: huge('lookup'),
    toolName: 'lookup',
    arguments: { note: huge('note'), list: Array.from({ length: 5000 }, () => 'item mia.li3818@example.com'), [huge('key')]: 1 },
    sensitiveKeys: [],
    normalisations: Array.from({ length: 100 }, () => huge('normalised')),
    attempts: [{ attempt: 1, durationMs: 1, outcome: 'INVALID_TYPE' }],
    error: { kind: 'server', status: 500, message: oneAt, name: huge('Name'), stack: huge('stack'), causes: Array.from({ length: 40 }, () => huge('cause')) },
    misconfiguration: false,
    startedAt: Date.UTC(2024, 4, 15),
    durationMs: 1,
  };
}

describe('sinks cut before they redact', () => {
  it('the pino line: no text longer than its bound reaches the redactor; the line is bounded and holds no secret', () => {
    const { redactor, seen } = spyRedactor();
    const telemetry = createTestTelemetry({ level: 'debug' });
    createToolCallLogger({ logger: telemetry.logger, redactor }).onCallEnd(hostileRecord());
    expect(telemetry.rawLines).toHaveLength(1);
    expect(seen.textCalls).toBeGreaterThan(10);
    expect(seen.longestText).toBeLessThanOrEqual(MAX_SCANNED_UNITS);
    expect(seen.valueLimits).toEqual([2 * 8192]);
    const line = telemetry.rawLines[0]!;
    expect(utf8ByteLength(line)).toBeLessThan(400_000);
    expect(line).not.toContain('mia.li3818');
    const parsed = telemetry.lines[0]! as { developer: { causes: string[]; causes_omitted: number }; normalisations: string[] };
    expect(parsed.developer.causes).toHaveLength(20);
    expect(parsed.developer.causes_omitted).toBe(20);
    expect(parsed.normalisations).toHaveLength(20);
  });

  it('spans (captured arguments and results), the failure log and the report read bounded text only', async () => {
    const { redactor, seen } = spyRedactor();
    const telemetry = createTestTelemetry();
    const failureLog = createMemoryFailureLog();
    const tracer = createToolCallTracer({ tracer: telemetry.tracer, redactor, captureArguments: true, captureResults: true });
    const recorder = createFailureRecorder({ failureLog, redactor });
    tracer.onCallEnd(hostileRecord());
    recorder.onCallEnd(hostileRecord());
    await recorder.flush();
    expect(seen.longestText).toBeLessThanOrEqual(MAX_SCANNED_UNITS);
    expect(seen.valueLimits.every((limit) => limit !== undefined && limit <= 2 * 4096)).toBe(true);
    const [span] = telemetry.spans();
    expect(span!.name.length).toBeLessThanOrEqual('execute_tool '.length + 128);
    for (const value of Object.values(span!.attributes)) if (typeof value === 'string') expect(utf8ByteLength(value)).toBeLessThanOrEqual(4096);
    const [record] = await readAllFailures(failureLog);
    expect(utf8ByteLength(JSON.stringify(record))).toBeLessThan(16_384);
    expect(JSON.stringify(record)).not.toContain('mia.li3818');
    // The report re-reads a hostile record with the same bounds.
    const reread = redactFailureLogRecord({ ...record!, message: `${'m'.repeat(MEGABYTE)} password=hunter2` } as never, redactor);
    expect(seen.longestText).toBeLessThanOrEqual(MAX_SCANNED_UNITS);
    expect(utf8ByteLength(JSON.stringify(reread))).toBeLessThan(16_384);
  });

  it('the tool-DLQ entry: toolArgs redacted and at most 8 KB (else a marked preview), lastError and toolName cut then redacted', () => {
    const { redactor, seen } = spyRedactor();
    const run = { runId: 'run_1', conversationRef: 'conv_1', tokensSpent: { input: 1, output: 1 } } as AgentRunResult;
    const failure = (toolArgs: unknown, toolName = 'deliver'): ToolFailureInfo => ({
      stepIndex: 2,
      callIndex: 0,
      toolName,
      toolArgs,
      attempts: 3,
      lastError: { kind: 'server', status: 503, message: `${'a'.repeat(80_000)}@ and Bearer tok9f8e7d6c5b4a3210` },
      reason: 'retry-budget-exhausted',
    });
    const context = { messageId: 'm1', redactor, sensitiveKeys: ['courier_pin'], firstSeenAt: '2024-05-15T15:00:00.000Z' };

    const small = buildToolFailureEntry(run, failure({ to: 'mia.li3818@example.com', courier_pin: '9911', pwd: 'x', note: 'password=hunter2', n: 1 }), context);
    expect(small.toolArgs).toEqual({ to: '***', courier_pin: '***', pwd: '***', note: 'password=***', n: 1 });
    expect(utf8ByteLength(small.lastError.message)).toBeLessThanOrEqual(1024);
    expect(small.lastError.message).not.toContain('tok9f8e7d6c5b4a3210');

    const big = buildToolFailureEntry(
      run,
      failure(
        {
          note: `${'n'.repeat(MEGABYTE)} sk-proj-Q7hT2xLm9Vw4Kp8Zr3Nb6Yc1`,
          items: Array.from({ length: 5000 }, (_, index) => ({ index, email: `u${index}@example.com` })),
        },
        `lookup ${'x'.repeat(MEGABYTE)}`,
      ),
      context,
    );
    const preview = big.toolArgs as ToolArgsPreview;
    expect(preview).toMatchObject({ truncated: true, note: 'arguments cut to fit the entry; a replay reads them from the stored conversation' });
    expect(preview.preview.endsWith('… [truncated]')).toBe(true);
    expect(preview.bytes).toBeGreaterThan(MAX_TOOL_ARGS_BYTES);
    expect(utf8ByteLength(JSON.stringify(big.toolArgs))).toBeLessThanOrEqual(MAX_TOOL_ARGS_BYTES);
    expect(JSON.stringify(big)).not.toMatch(/@example\.com|sk-proj/);
    expect(utf8ByteLength(big.toolName)).toBeLessThanOrEqual(128);

    const raw = buildToolFailureEntry(run, failure(`{"to": "mia.li3818@example.com", "password": "hunter2", "note": "cut her`), context);
    expect(raw.toolArgs).toBe('{"to": "***", "password": "***", "note": "cut her');
    const rawHuge = buildToolFailureEntry(run, failure(`{"note": "${'r'.repeat(MEGABYTE)}`), context);
    expect((rawHuge.toolArgs as ToolArgsPreview).truncated).toBe(true);
    expect(utf8ByteLength(JSON.stringify(rawHuge.toolArgs))).toBeLessThanOrEqual(MAX_TOOL_ARGS_BYTES);

    const exotic = buildToolFailureEntry(
      run,
      failure({ big: 12n, self: undefined as unknown, deep: JSON.parse(`${'['.repeat(5000)}${']'.repeat(5000)}`) as unknown }),
      context,
    );
    expect(() => JSON.stringify(exotic)).not.toThrow();
    expect(seen.longestText).toBeLessThanOrEqual(MAX_SCANNED_UNITS);
    expect(seen.valueLimits.every((limit) => limit === 2 * MAX_TOOL_ARGS_BYTES)).toBe(true);
  });
});

describe('metric labels', () => {
  it('a tool name the model invented, or one that looks like a secret, is never a label — in calls, breaker openings and recovery rounds', async () => {
    const telemetry = createTestTelemetry();
    const observability = createObservability({ meter: telemetry.meter, tracer: false, logger: false });
    const invented = 'lookup_sk-proj-Q7hT2xLm9Vw4Kp8Zr3Nb6Yc1';
    const record = hostileRecord();
    const notFound: ToolCallRecord = {
      ...record,
      requestedName: invented,
      toolName: invented,
      callId: 'c1',
      sessionId: 's1',
      runId: 'r1',
      arguments: {},
      normalisations: [],
      result: {
        ...record.result,
        status: 'failed',
        error: { type: 'logic', code: 'TOOL_NOT_FOUND', message: 'no such tool', detail: 'no', retryable: false, suggestion: 'no' },
      } as ToolCallRecord['result'],
    };
    const metrics = observability.metrics!;
    metrics.observe({ kind: 'tool-call', record: notFound, stepIndex: 0 });
    metrics.observe({ kind: 'breaker-open', toolName: invented, scope: 'session', runId: 'r1', sessionId: 's1', at: 0 });
    metrics.observe({
      kind: 'recovery',
      runId: 'r1',
      sessionId: 's1',
      traceId: 't',
      toolName: invented,
      recoveredWith: 'lookup',
      failedAtStep: 0,
      recoveredAtStep: 1,
      rounds: 1,
      failures: 1,
      at: 0,
    });
    metrics.observe({ kind: 'breaker-open', toolName: 'model:sk-ant-api03-abcdefghijklmnopqrstuvwxyz', scope: 'shared', runId: null, sessionId: null, at: 0 });
    metrics.observe({ kind: 'breaker-open', toolName: 'model:gpt-4o', scope: 'shared', runId: null, sessionId: null, at: 0 });
    const points = await telemetry.collect();
    expect(JSON.stringify(points.map((point) => point.attributes))).not.toMatch(/sk-proj|sk-ant/);
    expect(sumOf(points, METRIC_NAMES.breakerOpenings, { 'gen_ai.tool.name': 'unknown', 'toolrun.breaker.scope': 'session' })).toBe(1);
    expect(sumOf(points, METRIC_NAMES.breakerOpenings, { 'gen_ai.tool.name': 'unknown', 'toolrun.breaker.scope': 'shared' })).toBe(1);
    expect(sumOf(points, METRIC_NAMES.breakerOpenings, { 'gen_ai.tool.name': 'model:gpt-4o', 'toolrun.breaker.scope': 'shared' })).toBe(1);
  });
});
