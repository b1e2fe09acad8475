import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { createOpenAiChatModel } from '../../adapters/openai/openai-chat-model.ts';
import type { Model } from '../../agent/messages.ts';
import { EVAL_ARMS } from '../../eval/arm-executors.ts';
import { formatEvalMarkdown } from '../../eval/eval-report.ts';
import { renderEvalPng, renderEvalSvg } from '../../eval/eval-plot.ts';
import type { EvalWorkload } from '../../eval/eval-task.ts';
import { runEval } from '../../eval/run-eval.ts';
import { createScriptedModel } from '../../eval/scripted-model.ts';
import { SDK_DEFAULT_ERROR_TEXT_VERSIONS, type HostSdk } from '../../eval/sdk-error-text.ts';
import { usageError } from '../cli-error.ts';
import { printLine } from '../format.ts';
import { integerOption } from '../parse-options.ts';

interface EvalOptions {
  model: string;
  baseUrl?: string;
  apiKeyEnv: string;
  tasks: number;
  seed: number;
  sdk: HostSdk;
  out: string;
  faultsPerTask: number;
  toolTimeoutMs: number;
  retryAfterS: number;
  maxModelCallsPerTurn: number;
  workload?: string;
}

/** The τ-bench airline workload of a repository checkout (the package does not ship `examples/`). */
const DEFAULT_WORKLOAD = fileURLToPath(new URL('../../../examples/airline/eval-workload.ts', import.meta.url));

async function loadWorkload(path: string | undefined): Promise<EvalWorkload> {
  const file = resolve(path ?? DEFAULT_WORKLOAD);
  if (!existsSync(file)) {
    throw usageError(
      path === undefined
        ? `the τ-bench airline workload (${file}) is part of the toolrun repository, not of the package: run toolrun eval from a checkout, or pass --workload MODULE`
        : `no workload module at ${file}`,
      'NOT_FOUND',
    );
  }
  const module = (await import(pathToFileURL(file).href)) as {
    createEvalWorkload?: (options: { log: (line: string) => void }) => EvalWorkload | Promise<EvalWorkload>;
  };
  if (typeof module.createEvalWorkload !== 'function') throw usageError(`${file} does not export createEvalWorkload()`, 'BAD_INPUT');
  try {
    return await module.createEvalWorkload({ log: (line) => process.stderr.write(`${line}\n`) });
  } catch (error) {
    // the workload's own failure (data missing, not downloadable): the user's to fix, said once
    const message = error instanceof Error ? error.message : String(error);
    throw usageError(`cannot load the workload: ${message.replace(/^toolrun: (?:error: )?/, '')}`, 'NOT_FOUND');
  }
}

/** A real endpoint's model, with up to 3 attempts 2 s apart for a call that throws (a rate limit, a dropped connection). */
function endpointModel(options: EvalOptions): Model {
  const apiKey = process.env[options.apiKeyEnv];
  if (apiKey === undefined || apiKey === '')
    throw usageError(
      `--model ${options.model} needs an API key in $${options.apiKeyEnv} (--api-key-env NAME names another variable; any value for an endpoint that takes none)`,
    );
  const model = createOpenAiChatModel({ model: options.model, apiKey, ...(options.baseUrl === undefined ? {} : { baseURL: options.baseUrl }), temperature: 0 });
  return async (request) => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await model(request);
      } catch (error) {
        if (attempt >= 3 || request.signal.aborted) throw error;
        await new Promise((done) => setTimeout(done, 2_000));
      }
    }
  };
}

function sdkOption(value: string): HostSdk {
  if (!(value in SDK_DEFAULT_ERROR_TEXT_VERSIONS)) throw new InvalidArgumentError(`expected one of ${Object.keys(SDK_DEFAULT_ERROR_TEXT_VERSIONS).join(', ')}`);
  return value as HostSdk;
}

