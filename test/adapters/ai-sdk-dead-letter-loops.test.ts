/**
 * The tool DLQ, replay and success warnings of `toAiSdk` in every loop of `ai` 6 (`generateText`,
 * `streamText`, `ToolLoopAgent`'s `generate` and `stream`; `MockLanguageModelV3`) and `ai` 5 (the
 * same with `Experimental_Agent`; `MockLanguageModelV2`, installed as `ai-v5`). `ai` 7 is in
 * ai-sdk-v7-dead-letter.test.ts, on Node 22.
 */
import * as ai from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import * as aiV5 from 'ai-v5';
import { convertArrayToReadableStream as convertArrayToReadableStreamV5, MockLanguageModelV2 } from 'ai-v5/test';
import { describeAiSdkDeadLetterLoops, type DeadLetterSdk } from './fixtures/ai-sdk-dead-letter-variants.ts';

const v6: DeadLetterSdk = {
  specification: 'v3',
  mockModel: (handlers) => new MockLanguageModelV3(handlers as never),
  readableStream: (parts) => convertArrayToReadableStream(parts),
  generateText: (options) => ai.generateText(options as never) as never,
  streamText: (options) => ai.streamText(options as never) as never,
  Agent: ai.ToolLoopAgent as never,
  stepCountIs: ai.stepCountIs,
};

const v5: DeadLetterSdk = {
  specification: 'v2',
  mockModel: (handlers) => new MockLanguageModelV2(handlers as never),
  readableStream: (parts) => convertArrayToReadableStreamV5(parts),
  generateText: (options) => aiV5.generateText(options as never) as never,
  streamText: (options) => aiV5.streamText(options as never) as never,
  Agent: aiV5.Experimental_Agent as never,
  stepCountIs: aiV5.stepCountIs,
};

describeAiSdkDeadLetterLoops('ai 6', async () => v6);
describeAiSdkDeadLetterLoops('ai 5', async () => v5);
