/**
 * The toolrun metrics on an OpenTelemetry meter, collected on demand: tool calls by tool, status
 * and type; durations in seconds; retries; breaker openings by scope; recovery rounds; runs; DLQ
 * entries, depth and oldest age.
 */
import { describe, expect, it } from 'vitest';
import {
  createMemoryStores,
  createToolRuntime,
  defineTool,
  handleMessage,
  runAgent,
  ToolError,
  type MessageFailureEntry,
  type ToolFailureEntry,
} from '../src/index.ts';
import { createObservability, METRIC_NAMES } from '../src/observability/index.ts';
import { createAutoAdvancingClock } from '../src/testing/auto-advancing-clock.ts';
import { createFakeClock } from '../src/testing/fake-clock.ts';
import { createScriptedModel } from '../src/testing/scripted-model.ts';
import { createTestTelemetry, sumOf, type CollectedPoint } from './observability-telemetry.ts';
import type { DeadLetterQueue } from '../src/ground/ports/stores.ts';

function histogram(points: readonly CollectedPoint[], name: string, attributes: Record<string, unknown>) {
  const point = points.find((candidate) => candidate.name === name && Object.entries(attributes).every(([key, value]) => candidate.attributes[key] === value));
  if (!point || typeof point.value === 'number') throw new Error(`no histogram point ${name} ${JSON.stringify(attributes)}`);
  return point.value;
}

describe('tool-call metrics', () => {
  it('counts calls by tool, status, type and code; durations in seconds; retries by reason', async () => {
    const telemetry = createTestTelemetry();
    const observability = createObservability({ meter: telemetry.meter, tracer: false, logger: false });
    const clock = createAutoAdvancingClock(0);
    let flaky = 0;
    const runtime = createToolRuntime({
      clock,
      onCallEnd: observability.onCallEnd,
      retry: { maxAttempts: 2, backoff: { baseDelayMs: 500, jitterMs: 0 } },
      tools: [
        defineTool({
          name: 'get_flight_status',
          description: 'Flight status',
          inputSchema: { type: 'object', properties: { flight_number: { type: 'string' } }, required: ['flight_number'] },
          idempotent: true,
          execute: async ({ flight_number }) => {
            await clock.sleep(250);
            if (flight_number === 'HAT999') throw new ToolError({ kind: 'not_found', message: 'flight HAT999 not found' });
            if (flight_number === 'FLAKY' && flaky++ === 0) throw new ToolError({ kind: 'server', status: 503 });
            return 'available';
          },
        }),
      ],
    });
    const run = (args: unknown, name = 'get_flight_status') => runtime.run({ name, args });
    await run({ flight_number: 'HAT001' });
    await run({ flight_number: 'HAT002' });
    await run({ flight_number: 'HAT999' });
    await run({});
    await run({ flight_number: 'FLAKY' });
    await run({}, 'get_flight_status_v2');

    const points = await telemetry.collect();
    const calls = METRIC_NAMES.toolCalls;
    expect(sumOf(points, calls, { 'gen_ai.tool.name': 'get_flight_status', 'toolrun.status': 'success' })).toBe(3);
    expect(
      sumOf(points, calls, { 'gen_ai.tool.name': 'get_flight_status', 'toolrun.status': 'failed', 'toolrun.failure.type': 'logic', 'error.type': 'NOT_FOUND' }),
    ).toBe(1);
    expect(
      sumOf(points, calls, { 'gen_ai.tool.name': 'get_flight_status', 'toolrun.failure.type': 'invalid_parameter', 'error.type': 'MISSING_REQUIRED' }),
    ).toBe(1);
    // a name the model invented never becomes a label
    expect(sumOf(points, calls, { 'gen_ai.tool.name': 'unknown', 'error.type': 'TOOL_NOT_FOUND' })).toBe(1);
    expect(points.some((point) => Object.values(point.attributes).includes('get_flight_status_v2'))).toBe(false);

    const successes = histogram(points, METRIC_NAMES.toolDuration, { 'gen_ai.tool.name': 'get_flight_status', 'gen_ai.operation.name': 'execute_tool' });
    // HAT001 and HAT002: 0.25 s each; FLAKY: 0.25 + 0.5 backoff + 0.25 = 1 s
    expect(successes).toMatchObject({ count: 3, sum: 1.5, min: 0.25, max: 1 });
    expect(points.find((point) => point.name === METRIC_NAMES.toolDuration)?.unit).toBe('s');
    expect(
      sumOf(points, METRIC_NAMES.toolRetries, { 'gen_ai.tool.name': 'get_flight_status', 'toolrun.retry.reason': 'backoff', 'error.type': 'UNAVAILABLE' }),
    ).toBe(1);
    expect(sumOf(points, METRIC_NAMES.toolRetries)).toBe(1);
  });
});

