/**
 * `toolrun/ai-sdk` `toAiSdk` in the real `generateText` loop of `ai` 6 (`MockLanguageModelV3` of
 * `ai/test`) and `ai` 5 (`MockLanguageModelV2` of `ai-v5/test`); `ai` 7 runs the same scenarios in
 * ai-sdk-v7.test.ts on Node 22+. Plus `streamText`, a host tool mixed in, and the option checks.
 */
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import * as aiV5 from 'ai-v5';
import { MockLanguageModelV2 } from 'ai-v5/test';
import { describe, expect, it } from 'vitest';
import { toAiSdk, ToolCallFailure } from '../../src/adapters/ai-sdk/index.ts';
import { createToolRuntime } from '../../src/core/create-tool-runtime.ts';
import { defineTool } from '../../src/core/define-tool.ts';
import { ToolrunError } from '../../src/ground/toolrun-error.ts';
import {
  describeAiSdkScenarios,
  envelopeIn,
  generateResult,
  hostPart,
  type PromptMessage,
  type ScriptedTurn,
  type SdkUnderTest,
} from './fixtures/ai-sdk-scenarios.ts';

function scripted<M>(create: (doGenerate: (options: { prompt: unknown }) => Promise<never>) => M, specification: 'v2' | 'v3') {
  return (turns: readonly ScriptedTurn[]) => {
    const prompts: PromptMessage[][] = [];
    const model = create(async (options) => {
      prompts.push(structuredClone(options.prompt) as PromptMessage[]);
      return generateResult(turns[prompts.length - 1] ?? { text: 'done' }, specification) as never;
    });
    return { model, prompts };
  };
}

const v6: SdkUnderTest = {
  label: 'ai 6',
  generateText: (options) => generateText(options as never) as never,
  stepCountIs,
  repairOption: 'experimental_repairToolCall',
  scriptedModel: scripted((doGenerate) => new MockLanguageModelV3({ doGenerate }), 'v3'),
};

const v5: SdkUnderTest = {
  label: 'ai 5',
  generateText: (options) => aiV5.generateText(options as never) as never,
  stepCountIs: aiV5.stepCountIs,
  repairOption: 'experimental_repairToolCall',
  scriptedModel: scripted((doGenerate) => new MockLanguageModelV2({ doGenerate }), 'v2'),
};

describeAiSdkScenarios('ai 6', async () => v6);
describeAiSdkScenarios('ai 5', async () => v5);

const weatherRuntime = () =>
  createToolRuntime({
    tools: [
      defineTool({
        name: 'get_weather',
        description: 'Current weather of a city',
        inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
        execute: async ({ city }) => ({ city, temperature_c: 21 }),
      }),
    ],
  });

describe('toAiSdk with ai 6, beyond the scenarios', () => {
  it('streamText: a hallucinated name and bad arguments reach the model as envelopes; the stream reports tool-errors', async () => {
    const prompts: PromptMessage[][] = [];
    const usage = {
      inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 2, text: 2, reasoning: undefined },
    };
    const model = new MockLanguageModelV3({
      doStream: async (options) => {
        prompts.push(structuredClone(options.prompt) as PromptMessage[]);
        const parts =
          prompts.length === 1
            ? [
                { type: 'stream-start', warnings: [] },
                { type: 'tool-call', toolCallId: 's1', toolName: 'weather_lookup', input: '{"city":"Oslo"}' },
                { type: 'tool-call', toolCallId: 's2', toolName: 'get_weather', input: '{"city":7}' },
                { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage },
              ]
            : [
                { type: 'stream-start', warnings: [] },
                { type: 'text-start', id: 't' },
                { type: 'text-delta', id: 't', delta: 'done' },
                { type: 'text-end', id: 't' },
                { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
              ];
        return { stream: convertArrayToReadableStream(parts as never[]) };
      },
    });
    const { tools, repairToolCall } = toAiSdk(weatherRuntime());
    const result = streamText({ model, tools, experimental_repairToolCall: repairToolCall, stopWhen: stepCountIs(3), prompt: 'weather?' });
    const errors: Array<{ id: string; error: unknown }> = [];
    for await (const part of result.fullStream) if (part.type === 'tool-error') errors.push({ id: part.toolCallId, error: part.error });
    expect(await result.text).toBe('done');
    expect(errors.map((entry) => entry.id).sort()).toEqual(['s1', 's2']);
    expect(errors.every((entry) => ToolCallFailure.is(entry.error))).toBe(true);
    expect(envelopeIn(prompts[1]!, 's1').error.code).toBe('TOOL_NOT_FOUND');
    expect(envelopeIn(prompts[1]!, 's2').error.code).toBe('INVALID_TYPE');
  });

  it("a host's own tool keeps the SDK's validation; toolrun's tools beside it still get toolrun's", async () => {
    const prompts: PromptMessage[][] = [];
    const turns: ScriptedTurn[] = [
      {
        toolCalls: [
          { id: 'h1', name: 'host_echo', input: '{"text":5}' },
          { id: 't1', name: 'get_weather', input: '{"city": "Ber' },
        ],
      },
    ];
    const model = new MockLanguageModelV3({
      doGenerate: async (options) => {
        prompts.push(structuredClone(options.prompt) as PromptMessage[]);
        return generateResult(turns[prompts.length - 1] ?? { text: 'done' }, 'v3') as never;
      },
    });
    const { tools, repairToolCall } = toAiSdk(weatherRuntime());
    const hostTool = tool({
      description: 'Echo',
      inputSchema: jsonSchema<{ text: string }>(
        { type: 'object', properties: { text: { type: 'string' } } },
        {
          validate: (value) =>
            typeof (value as { text?: unknown }).text === 'string'
              ? { success: true, value: value as { text: string } }
              : { success: false, error: new Error('text must be a string') },
        },
      ),
      execute: async ({ text }) => text,
    });
    const result = await generateText({
      model,
      tools: { ...tools, host_echo: hostTool },
      experimental_repairToolCall: repairToolCall,
      stopWhen: stepCountIs(3),
      prompt: 'x',
    });
    expect(hostPart(result as never, 'h1').type).toBe('tool-error');
    const hostOutput = (prompts[1]!.find((message) => message.role === 'tool')!.content as Array<Record<string, unknown>>).find(
      (part) => part.toolCallId === 'h1',
    );
    expect(JSON.stringify(hostOutput)).toContain('text must be a string');
    expect(JSON.stringify(hostOutput)).not.toContain('"status":"failed"');
    expect(envelopeIn(prompts[1]!, 't1').error.code).toBe('MALFORMED_ARGUMENTS');
  });

  it('advertises the JSON Schema as it is, with no validator (the SDK only parses)', async () => {
    const { tools } = toAiSdk(weatherRuntime());
    const schema = (tools.get_weather as unknown as { inputSchema: Record<string | symbol, unknown> }).inputSchema;
    expect(schema[Symbol.for('vercel.ai.schema')]).toBe(true);
    expect(schema.validate).toBeUndefined();
    expect(schema.jsonSchema).toEqual({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false });
  });

  it('refuses what is not a runtime, and ids that are not strings', () => {
    expect(() => toAiSdk({} as never)).toThrow(ToolrunError);
    expect(() => toAiSdk(weatherRuntime(), { sessionId: 3 as never })).toThrow(/sessionId must be a string/);
  });
});
