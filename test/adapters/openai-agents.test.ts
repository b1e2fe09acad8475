/**
 * `toolrun/openai-agents` through the OpenAI Agents SDK's own run loop (`Runner`, its OpenAI
 * provider and real `openai` client) against a scripted Chat Completions / Responses endpoint on
 * 127.0.0.1. Each case asserts what the model's NEXT request carries (toolrun's envelope in the
 * function output) and that the SDK's trace marks the call as an error.
 */
import { Agent, OpenAIProvider, Runner, setTraceProcessors, setTracingDisabled, type TracingProcessor } from '@openai/agents';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toOpenAiAgents } from '../../src/adapters/openai-agents/index.ts';
import { ToolrunError } from '../../src/ground/toolrun-error.ts';
import {
  chatText,
  chatToolCalls,
  responsesText,
  responsesToolCall,
  startScriptedServer,
  type RecordedRequest,
  type ScriptedServer,
} from './fixtures/openai-scripted-server.ts';
import { createWeatherFixture, envelopeOf, type WeatherFixture } from './fixtures/openai-weather-tools.ts';

interface EndedSpan {
  type: string | undefined;
  name: string | undefined;
  error: { message: string; data?: Record<string, unknown> } | null;
}

const spans: EndedSpan[] = [];
const collector: TracingProcessor = {
  onTraceStart: async () => undefined,
  onTraceEnd: async () => undefined,
  onSpanStart: async () => undefined,
  onSpanEnd: async (span) => {
    const json = span.toJSON() as { span_data?: { type?: string; name?: string }; error?: EndedSpan['error'] };
    spans.push({ type: json.span_data?.type, name: json.span_data?.name, error: json.error ?? null });
  },
  shutdown: async () => undefined,
  forceFlush: async () => undefined,
};

let server: ScriptedServer;
let fixture: WeatherFixture;

beforeAll(async () => {
  server = await startScriptedServer();
  // vitest sets NODE_ENV=test, under which the SDK turns its tracing off: on, with only this collector
  setTraceProcessors([collector]);
  setTracingDisabled(false);
});
afterAll(async () => {
  setTraceProcessors([]);
  await server.close();
});
beforeEach(() => {
  spans.length = 0;
  fixture = createWeatherFixture();
});

function runner(useResponses = false): { runner: Runner; agent: Agent } {
  const { tools, runConfig } = toOpenAiAgents(fixture.runtime, { sessionId: 'session-1', runId: 'run-1' });
  const modelProvider = new OpenAIProvider({ apiKey: 'sk-test', baseURL: `${server.origin}/v1`, useResponses });
  return {
    runner: new Runner({ ...runConfig, modelProvider, tracingDisabled: false, traceIncludeSensitiveData: false }),
    agent: new Agent({ name: 'weather', instructions: 'Answer with the tools.', model: 'gpt-4o', tools }),
  };
}

/** The tool outputs a Chat Completions request carries, by call id. */
function toolMessages(request: RecordedRequest | undefined): Map<string, string> {
  const messages = (request?.body.messages ?? []) as Array<{ role: string; tool_call_id?: string; content?: unknown }>;
  return new Map(messages.filter((message) => message.role === 'tool').map((message) => [message.tool_call_id ?? '', String(message.content)]));
}

function functionSpanErrors(): EndedSpan[] {
  return spans.filter((span) => span.type === 'function' && span.error !== null);
}

async function oneFailedCall(name: string, args: string) {
  server.script([() => chatToolCalls([{ id: 'call_1', name, arguments: args }]), () => chatText('Sorry, I will fix that.')]);
  const { runner: host, agent } = runner();
  const result = await host.run(agent, 'What is the weather in Paris on 15 January 2024?', { maxTurns: 4 });
  expect(result.finalOutput).toBe('Sorry, I will fix that.');
  expect(server.requests).toHaveLength(2);
  const output = toolMessages(server.requests[1]).get('call_1');
  return envelopeOf(output);
}

