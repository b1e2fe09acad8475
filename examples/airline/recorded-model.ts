/**
 * A recorded model for the airline workload: given the conversation so far, it answers with
 * gpt-4o's recorded next assistant turn, so the whole workload runs offline with no API key.
 *
 * It finds the run by the conversation up to the last customer message (its fingerprint leaves
 * out tool reply contents), and the position by counting the assistant messages after that customer
 * message. It never looks at tool replies: when a live tool call failed (a fault's error envelope
 * instead of the recorded reply), the recorded next turn is returned anyway.
 */
import type { ChatMessage, ChatToolCall } from './chat-message.ts';
import type { AirlineRun } from './trajectories.ts';

/**
 * What the recorded model reads of the agent loop's request (`ModelRequest` of
 * `src/agent/messages.ts`): the conversation and the abort signal. The advertised tools are
 * ignored (the recording already says which tool was called).
 */
export interface RecordedModelRequest {
  messages: readonly ChatMessage[];
  tools?: readonly unknown[];
  signal: AbortSignal;
}

/** What the model answers (the core's `ModelResponse`): text or tool calls, and the tokens spent. */
export interface RecordedModelResponse {
  text?: string;
  toolCalls?: ChatToolCall[];
  usage: { input: number; output: number };
}

/** The recorded model: a plain async function, usable wherever the core's `Model` is. */
export type ChatModel = (request: RecordedModelRequest) => Promise<RecordedModelResponse>;

/** The text answered when a run's recording has no further assistant turn (it ended on a tool reply). */
export const END_OF_RECORDING_TEXT = '[the recorded conversation ends here]';

/** Estimated tokens of a text: characters / 4, rounded up. */
export function estimateTokens(characters: number): number {
  return Math.ceil(characters / 4);
}

function argsText(args: unknown): string {
  return typeof args === 'string' ? args : (JSON.stringify(args) ?? '');
}

function messageCharacters(message: ChatMessage): number {
  let characters = message.content?.length ?? 0;
  for (const call of message.toolCalls ?? []) characters += call.name.length + argsText(call.args).length;
  return characters;
}

/**
 * The fingerprint of a conversation prefix: customer texts, assistant texts and tool calls. System
 * messages and tool reply contents are left out, so a loop that words its system prompt or its
 * tool results differently still finds the run.
 */
function fingerprint(messages: readonly ChatMessage[]): string {
  return JSON.stringify(
    messages
      .filter((message) => message.role === 'user' || message.role === 'assistant')
      .map((message) => [message.role, message.content ?? '', (message.toolCalls ?? []).map((call) => [call.id, call.name, argsText(call.args)])]),
  );
}

function lastUserIndex(messages: readonly ChatMessage[]): number {
  for (let index = messages.length - 1; index >= 0; index -= 1) if (messages[index]?.role === 'user') return index;
  return -1;
}

/** True when the live assistant messages of the run so far are the recorded ones (same tool calls or text). */
function consistentWith(run: AirlineRun, liveAssistantMessages: readonly ChatMessage[]): boolean {
  const recorded = run.assistantTurns.filter((message) => message.role === 'assistant');
  return liveAssistantMessages.every((live, index) => {
    const expected = recorded[index];
    if (expected === undefined) return false;
    const liveIds = (live.toolCalls ?? []).map((call) => call.id).join(',');
    const expectedIds = (expected.toolCalls ?? []).map((call) => call.id).join(',');
    return liveIds === expectedIds && (liveIds !== '' || (live.content ?? '') === (expected.content ?? ''));
  });
}

/** Options of {@link createRecordedModel}. */
export interface RecordedModelOptions {
  /** Called for each answer, e.g. to count model calls per run. */
  onCall?: (run: AirlineRun, position: number) => void;
}

/**
 * A model that replays the recorded assistant turns of `runs`.
 *
 * Several runs can share the same conversation prefix (two trials whose customer opened with the
 * same words); the first one whose recorded turns agree with the assistant turns already in the
 * conversation is used, so a conversation stays on one recording once it has diverged.
 *
 * @returns a model whose answers have the recorded tool-call ids, and `usage` estimated as
 *   characters / 4 of all request messages (input) and of the answer (output).
 *   After the last recorded turn of a run it answers {@link END_OF_RECORDING_TEXT}.
 * @throws Error (a programmer error: the conversation is not one of the recorded runs) when no run
 *   matches the conversation up to its last customer message; and the signal's reason when aborted.
 */
export function createRecordedModel(runs: readonly AirlineRun[], options: RecordedModelOptions = {}): ChatModel {
  const byPrefix = new Map<string, AirlineRun[]>();
  for (const run of runs) {
    const key = fingerprint(run.messagesBefore);
    const list = byPrefix.get(key) ?? [];
    list.push(run);
    byPrefix.set(key, list);
  }
  return async (request) => {
    request.signal.throwIfAborted();
    const userIndex = lastUserIndex(request.messages);
    const candidates = userIndex < 0 ? undefined : byPrefix.get(fingerprint(request.messages.slice(0, userIndex + 1)));
    if (candidates === undefined) {
      throw new Error('recorded model: the conversation does not match any recorded run (compared up to the last user message)');
    }
    const liveAssistant = request.messages.slice(userIndex + 1).filter((message) => message.role === 'assistant');
    const run = candidates.find((candidate) => consistentWith(candidate, liveAssistant)) ?? (candidates[0] as AirlineRun);
    const position = liveAssistant.length;
    options.onCall?.(run, position);
    const recorded = run.assistantTurns.filter((message) => message.role === 'assistant')[position];
    const input = estimateTokens(request.messages.reduce((sum, message) => sum + messageCharacters(message), 0));
    if (recorded === undefined) {
      return { text: END_OF_RECORDING_TEXT, usage: { input, output: estimateTokens(END_OF_RECORDING_TEXT.length) } };
    }
    const usage = { input, output: estimateTokens(messageCharacters(recorded)) };
    if (recorded.toolCalls !== undefined) {
      return {
        ...(recorded.content === null || recorded.content === '' ? {} : { text: recorded.content }),
        toolCalls: recorded.toolCalls.map((call) => ({ ...call })),
        usage,
      };
    }
    return { text: recorded.content ?? '', usage };
  };
}
