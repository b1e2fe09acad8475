/**
 * The per-call pino lines: fields, levels by failure type, redaction, the developer record, and the
 * run-aware lines (step index, recovery) of createObservability.
 */
import { describe, expect, it } from 'vitest';
import { createToolRuntime, defineTool, runAgent, ToolError } from '../src/index.ts';
import { createObservability, createToolCallLogger } from '../src/observability/index.ts';
import { createAutoAdvancingClock } from '../src/testing/auto-advancing-clock.ts';
import { createFakeClock } from '../src/testing/fake-clock.ts';
import { createScriptedModel } from '../src/testing/scripted-model.ts';
import { createTestTelemetry } from './observability-telemetry.ts';

const PINO_LEVEL = { debug: 20, info: 30, warn: 40, error: 50 } as const;

const updatePassengers = defineTool({
  name: 'update_reservation_passengers',
  description: 'Updates the passengers of a reservation',
  inputSchema: {
    type: 'object',
    properties: {
      reservation_id: { type: 'string' },
      passengers: { type: 'array', items: { type: 'object', properties: { first_name: { type: 'string' }, dob: { type: 'string', format: 'date' } } } },
      note: { type: 'string' },
    },
    required: ['reservation_id'],
  },
  sensitive: ['passengers'],
  execute: ({ reservation_id }) => {
    if (reservation_id === 'LOCKED')
      throw new ToolError({ kind: 'precondition', status: 409, message: 'reservation LOCKED is being changed by another agent' });
    if (reservation_id === 'DENIED') throw new ToolError({ kind: 'forbidden', status: 403, message: 'not allowed' });
    if (reservation_id === 'DOWN')
      throw new ToolError({
        kind: 'server',
        status: 503,
        message: 'upstream down',
        cause: new Error('socket hang up from 10.0.0.7 for mia.li3818@example.com'),
      });
    return { reservation_id, updated: true };
  },
});

function setup(level = 'debug') {
  const telemetry = createTestTelemetry({ level });
  const clock = createFakeClock(Date.UTC(2024, 4, 15, 15, 0, 0));
  const logger = createToolCallLogger({ logger: telemetry.logger, sensitiveKeys: ['note'] });
  const runtime = createToolRuntime({
    tools: [updatePassengers],
    clock,
    retry: { maxAttempts: 1 },
    onCallEnd: logger.onCallEnd,
    sessionBreaker: { failureThreshold: 2 },
  });
  return { telemetry, runtime, clock };
}

