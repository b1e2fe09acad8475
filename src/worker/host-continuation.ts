import type { ToolRuntime } from '../core/create-tool-runtime.ts';
import type { ResumableEntry, ToolFailureEntry } from '../ground/dead-letter-entries.ts';
import type { DeadLetterRecord, Stores } from '../ground/ports/stores.ts';
import type { ToolSuccess } from '../ground/tool-result.ts';
import { isHostName } from './host-entry.ts';
import { boundedText } from './option-text.ts';
import type { ReplayStatus } from './replay-status.ts';

/** The failed call a host's stored conversation ends with: what a replay runs again. */
export interface HostToolCall {
  /** The host's tool-call id (the ledger key of the replayed call includes it). */
  toolCallId: string;
  /** The tool's registered name. */
  toolName: string;
  /** The arguments as the model sent them (unredacted, from the stored conversation). */
  args: unknown;
}

/** What {@link HostContinuation.continueRun} is handed. */
export interface HostContinueInput {
  runId: string;
  /** The tool-DLQ entry being replayed. */
  entry: ToolFailureEntry;
  /** The conversation up to the failed call, then the messages answering it with the replayed result: continue from it. */
  messages: unknown[];
  /** The runtime the replay ran the tool with (give the continued loop its tools, e.g. `toAiSdk(runtime).tools`). */
  runtime: ToolRuntime;
  signal?: AbortSignal;
}

/** What {@link HostContinuation.continueRun} returns. */
export interface HostContinueResult {
  /** The run's final answer, when it has one. */
  text: string | null;
  /** Model calls the continued loop made (the remaining steps only). */
  modelCalls: number;
  /** Messages the continued loop added after `messages` (stored with the conversation). @defaultValue none */
  newMessages?: readonly unknown[];
}

/**
 * How to continue a run of one host in the host's own loop, registered once per app (`hosts` of
 * the config or of `createToolrun`). toolrun's replay claims the run, reads its conversation, runs
 * the failed call again under the idempotency ledger, and then uses these to hand the host its
 * conversation plus the result.
 */
export interface HostContinuation {
  /** The failed call the stored conversation ends with; `undefined` when it holds none (the replay ends `invalid_entry`). */
  failedCall(messages: readonly unknown[], entry: ToolFailureEntry): HostToolCall | undefined;
  /** The messages answering `call` with `result`, in the host's format (an AI SDK `tool` message, an Anthropic `user` turn of `tool_result`s). */
  resultMessages(call: HostToolCall, result: ToolSuccess): unknown[];
  /** Runs the remaining steps in the host's own loop (its model, tools and options) from `input.messages`. */
  continueRun(input: HostContinueInput): Promise<HostContinueResult>;
  /**
   * Reads a conversation the host keeps itself (the entry's `conversationRef` is the host's
   * reference); `undefined` when it is gone (the replay ends `expired`). @defaultValue `stores.journal.conversation(entry.conversationRef)`
   */
  readConversation?(entry: ToolFailureEntry): Promise<readonly unknown[] | undefined>;
  /** The runtime whose tool failed. @defaultValue the replay's (built from the config's or the toolrun's tools) */
  runtime?: ToolRuntime;
}

/** What a {@link HostReplayer} is handed. */
export interface HostReplayContext {
  stores: Stores;
  /** The replay's runtime (the config's or the toolrun's tools). */
  runtime: ToolRuntime;
  /** The claim lease the caller asked for, in ms. @defaultValue 300_000 */
  claimLeaseMs: number;
  signal?: AbortSignal;
}

/** What a {@link HostReplayer} reports; `completed` and `already_completed` remove the entry from the DLQ. */
export interface HostReplayOutcome {
  status: ReplayStatus;
  modelCalls?: number;
  text?: string | null;
  /** For `in_progress`: who holds the run. */
  holder?: string;
  /** A human-readable word on the outcome (shown by the CLI and the dashboard). */
  message?: string;
}

/**
 * A host that replays its runs itself, whole (a durable engine: DBOS forks the workflow from the
 * failed step, Restate re-invokes it). It claims and deduplicates as its engine does; toolrun
 * only routes the entry to it and removes the entry when it reports `completed` or
 * `already_completed`.
 */
export interface HostReplayer {
  replay(record: DeadLetterRecord<ResumableEntry>, context: HostReplayContext): Promise<HostReplayOutcome>;
}

/** One host's registration: a continuation of its loop (toolrun runs the replay skeleton), or a replayer of its own. */
export type HostRegistration = HostContinuation | HostReplayer;

/**
 * The hosts an app registered once, by host name (the prefix of an entry's `originalMessageId`,
 * `<host>:<runId>`): `{ 'ai-sdk': aiSdkContinuation(...), anthropic: anthropicContinuation(...), dbos: { replay } }`.
 * `toolrun dlq replay|drain`, the dashboard, `replayDeadLetter` and `drainToolDlq` route a host's
 * entries to it; an entry of a host not registered stays in the DLQ (`invalid_entry`, with `host`
 * and `message`).
 */
export type HostRegistry = Readonly<Record<string, HostRegistration>>;

/** Whether `registration` replays its runs itself (a {@link HostReplayer}). */
export function isHostReplayer(registration: HostRegistration): registration is HostReplayer {
  return typeof (registration as Partial<HostReplayer>).replay === 'function';
}

/** The registration of `host` in `hosts` (own keys only), or `undefined`. */
export function registeredHost(hosts: HostRegistry | undefined, host: string): HostRegistration | undefined {
  if (hosts === undefined || hosts === null || !Object.prototype.hasOwnProperty.call(hosts, host)) return undefined;
  return hosts[host];
}

/** The problems of a `hosts` value (empty when it is a valid {@link HostRegistry}), each naming the host and the field. */
export function hostRegistryProblems(value: unknown): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return ['`hosts` must be an object mapping host names to continuations ({ failedCall, resultMessages, continueRun }) or replayers ({ replay })'];
  const problems: string[] = [];
  for (const [key, registration] of Object.entries(value)) {
    const name = boundedText(key);
    if (!isHostName(key)) problems.push(`\`hosts\`: ${JSON.stringify(name)} is not a host name (a lower-case letter, then [a-z0-9.-])`);
    if (typeof registration !== 'object' || registration === null) {
      problems.push(`\`hosts.${name}\` must be an object`);
      continue;
    }
    if (typeof (registration as Partial<HostReplayer>).replay === 'function') continue;
    const missing = (['failedCall', 'resultMessages', 'continueRun'] as const).filter(
      (key) => typeof (registration as Record<string, unknown>)[key] !== 'function',
    );
    if (missing.length > 0) problems.push(`\`hosts.${name}\` needs ${missing.map((key) => `\`${key}\``).join(', ')} (functions), or \`replay\``);
  }
  return problems;
}
