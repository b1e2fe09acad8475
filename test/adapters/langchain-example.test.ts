/**
 * The LangChain example (`examples/langchain/weather-agent.ts`) runs as documented: each mistake of
 * the scripted model is answered with toolrun's envelope, and the run ends with the model's answer.
 */
import { describe, expect, it } from 'vitest';
import { runWeatherAgent } from '../../examples/langchain/weather-agent.ts';

describe('examples/langchain/weather-agent.ts', () => {
  it('answers the wrong date, the truncated call and the misspelt name, then runs the corrected call', async () => {
    const { answers, finalText, modelCalls } = await runWeatherAgent();
    expect(answers.map(({ toolCallId, status, code }) => ({ toolCallId, status, code }))).toEqual([
      { toolCallId: 'call_1', status: 'error', code: 'DATE_FORMAT_ERROR' },
      { toolCallId: 'call_2', status: 'error', code: 'MALFORMED_ARGUMENTS' },
      { toolCallId: 'call_3', status: 'error', code: 'TOOL_NOT_FOUND' },
      { toolCallId: 'call_4', status: 'success', code: undefined },
    ]);
    expect(answers[2]!.content).toContain('"closest_tool":"get_weather"');
    expect(modelCalls).toBe(5);
    expect(finalText).toBe('Sunny in Paris on 1 May 2024, 21 °C.');
  });
});
