/**
 * Spans of tool calls and agent runs (OpenTelemetry GenAI conventions), checked with an in-memory
 * exporter: names, attributes, status, retry events, and the run span as parent of its tool spans.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { createToolRuntime, defineTool, runAgent, ToolError, type ToolRuntimeOptions } from '../src/index.ts';
import { createObservability, createToolCallTracer } from '../src/observability/index.ts';
import { createAutoAdvancingClock } from '../src/testing/auto-advancing-clock.ts';
import { createScriptedModel } from '../src/testing/scripted-model.ts';
import { createTestTelemetry } from './observability-telemetry.ts';

const hrToMs = ([seconds, nanoseconds]: [number, number]) => seconds * 1000 + nanoseconds / 1e6;

function tools(behaviour: { flaky?: () => unknown } = {}) {
  return [
    defineTool({
      name: 'get_reservation_details',
      description: 'Reads a reservation',
      inputSchema: { type: 'object', properties: { reservation_id: { type: 'string' } }, required: ['reservation_id'] },
      idempotent: true,
      execute: ({ reservation_id }) => {
        if (reservation_id === 'MISSING') throw new ToolError({ kind: 'not_found', status: 404, message: 'Reservation MISSING not found' });
        return { reservation_id, status: 'confirmed' };
      },
    }),
    defineTool({
      name: 'search_direct_flight',
      description: 'Searches flights',
      inputSchema: { type: 'object', properties: { origin: { type: 'string' } } },
      idempotent: true,
      retry: { maxAttempts: 3 },
      execute: () => (behaviour.flaky ? behaviour.flaky() : []),
    }),
    defineTool({
      name: 'cancel_reservation',
      description: 'Cancels',
      inputSchema: { type: 'object' },
      execute: () => {
        throw new ToolError({ kind: 'forbidden', status: 403, message: 'Agent may not cancel this reservation' });
      },
    }),
  ];
}

function setup(options: Partial<ToolRuntimeOptions> & { flaky?: () => unknown } = {}) {
  const telemetry = createTestTelemetry();
  const tracer = createToolCallTracer({ tracer: telemetry.tracer });
  const { flaky, ...runtimeOptions } = options;
  const runtime = createToolRuntime({
    tools: tools(flaky ? { flaky } : {}),
    clock: createAutoAdvancingClock(),
    onCallEnd: tracer.onCallEnd,
    ...runtimeOptions,
  });
  return { telemetry, tracer, runtime };
}

function onlySpan(spans: ReadableSpan[]): ReadableSpan {
  expect(spans).toHaveLength(1);
  return spans[0]!;
}

describe('execute_tool spans', () => {
  it('a successful call: GenAI name and attributes, status unset, no retry event, the call’s own times', async () => {
    const { telemetry, runtime } = setup();
    const record = await runtime.execute({ name: 'get_reservation_details', args: { reservation_id: 'ZFA04Y' }, callId: 'call_1' });
    const span = onlySpan(telemetry.spans());
    expect(span.name).toBe('execute_tool get_reservation_details');
    expect(span.kind).toBe(SpanKind.INTERNAL);
    expect(span.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'get_reservation_details',
      'gen_ai.tool.call.id': 'call_1',
      'gen_ai.tool.type': 'function',
      'toolrun.attempts': 1,
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.events).toEqual([]);
    expect(hrToMs(span.startTime)).toBe(record.startedAt);
    expect(hrToMs(span.endTime)).toBe(record.startedAt + record.durationMs);
  });

  it.each([
    ['invalid_parameter', 'MISSING_REQUIRED', { name: 'get_reservation_details', args: {} }],
    ['logic', 'NOT_FOUND', { name: 'get_reservation_details', args: { reservation_id: 'MISSING' } }],
    ['logic', 'TOOL_NOT_FOUND', { name: 'book_flight_v2', args: {} }],
    ['permission', 'PERMISSION_DENIED', { name: 'cancel_reservation', args: {} }],
  ] as const)('a %s failure (%s): error.type is the code, status ERROR', async (type, code, input) => {
    const { telemetry, runtime } = setup();
    const result = await runtime.run({ ...input, callId: 'call_f' });
    expect(result.status).toBe('failed');
    const span = onlySpan(telemetry.spans());
    expect(span.attributes['error.type']).toBe(code);
    expect(span.attributes['toolrun.failure.type']).toBe(type);
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.status.message).toBe(result.status === 'failed' ? result.error.message : '');
    expect(span.name).toBe(`execute_tool ${input.name}`);
  });

  it('an environment failure after its retries: one retry event per retried attempt, status ERROR', async () => {
    const { telemetry, runtime } = setup({ flaky: () => Promise.reject(new ToolError({ kind: 'server', status: 503, message: 'Service Unavailable' })) });
    const record = await runtime.execute({ name: 'search_direct_flight', args: {} });
    expect(record.attempts).toHaveLength(3);
    const span = onlySpan(telemetry.spans());
    expect(span.attributes['error.type']).toBe('UNAVAILABLE');
    expect(span.attributes['toolrun.failure.type']).toBe('environment');
    expect(span.attributes['toolrun.attempts']).toBe(3);
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.events.map((event) => [event.name, event.attributes?.['toolrun.attempt'], event.attributes?.['error.type']])).toEqual([
      ['retry', 2, 'UNAVAILABLE'],
      ['retry', 3, 'UNAVAILABLE'],
    ]);
    // each event sits at the start of its attempt: after the previous attempt and its backoff
    const first = record.attempts[0]!;
    expect(hrToMs(span.events[0]!.time)).toBe(record.startedAt + first.durationMs + (first.delayAfterMs ?? 0));
    expect(span.events[0]!.attributes?.['toolrun.retry.delay_ms']).toBe(first.delayAfterMs);
  });

  it('a retried-then-successful call: not marked failed, its retry event present', async () => {
    let calls = 0;
    const { telemetry, runtime } = setup({
      flaky: () => {
        calls += 1;
        if (calls === 1) throw new ToolError({ kind: 'rate_limit', status: 429, retryAfterMs: 1500, message: 'slow down' });
        return [{ flight_number: 'HAT001' }];
      },
    });
    const result = await runtime.run({ name: 'search_direct_flight', args: { origin: 'JFK' } });
    expect(result.status).toBe('success');
    const span = onlySpan(telemetry.spans());
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.attributes['error.type']).toBeUndefined();
    expect(span.attributes['toolrun.attempts']).toBe(2);
    expect(span.events).toHaveLength(1);
    expect(span.events[0]!.name).toBe('retry');
    expect(span.events[0]!.attributes).toEqual({
      'toolrun.attempt': 2,
      'error.type': 'RATE_LIMITED',
      'toolrun.retry.reason': 'retry-after',
      'toolrun.retry.delay_ms': 1500,
    });
  });

  it('a session breaker refusal is a circuit_breaker failure: error.type TOO_MANY_FAILURES', async () => {
    const { telemetry, runtime } = setup({ sessionBreaker: { failureThreshold: 1 } });
    await runtime.run({ name: 'cancel_reservation', args: {}, sessionId: 's1' });
    const refused = await runtime.run({ name: 'cancel_reservation', args: {}, sessionId: 's1' });
    expect(refused.status === 'failed' && refused.error.type).toBe('circuit_breaker');
    const spans = telemetry.spans();
    expect(spans).toHaveLength(2);
    expect(spans[1]!.attributes['error.type']).toBe('TOO_MANY_FAILURES');
    expect(spans[1]!.attributes['toolrun.failure.type']).toBe('circuit_breaker');
    expect(spans[1]!.attributes['toolrun.attempts']).toBe(0);
    expect(spans[1]!.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('arguments and results only when opted in, and redacted', async () => {
    const telemetry = createTestTelemetry();
    const plain = createToolCallTracer({ tracer: telemetry.tracer });
    const capturing = createToolCallTracer({ tracer: telemetry.tracer, captureArguments: true, captureResults: true });
    const echo = defineTool({ name: 'echo', description: 'echo', inputSchema: { type: 'object' }, sensitive: ['passport'], execute: (args) => args });
    const args = { passport: 'X1234567', note: 'write to mia.li3818@example.com', api_key: 'k' };
    await createToolRuntime({ tools: [echo], onCallEnd: plain.onCallEnd }).run({ name: 'echo', args });
    await createToolRuntime({ tools: [echo], onCallEnd: capturing.onCallEnd }).run({ name: 'echo', args });
    const [withoutCapture, withCapture] = telemetry.spans();
    expect(withoutCapture!.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
    expect(withoutCapture!.attributes['gen_ai.tool.call.result']).toBeUndefined();
    const expected = JSON.stringify({ passport: '***', note: 'write to ***', api_key: '***' });
    expect(withCapture!.attributes['gen_ai.tool.call.arguments']).toBe(expected);
    expect(withCapture!.attributes['gen_ai.tool.call.result']).toBe(expected);
  });
});

describe('invoke_agent spans', () => {
  it('a run span is the parent of its tool spans, shares its trace id with the envelopes, and ends with the run status', async () => {
    const telemetry = createTestTelemetry();
    const observability = createObservability({ tracer: telemetry.tracer, meter: false, logger: false, agentName: 'airline' });
    const runtime = createToolRuntime({ tools: tools(), clock: createAutoAdvancingClock(), onCallEnd: observability.onCallEnd });
    const model = createScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'get_reservation_details', args: '{"reservation_id":"MISSING"}' }], usage: { input: 100, output: 10 } },
      { toolCalls: [{ id: 'c2', name: 'get_reservation_details', args: '{"reservation_id":"ZFA04Y"}' }], usage: { input: 120, output: 10 } },
      { text: 'Your reservation ZFA04Y is confirmed.', usage: { input: 140, output: 12 } },
    ]);
    const result = await runAgent({
      model,
      runtime,
      messages: [{ role: 'user', content: 'check my reservation' }],
      runId: 'run_1',
      sessionId: 'session_1',
      hooks: observability.runHooks,
    });
    expect(result.status).toBe('completed');

    const spans = telemetry.spans();
    const run = spans.find((span) => span.name === 'invoke_agent airline')!;
    const toolSpans = spans.filter((span) => span.name.startsWith('execute_tool'));
    expect(toolSpans).toHaveLength(2);
    for (const span of toolSpans) {
      expect(span.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
      expect(span.spanContext().traceId).toBe(run.spanContext().traceId);
    }
    const envelopes = result.messages
      .filter((message) => message.role === 'tool')
      .map((message) => JSON.parse(message.content ?? '{}') as { trace_id: string });
    expect(envelopes.map((envelope) => envelope.trace_id)).toEqual([run.spanContext().traceId, run.spanContext().traceId]);
    expect(run.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'airline',
      'gen_ai.conversation.id': 'session_1',
      'toolrun.run.id': 'run_1',
      'toolrun.run.status': 'completed',
      'toolrun.run.steps': 3,
      'gen_ai.usage.input_tokens': 360,
      'gen_ai.usage.output_tokens': 32,
    });
    expect(run.status.code).toBe(SpanStatusCode.UNSET);
    expect(toolSpans[0]!.status.code).toBe(SpanStatusCode.ERROR);
    expect(hrToMs(toolSpans[0]!.startTime)).toBeGreaterThanOrEqual(hrToMs(run.startTime));
    expect(hrToMs(toolSpans[1]!.endTime)).toBeLessThanOrEqual(hrToMs(run.endTime));
  });

  it('a run that ends tool_failed has error.type = its status and status ERROR', async () => {
    const telemetry = createTestTelemetry();
    const observability = createObservability({ tracer: telemetry.tracer, meter: false, logger: false });
    const down = defineTool({
      name: 'book_reservation',
      description: 'Books',
      inputSchema: { type: 'object' },
      execute: () => {
        throw new ToolError({ kind: 'server', status: 503 });
      },
    });
    const runtime = createToolRuntime({ tools: [down], clock: createAutoAdvancingClock(), onCallEnd: observability.onCallEnd });
    const call = { toolCalls: [{ id: 'c', name: 'book_reservation', args: '{}' }], usage: { input: 10, output: 1 } };
    const result = await runAgent({
      model: createScriptedModel([call]),
      runtime,
      messages: [{ role: 'user', content: 'book' }],
      hooks: observability.runHooks,
    });
    expect(result.status).toBe('tool_failed');
    const run = telemetry.spans().find((span) => span.name === 'invoke_agent')!;
    expect(run.attributes['error.type']).toBe('tool_failed');
    expect(run.attributes['toolrun.run.failure.tool']).toBe('book_reservation');
    expect(run.attributes['toolrun.run.failure.reason']).toBe('retry-budget-exhausted');
    expect(run.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('with no SDK registered (the API’s no-op tracer) runs keep the runtime’s own trace ids', async () => {
    const observability = createObservability({ logger: false, meter: false });
    const runtime = createToolRuntime({ tools: tools(), onCallEnd: observability.onCallEnd });
    const model = createScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'get_reservation_details', args: '{"reservation_id":"A"}' }], usage: { input: 1, output: 1 } },
      { text: 'ok', usage: { input: 1, output: 1 } },
    ]);
    const result = await runAgent({ model, runtime, messages: [{ role: 'user', content: 'x' }], hooks: observability.runHooks });
    const envelope = JSON.parse(result.messages.find((message) => message.role === 'tool')!.content ?? '{}') as { trace_id: string };
    expect(envelope.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(envelope.trace_id).not.toBe('0'.repeat(32));
  });
});
