/**
 * One tool-call id delivered ten times in one run — twice in the first model turn, then once in
 * each of eight more turns — through each host's real loop: the AI SDK's `generateText` and
 * `streamText` (`MockLanguageModelV3`), LangChain's `createAgent` (its `fakeModel`), the OpenAI
 * Agents `Runner` and the Anthropic tool runner (both against a scripted endpoint on 127.0.0.1).
 * A non-idempotent write runs once and every delivery is answered with the first's envelope; the
 * same id in another run (another conversation) runs again.
 */
import Anthropic from '@anthropic-ai/sdk';
import { Agent, OpenAIProvider, Runner } from '@openai/agents';
import { generateText, stepCountIs, streamText } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import { AIMessage, createAgent, fakeModel, HumanMessage, ToolMessage } from 'langchain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toAiSdk } from '../../src/adapters/ai-sdk/index.ts';
import { toAnthropicTools } from '../../src/adapters/anthropic/index.ts';
import { toolrunMiddleware } from '../../src/adapters/langchain/index.ts';
import { toOpenAiAgents } from '../../src/adapters/openai-agents/index.ts';
import { createToolRuntime } from '../../src/core/create-tool-runtime.ts';
import { defineTool } from '../../src/core/define-tool.ts';
import { generateResult, type PromptMessage } from './fixtures/ai-sdk-scenarios.ts';
import { messageText, messageToolUse } from './fixtures/anthropic-messages.ts';
import { chatText, chatToolCalls, startScriptedServer, type ScriptedServer } from './fixtures/openai-scripted-server.ts';

/** Turns of the model: the id twice, then once per turn, ten deliveries in all; then text. */
const TURNS_WITH_CALLS = 9;
const DELIVERIES = 10;
const ARGS = { account: 'A-1', amount: 5 };

/** A write that is not idempotent, counting what it applied. */
function chargeRuntime() {
  const applied: number[] = [];
  const runtime = createToolRuntime({
    tools: [
      defineTool({
        name: 'charge',
        description: 'Charges an account',
        inputSchema: {
          type: 'object',
          properties: { account: { type: 'string' }, amount: { type: 'number' } },
          required: ['account', 'amount'],
          additionalProperties: false,
        },
        execute: async ({ amount }) => {
          applied.push(Number(amount));
          return { charge: applied.length };
        },
      }),
    ],
  });
  return { runtime, applied };
}

function callsOfTurn(turn: number): number {
  return turn === 0 ? 2 : turn < TURNS_WITH_CALLS ? 1 : 0;
}

/** Every answer the model was sent for `id`, as parsed envelopes. */
function envelopes(texts: readonly unknown[]): Array<{ status: string; trace_id: string; data?: unknown }> {
  return texts.map((text) => JSON.parse(String(text)) as { status: string; trace_id: string; data?: unknown });
}

function expectOneExecution(applied: readonly number[], answers: ReturnType<typeof envelopes>, delivered = DELIVERIES): void {
  expect(applied).toEqual([5]);
  expect(answers.length).toBeGreaterThanOrEqual(delivered);
  for (const answer of answers) expect(answer).toMatchObject({ status: 'success', data: { charge: 1 }, trace_id: answers[0]!.trace_id });
}

