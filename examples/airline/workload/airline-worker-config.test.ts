import { describe, expect, it } from 'vitest';
import { hasSharedData } from '../../shared-data.ts';
import { breakerCoolDownMs, conversationKeyOfRun, createAirlineWorkerConfig } from './airline-worker-config.ts';
import { AIRLINE_DEMO_SETTINGS } from './demo-settings.ts';

const dataPresent = hasSharedData('tau-bench', 'tools.airline.json');
const URL_ENV = { TOOLRUN_AIRLINE_URL: 'http://127.0.0.1:1' };

describe('airline worker config', () => {
  it('maps a run to its conversation, whose runs share one airline database', () => {
    expect(conversationKeyOfRun('t12-trial3-r10')).toBe('t12-trial3');
    expect(conversationKeyOfRun('t0-trial0')).toBe('t0-trial0');
  });

  it('needs the service URL', () => {
    expect(() => createAirlineWorkerConfig({ env: {}, runs: [] })).toThrow(/TOOLRUN_AIRLINE_URL is not set/);
  });

  it('takes the breaker cool-down from the environment, else the demo settings', () => {
    expect(breakerCoolDownMs({})).toBe(AIRLINE_DEMO_SETTINGS.sharedBreaker.halfOpenAfterMs);
    expect(breakerCoolDownMs({ TOOLRUN_AIRLINE_BREAKER_COOL_DOWN_MS: '250' })).toBe(250);
    expect(() => breakerCoolDownMs({ TOOLRUN_AIRLINE_BREAKER_COOL_DOWN_MS: '-1' })).toThrow(/positive number/);
  });

  it.skipIf(!dataPresent)('uses the recorded model by default, with the demo policies and the 14 HTTP tools', () => {
    const config = createAirlineWorkerConfig({ env: URL_ENV, runs: [] });
    expect(config.modelKind).toBe('recorded');
    expect(config.tools.map((tool) => tool.name)).toHaveLength(14);
    expect(config.tools.every((tool) => tool.timeoutMs === AIRLINE_DEMO_SETTINGS.toolTimeoutMs)).toBe(true);
    expect(config).toMatchObject({
      toolRetryBudget: 2,
      sharedBreaker: { failureThreshold: 2, halfOpenAfterMs: 4000 },
      runtimeOptions: { retry: AIRLINE_DEMO_SETTINGS.retry },
    });
  });

  it.skipIf(!dataPresent)('switches to a real OpenAI-compatible model when TOOLRUN_OPENAI_MODEL is set', () => {
    const config = createAirlineWorkerConfig({ env: { ...URL_ENV, TOOLRUN_OPENAI_MODEL: 'gpt-4o-mini', TOOLRUN_OPENAI_API_KEY: 'sk-test' }, runs: [] });
    expect(config.modelKind).toBe('openai');
    expect(config.modelDescription).toContain('gpt-4o-mini at https://api.openai.com/v1');
    const local = createAirlineWorkerConfig({
      env: { ...URL_ENV, TOOLRUN_OPENAI_MODEL: 'llama3', TOOLRUN_OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' },
      runs: [],
    });
    expect(local.modelDescription).toContain('llama3 at http://127.0.0.1:11434/v1');
    expect(() => createAirlineWorkerConfig({ env: { ...URL_ENV, TOOLRUN_OPENAI_MODEL: 'gpt-4o' }, runs: [] })).toThrow(/no API key/);
  });
});
