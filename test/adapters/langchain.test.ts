/**
 * `toolrun/langchain` inside LangChain v1's real `createAgent` loop, driven by LangChain's own fake
 * chat model (`fakeModel()` from `langchain`, which records every call it receives). Each case
 * asserts what the model's NEXT call receives — a `ToolMessage` whose content is toolrun's envelope
 * naming the field, `status: 'error'` for a failure — and what LangChain's callbacks recorded.
 */
import { describe, expect, it } from 'vitest';
import { createAgent, fakeModel, HumanMessage, AIMessage, tool as langChainTool, ToolMessage } from 'langchain';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { createToolRuntime, ToolrunError, type ToolDefinition, type ToolFailure, type ToolRuntimeOptions, type ToolSuccess } from '../../src/index.ts';
import { createSharedBreaker, type SharedBreakerEvent } from '../../src/policies/shared-breaker.ts';
import { createMemoryBreakerStateStore } from '../../src/stores/memory/memory-breaker-state-store.ts';
import { createAutoAdvancingClock } from '../../src/testing/auto-advancing-clock.ts';
import { toLangChainTools, toolrunMiddleware, ToolCallFailedError } from '../../src/adapters/langchain/index.ts';
import {
  aiMessageFromProvider,
  envelopeOf,
  flakyFlightsTool,
  hangingTool,
  rejectedCredentialsTool,
  toolMessagesOf,
  ToolRunRecorder,
  weatherTool,
  WEATHER_SCHEMA,
} from './fixtures/langchain-fixtures.ts';

type FakeModel = ReturnType<typeof fakeModel>;

function runtimeOf(tools: ToolDefinition[], options: Partial<ToolRuntimeOptions> = {}) {
  return createToolRuntime({ tools, clock: createAutoAdvancingClock(), random: () => 0, ...options });
}

/** One invocation of a real `createAgent` with the toolrun middleware; returns the final state and the traces. */
async function invoke(
  model: FakeModel,
  runtime: ReturnType<typeof runtimeOf>,
  config: { threadId?: string; runId?: string; version?: 'v1' | 'v2'; middlewareOptions?: Parameters<typeof toolrunMiddleware>[1] } = {},
) {
  const recorder = new ToolRunRecorder();
  const agent = createAgent({
    model,
    middleware: [toolrunMiddleware(runtime, config.middlewareOptions)],
    ...(config.version ? { version: config.version } : {}),
  });
  const state = await agent.invoke(
    { messages: [new HumanMessage('What is the weather in Paris on 2024-05-01?')] },
    { configurable: { thread_id: config.threadId ?? 'chat-1', ...(config.runId !== undefined ? { run_id: config.runId } : {}) }, callbacks: [recorder] },
  );
  return { state, traces: recorder.runs };
}

/** The tool messages of the model's call number `index` (0-based), in order. */
function toolMessagesSeenBy(model: FakeModel, index: number): ToolMessage[] {
  const call = model.calls[index];
  if (call === undefined) throw new Error(`the model was called ${model.callCount} times, not ${index + 1}`);
  return toolMessagesOf(call.messages);
}

function failureOf(message: ToolMessage): ToolFailure {
  expect(message.status).toBe('error');
  const envelope = envelopeOf(message);
  expect(envelope.status).toBe('failed');
  expect(message.artifact).toEqual(envelope);
  return envelope as ToolFailure;
}

