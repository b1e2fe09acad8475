/**
 * What a toolrun worker needs for the airline workload — model, tools, policies — built from
 * environment variables. One function serves both the demo's in-process worker and
 * `examples/airline/toolrun.config.ts` (read by `toolrun dlq drain`), so the worker and the drain
 * run the same model, tools and policies.
 *
 * Environment variables:
 * - `TOOLRUN_AIRLINE_URL` (required): base URL of the airline service, e.g. `http://127.0.0.1:40123`.
 * - `TOOLRUN_AIRLINE_BREAKER_COOL_DOWN_MS`: the shared breaker's cool-down before a probe, in ms
 *   (default: the demo's, 4000).
 * - `TOOLRUN_OPENAI_MODEL`: a model name; when set, a real OpenAI-compatible model replaces the
 *   recorded one. Then `TOOLRUN_OPENAI_BASE_URL` (default: OpenAI's) and `TOOLRUN_OPENAI_API_KEY`
 *   (or `OPENAI_API_KEY`; may be left out only with a base URL, for local servers that need none).
 * - `TOOLRUN_MODEL=ai-sdk`: the recorded turns served by an AI SDK mock model through
 *   `fromAiSdkModel` (`toolrun/ai-sdk`) instead of directly; the summary is the same.
 */
import type { Model } from '../../../src/agent/messages.ts';
import { createOpenAiChatModel } from '../../../src/adapters/openai/index.ts';
import { createAiSdkRecordedModel } from '../../ai-sdk/recorded-ai-sdk-model.ts';
import type { ToolRuntimeOptions } from '../../../src/core/create-tool-runtime.ts';
import { createFailurePatternLibrary } from '../../../src/core/failure-patterns.ts';
import type { SharedBreakerOptions } from '../../../src/policies/shared-breaker.ts';
import { createAirlineHttpTools } from '../http-tools.ts';
import { createRecordedModel } from '../recorded-model.ts';
import type { AirlineToolDefinition } from '../tool-definition-shape.ts';
import { loadAirlineRuns, type AirlineRun } from '../trajectories.ts';
import { AIRLINE_DEMO_SETTINGS, type AirlineDemoSettings } from './demo-settings.ts';

/** The worker configuration of the airline workload (the `toolrun` config module's shape). */
export interface AirlineWorkerConfig {
  model: Model;
  tools: AirlineToolDefinition[];
  toolRetryBudget: number;
  maxSteps: number;
  /** The demo's retry policy and timeout, and the default failure patterns (they phrase the envelopes' `suggestion`). */
  runtimeOptions: Pick<ToolRuntimeOptions, 'retry' | 'defaultTimeoutMs' | 'failurePatterns'>;
  sharedBreaker: Partial<SharedBreakerOptions>;
}

/** The config plus which model it uses and a one-line description of it, for people. */
export interface DescribedAirlineWorkerConfig extends AirlineWorkerConfig {
  /** `recorded`: gpt-4o's recorded turns; `openai`: a real OpenAI-compatible model. */
  modelKind: 'recorded' | 'openai';
  modelDescription: string;
}

/** Options of {@link createAirlineWorkerConfig}. */
export interface AirlineWorkerConfigOptions {
  env: Readonly<Record<string, string | undefined>>;
  /** @defaultValue {@link AIRLINE_DEMO_SETTINGS} */
  settings?: AirlineDemoSettings;
  /** The recorded runs (loaded from the data folder when omitted; only the recorded model needs them). */
  runs?: readonly AirlineRun[];
}

/** The conversation (trajectory) a run belongs to: `t3-trial1-r2` → `t3-trial1`. Its runs share one airline database. */
export function conversationKeyOfRun(runId: string): string {
  return runId.replace(/-r\d+$/, '');
}

/**
 * The shared breaker's cool-down the config will use for `env`: `TOOLRUN_AIRLINE_BREAKER_COOL_DOWN_MS`,
 * else the settings'.
 *
 * @throws Error when the variable is not a positive number.
 */
export function breakerCoolDownMs(env: AirlineWorkerConfigOptions['env'], settings: AirlineDemoSettings = AIRLINE_DEMO_SETTINGS): number {
  return positiveNumber(env, 'TOOLRUN_AIRLINE_BREAKER_COOL_DOWN_MS', settings.sharedBreaker.halfOpenAfterMs);
}

function positiveNumber(env: AirlineWorkerConfigOptions['env'], name: string, fallback: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number of milliseconds, received "${text}"`);
  return value;
}

function createModel(options: AirlineWorkerConfigOptions): { model: Model; modelKind: 'recorded' | 'openai'; modelDescription: string } {
  const { env } = options;
  const modelName = env.TOOLRUN_OPENAI_MODEL;
  if (modelName !== undefined && modelName !== '') {
    const baseURL = env.TOOLRUN_OPENAI_BASE_URL || undefined;
    const apiKey = env.TOOLRUN_OPENAI_API_KEY || env.OPENAI_API_KEY || (baseURL !== undefined ? 'not-needed' : undefined);
    if (apiKey === undefined) {
      throw new Error(
        'TOOLRUN_OPENAI_MODEL is set but no API key is: set TOOLRUN_OPENAI_API_KEY (or OPENAI_API_KEY), or TOOLRUN_OPENAI_BASE_URL for a local server that needs none',
      );
    }
    return {
      model: createOpenAiChatModel({ model: modelName, apiKey, ...(baseURL !== undefined ? { baseURL } : {}), temperature: 0 }),
      modelKind: 'openai',
      modelDescription: `${modelName} at ${baseURL ?? 'https://api.openai.com/v1'} (real model; customer turns from the recordings)`,
    };
  }
  if (env.TOOLRUN_MODEL === 'ai-sdk') {
    return {
      model: createAiSdkRecordedModel(options.runs ?? loadAirlineRuns()),
      modelKind: 'recorded',
      modelDescription: 'recorded gpt-4o turns of τ-bench through the AI SDK (its MockLanguageModelV3 via fromAiSdkModel; no network, no API key)',
    };
  }
  return {
    model: createRecordedModel(options.runs ?? loadAirlineRuns()),
    modelKind: 'recorded',
    modelDescription: 'recorded gpt-4o turns of τ-bench (no network, no API key)',
  };
}

/**
 * Builds the airline worker configuration.
 *
 * @throws Error when `TOOLRUN_AIRLINE_URL` is missing, a number variable is malformed, a real
 *   model is asked for without a key, or (recorded model) the data folder is absent.
 */
export function createAirlineWorkerConfig(options: AirlineWorkerConfigOptions): DescribedAirlineWorkerConfig {
  const { env } = options;
  const settings = options.settings ?? AIRLINE_DEMO_SETTINGS;
  const baseUrl = env.TOOLRUN_AIRLINE_URL;
  if (baseUrl === undefined || baseUrl === '') {
    throw new Error('TOOLRUN_AIRLINE_URL is not set: give the base URL of the airline service (npm start sets it for the drain)');
  }
  const { model, modelKind, modelDescription } = createModel(options);
  return {
    model,
    modelKind,
    modelDescription,
    tools: createAirlineHttpTools({ baseUrl, databaseKey: conversationKeyOfRun, timeoutMs: settings.toolTimeoutMs }),
    toolRetryBudget: settings.toolRetryBudget,
    maxSteps: settings.maxSteps,
    runtimeOptions: { retry: settings.retry, defaultTimeoutMs: settings.toolTimeoutMs, failurePatterns: createFailurePatternLibrary() },
    sharedBreaker: {
      ...settings.sharedBreaker,
      halfOpenAfterMs: breakerCoolDownMs(env, settings),
    },
  };
}