describe('AI SDK (ai 6)', () => {
  function scriptedModel(id: string) {
    const prompts: PromptMessage[][] = [];
    const model = new MockLanguageModelV3({
      doGenerate: async (options) => {
        prompts.push(structuredClone(options.prompt) as PromptMessage[]);
        const turn = prompts.length - 1;
        const count = callsOfTurn(turn);
        const toolCalls = Array.from({ length: count }, () => ({ id, name: 'charge', input: JSON.stringify(ARGS) }));
        return generateResult(count > 0 ? { toolCalls } : { text: 'done' }, 'v3') as never;
      },
    });
    return { model, prompts };
  }

  /** The outputs of the tool results for `id` in the last prompt (the SDK sends each step's answers on). */
  function answersIn(prompt: readonly PromptMessage[], id: string): unknown[] {
    return prompt
      .filter((message) => message.role === 'tool' && Array.isArray(message.content))
      .flatMap((message) => (message.content as Array<Record<string, unknown>>).filter((part) => part.toolCallId === id))
      .map((part) => (part.output as { value: unknown }).value)
      .map((value) => (typeof value === 'string' ? value : JSON.stringify({ status: 'success', ...((value as object) ?? {}) })));
  }

  it('generateText: ten deliveries of one id run the write once; every delivery gets the first result', async () => {
    const { runtime, applied } = chargeRuntime();
    const { tools } = toAiSdk(runtime);
    const { model, prompts } = scriptedModel('call_dup');
    const result = await generateText({ model, tools, stopWhen: stepCountIs(20), prompt: 'Charge A-1 five.' });
    expect(result.text).toBe('done');
    expect(prompts).toHaveLength(TURNS_WITH_CALLS + 1);
    expect(applied).toEqual([5]);
    const outputs = result.steps.flatMap((step) => step.content.filter((part) => part.type === 'tool-result').map((part) => part.output));
    expect(outputs).toHaveLength(DELIVERIES);
    for (const output of outputs) expect(output).toEqual({ charge: 1 });
    expect(answersIn(prompts.at(-1)!, 'call_dup').length).toBeGreaterThanOrEqual(DELIVERIES);
  });

  it('generateText: the same id in another run (another conversation) runs again', async () => {
    const { runtime, applied } = chargeRuntime();
    const { tools } = toAiSdk(runtime);
    for (const prompt of ['Charge A-1 five.', 'Charge A-1 five again.']) {
      const { model } = scriptedModel('call_1');
      await generateText({ model, tools, stopWhen: stepCountIs(20), prompt });
    }
    expect(applied).toEqual([5, 5]);
  });

  it('streamText: ten deliveries of one id run the write once', async () => {
    const { runtime, applied } = chargeRuntime();
    const { tools } = toAiSdk(runtime);
    let calls = 0;
    const usage = {
      inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 2, text: 2, reasoning: undefined },
    };
    const model = new MockLanguageModelV3({
      doStream: async () => {
        const count = callsOfTurn(calls++);
        const parts: unknown[] = [{ type: 'stream-start', warnings: [] }];
        for (let index = 0; index < count; index++) parts.push({ type: 'tool-call', toolCallId: 'call_dup', toolName: 'charge', input: JSON.stringify(ARGS) });
        if (count === 0) parts.push({ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'done' }, { type: 'text-end', id: 't' });
        const reason = count > 0 ? 'tool-calls' : 'stop';
        parts.push({ type: 'finish', finishReason: { unified: reason, raw: reason }, usage });
        return { stream: convertArrayToReadableStream(parts) } as never;
      },
    });
    const result = streamText({ model, tools, stopWhen: stepCountIs(20), prompt: 'Charge A-1 five.' });
    expect(await result.text).toBe('done');
    const steps = await result.steps;
    const outputs = steps.flatMap((step) => step.content.filter((part) => part.type === 'tool-result').map((part) => part.output));
    expect(outputs).toHaveLength(DELIVERIES);
    for (const output of outputs) expect(output).toEqual({ charge: 1 });
    expect(applied).toEqual([5]);
  });
});

describe('LangChain createAgent + toolrunMiddleware', () => {
  function scriptedModel(id: string) {
    let model = fakeModel();
    for (let turn = 0; turn < TURNS_WITH_CALLS; turn++) {
      model = model.respondWithTools(Array.from({ length: callsOfTurn(turn) }, () => ({ name: 'charge', args: ARGS, id })));
    }
    return model.respond(new AIMessage('done'));
  }

  it('ten deliveries of one id in one thread run the write once; every tool message carries the first envelope', async () => {
    const { runtime, applied } = chargeRuntime();
    const model = scriptedModel('call_dup');
    const agent = createAgent({ model, middleware: [toolrunMiddleware(runtime)] });
    const state = await agent.invoke({ messages: [new HumanMessage('Charge A-1 five.')] }, { configurable: { thread_id: 'repeat-1' } });
    const answers = state.messages.filter((message) => ToolMessage.isInstance(message)).map((message) => message.content);
    expect(answers).toHaveLength(DELIVERIES);
    expectOneExecution(applied, envelopes(answers));
  });

  it('the same id in another thread runs again', async () => {
    const { runtime, applied } = chargeRuntime();
    const middleware = toolrunMiddleware(runtime);
    for (const thread of ['repeat-a', 'repeat-b']) {
      const agent = createAgent({ model: scriptedModel('call_1'), middleware: [middleware] });
      await agent.invoke({ messages: [new HumanMessage(`Charge A-1 five (${thread}).`)] }, { configurable: { thread_id: thread } });
    }
    expect(applied).toEqual([5, 5]);
  });
});

