import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import type { ResumableEntry } from '../../ground/dead-letter-entries.ts';
import type { DeadLetterRecord, Stores } from '../../ground/ports/stores.ts';
import type { JsonValue } from '../../ground/ports/run-journal.ts';
import type { ToolSuccess } from '../../ground/tool-result.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import type { HostContinuation, HostToolCall } from '../../worker/host-continuation.ts';
import type { HostRunReplayResult } from '../../worker/replay-host-run.ts';
import { replayEntryOfHost } from '../replay-host-entry.ts';
import { AI_SDK_HOST } from './ai-sdk-dead-letter.ts';

/**
 * What `continueRun` returns: the parts of an AI SDK result the replay reads, as `generateText` and
 * an agent's `generate` give them (values) or as `streamText` and an agent's `stream` do (promises
 * that settle when the stream ends; the SDK runs the stream to its end without a reader).
 */
export interface AiSdkContinuation {
  /** The text of the run's last step (the replay result's `text`). */
  text: string | PromiseLike<string>;
  /** One per model call the continuation made. */
  steps: readonly unknown[] | PromiseLike<readonly unknown[]>;
  /** The messages the continuation added after the tool result (stored with the conversation). */
  response: { messages: readonly unknown[] } | PromiseLike<{ messages: readonly unknown[] }>;
}

/**
 * How to continue a run of this app in the AI SDK's own loop: call `generateText`, `streamText` or
 * your agent (`ToolLoopAgent` / `Experimental_Agent`) with your model, tools and options and these
 * `messages`, and return its result, e.g.
 * `(messages, { runtime }) => generateText({ model, tools: toAiSdk(runtime).tools, messages, stopWhen: stepCountIs(5) })`,
 * `(messages, { runtime }) => streamText({ ... })` (its result as it is) or `(messages) => agent.generate({ messages })`.
 * `context.runtime` is the replay's runtime (the one that ran the failed tool again).
 */
export type AiSdkContinueRun = (messages: unknown[], context: { runtime: ToolRuntime; runId: string }) => AiSdkContinuation | PromiseLike<AiSdkContinuation>;

/** Options of {@link replayAiSdkDeadLetter}: registered once per app, used for every entry. */
export interface AiSdkReplayOptions {
  /** The stores the run dead-lettered into: its journal (the claim, the conversation, the replayed call's outcome, the completion) and the DLQ. */
  stores: Pick<Stores, 'toolDlq' | 'journal'>;
  /** The runtime whose tool failed (its fixed configuration). */
  runtime: ToolRuntime;
  /** How to continue a run of this app in the AI SDK's own loop (see {@link AiSdkContinueRun}). */
  continueRun: AiSdkContinueRun;
  /** How long the replay's claim on the run (`run:<runId>`) lasts without renewal. @defaultValue 300_000 */
  claimLeaseMs?: number;
}

/** How one replay ended, in toolrun's replay vocabulary (`completed`, `tool_failed`, `already_completed`, `in_progress`, `expired`, `invalid_entry`). */
export type AiSdkReplayResult = HostRunReplayResult;

/** The call the stored conversation ends with (the assistant turn `toAiSdk` appended). */
function failedCallOf(messages: readonly unknown[]): HostToolCall | undefined {
  const last = messages.at(-1) as { role?: unknown; content?: unknown } | undefined;
  if (last?.role !== 'assistant' || !Array.isArray(last.content)) return undefined;
  const part = (last.content as Array<Record<string, unknown>>).find((candidate) => candidate.type === 'tool-call');
  if (typeof part?.toolCallId !== 'string' || typeof part.toolName !== 'string') return undefined;
  return { toolCallId: part.toolCallId, toolName: part.toolName, args: part.input };
}

/** The tool message answering `call` with `result`, as the AI SDK writes one. */
function toolMessage(call: HostToolCall, result: ToolSuccess): unknown {
  return {
    role: 'tool',
    content: [
      { type: 'tool-result', toolCallId: call.toolCallId, toolName: call.toolName, output: { type: 'json', value: (result.data ?? null) as JsonValue } },
    ],
  };
}

/**
 * The AI SDK's continuation for toolrun's host replay: register it once as `hosts['ai-sdk']` (in the
 * config `toolrun dlq replay|drain` and the dashboard load, or in `createToolrun({ hosts })`), and
 * every replay of an AI SDK entry continues the run from the failed step with `continueRun`
 * (`generateText`, `streamText` or an agent class: see {@link AiSdkContinueRun}).
 *
 * @example
 * ```ts
 * hosts: { 'ai-sdk': aiSdkContinuation((messages, { runtime }) => generateText({ model, tools: toAiSdk(runtime).tools, messages, stopWhen: stepCountIs(5) })) }
 * ```
 *
 * @throws ToolrunError `INVALID_OPTIONS` when `continueRun` is not a function.
 */
export function aiSdkContinuation(continueRun: AiSdkContinueRun): HostContinuation {
  if (typeof continueRun !== 'function') throw new ToolrunError('INVALID_OPTIONS', 'aiSdkContinuation needs continueRun (messages) => generateText(...)');
  return {
    failedCall: (messages) => failedCallOf(messages),
    resultMessages: (call, result) => [toolMessage(call, result)],
    continueRun: async ({ messages, runtime, runId }) => {
      const continued = await continueRun(messages, { runtime, runId });
      const [text, steps, response] = await Promise.all([continued.text, continued.steps, continued.response]);
      return { text, modelCalls: steps.length, newMessages: response.messages };
    },
  };
}

/**
 * Replays a tool-DLQ entry that `toAiSdk({ deadLetter })` wrote, in the AI SDK's own loop (toolrun's
 * host replay, `replayHostRun`, with {@link aiSdkContinuation}): claims the run (`run:<runId>`,
 * through `stores.journal`; a second replay at once gets `in_progress`), reads the conversation the
 * SDK had handed the tool (`expired` when it is gone), calls the failed tool again with its recorded
 * arguments under the idempotency ledger (a write already applied by an earlier replay is not
 * applied again), appends its result and hands the conversation to `continueRun`, so the model is
 * called for the remaining steps only. A run that completes leaves the DLQ (`completed`; a later
 * replay of the same record: `already_completed`). A tool that fails again leaves the entry where
 * it is (`tool_failed`), the model not called. `replayDeadLetter`, the drain, `toolrun dlq` and the
 * dashboard do the same with `hosts: { 'ai-sdk': aiSdkContinuation(continueRun) }`.
 *
 * @throws ToolrunError `INVALID_OPTIONS` without `stores`, `runtime` or `continueRun`; whatever the stores or `continueRun` throw (the claim is released first).
 */
export async function replayAiSdkDeadLetter(record: DeadLetterRecord<ResumableEntry>, options: AiSdkReplayOptions): Promise<AiSdkReplayResult> {
  const { stores, runtime, continueRun } = options ?? ({} as AiSdkReplayOptions);
  if (stores === undefined || runtime === undefined || typeof continueRun !== 'function')
    throw new ToolrunError('INVALID_OPTIONS', 'replayAiSdkDeadLetter needs stores, runtime and continueRun');
  return replayEntryOfHost(record, { host: AI_SDK_HOST, runName: 'an AI SDK run' }, aiSdkContinuation(continueRun), options);
}