describe('toOpenAiAgents through the SDK run loop (Chat Completions)', () => {
  it('a wrong type: the next request holds toolrun’s envelope naming /city, the tool did not run, the function span is an error', async () => {
    const envelope = await oneFailedCall('get_weather', '{"city": 75001, "date": "2024-01-15"}');
    expect(envelope).toMatchObject({
      status: 'failed',
      tool_name: 'get_weather',
      call_id: 'call_1',
      error: { code: 'INVALID_TYPE', type: 'invalid_parameter', retryable: true },
    });
    expect(envelope.error.fields).toEqual([expect.objectContaining({ path: '/city', problem: 'type' })]);
    expect(fixture.executions.get_weather).toBe(0);
    expect(functionSpanErrors()).toEqual([
      expect.objectContaining({ name: 'get_weather', error: expect.objectContaining({ message: expect.stringContaining('INVALID_TYPE') }) }),
    ]);
  });

  it('a date in the wrong format: DATE_FORMAT_ERROR with an example of the right one', async () => {
    const envelope = await oneFailedCall('get_weather', '{"city": "Paris", "date": "15/01/2024"}');
    expect(envelope.error).toMatchObject({
      code: 'DATE_FORMAT_ERROR',
      fields: [expect.objectContaining({ path: '/date', expected: expect.stringContaining('YYYY-MM-DD') })],
    });
    expect(functionSpanErrors()).toHaveLength(1);
  });

  it('truncated JSON reaches toolrun raw: MALFORMED_ARGUMENTS, not the SDK’s JSON.parse text', async () => {
    const envelope = await oneFailedCall('get_weather', '{"city": "Paris", "da');
    expect(envelope.error).toMatchObject({ code: 'MALFORMED_ARGUMENTS', type: 'invalid_parameter' });
    expect(JSON.stringify(envelope)).not.toContain('Invalid JSON input for tool');
    expect(functionSpanErrors()).toHaveLength(1);
  });

  it('a hallucinated name: TOOL_NOT_FOUND with the available tools, and the run goes on', async () => {
    const envelope = await oneFailedCall('get_forecast', '{"city": "Paris", "date": "2024-01-15"}');
    expect(envelope).toMatchObject({
      status: 'failed',
      tool_name: 'get_forecast',
      call_id: 'call_1',
      error: { code: 'TOOL_NOT_FOUND', message: expect.stringContaining('get_forecast') },
    });
    expect(envelope.error.available_tools).toEqual(['get_weather', 'flaky_lookup', 'partner_search', 'slow_report']);
  });

  it('an equivalent spelling: the envelope names the real tool, the history replays, and the corrected call runs', async () => {
    server.script([
      () => chatToolCalls([{ id: 'call_1', name: 'functions.get_weather', arguments: '{"city": "Paris", "date": "2024-01-15"}' }]),
      () => chatToolCalls([{ id: 'call_2', name: 'get_weather', arguments: '{"city": "Paris", "date": "2024-01-15"}' }]),
      () => chatText('Sunny, 21 °C.'),
    ]);
    const { runner: host, agent } = runner();
    const result = await host.run(agent, 'Weather in Paris on 2024-01-15?', { maxTurns: 5 });
    expect(result.finalOutput).toBe('Sunny, 21 °C.');
    const first = envelopeOf(toolMessages(server.requests[1]).get('call_1'));
    expect(first.error).toMatchObject({ code: 'TOOL_NOT_FOUND', closest_tool: 'get_weather', suggestion: expect.stringContaining('"get_weather"') });
    // the call is replayed under a name Chat Completions accepts
    const replayed = (server.requests[1]!.body.messages as Array<{ tool_calls?: Array<{ function: { name: string } }> }>).flatMap((m) => m.tool_calls ?? []);
    expect(replayed.map((call) => call.function.name)).toEqual(['functions_get_weather']);
    const second = envelopeOf(toolMessages(server.requests[2]).get('call_2'));
    expect(second).toMatchObject({ status: 'success', data: { city: 'Paris', forecast: 'sunny' } });
    expect(fixture.executions.get_weather).toBe(1);
  });

  it('a 503 then success: retried inside toolrun, the model sees one success (attempts 2), no error span', async () => {
    server.script([() => chatToolCalls([{ id: 'call_1', name: 'flaky_lookup', arguments: '{"order_id": "W123"}' }]), () => chatText('It shipped.')]);
    const { runner: host, agent } = runner();
    await host.run(agent, 'Where is order W123?');
    expect(envelopeOf(toolMessages(server.requests[1]).get('call_1'))).toMatchObject({ status: 'success', attempts: 2, data: { status: 'shipped' } });
    expect(fixture.executions.flaky_lookup).toBe(2);
    expect(functionSpanErrors()).toHaveLength(0);
    expect(spans.some((span) => span.type === 'function' && span.name === 'flaky_lookup')).toBe(true);
  });

  it('a 401 for every run: two runs see AUTH_EXPIRED, the shared breaker opens once (one alert), the third run gets CIRCUIT_OPEN without calling the tool', async () => {
    const codes: string[] = [];
    for (let index = 0; index < 3; index++) {
      server.script([
        () => chatToolCalls([{ id: `call_${index}`, name: 'partner_search', arguments: '{"query": "umbrella"}' }]),
        () => chatText('The catalogue is unavailable.'),
      ]);
      const { runner: host, agent } = runner();
      await host.run(agent, 'Find an umbrella');
      codes.push(envelopeOf(toolMessages(server.requests[1]).get(`call_${index}`)).error.code);
    }
    expect(codes).toEqual(['AUTH_EXPIRED', 'AUTH_EXPIRED', 'CIRCUIT_OPEN']);
    expect(fixture.executions.partner_search).toBe(2);
    expect(fixture.breakerEvents.filter((event) => event.type === 'breaker-open')).toHaveLength(1);
    expect(functionSpanErrors()).toHaveLength(3);
  });

  it('a timeout: TIMEOUT after the tool’s 150 ms, the work aborted, the run goes on', async () => {
    const envelope = await oneFailedCall('slow_report', '{"report_id": "R1"}');
    expect(envelope.error).toMatchObject({ code: 'TIMEOUT', type: 'environment' });
    expect(fixture.executions.slow_report).toBe(1);
    expect(functionSpanErrors()).toHaveLength(1);
  });

  it('the call id and the session reach toolrun (its session breaker counts by session)', async () => {
    const records: Array<{ callId: string; sessionId: string }> = [];
    const { runtime } = fixture;
    const observed = {
      ...runtime,
      specs: runtime.specs,
      names: runtime.names,
      run: async (input: Parameters<typeof runtime.run>[0]) => {
        records.push({ callId: String(input.callId), sessionId: String(input.sessionId) });
        return runtime.run(input);
      },
    } as typeof runtime;
    const { tools, runConfig } = toOpenAiAgents({ runtime: observed }, { sessionId: (context) => (context.context as { user: string }).user });
    server.script([() => chatToolCalls([{ id: 'call_77', name: 'get_weather', arguments: '{"city":"Oslo","date":"2024-02-01"}' }]), () => chatText('ok')]);
    const host = new Runner({
      ...runConfig,
      modelProvider: new OpenAIProvider({ apiKey: 'sk-test', baseURL: `${server.origin}/v1`, useResponses: false }),
      tracingDisabled: true,
    });
    await host.run(new Agent({ name: 'w', model: 'gpt-4o', tools }), 'hi', { context: { user: 'u-42' } });
    expect(records).toEqual([{ callId: 'call_77', sessionId: 'u-42' }]);
  });
});

