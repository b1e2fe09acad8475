/**
 * `toAiSdk` in the real `generateText` loop of `ai` 7 (`MockLanguageModelV4` of `ai-v7/test`).
 * `ai` 7 needs Node 22+: on an older Node the suite is skipped, visibly. Run it with
 * `npx -y -p node@22 node node_modules/vitest/vitest.mjs run test/adapters/ai-sdk-v7.test.ts`.
 */
import { describe, expect, it } from 'vitest';
import { fromAiSdkModel } from '../../src/adapters/ai-sdk/index.ts';
import { runAgent } from '../../src/agent/run-agent.ts';
import { defineTool } from '../../src/core/define-tool.ts';
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

describe.skipIf(!supported)('fromAiSdkModel on an ai 7 model (LanguageModelV4) inside runAgent', () => {
  it('runs the loop: unknown names reach toolrun, usage from the V4 shape', async () => {
    const { MockLanguageModelV4 } = await import('ai-v7/test');
    const prompts: PromptMessage[][] = [];
    const turns: ScriptedTurn[] = [
      {
        toolCalls: [
          { id: 'c1', name: 'functions.lookup', input: '{"q":"x"}' },
          { id: 'c2', name: 'nope', input: '{}' },
        ],
      },
      { text: 'ok' },
    ];
    const model = new MockLanguageModelV4({
      doGenerate: async (options) => {
        prompts.push(structuredClone(options.prompt) as PromptMessage[]);
        return generateResult(turns[prompts.length - 1] ?? { text: 'done' }, 'v3') as never;
      },
    });
    let lookups = 0;
    const tools = [
      defineTool({
        name: 'lookup',
        description: 'Look up',
        inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
        execute: async () => ++lookups,
      }),
    ];
    const result = await runAgent({ model: fromAiSdkModel(model), tools, messages: [{ role: 'user', content: 'go' }] });
    expect(result).toMatchObject({ status: 'completed', text: 'ok', tokensSpent: { input: 20, output: 10 } });
    expect(lookups).toBe(1);
    const results = prompts[1]![2]!.content as Array<{ toolCallId: string; output: { type: string } }>;
    expect(results.map((part) => [part.toolCallId, part.output.type])).toEqual([
      ['c1', 'text'],
      ['c2', 'error-json'],
    ]);
  });
});
