import type { ToolRuntime } from '../../core/create-tool-runtime.ts';
import type { ResumableEntry } from '../../ground/dead-letter-entries.ts';
import type { DeadLetterRecord, Stores } from '../../ground/ports/stores.ts';
import { ToolrunError } from '../../ground/toolrun-error.ts';
import type { HostContinuation, HostToolCall } from '../../worker/host-continuation.ts';
import type { HostRunReplayResult } from '../../worker/replay-host-run.ts';
import { replayEntryOfHost } from '../replay-host-entry.ts';
import { OPENAI_AGENTS_HOST } from './openai-agents-dead-letter.ts';

/** What `continueRun` returns: the parts of the SDK's `RunResult` the replay reads. */
export interface OpenAiAgentsContinuation {
  /** The run's final output (`result.finalOutput`): a string, or a structured output (stored as JSON text). */
  finalOutput?: unknown;
  /** One per model call the continued run made (`result.rawResponses`). */
  rawResponses: readonly unknown[];
  /** The items the continued run generated (`result.output`), stored after the conversation. @defaultValue none */
  output?: readonly unknown[];
}

/**
 * How to continue a run of this app in the SDK's own loop: run your `Runner`, agent and options
 * from `items` (the SDK's input items up to the failed call, then the replayed call's
 * `function_call_result`) and return the `RunResult`, e.g.
 * `(items, { runtime }) => new Runner({ ...toOpenAiAgents(runtime).runConfig, modelProvider }).run(new Agent({ name, model, tools: toOpenAiAgents(runtime).tools }), items)`.
 * `context.runtime` is the replay's runtime (the one that ran the failed tool again).
 */
export type ContinueOpenAiAgentsRun = (items: unknown[], context: { runtime: ToolRuntime; runId: string }) => Promise<OpenAiAgentsContinuation>;

interface FunctionCallItem {
  type?: unknown;
  callId?: unknown;
  name?: unknown;
  arguments?: unknown;
}

function textOf(finalOutput: unknown): string | null {
  if (finalOutput === undefined || finalOutput === null) return null;
  if (typeof finalOutput === 'string') return finalOutput;
  try {
    return JSON.stringify(finalOutput) ?? null;
  } catch {
    return null;
  }
}

/**
 * How toolrun's replay continues an OpenAI Agents run (register it once as the `openai-agents`
 * host: `hosts: { 'openai-agents': openAiAgentsContinuation(continueRun) }`): the stored
 * conversation (the SDK's input items) ends with the failed `function_call` item; the replayed
 * call is answered by a `function_call_result` item carrying toolrun's envelope JSON (as the live
 * run's output was); `continueRun` runs the SDK's loop from there, and its `rawResponses` are the
 * model calls of the replay.
 *
 * @throws ToolrunError `INVALID_OPTIONS` without `continueRun`.
 */
export function openAiAgentsContinuation(continueRun: ContinueOpenAiAgentsRun): HostContinuation {
  if (typeof continueRun !== 'function')
    throw new ToolrunError('INVALID_OPTIONS', 'openAiAgentsContinuation needs continueRun (items) => runner.run(agent, items)');
  return {
    failedCall(messages): HostToolCall | undefined {
      const last = messages.at(-1) as FunctionCallItem | undefined;
      if (last?.type !== 'function_call' || typeof last.callId !== 'string' || typeof last.name !== 'string') return undefined;
      return { toolCallId: last.callId, toolName: last.name, args: last.arguments };
    },
    resultMessages(call, result) {
      return [{ type: 'function_call_result', callId: call.toolCallId, name: call.toolName, status: 'completed', output: JSON.stringify(result) }];
    },
    async continueRun({ messages, runtime, runId }) {
      const result = await continueRun(messages, { runtime, runId });
      return {
        text: textOf(result.finalOutput),
        modelCalls: Array.isArray(result.rawResponses) ? result.rawResponses.length : 0,
        ...(Array.isArray(result.output) ? { newMessages: result.output } : {}),
      };
    },
  };
}

/** Options of {@link replayOpenAiAgentsDeadLetter}. */
export interface OpenAiAgentsReplayOptions {
  /** The stores the run dead-lettered into: its journal (the claim, the conversation, the replayed call's outcome, the completion) and the DLQ. */
  stores: Pick<Stores, 'toolDlq' | 'journal'>;
  /** The runtime whose tool failed (its fixed configuration). */
  runtime: ToolRuntime;
  /** How to continue a run of this app in the SDK's loop (see {@link ContinueOpenAiAgentsRun}). */
  continueRun: ContinueOpenAiAgentsRun;
  /** How long the replay's claim on the run (`run:<runId>`) lasts without renewal, in ms. @defaultValue 300_000 */
  claimLeaseMs?: number;
}

/**
 * Replays a tool-DLQ entry that `toOpenAiAgents({ deadLetter })` wrote, in the SDK's own loop, with
 * toolrun's host replay: claims the run (a second replay at once gets `in_progress`), reads the
 * stored input items (`expired` when gone), calls the failed tool again with its recorded
 * arguments under the idempotency ledger (a write already applied is not applied again; still
 * failing → `tool_failed`, the model not called), appends its `function_call_result` and hands the
 * items to `continueRun`, so the model is called for the remaining steps only. A completed run
 * leaves the DLQ (`completed`; the same record again: `already_completed`). The same as
 * `toolrun dlq replay` with the `openai-agents` host registered.
 *
 * @throws ToolrunError `INVALID_OPTIONS` without `stores`, `runtime` or `continueRun`; whatever the stores or `continueRun` throw (the claim is released first, the entry stays).
 */
export async function replayOpenAiAgentsDeadLetter(record: DeadLetterRecord<ResumableEntry>, options: OpenAiAgentsReplayOptions): Promise<HostRunReplayResult> {
  const { stores, runtime, continueRun } = options ?? ({} as OpenAiAgentsReplayOptions);
  if (stores === undefined || runtime === undefined || typeof continueRun !== 'function')
    throw new ToolrunError('INVALID_OPTIONS', 'replayOpenAiAgentsDeadLetter needs stores, runtime and continueRun');
  return replayEntryOfHost(record, { host: OPENAI_AGENTS_HOST, runName: 'an OpenAI Agents run' }, openAiAgentsContinuation(continueRun), options);
}