describe('toOpenAiAgents through the SDK run loop (Responses API)', () => {
  it('bad arguments and an unknown name reach the next request as function_call_output envelopes', async () => {
    server.script([
      () => responsesToolCall({ id: 'call_1', name: 'get_weather', arguments: '{"city": "Paris", "date": "tomorrow"}' }),
      () => responsesToolCall({ id: 'call_2', name: 'weather_now', arguments: '{}' }),
      () => responsesText('done'),
    ]);
    const { runner: host, agent } = runner(true);
    const result = await host.run(agent, 'Weather?', { maxTurns: 5 });
    expect(result.finalOutput).toBe('done');
    const outputs = (request: RecordedRequest | undefined) =>
      new Map(
        ((request?.body.input ?? []) as Array<{ type?: string; call_id?: string; output?: unknown }>)
          .filter((item) => item.type === 'function_call_output')
          .map((item) => [item.call_id, item.output]),
      );
    expect(envelopeOf(outputs(server.requests[1]).get('call_1')).error).toMatchObject({ code: 'DATE_FORMAT_ERROR' });
    expect(envelopeOf(outputs(server.requests[2]).get('call_2')).error).toMatchObject({ code: 'TOOL_NOT_FOUND' });
    expect(server.requests.every((request) => request.path.endsWith('/responses'))).toBe(true);
  });
});

describe('toOpenAiAgents options', () => {
  it('a value that is not a runtime, and options of the wrong type: ToolrunError INVALID_OPTIONS', () => {
    expect(() => toOpenAiAgents({} as never)).toThrow(ToolrunError);
    expect(() => toOpenAiAgents(fixture.runtime, { runId: 7 as never })).toThrow(/runId must be a string/);
    expect(() => toOpenAiAgents(fixture.runtime, { sessionId: 1 as never, callModelInputFilter: 'x' as never })).toThrow(/sessionId.*callModelInputFilter/);
  });

  it('the tools advertise toolrun’s JSON Schema, non-strict', () => {
    const { tools } = toOpenAiAgents(fixture.runtime);
    expect(tools.map((tool) => [tool.name, tool.strict])).toEqual([
      ['get_weather', false],
      ['flaky_lookup', false],
      ['partner_search', false],
      ['slow_report', false],
    ]);
    expect(tools[0]!.parameters).toEqual(fixture.runtime.specs[0]!.inputSchema);
  });
});