describe('run metrics', () => {
  it('recovery rounds: steps from a failure to the next success of the run; runs by status', async () => {
    const telemetry = createTestTelemetry();
    const observability = createObservability({ meter: telemetry.meter, tracer: false, logger: false });
    const lookup = defineTool({
      name: 'get_reservation_details',
      description: 'Reads a reservation',
      inputSchema: { type: 'object', properties: { reservation_id: { type: 'string' } }, required: ['reservation_id'] },
      execute: ({ reservation_id }) => {
        if (reservation_id !== 'ZFA04Y') throw new ToolError({ kind: 'not_found', message: `reservation ${reservation_id} not found` });
        return { reservation_id };
      },
    });
    const runtime = createToolRuntime({ tools: [lookup], clock: createAutoAdvancingClock(), onCallEnd: observability.onCallEnd });
    const call = (id: string, reservation: string) => ({
      toolCalls: [{ id, name: 'get_reservation_details', args: JSON.stringify({ reservation_id: reservation }) }],
      usage: { input: 5, output: 1 },
    });
    const answer = { text: 'done', usage: { input: 1, output: 1 } };
    // run A: fails at steps 0, 1, succeeds at step 2 → 2 rounds; then fails at 3, succeeds at 4 → 1 round
    const modelA = createScriptedModel([call('a0', 'ZFA04'), call('a1', 'ZFAO4Y'), call('a2', 'ZFA04Y'), call('a3', 'X'), call('a4', 'ZFA04Y'), answer]);
    // run B: succeeds at once → no episode
    const modelB = createScriptedModel([call('b0', 'ZFA04Y'), answer]);
    await runAgent({ model: modelA, runtime, messages: [{ role: 'user', content: 'a' }], hooks: observability.runHooks });
    await runAgent({ model: modelB, runtime, messages: [{ role: 'user', content: 'b' }], hooks: observability.runHooks });

    const points = await telemetry.collect();
    expect(histogram(points, METRIC_NAMES.recoveryRounds, { 'gen_ai.tool.name': 'get_reservation_details' })).toMatchObject({
      count: 2,
      sum: 3,
      min: 1,
      max: 2,
    });
    expect(sumOf(points, METRIC_NAMES.runs, { 'toolrun.run.status': 'completed' })).toBe(2);
  });

  it('session breaker openings: once per (session, tool), seen at the loop’s refusal or a TOO_MANY_FAILURES envelope', async () => {
    const telemetry = createTestTelemetry();
    const observability = createObservability({ meter: telemetry.meter, tracer: false, logger: false });
    const broken = defineTool({
      name: 'update_reservation_baggages',
      description: 'Updates bags',
      inputSchema: { type: 'object' },
      execute: () => {
        throw new ToolError({ kind: 'precondition', message: 'gift card balance is not enough' });
      },
    });
    const runtime = createToolRuntime({ tools: [broken], clock: createAutoAdvancingClock(), onCallEnd: observability.onCallEnd });
    const call = { toolCalls: [{ id: 'c', name: 'update_reservation_baggages', args: '{}' }], usage: { input: 5, output: 1 } };
    const result = await runAgent({
      model: createScriptedModel([call]),
      runtime,
      messages: [{ role: 'user', content: 'bags' }],
      sessionId: 'session_a',
      hooks: observability.runHooks,
    });
    expect(result.failure?.reason).toBe('session-breaker-open');
    // outside a run, the runtime's own refusals; the same session twice counts once
    await runtime.run({ name: 'update_reservation_baggages', args: {}, sessionId: 'session_a' });
    for (let call = 0; call < 5; call += 1) await runtime.run({ name: 'update_reservation_baggages', args: {}, sessionId: 'session_b' });

    const points = await telemetry.collect();
    expect(sumOf(points, METRIC_NAMES.breakerOpenings, { 'gen_ai.tool.name': 'update_reservation_baggages', 'toolrun.breaker.scope': 'session' })).toBe(2);
    expect(sumOf(points, METRIC_NAMES.runs, { 'toolrun.run.status': 'tool_failed' })).toBe(1);
  });
});

