import type { HostDeadLetterOptions } from '../../worker/host-run-dead-letter.ts';

/** The host name of Anthropic tool-runner runs: their tool-DLQ entries' `originalMessageId` is `anthropic:<runId>`, and `hosts.anthropic` replays them. */
export const ANTHROPIC_HOST = 'anthropic';

/**
 * Where and how `toAnthropicTools` dead-letters what a run cannot recover in-band: toolrun's host
 * dead-letter options, plus how to read the runner's conversation (a tool of the SDK's tool runner
 * is handed no conversation). `runAnthropicToolRunner` fills both readers in itself.
 */
export interface AnthropicDeadLetterOptions extends HostDeadLetterOptions {
  /**
   * The conversation so far, as the runner holds it while a tool runs (`() => runner.params.messages`:
   * the caller's messages, then each assistant turn and its tool results, ending with the turn
   * holding the call being run). Read only when a call is dead-lettered.
   */
  messages: () => readonly unknown[];
  /** The usage of the run's model calls so far, in tokens (the entry's `tokensSpent`). @defaultValue none: `{ input: 0, output: 0 }` */
  usage?: () => { input: number; output: number };
}

type Block = Record<string, unknown>;
interface MessageLike {
  role?: unknown;
  content?: unknown;
}

/** JSON-only copy (the runner's messages are JSON; anything else is dropped the way the SDK would send it). */
function jsonCopy(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? null)) as unknown;
}

/** Assistant turns before the one holding the failed call (the runner's step of the call, 0-based). */
export function anthropicStepIndex(messages: readonly unknown[]): number {
  const assistants = messages.filter((message) => (message as MessageLike | null)?.role === 'assistant').length;
  return Math.max(0, assistants - 1);
}

/**
 * The conversation a replay resumes: the runner's messages up to the assistant turn of the failed
 * call, that turn keeping its other blocks (text, thinking) but only the failed `tool_use` (a
 * replay answers that one call; the model's other calls of the turn are not in it). When the
 * runner's messages do not hold the call (a hand-made loop), the turn is appended.
 */
export function anthropicConversationUpTo(messages: readonly unknown[], call: { id: string; name: string; input: unknown }): unknown[] {
  const copy = jsonCopy(messages) as unknown[];
  const prior = Array.isArray(copy) ? copy : [];
  for (let index = prior.length - 1; index >= 0; index--) {
    const message = prior[index] as MessageLike | null;
    if (message?.role !== 'assistant' || !Array.isArray(message.content)) continue;
    const blocks = message.content as Block[];
    if (!blocks.some((block) => block?.type === 'tool_use' && block.id === call.id)) continue;
    const kept = blocks.filter((block) => block?.type !== 'tool_use' || block.id === call.id);
    return [...prior.slice(0, index), { ...message, content: kept }];
  }
  return [...prior, { role: 'assistant', content: [{ type: 'tool_use', id: call.id, name: call.name, input: jsonCopy(call.input) }] }];
}
