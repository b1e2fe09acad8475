import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import type { ResumableEntry } from '../../ground/dead-letter-entries.ts';
import type { DeadLetterRecord, Stores } from '../../ground/ports/stores.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import type { HostContinuation, HostToolCall } from '../../worker/host-continuation.ts';
import type { HostRunReplayResult } from '../../worker/replay-host-run.ts';
import { replayEntryOfHost } from '../replay-host-entry.ts';
import { ANTHROPIC_HOST } from './anthropic-dead-letter.ts';
import { runAnthropicToolRunner, type AnthropicRunnerSettings, type AnthropicToolRunnerClient } from './run-anthropic-tool-runner.ts';

/** Options of {@link anthropicContinuation}: how this app runs the tool runner (registered once). */
export interface AnthropicContinuationOptions {
  client: AnthropicToolRunnerClient;
  /** The runner's params without `messages` (the replay hands the conversation): model, max_tokens, system, extra tools… */
  params: AnthropicRunnerSettings;
  /** The scope of toolrun's per-session breaker in the continued run. @defaultValue toolrun's `'default'` session */
  sessionId?: string;
}

/** The `tool_use` the stored conversation ends with (the failed call, kept alone in its turn). */
function failedToolUse(messages: readonly unknown[]): HostToolCall | undefined {
  const last = messages.at(-1) as { role?: unknown; content?: unknown } | undefined;
  if (last?.role !== 'assistant' || !Array.isArray(last.content)) return undefined;
  const block = (last.content as Array<Record<string, unknown>>).find((candidate) => candidate?.type === 'tool_use');
  if (typeof block?.id !== 'string' || typeof block.name !== 'string') return undefined;
  return { toolCallId: block.id, toolName: block.name, args: block.input };
}

/**
 * Anthropic's continuation for toolrun's host replay: register it once as `hosts.anthropic` (in the
 * config `toolrun dlq replay|drain` and the dashboard load, or in `createToolrun({ hosts })`). A
 * replay then answers the failed `tool_use` with a `tool_result` holding the replayed call's
 * envelope (as the live run would have) and runs the SDK's tool runner from there with your params
 * and the replay's runtime: the model is called for the remaining steps only.
 *
 * @example
 * ```ts
 * hosts: { anthropic: anthropicContinuation({ client, params: { model: 'claude-sonnet-4-5', max_tokens: 1024 } }) }
 * ```
 *
 * @throws ToolrunError `INVALID_OPTIONS` without a client with `beta.messages.toolRunner` or `params.model`.
 */
export function anthropicContinuation(options: AnthropicContinuationOptions): HostContinuation {
  const { client, params, sessionId } = options ?? ({} as AnthropicContinuationOptions);
  if (typeof client?.beta?.messages?.toolRunner !== 'function' || typeof params?.model !== 'string')
    throw new ToolrunError('INVALID_OPTIONS', 'anthropicContinuation needs { client, params: { model, max_tokens, ... } }');
  return {
    failedCall: (messages) => failedToolUse(messages),
    resultMessages: (call, result) => [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.toolCallId, content: JSON.stringify(result) }] }],
    continueRun: async ({ messages, runtime, runId, signal }) => {
      const run = await runAnthropicToolRunner(
        client,
        { ...params, messages },
        {
          tools: runtime,
          runId,
          ...(sessionId !== undefined ? { sessionId } : {}),
          ...(signal !== undefined ? { signal } : {}),
        },
      );
      return { text: run.text, modelCalls: run.modelCalls, newMessages: run.messages.slice(messages.length) };
    },
  };
}

/** Options of {@link replayAnthropicDeadLetter}. */
export interface AnthropicReplayOptions extends AnthropicContinuationOptions {
  /** The stores the run dead-lettered into: its journal (the claim, the conversation, the replayed call's outcome, the completion) and the DLQ. */
  stores: Pick<Stores, 'toolDlq' | 'journal'>;
  /** The runtime whose tool failed (its fixed configuration). */
  runtime: ToolRuntime;
  /** How long the replay's claim on the run lasts without renewal, in ms. @defaultValue 300_000 */
  claimLeaseMs?: number;
}

/**
 * Replays one tool-DLQ entry of an Anthropic tool-runner run (toolrun's host replay, `replayHostRun`,
 * with {@link anthropicContinuation}): claimed (`in_progress` for a second replay at once), the
 * failed call run again under the idempotency ledger, the runner continued from it, the entry
 * removed when the run completes. `replayDeadLetter`, the drain and the CLI do the same with
 * `hosts.anthropic`.
 *
 * @throws ToolrunError `INVALID_OPTIONS` for bad options; whatever the stores or the SDK throw (the entry stays).
 */
export async function replayAnthropicDeadLetter(record: DeadLetterRecord<ResumableEntry>, options: AnthropicReplayOptions): Promise<HostRunReplayResult> {
  const { stores, runtime } = options ?? ({} as AnthropicReplayOptions);
  if (stores === undefined || runtime === undefined) throw new ToolrunError('INVALID_OPTIONS', 'replayAnthropicDeadLetter needs stores and runtime');
  const continuation = anthropicContinuation(options);
  return replayEntryOfHost(record, { host: ANTHROPIC_HOST, runName: 'an Anthropic run' }, continuation, options);
}
