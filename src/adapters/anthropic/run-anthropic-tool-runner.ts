import { ToolrunError } from '../../ground/toolrun-error.ts';
import type { HostDeadLetterOptions } from '../../worker/host-run-dead-letter.ts';
import { toAnthropicTools, type AnthropicRuntimeSource } from './anthropic-tools.ts';

/** The one method of the `@anthropic-ai/sdk` client this helper calls, `client.beta.messages.toolRunner(params, options)`, typed structurally. */
export interface AnthropicToolRunnerClient {
  beta: { messages: { toolRunner: (...args: never[]) => unknown } };
}

/** The runner's params other than `messages`: `model`, `max_tokens`, `system`, … (`tools` given here are kept before toolrun's). Not streaming. */
export interface AnthropicRunnerSettings {
  model: string;
  max_tokens: number;
  tools?: readonly unknown[];
  [param: string]: unknown;
}

/** The runner's params: {@link AnthropicRunnerSettings} and the conversation to start from. */
export interface AnthropicRunnerParams extends AnthropicRunnerSettings {
  messages: readonly unknown[];
}

/** Options of {@link runAnthropicToolRunner}. */
export interface RunAnthropicToolRunnerOptions {
  /** toolrun's tools: a runtime (`createToolRuntime`) or a toolrun (`createToolrun`). */
  tools: AnthropicRuntimeSource;
  /** The scope of toolrun's per-session breaker. @defaultValue toolrun's `'default'` session */
  sessionId?: string;
  /** The run's id (the tool-DLQ entry's `runId`). @defaultValue a new `run_…` id */
  runId?: string;
  /** Where to dead-letter what the run cannot recover in-band (toolrun's `stores`): see `toAnthropicTools`. @defaultValue none */
  deadLetter?: HostDeadLetterOptions;
  /** Aborts the runner's requests and the tools' calls. */
  signal?: AbortSignal;
}

/** What {@link runAnthropicToolRunner} returns. */
export interface AnthropicRunResult {
  runId: string;
  /** The runner's last message (`BetaMessage`). */
  message: unknown;
  /** The text blocks of the last message, joined; `null` without any. */
  text: string | null;
  /** Messages API calls the runner made. */
  modelCalls: number;
  /** Tokens the run's model calls used (`usage.input_tokens`, `usage.output_tokens` summed). */
  usage: { input: number; output: number };
  /** The whole conversation at the end, as the runner holds it (`runner.params.messages`). */
  messages: unknown[];
}

interface RunnerLike extends AsyncIterable<unknown> {
  readonly params: { messages: readonly unknown[] };
}

function textOf(message: unknown): string | null {
  const content = (message as { content?: unknown } | undefined)?.content;
  if (!Array.isArray(content)) return null;
  const texts = (content as Array<{ type?: unknown; text?: unknown }>).filter((block) => block?.type === 'text' && typeof block.text === 'string');
  return texts.length === 0 ? null : texts.map((block) => block.text as string).join('');
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

/**
 * Runs the Anthropic SDK's tool runner (`client.beta.messages.toolRunner`) to its end with toolrun's
 * tools, the way `toAnthropicTools` is meant to be used with a dead-letter place: the tools read
 * the runner's conversation (`runner.params.messages`) and its usage so far, so a failure the run
 * cannot recover becomes a resumable tool-DLQ entry with the conversation up to the failed call
 * and `tokensSpent`. The model still gets the envelope and the loop goes on as the SDK runs it.
 *
 * @example
 * ```ts
 * const run = await runAnthropicToolRunner(client, { model: 'claude-sonnet-4-5', max_tokens: 1024, messages }, { tools: toolrun, deadLetter: { stores: toolrun.stores } });
 * ```
 *
 * @throws ToolrunError `INVALID_OPTIONS` for `stream: true`, params without `messages`, or bad
 *   options (see `toAnthropicTools`); whatever the SDK throws (an API error the runner does not retry).
 */
export async function runAnthropicToolRunner(
  client: AnthropicToolRunnerClient,
  params: AnthropicRunnerParams,
  options: RunAnthropicToolRunnerOptions,
): Promise<AnthropicRunResult> {
  if (typeof client?.beta?.messages?.toolRunner !== 'function')
    throw new ToolrunError('INVALID_OPTIONS', 'runAnthropicToolRunner needs an Anthropic client (new Anthropic(...))');
  if (!Array.isArray(params?.messages)) throw new ToolrunError('INVALID_OPTIONS', 'runAnthropicToolRunner: params.messages must be an array');
  if (params.stream === true) throw new ToolrunError('INVALID_OPTIONS', 'runAnthropicToolRunner runs the runner without streaming: drop stream: true');
  const runId = options.runId ?? `run_${globalThis.crypto.randomUUID().replaceAll('-', '')}`;
  const usage = { input: 0, output: 0 };
  /** The runner, once made: the tools read its conversation while they run. */
  const bound: { runner?: RunnerLike } = {};
  const tools = toAnthropicTools(options.tools, {
    runId,
    ...(options.sessionId !== undefined ? { sessionId: options.sessionId } : {}),
    ...(options.deadLetter !== undefined
      ? { deadLetter: { ...options.deadLetter, messages: () => bound.runner?.params.messages ?? [], usage: () => ({ ...usage }) } }
      : {}),
  });
  const toolRunner = client.beta.messages.toolRunner as unknown as (body: unknown, requestOptions?: unknown) => RunnerLike;
  const runner = toolRunner.call(
    client.beta.messages,
    { ...params, tools: [...(params.tools ?? []), ...tools] },
    options.signal !== undefined ? { signal: options.signal } : undefined,
  );
  bound.runner = runner;
  let last: unknown;
  let modelCalls = 0;
  for await (const message of runner) {
    modelCalls += 1;
    last = message;
    const seen = (message as { usage?: { input_tokens?: unknown; output_tokens?: unknown } }).usage;
    usage.input += count(seen?.input_tokens);
    usage.output += count(seen?.output_tokens);
  }
  return { runId, message: last, text: textOf(last), modelCalls, usage: { ...usage }, messages: [...runner.params.messages] };
}
