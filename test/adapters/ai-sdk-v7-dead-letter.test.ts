/**
 * The tool DLQ, replay and success warnings of `toAiSdk` in every loop of `ai` 7 (`generateText`,
 * `streamText`, `ToolLoopAgent`'s `generate` and `stream`; `MockLanguageModelV4` of `ai-v7/test`). `ai` 7 needs Node 22+: on an older Node
 * the suite is skipped, visibly. Run it with
 * `npx -y -p node@22 node node_modules/vitest/vitest.mjs run test/adapters/ai-sdk-v7-dead-letter.test.ts`.
 */
import { describe, it } from 'vitest';
import { describeAiSdkDeadLetterLoops, type DeadLetterSdk } from './fixtures/ai-sdk-dead-letter-variants.ts';

const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
const supported = NODE_MAJOR >= 22;

async function loadV7(): Promise<DeadLetterSdk> {
  const ai = await import('ai-v7');
  const { convertArrayToReadableStream, MockLanguageModelV4 } = await import('ai-v7/test');
  return {
    specification: 'v3',
    mockModel: (handlers) => new MockLanguageModelV4(handlers as never),
    readableStream: (parts) => convertArrayToReadableStream(parts),
    generateText: (options) => ai.generateText(options as never) as never,
    streamText: (options) => ai.streamText(options as never) as never,
    Agent: ai.ToolLoopAgent as never,
    stepCountIs: ai.isStepCount,
  };
}

describe.skipIf(supported)(`ai 7 needs Node 22+ (this is Node ${process.versions.node})`, () => {
  it.skip('skipped: run with npx -y -p node@22 node node_modules/vitest/vitest.mjs run test/adapters/ai-sdk-v7-dead-letter.test.ts', () => {});
});

describeAiSdkDeadLetterLoops('ai 7', loadV7, { skip: !supported });