describe('toolrunMiddleware in createAgent: what the model gets next', () => {
  it('bad arguments: a field-level INVALID_TYPE envelope, status error; the tool never ran', async () => {
    const weather = weatherTool();
    const model = fakeModel()
      .respondWithTools([{ name: 'get_weather', args: { city: 42, date: '2024-05-01' }, id: 'call_1' }])
      .respond(new AIMessage('done'));
    const { state, traces } = await invoke(model, runtimeOf([weather.tool]));

    expect(model.callCount).toBe(2);
    const [message] = toolMessagesSeenBy(model, 1);
    expect(message!.tool_call_id).toBe('call_1');
    expect(message!.name).toBe('get_weather');
    const failure = failureOf(message!);
    expect(failure.error).toMatchObject({ type: 'invalid_parameter', code: 'INVALID_TYPE', retryable: true });
    expect(failure.error.fields).toEqual([expect.objectContaining({ path: '/city', problem: 'type', received: '42' })]);
    expect(weather.executions.count).toBe(0);
    // LangChain's tool run is an error, not a success (what LangSmith shows).
    expect(traces).toEqual([{ name: 'get_weather', outcome: 'error', error: expect.stringContaining('INVALID_TYPE') }]);
    expect(state.messages.at(-1)?.content).toBe('done');
  });

  it('LangChain alone answers the same call with its own schema text (no field named): the contrast', async () => {
    const model = fakeModel()
      .respondWithTools([{ name: 'get_weather', args: { city: 42, date: '2024-05-01' }, id: 'call_1' }])
      .respond(new AIMessage('done'));
    const plain = langChainTool(async () => 'sunny', { name: 'get_weather', description: 'Get the forecast', schema: WEATHER_SCHEMA });
    await createAgent({ model, tools: [plain] }).invoke({ messages: [new HumanMessage('weather?')] });
    const [message] = toolMessagesSeenBy(model, 1);
    expect(message!.status).toBe('error');
    expect(String(message!.content)).toContain('Received tool input did not match expected schema');
    expect(String(message!.content)).not.toContain('/city');
  });

  it('a date in the wrong format: DATE_FORMAT_ERROR naming /date with a correct example', async () => {
    const weather = weatherTool();
    const model = fakeModel()
      .respondWithTools([{ name: 'get_weather', args: { city: 'Paris', date: '2024/5/1' }, id: 'call_d' }])
      .respondWithTools([{ name: 'get_weather', args: { city: 'Paris', date: '2024-05-01' }, id: 'call_d2' }])
      .respond(new AIMessage('Sunny, 21 °C'));
    const { state } = await invoke(model, runtimeOf([weather.tool]));

    const failure = failureOf(toolMessagesSeenBy(model, 1)[0]!);
    expect(failure.error.code).toBe('DATE_FORMAT_ERROR');
    expect(failure.error.fields).toEqual([expect.objectContaining({ path: '/date', problem: 'format', received: '"2024/5/1"' })]);
    expect(failure.error.suggestion).toContain('YYYY-MM-DD');
    // The corrected call then runs, and the loop ends with the model's answer.
    const second = toolMessagesSeenBy(model, 2).at(-1)!;
    expect(second.status).toBe('success');
    expect((envelopeOf(second) as ToolSuccess).data).toMatchObject({ city: 'Paris', date: '2024-05-01' });
    expect(weather.executions.count).toBe(1);
    expect(state.messages.at(-1)?.content).toBe('Sunny, 21 °C');
  });

  it('a hallucinated name reaches toolrun (LangChain does not answer it): TOOL_NOT_FOUND with the closest name', async () => {
    const weather = weatherTool();
    const model = fakeModel()
      .respondWithTools([{ name: 'get_wheather', args: { city: 'Paris', date: '2024-05-01' }, id: 'call_h' }])
      .respond(new AIMessage('done'));
    const { traces } = await invoke(model, runtimeOf([weather.tool]));

    const [message] = toolMessagesSeenBy(model, 1);
    expect(message!.name).toBe('get_wheather');
    const failure = failureOf(message!);
    expect(failure.error).toMatchObject({ type: 'logic', code: 'TOOL_NOT_FOUND', closest_tool: 'get_weather', available_tools: ['get_weather'] });
    expect(String(message!.content)).not.toContain('is not a valid tool'); // LangChain's own text
    expect(weather.executions.count).toBe(0);
    expect(traces).toEqual([expect.objectContaining({ name: 'get_wheather', outcome: 'error' })]);
  });

  it('an equivalent spelling (functions.get_weather) runs the real tool', async () => {
    const weather = weatherTool();
    const model = fakeModel()
      .respondWithTools([{ name: 'functions.get_weather', args: { city: 'Paris', date: '2024-05-01' }, id: 'call_e' }])
      .respond(new AIMessage('done'));
    const { traces } = await invoke(model, runtimeOf([weather.tool]));

    const [message] = toolMessagesSeenBy(model, 1);
    expect(message!.status).toBe('success');
    expect(message!.tool_call_id).toBe('call_e');
    const envelope = envelopeOf(message!) as ToolSuccess;
    expect(envelope).toMatchObject({ status: 'success', tool_name: 'get_weather', call_id: 'call_e', data: { forecast: 'sunny' } });
    expect(message!.artifact).toEqual(envelope);
    expect(weather.executions.count).toBe(1);
    expect(traces).toEqual([{ name: 'functions.get_weather', outcome: 'end' }]);
  });

  it.each(['v1', 'v2'] as const)(
    'truncated JSON (invalid_tool_calls): a MALFORMED_ARGUMENTS tool message and the loop goes on (tool node %s)',
    async (version) => {
      const weather = weatherTool();
      const model = fakeModel()
        .respond(aiMessageFromProvider([{ id: 'call_t', name: 'get_weather', arguments: '{"city": "Paris", "date": "2024-05' }]))
        .respondWithTools([{ name: 'get_weather', args: { city: 'Paris', date: '2024-05-01' }, id: 'call_t2' }])
        .respond(new AIMessage('Sunny'));
      const { state, traces } = await invoke(model, runtimeOf([weather.tool]), { version });

      expect(model.callCount).toBe(3);
      const seen = model.calls[1]!.messages;
      const ai = seen.find((message): message is AIMessage => AIMessage.isInstance(message));
      expect(ai?.invalid_tool_calls).toEqual([expect.objectContaining({ id: 'call_t', name: 'get_weather' })]);
      const [message] = toolMessagesOf(seen);
      expect(message!.tool_call_id).toBe('call_t');
      const failure = failureOf(message!);
      expect(failure.error).toMatchObject({ type: 'invalid_parameter', code: 'MALFORMED_ARGUMENTS', retryable: true });
      expect(failure.error.detail).toMatch(/cut off|truncated|ended/i);
      expect(weather.executions.count).toBe(1); // only the corrected call ran
      expect(traces.map((trace) => trace.outcome)).toEqual(['error', 'end']);
      expect(state.messages.at(-1)?.content).toBe('Sunny');
    },
  );

  it('without the middleware the same truncated call ends the LangChain run silently (what the middleware fixes)', async () => {
    const model = fakeModel()
      .respond(aiMessageFromProvider([{ id: 'call_t', name: 'get_weather', arguments: '{"city": "Paris", "date": "2024-05' }]))
      .respond(new AIMessage('never reached'));
    const plain = langChainTool(async () => 'sunny', { name: 'get_weather', description: 'Get the forecast', schema: WEATHER_SCHEMA });
    const state = await createAgent({ model, tools: [plain] }).invoke({ messages: [new HumanMessage('weather?')] });
    expect(model.callCount).toBe(1);
    expect(toolMessagesOf(state.messages)).toEqual([]);
  });

  it('a valid and a truncated call in one answer: both answered, each tool message pairs with a declared call', async () => {
    const weather = weatherTool();
    const model = fakeModel()
      .respond(
        aiMessageFromProvider([
          { id: 'call_ok', name: 'get_weather', arguments: '{"city": "Paris", "date": "2024-05-01"}' },
          { id: 'call_cut', name: 'get_weather', arguments: '{"city": "Lyon", "da' },
        ]),
      )
      .respond(new AIMessage('done'));
    await invoke(model, runtimeOf([weather.tool]));

    const seen = model.calls[1]!.messages;
    const ai = seen.find((message): message is AIMessage => AIMessage.isInstance(message))!;
    expect(ai.tool_calls?.map((call) => call.id)).toEqual(['call_ok', 'call_cut']);
    const byId = new Map(toolMessagesOf(seen).map((message) => [message.tool_call_id, message]));
    expect(byId.get('call_ok')?.status).toBe('success');
    expect(failureOf(byId.get('call_cut')!).error.code).toBe('MALFORMED_ARGUMENTS');
    expect(weather.executions.count).toBe(1);
  });

  it('a 503 then success: retried inside toolrun, the model sees one success after 2 attempts', async () => {
    const flights = flakyFlightsTool(1);
    const model = fakeModel()
      .respondWithTools([{ name: 'search_flights', args: { origin: 'JFK', destination: 'SEA' }, id: 'call_f' }])
      .respond(new AIMessage('HAT001'));
    const { traces } = await invoke(model, runtimeOf([flights.tool]));

    const [message] = toolMessagesSeenBy(model, 1);
    expect(message!.status).toBe('success');
    expect(envelopeOf(message!)).toMatchObject({ status: 'success', attempts: 2, data: { flights: [{ flight_number: 'HAT001' }] } });
    expect(flights.executions.count).toBe(2);
    expect(traces).toEqual([{ name: 'search_flights', outcome: 'end' }]);
  });

  it('a 401 for every run: the shared breaker opens once (one alert), later runs are answered CIRCUIT_OPEN without calling the tool', async () => {
    const account = rejectedCredentialsTool();
    const clock = createAutoAdvancingClock();
    const events: SharedBreakerEvent[] = [];
    const sharedBreaker = createSharedBreaker({ store: createMemoryBreakerStateStore(), clock, onEvent: (event) => events.push(event) });
    const runtime = createToolRuntime({ tools: [account.tool], clock, random: () => 0, sharedBreaker });
    const model = fakeModel();
    for (let run = 0; run < 4; run++)
      model.respondWithTools([{ name: 'get_account', args: { user_id: `user_${run}` }, id: `call_${run}` }]).respond(new AIMessage('sorry'));
    const agent = createAgent({ model, middleware: [toolrunMiddleware(runtime)] });

    for (let run = 0; run < 4; run++) await agent.invoke({ messages: [new HumanMessage('my account?')] }, { configurable: { thread_id: `chat-${run}` } });

    const codes = [1, 3, 5, 7].map((index) => failureOf(toolMessagesSeenBy(model, index)[0]!).error.code);
    expect(codes).toEqual(['AUTH_EXPIRED', 'AUTH_EXPIRED', 'CIRCUIT_OPEN', 'CIRCUIT_OPEN']);
    expect(events.filter((event) => event.type === 'breaker-open')).toHaveLength(1);
    expect(account.executions.count).toBe(2);
  });

  it('a timeout: TIMEOUT, status error, and the tool was aborted through its signal', async () => {
    const slow = hangingTool(1_000);
    const model = fakeModel()
      .respondWithTools([{ name: 'slow_lookup', args: { query: 'fares' }, id: 'call_s' }])
      .respond(new AIMessage('the backend is slow'));
    const { traces } = await invoke(model, runtimeOf([slow.tool]));

    const failure = failureOf(toolMessagesSeenBy(model, 1)[0]!);
    expect(failure.error).toMatchObject({ type: 'environment', code: 'TIMEOUT' });
    expect(slow.executions.count).toBe(1); // not idempotent: not retried after an ambiguous failure
    expect(slow.executions.contexts[0]!.signalAborted()).toBe(true);
    expect(traces).toEqual([expect.objectContaining({ name: 'slow_lookup', outcome: 'error' })]);
  });
});