/**
 * `toolrun eval`: the recovery A/B of what the model reads after a failed tool call — the host
 * SDK's default error text, toolrun's envelope, toolrun's envelope with retries and breaker — on
 * the same tasks, faults and seed, against an OpenAI-compatible endpoint (`--model NAME`,
 * `--base-url`, key from `$OPENAI_API_KEY` or `--api-key-env`) or offline (`--model scripted`).
 * Writes `results.json`, `results.md`, `plot.svg` and `plot.png` to `--out` and prints the table.
 * Exit code 1 when any arm applied a write twice. See docs/eval.md.
 */
export function addEvalCommand(program: Command): void {
  program
    .command('eval')
    .description("A/B of what the model reads after a failed tool call: the SDK's default error text vs toolrun's envelope (see docs/eval.md)")
    .option('--model <name>', 'the model: "scripted" (offline, deterministic) or a model name of the endpoint', 'scripted')
    .option('--base-url <url>', 'an OpenAI-compatible endpoint (default: the openai package default)')
    .option('--api-key-env <name>', 'environment variable holding the API key', 'OPENAI_API_KEY')
    .option('--tasks <n>', 'τ-bench airline tasks to run, from the first', integerOption(1), 5)
    .option('--seed <n>', 'seed of the fault plan and of the bootstrap', integerOption(0), 42)
    .addOption(
      new Option('--sdk <name>', 'whose default error text the first arm shows')
        .choices(Object.keys(SDK_DEFAULT_ERROR_TEXT_VERSIONS))
        .argParser(sdkOption)
        .default('ai-sdk'),
    )
    .option('--out <dir>', 'output folder', '.toolrun/eval')
    .option('--faults-per-task <n>', 'planned faults per task', integerOption(0), 2)
    .option('--tool-timeout-ms <ms>', 'per-attempt timeout of a tool call (a timeout fault waits this long)', integerOption(1), 1_000)
    .option('--retry-after-s <s>', 'Retry-After of an injected 429, in seconds', integerOption(0), 1)
    .option('--max-model-calls-per-turn <n>', 'model calls allowed per customer turn (the longest recorded turn makes 11 calls)', integerOption(1), 20)
    .option('--workload <module>', 'a module exporting createEvalWorkload({ log }), sync or async (default: the τ-bench airline workload of the checkout)')
    .action(async (options: EvalOptions) => {
      const workload = await loadWorkload(options.workload);
      const scripted = options.model === 'scripted';
      const shared = scripted ? undefined : endpointModel(options);
      const results = await runEval({
        workload,
        modelFor: (task) => shared ?? createScriptedModel(task),
        modelName: options.model,
        seed: options.seed,
        taskCount: options.tasks,
        sdk: options.sdk,
        faultsPerTask: options.faultsPerTask,
        toolTimeoutMs: options.toolTimeoutMs,
        retryAfterSeconds: options.retryAfterS,
        maxModelCallsPerTurn: options.maxModelCallsPerTurn,
        arms: EVAL_ARMS,
        log: (line) => process.stderr.write(`${line}\n`),
      });
      const out = resolve(options.out);
      mkdirSync(out, { recursive: true });
      const markdown = formatEvalMarkdown(results);
      writeFileSync(join(out, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
      writeFileSync(join(out, 'results.md'), markdown);
      writeFileSync(join(out, 'plot.svg'), renderEvalSvg(results));
      writeFileSync(join(out, 'plot.png'), renderEvalPng(results));
      printLine(markdown);
      printLine(`wrote ${join(out, 'results.json')}, results.md, plot.svg, plot.png`);
      const duplicated = results.arms.filter((arm) => arm.duplicatedWrites > 0);
      if (duplicated.length > 0) {
        process.stderr.write(`toolrun: error: writes applied twice in ${duplicated.map((arm) => `${arm.arm} (${arm.duplicatedWrites})`).join(', ')}\n`);
        process.exitCode = 1;
      }
    });
}