describe('one pino line per tool call', () => {
  it('a success: debug, with the record’s fields and params redacted by the tool’s and the global sensitive keys', async () => {
    const { telemetry, runtime } = setup();
    const args = { reservation_id: 'ZFA04Y', passengers: [{ first_name: 'Mia', dob: '1990-04-05' }], note: 'call me' };
    const result = await runtime.run({ name: 'update_reservation_passengers', args: JSON.stringify(args), sessionId: 's1', runId: 'run_1', callId: 'call_1' });
    expect(telemetry.lines).toHaveLength(1);
    const line = telemetry.lines[0]!;
    expect(line).toMatchObject({
      level: PINO_LEVEL.debug,
      event: 'tool_call',
      trace_id: result.trace_id,
      call_id: 'call_1',
      session_id: 's1',
      run_id: 'run_1',
      tool_name: 'update_reservation_passengers',
      status: 'success',
      duration_ms: 0,
      attempts: 1,
      retries: 0,
      attempt_outcomes: ['success'],
      normalisations: [],
      timestamp: '2024-05-15T15:00:00.000Z',
      params: { reservation_id: 'ZFA04Y', passengers: '***', note: '***' },
      msg: 'update_reservation_passengers success',
    });
    expect(line.error_type).toBeUndefined();
  });

  it.each([
    ['invalid_parameter', 'MISSING_REQUIRED', {}, PINO_LEVEL.warn],
    ['environment', 'UNAVAILABLE', { reservation_id: 'DOWN' }, PINO_LEVEL.warn],
    ['permission', 'PERMISSION_DENIED', { reservation_id: 'DENIED' }, PINO_LEVEL.error],
    ['logic', 'PRECONDITION_FAILED', { reservation_id: 'LOCKED' }, PINO_LEVEL.error],
  ] as const)('a %s failure (%s) logs at the level of its type', async (type, code, args, level) => {
    const { telemetry, runtime } = setup();
    await runtime.run({ name: 'update_reservation_passengers', args });
    expect(telemetry.lines).toHaveLength(1);
    expect(telemetry.lines[0]).toMatchObject({
      level,
      status: 'failed',
      error_type: type,
      error_code: code,
      msg: `update_reservation_passengers failed: ${code}`,
    });
  });

  it('a circuit_breaker refusal logs at warn', async () => {
    const { telemetry, runtime } = setup();
    for (let call = 0; call < 3; call += 1) await runtime.run({ name: 'update_reservation_passengers', args: { reservation_id: 'DENIED' }, sessionId: 's' });
    expect(telemetry.lines.map((line) => [line.level, line.error_code])).toEqual([
      [PINO_LEVEL.error, 'PERMISSION_DENIED'],
      [PINO_LEVEL.error, 'PERMISSION_DENIED'],
      [PINO_LEVEL.warn, 'TOO_MANY_FAILURES'],
    ]);
  });

  it('the developer record (stack, cause chain) is in the log line, redacted, joined by trace_id, and never in the envelope', async () => {
    const { telemetry, runtime } = setup();
    const result = await runtime.run({ name: 'update_reservation_passengers', args: { reservation_id: 'DOWN' } });
    const line = telemetry.lines[0]!;
    expect(line.trace_id).toBe(result.trace_id);
    const developer = line.developer as { kind: string; status: number; name: string; stack: string; causes: string[] };
    expect(developer).toMatchObject({ kind: 'server', status: 503, name: 'ToolError', causes: ['Error: socket hang up from 10.0.0.7 for ***'] });
    expect(developer.stack).toContain('ToolError: upstream down');
    expect(developer.stack).toMatch(/\n\s+at /);
    const envelope = JSON.stringify(result);
    expect(envelope).not.toContain('socket hang up');
    expect(envelope).not.toMatch(/\n\s+at /);
  });

  it('field errors are logged as the failure log keeps them', async () => {
    const { telemetry, runtime } = setup();
    await runtime.run({ name: 'update_reservation_passengers', args: { reservation_id: 'A', passengers: [{ first_name: 'Mia', dob: '05/04/1990' }] } });
    expect(telemetry.lines[0]!.fields).toEqual([
      { path: '/passengers/0/dob', problem: 'format', expected: 'YYYY-MM-DD, e.g. 2024-01-15', received: '"05/04/1990"' },
    ]);
  });

  it('builds nothing for a disabled level: at info, successes write no line', async () => {
    const { telemetry, runtime } = setup('info');
    await runtime.run({ name: 'update_reservation_passengers', args: { reservation_id: 'A' } });
    await runtime.run({ name: 'update_reservation_passengers', args: { reservation_id: 'LOCKED' } });
    expect(telemetry.lines.map((line) => line.status)).toEqual(['failed']);
  });
});

describe('createObservability: run-aware lines', () => {
  it('adds the step index, and writes a tool_recovery line when a later step succeeds', async () => {
    const telemetry = createTestTelemetry();
    const observability = createObservability({ logger: telemetry.logger, tracer: false, meter: false });
    const runtime = createToolRuntime({ tools: [updatePassengers], clock: createAutoAdvancingClock(), onCallEnd: observability.onCallEnd });
    const call = (id: string, reservation: string) => ({
      toolCalls: [{ id, name: 'update_reservation_passengers', args: JSON.stringify({ reservation_id: reservation }) }],
      usage: { input: 10, output: 2 },
    });
    const model = createScriptedModel([call('c0', 'LOCKED'), call('c1', 'LOCKED'), call('c2', 'ZFA04Y'), { text: 'done', usage: { input: 1, output: 1 } }]);
    const result = await runAgent({ model, runtime, messages: [{ role: 'user', content: 'update' }], runId: 'run_r', hooks: observability.runHooks });
    expect(result.status).toBe('completed');
    const calls = telemetry.lines.filter((line) => line.event === 'tool_call');
    expect(calls.map((line) => [line.step_index, line.status])).toEqual([
      [0, 'failed'],
      [1, 'failed'],
      [2, 'success'],
    ]);
    const recoveries = telemetry.lines.filter((line) => line.event === 'tool_recovery');
    expect(recoveries).toHaveLength(1);
    expect(recoveries[0]).toMatchObject({
      level: PINO_LEVEL.info,
      run_id: 'run_r',
      tool_name: 'update_reservation_passengers',
      recovered_with: 'update_reservation_passengers',
      failed_at_step: 0,
      recovered_at_step: 2,
      rounds: 2,
      failures: 2,
    });
  });
});
