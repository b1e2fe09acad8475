import type { Model } from '../agent/messages.ts';

import type { ToolsInput } from '../core/tool-registry.ts';
import { redactBounded } from '../core/build-failure.ts';
import { createRedactor } from '../core/redact.ts';
import { ToolrunError } from '../ground/toolrun-error.ts';

import type { RunHooks, RunLimits, RunModelOptions, RunRuntimeOptions } from './run-options.ts';
import type { HostRegistry } from './host-continuation.ts';
import type { WorkerOptions } from './worker-options.ts';
import { describeValue, optionProblems, throwIfProblems } from './check-options.ts';
import { keyList } from './option-text.ts';

/**
 * What a config module gives the worker, `toolrun dlq replay|drain` and any caller of
 * `handleMessage` / `createWorker` / `replayToolFailure`: the model, the tools, and the run options
 * those functions take (same names, same meaning, same defaults).
 */
export interface ToolrunConfig
  extends
    Pick<RunLimits, 'maxSteps' | 'deadlineMs' | 'toolRetryBudget' | 'maxDeliveries'>,
    Pick<RunHooks, 'onEvent'>,
    Omit<RunModelOptions, 'modelBreaker'>,
    RunRuntimeOptions,
    Pick<WorkerOptions, 'maxDeadLetterEntries' | 'maxDeadLetterBytes' | 'redeliveryBackoff'> {
  /** The model every run calls (`toolrun/openai`, a recorded model, or any `(request) => response`). */
  model: Model;
  /** The tools: an array of `defineTool` definitions, or a record of definitions and plain functions. */
  tools: ToolsInput;
  /**
   * How long the claim on a run (`run:<runId>` in `stores.claims`) lasts without renewal, in ms; it
   * is renewed every third of it while the run goes on, and a crashed holder frees it when it
   * expires. An integer in [1, 2^31 − 1]. @defaultValue the worker's lease (`--lease-ms`); 300_000 for a replay or drain
   */
  claimLeaseMs?: number;
  /**
   * How `toolrun dlq replay|drain` and the dashboard continue the runs of SDK hosts and durable
   * engines, by host name (the prefix of an entry's `originalMessageId`, `<host>:<runId>`): a
   * continuation of the host's loop (`{ failedCall, resultMessages, continueRun }`, e.g.
   * `aiSdkContinuation(...)` of `toolrun/ai-sdk`) or a replayer of its own (`{ replay }`, a durable
   * engine). An entry of a host not registered here stays in the tool DLQ (`invalid_entry`, with a
   * message naming the host). @defaultValue none
   */
  hosts?: HostRegistry;
}

/** What a config factory receives. */
export interface ToolrunConfigContext {
  /** The environment of the process loading the config (API keys, base URLs...). */
  env: NodeJS.ProcessEnv;
}

/** A config factory: called once when the config is loaded; may be async (to read secrets, open clients). */
export type ToolrunConfigFactory = (context: ToolrunConfigContext) => ToolrunConfig | Promise<ToolrunConfig>;

/** What a config module default-exports: a config object or a factory of one. */
export type ToolrunConfigInput = ToolrunConfig | ToolrunConfigFactory;

const OPTIONAL_KEYS = [
  'toolRetryBudget',
  'maxSteps',
  'deadlineMs',
  'runtimeOptions',
  'sharedBreaker',
  'maxDeadLetterEntries',
  'maxDeadLetterBytes',
  'maxDeliveries',
  'redeliveryBackoff',
  'modelPolicy',
  'modelName',
  'claimLeaseMs',
  'onEvent',
  'hosts',
] as const;
const KNOWN_KEYS: ReadonlySet<string> = new Set(['model', 'tools', ...OPTIONAL_KEYS]);