describe('toolrunMiddleware: ids, the host tools, options', () => {
  it('passes the model call id, the thread id as session and the configurable run id', async () => {
    const weather = weatherTool();
    const model = fakeModel()
      .respondWithTools([{ name: 'get_weather', args: { city: 'Paris', date: '2024-05-01' }, id: 'call_ids' }])
      .respond(new AIMessage('done'));
    const runId = '0b9c3f5e-1f0a-4c39-9a51-3b6f8f9d2a11';
    await invoke(model, runtimeOf([weather.tool]), { threadId: 'chat-77', runId });
    expect(weather.executions.contexts[0]).toMatchObject({ callId: 'call_ids', sessionId: 'chat-77', runId });
  });

  it("the invocation's abort signal aborts the tool's signal and ends the run", async () => {
    const controller = new AbortController();
    const slow = hangingTool(20_000, () => controller.abort(new Error('user left')));
    const model = fakeModel()
      .respondWithTools([{ name: 'slow_lookup', args: { query: 'fares' }, id: 'call_a' }])
      .respond(new AIMessage('never reached'));
    const agent = createAgent({ model, middleware: [toolrunMiddleware(createToolRuntime({ tools: [slow.tool] }))] });
    const started = Date.now();
    await expect(agent.invoke({ messages: [new HumanMessage('fares?')] }, { signal: controller.signal })).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(slow.executions.count).toBe(1);
    expect(slow.executions.contexts[0]!.signalAborted()).toBe(true);
    expect(model.callCount).toBe(1);
  });

  it('options.sessionId and options.runId win over the invocation', async () => {
    const weather = weatherTool();
    const model = fakeModel()
      .respondWithTools([{ name: 'get_weather', args: { city: 'Paris', date: '2024-05-01' }, id: 'call_o' }])
      .respond(new AIMessage('done'));
    await invoke(model, runtimeOf([weather.tool]), { threadId: 'chat-1', middlewareOptions: { sessionId: 'session-x', runId: 'run-x' } });
    expect(weather.executions.contexts[0]).toMatchObject({ sessionId: 'session-x', runId: 'run-x' });
  });

  it("a LangChain tool of the app's own runs unchanged next to toolrun's", async () => {
    const weather = weatherTool();
    const model = fakeModel()
      .respondWithTools([
        { name: 'local_time', args: { city: 'Paris' }, id: 'call_own' },
        { name: 'get_weather', args: { city: 'Paris', date: '2024-05-01' }, id: 'call_tr' },
      ])
      .respond(new AIMessage('done'));
    const localTime = langChainTool(async ({ city }: { city: string }) => `12:00 in ${city}`, {
      name: 'local_time',
      description: 'Local time',
      schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    });
    const agent = createAgent({ model, tools: [localTime], middleware: [toolrunMiddleware(runtimeOf([weather.tool]))] });
    await agent.invoke({ messages: [new HumanMessage('time and weather?')] });
    const byId = new Map(toolMessagesSeenBy(model, 1).map((message) => [message.tool_call_id, message]));
    expect(byId.get('call_own')?.content).toBe('12:00 in Paris');
    expect(byId.get('call_tr')?.status).toBe('success');
    expect(weather.executions.count).toBe(1);
  });

  it("an unparsable call to the app's own tool is left to LangChain: that tool never runs with {}", async () => {
    const model = fakeModel()
      .respond(aiMessageFromProvider([{ id: 'call_own', name: 'local_time', arguments: '{"ci' }]))
      .respond(new AIMessage('never reached'));
    let ran = 0;
    const localTime = langChainTool(
      async () => {
        ran += 1;
        return 'noon';
      },
      { name: 'local_time', description: 'Local time', schema: { type: 'object', properties: { city: { type: 'string' } } } },
    );
    const agent = createAgent({ model, tools: [localTime], middleware: [toolrunMiddleware(runtimeOf([weatherTool().tool]))] });
    const state = await agent.invoke({ messages: [new HumanMessage('time?')] });
    expect(ran).toBe(0);
    expect(model.callCount).toBe(1);
    expect(toolMessagesOf(state.messages)).toEqual([]);
  });

  it('refuses what is not a runtime, and ids that are not non-empty strings', () => {
    const expectInvalid = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        expect(ToolrunError.is(error) && error.code).toBe('INVALID_OPTIONS');
        return;
      }
      throw new Error('expected a ToolrunError');
    };
    expectInvalid(() => toolrunMiddleware({} as never));
    expectInvalid(() => toolrunMiddleware(runtimeOf([weatherTool().tool]), { sessionId: '' }));
    expectInvalid(() => toLangChainTools(runtimeOf([weatherTool().tool]), { runId: 5 as never }));
  });
});