describe('HTTP hosts against a scripted endpoint', () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    server = await startScriptedServer();
  });
  afterAll(() => server.close());

  function script(toolTurn: (count: number) => ReturnType<typeof chatToolCalls>, textTurn: () => ReturnType<typeof chatText>) {
    server.script([...Array.from({ length: TURNS_WITH_CALLS }, (_, turn) => () => toolTurn(callsOfTurn(turn))), textTurn]);
  }

  it('OpenAI Agents Runner: ten deliveries of one id in one run run the write once', async () => {
    const { runtime, applied } = chargeRuntime();
    const { tools, runConfig } = toOpenAiAgents(runtime);
    const modelProvider = new OpenAIProvider({ apiKey: 'sk-test', baseURL: `${server.origin}/v1`, useResponses: false });
    const runner = new Runner({ ...runConfig, modelProvider, tracingDisabled: true });
    const agent = new Agent({ name: 'billing', instructions: 'Use the tools.', model: 'gpt-4o', tools });
    const call = { id: 'call_dup', name: 'charge', arguments: JSON.stringify(ARGS) };
    script(
      (count) => chatToolCalls(Array.from({ length: count }, () => call)),
      () => chatText('done'),
    );
    const result = await runner.run(agent, 'Charge A-1 five.', { maxTurns: 20 });
    expect(result.finalOutput).toBe('done');
    expect(server.requests).toHaveLength(TURNS_WITH_CALLS + 1);
    // the SDK keeps one function output per call id in the history it sends: every request after the first carries it
    const answers = server.requests
      .slice(1)
      .flatMap((request) =>
        (request.body.messages as Array<{ role: string; tool_call_id?: string; content?: unknown }>).filter(
          (message) => message.role === 'tool' && message.tool_call_id === 'call_dup',
        ),
      )
      .map((message) => message.content);
    expectOneExecution(applied, envelopes(answers), TURNS_WITH_CALLS);

    // another run of the same tools: a new RunContext, so the id runs again
    script(
      (count) => chatToolCalls(Array.from({ length: Math.min(count, 1) }, () => call)),
      () => chatText('done'),
    );
    await runner.run(agent, 'Charge A-1 five again.', { maxTurns: 20 });
    expect(applied).toEqual([5, 5]);
  });

  it('Anthropic tool runner: ten deliveries of one id in one runner run the write once', async () => {
    const { runtime, applied } = chargeRuntime();
    const client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: server.origin, maxRetries: 0 });
    const use = { id: 'toolu_dup', name: 'charge', input: ARGS };
    const runOnce = async () => {
      server.script([
        ...Array.from({ length: TURNS_WITH_CALLS }, (_, turn) => () => messageToolUse(Array.from({ length: callsOfTurn(turn) }, () => use))),
        () => messageText('done'),
      ]);
      const runner = client.beta.messages.toolRunner({
        model: 'claude-sonnet-4-5',
        max_tokens: 256,
        max_iterations: 20,
        messages: [{ role: 'user', content: 'Charge A-1 five.' }],
        tools: toAnthropicTools(runtime),
      });
      await runner.runUntilDone();
      expect(server.requests).toHaveLength(TURNS_WITH_CALLS + 1);
      // each request after a tool turn carries that turn's answers
      return server.requests
        .slice(1)
        .flatMap((request) => request.body.messages as Array<{ role: string; content: unknown }>)
        .flatMap((message) => (Array.isArray(message.content) ? (message.content as Array<Record<string, unknown>>) : []))
        .filter((block) => block.type === 'tool_result' && block.tool_use_id === 'toolu_dup')
        .map((block) => (typeof block.content === 'string' ? block.content : (block.content as Array<{ text: string }>)[0]!.text));
    };
    expectOneExecution(applied, envelopes(await runOnce()));
    // another runner, its own tools: the id runs again
    await runOnce();
    expect(applied).toEqual([5, 5]);
  });
});