/**
 * Declares a toolrun config: the default export of a `toolrun.config.{ts,mjs,js}` module, loaded by
 * `toolrun worker --config FILE` and `toolrun dlq replay|drain --config FILE`. Returns `value`
 * unchanged (typed); an object is checked at once, a factory when the CLI
 * calls it.
 *
 * @example
 * ```ts
 * import { defineConfig } from 'toolrun';
 * import { createOpenAiChatModel } from 'toolrun/openai';
 * import { tools } from './tools.ts';
 *
 * export default defineConfig(({ env }) => ({
 *   model: createOpenAiChatModel({ model: 'gpt-4o-mini', apiKey: env.OPENAI_API_KEY }),
 *   tools,
 *   toolRetryBudget: 2,
 * }));
 * ```
 *
 * @throws ToolrunError `INVALID_CONFIG` when `value` is neither a function nor a valid config
 * object (the message names each missing or malformed field).
 */
export function defineConfig<T extends ToolrunConfigInput>(value: T): T {
  if (typeof value !== 'function') assertToolrunConfig(value);
  return value;
}

/**
 * Turns what a config module exported into a checked config: calls a factory with `context` (and
 * awaits it), then validates the result.
 *
 * @param source - where the config came from, for error messages (a file path). @defaultValue `'config'`
 * @throws ToolrunError `INVALID_CONFIG` when the value is not a config, the factory throws or
 * resolves to something that is not one (the factory's error is the `cause`).
 */
export async function resolveToolrunConfig(value: unknown, context: ToolrunConfigContext, source = 'config'): Promise<ToolrunConfig> {
  let config: unknown = value;
  if (typeof value === 'function') {
    try {
      config = await (value as ToolrunConfigFactory)(context);
    } catch (error) {
      if (ToolrunError.is(error) && error.code === 'INVALID_CONFIG') throw error;
      // a factory's error often quotes what it read (an API key, a URL with credentials): redacted like every line
      const reason = redactBounded(createRedactor(), error instanceof Error ? error.message : String(error), 512);
      throw new ToolrunError('INVALID_CONFIG', `${source}: the config factory failed: ${reason}`, { cause: error });
    }
  }
  assertToolrunConfig(config, source);
  return config;
}

/**
 * Throws unless `value` is a {@link ToolrunConfig}: `model` a function, `tools` an array or a record,
 * the numeric options positive (a non-negative integer for `toolRetryBudget`; integers ≥ 1 for
 * `maxSteps`, `maxDeadLetterEntries`, `maxDeliveries`, `maxDeadLetterBytes`; durations in ms at most
 * 2^31 − 1 for `deadlineMs` and `claimLeaseMs`), `redeliveryBackoff` `{ baseMs, maxMs }` with
 * `0 ≤ baseMs ≤ maxMs ≤ 2^31 − 1`, `modelPolicy` an object the model policy accepts, `modelName` a
 * non-empty string, `onEvent` a function, `sharedBreaker` an object or `false`, `runtimeOptions` an
 * object, `hosts` a registry of host continuations or replayers, and no unknown key (a misspelt option would otherwise be ignored silently). Every problem
 * is listed in one message. The tools themselves (schemas, definitions) are not compiled here:
 * `createToolRuntime` checks them (the CLI does so at start-up).
 *
 * @throws ToolrunError `INVALID_CONFIG`
 */
export function assertToolrunConfig(value: unknown, source = 'config'): asserts value is ToolrunConfig {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ToolrunError(
      'INVALID_CONFIG',
      `${source}: expected an object { model, tools, ... } (or a function returning one), received ${describeValue(value)}`,
    );
  }
  const config = value as Record<string, unknown>;
  const problems: string[] = [];
  if (config.model === undefined) problems.push('`model` is missing (a function (request) => Promise<response>)');
  else if (typeof config.model !== 'function') problems.push(`\`model\` must be a function, received ${describeValue(config.model)}`);
  if (config.tools === undefined) problems.push('`tools` is missing (an array of defineTool definitions, or a record of tools)');
  else if (typeof config.tools !== 'object' || config.tools === null)
    problems.push(`\`tools\` must be an array or an object, received ${describeValue(config.tools)}`);
  problems.push(...optionProblems(config, OPTIONAL_KEYS));
  const unknown = Object.keys(config).filter((key) => !KNOWN_KEYS.has(key));
  if (unknown.length > 0) problems.push(`unknown option${unknown.length > 1 ? 's' : ''} ${keyList(unknown)} (known: ${[...KNOWN_KEYS].join(', ')})`);
  throwIfProblems(problems, 'INVALID_CONFIG', source);
}