describe('toLangChainTools', () => {
  it("advertises each tool with toolrun's JSON Schema, as a provider binds it", () => {
    const runtime = runtimeOf([weatherTool().tool, flakyFlightsTool(0).tool]);
    const tools = toLangChainTools(runtime);
    expect(tools.map((tool) => convertToOpenAITool(tool))).toEqual(
      runtime.specs.map((spec) => ({ type: 'function', function: { name: spec.name, description: spec.description, parameters: spec.inputSchema } })),
    );
  });

  it('invoked directly: success returns the envelope as content and artifact; a failure throws ToolCallFailedError with the envelope', async () => {
    const flights = flakyFlightsTool(Number.POSITIVE_INFINITY);
    const [weather, search] = toLangChainTools(runtimeOf([weatherTool().tool, flights.tool]), { sessionId: 'direct' });
    const ok: unknown = await weather!.invoke({ type: 'tool_call', id: 'call_direct', name: 'get_weather', args: { city: 'Paris', date: '2024-05-01' } });
    expect(ToolMessage.isInstance(ok) && ok.status).toBe('success');
    expect(ToolMessage.isInstance(ok) && ok.artifact).toMatchObject({ status: 'success', call_id: 'call_direct' });
    const failure = await search!.invoke({ origin: 'JFK', destination: 'SEA' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(ToolCallFailedError.is(failure)).toBe(true);
    expect((failure as ToolCallFailedError).result.error).toMatchObject({ code: 'UNAVAILABLE', retryable: false });
    expect(flights.executions.count).toBe(3);
  });
});