describe('worker metrics', () => {
  it('shared breaker openings and DLQ entries added come from the worker’s events; depth and oldest age from the stores', async () => {
    const telemetry = createTestTelemetry();
    const clock = createAutoAdvancingClock(Date.UTC(2026, 0, 1));
    const stores = createMemoryStores({ clock });
    const observability = createObservability({ meter: telemetry.meter, tracer: false, logger: false, stores, clock });
    const misconfigured = defineTool({
      name: 'book_reservation',
      description: 'Books',
      inputSchema: { type: 'object' },
      execute: () => {
        throw new ToolError({ kind: 'auth', status: 401, message: 'invalid API key' });
      },
    });
    const tools = [misconfigured];
    const options = {
      model: createScriptedModel([{ toolCalls: [{ id: 'c', name: 'book_reservation', args: '{}' }], usage: { input: 5, output: 1 } }]),
      tools,
      stores,
      queues: { messageDlq: stores.messageDlq, toolDlq: stores.toolDlq } as {
        messageDlq: { push(entry: MessageFailureEntry): unknown };
        toolDlq: { push(entry: ToolFailureEntry): unknown };
      },
      runtimeOptions: { clock, onCallEnd: observability.onCallEnd },
      runHooks: observability.runHooks,
      onEvent: observability.onEvent,
    };
    for (const id of ['m1', 'm2', 'm3']) await handleMessage({ id, body: JSON.stringify({ input: 'book it' }) }, options);
    await handleMessage({ id: 'bad', body: '{not json' }, options);

    const points = await telemetry.collect();
    // threshold 2: the second run's failure opens the shared breaker (one alert); the third is refused
    expect(sumOf(points, METRIC_NAMES.breakerOpenings, { 'gen_ai.tool.name': 'book_reservation', 'toolrun.breaker.scope': 'shared' })).toBe(1);
    expect(sumOf(points, METRIC_NAMES.toolCalls, { 'error.type': 'CIRCUIT_OPEN' })).toBe(1);
    expect(sumOf(points, METRIC_NAMES.deadLetterAdded, { 'toolrun.dlq.queue': 'tool', 'toolrun.dlq.reason': 'misconfiguration' })).toBe(2);
    expect(sumOf(points, METRIC_NAMES.deadLetterAdded, { 'toolrun.dlq.queue': 'tool', 'toolrun.dlq.reason': 'circuit-open' })).toBe(1);
    expect(sumOf(points, METRIC_NAMES.deadLetterAdded, { 'toolrun.dlq.queue': 'message', 'toolrun.dlq.reason': 'MALFORMED_JSON' })).toBe(1);
    expect(sumOf(points, METRIC_NAMES.deadLetterDepth, { 'toolrun.dlq.queue': 'tool' })).toBe(3);
    expect(sumOf(points, METRIC_NAMES.deadLetterDepth, { 'toolrun.dlq.queue': 'message' })).toBe(1);
  });

  it('the oldest entry’s age is now minus its addedAt, in seconds; an empty queue reports 0', async () => {
    const telemetry = createTestTelemetry();
    const clock = createFakeClock(Date.UTC(2026, 0, 1));
    const stores = createMemoryStores({ clock });
    createObservability({ meter: telemetry.meter, tracer: false, logger: false, stores, clock });
    await (stores.toolDlq as DeadLetterQueue<unknown>).push({ runId: 'r1' });
    await clock.advance(30_000);
    await (stores.toolDlq as DeadLetterQueue<unknown>).push({ runId: 'r2' });
    await clock.advance(60_000);
    const points = await telemetry.collect();
    expect(sumOf(points, METRIC_NAMES.deadLetterOldestAge, { 'toolrun.dlq.queue': 'tool' })).toBe(90);
    expect(sumOf(points, METRIC_NAMES.deadLetterOldestAge, { 'toolrun.dlq.queue': 'message' })).toBe(0);
    expect(sumOf(points, METRIC_NAMES.deadLetterDepth, { 'toolrun.dlq.queue': 'tool' })).toBe(2);
  });
});
