/**
 * `toAiSdk` in the real `generateText` loop of `ai` 7 (`MockLanguageModelV4` of `ai-v7/test`).
 * `ai` 7 needs Node 22+: on an older Node the suite is skipped, visibly. Run it with
 * `npx -y -p node@22 node node_modules/vitest/vitest.mjs run test/adapters/ai-sdk-v7.test.ts`.
 */
import { describe, it } from 'vitest';
import { describeAiSdkScenarios, generateResult, type PromptMessage, type ScriptedTurn, type SdkUnderTest } from './fixtures/ai-sdk-scenarios.ts';

const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
const supported = NODE_MAJOR >= 22;

async function loadV7(): Promise<SdkUnderTest> {
  const ai = await import('ai-v7');
  const { MockLanguageModelV4 } = await import('ai-v7/test');
  return {
    label: 'ai 7',
    generateText: (options) => ai.generateText(options as never) as never,
    stepCountIs: ai.isStepCount,
    repairOption: 'repairToolCall',
    scriptedModel: (turns: readonly ScriptedTurn[]) => {
      const prompts: PromptMessage[][] = [];
      const model = new MockLanguageModelV4({
        doGenerate: async (options) => {
          prompts.push(structuredClone(options.prompt) as PromptMessage[]);
          return generateResult(turns[prompts.length - 1] ?? { text: 'done' }, 'v3') as never;
        },
      });
      return { model, prompts };
    },
  };
}

describe.skipIf(supported)(`ai 7 needs Node 22+ (this is Node ${process.versions.node})`, () => {
  it.skip('skipped: run with npx -y -p node@22 node node_modules/vitest/vitest.mjs run test/adapters/ai-sdk-v7.test.ts', () => {});
});

describeAiSdkScenarios('ai 7', loadV7, { skip: !supported });
