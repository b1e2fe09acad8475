/**
 * The eval's offline model: a deterministic script that makes a task's intended calls one by one
 * and decides what to do after a failure only from the text it read. See {@link decideAfterFailure}.
 */
import type { ChatMessage, Model, ModelToolCall } from '../agent/messages.ts';
import type { EvalTask, IntendedCall } from './eval-task.ts';
import { canonicalJson } from './eval-task.ts';

/** What the scripted model does after reading a failure. */
export type ScriptedDecision = { action: 'follow'; toolName: string } | { action: 'fix' } | { action: 'retry' } | { action: 'give_up' };

/** Attempts the scripted model makes of one intended call before it gives up (first call included). */
export const SCRIPTED_MAX_ATTEMPTS = 3;

const SUGGESTED_TOOL = /(?:did you mean|call|use)\s+\\?["'`]([A-Za-z0-9_.-]+)\\?["'`]/gi;
const SAYS_WHAT_TO_SEND = /such as|e\.g\.|example|\bsend\b|\bexpected\b/i;
const MAY_PASS = /try again|temporar|timed? ?out|did not answer in time|rate.?limit|too many requests/i;
const SAYS_DO_NOT_RETRY = /do not (?:call|retry|try)|don't (?:call|retry|try)/i;
const LOOKS_LIKE_ERROR = /\b(?:error|not found|unavailable|try again|too many requests|timed? ?out|timeout|aborted|invalid|mistakes|crashed|failed)\b/i;

/**
 * Whether a tool message reads as a success: a toolrun envelope says so in its `status`; any other
 * text is a success when it is JSON or has none of the words an error text has (error, not found,
 * unavailable, try again, too many requests, timed out, aborted, invalid, mistakes, crashed, failed).
 */
export function readsAsSuccess(text: string): boolean {
  const envelope = /^<tool_result [^>]*status="(success|failed)"/.exec(text);
  if (envelope) return envelope[1] === 'success';
  try {
    JSON.parse(text);
    return true;
  } catch {
    return !LOOKS_LIKE_ERROR.test(text);
  }
}

/**
 * The scripted model's decision after a failed call, from the text alone; the first rule that
 * applies wins:
 * 1. `follow`: the text suggests one offered tool other than the one called (`did you mean "X"`,
 *    `call "X" …`, `use "X"`, the name in quotes, JSON-escaped or not) → call it with the same arguments;
 * 2. `fix`: the call's arguments differ from the intended ones at a key the text names (as a whole
 *    word) and the text says what to send (`such as`, `e.g.`, `example`, `send`, `expected`) →
 *    call again with the intended arguments;
 * 3. `retry`: the text says the failure may pass (try again, temporarily, timed out / timeout, did
 *    not answer in time, rate limit, too many requests — not a bare "unavailable", which the AI
 *    SDK also says of a tool that does not exist) and does not say not to call again → the same
 *    call again;
 * 4. `give_up`: move on to the next intended call.
 */
export function decideAfterFailure(
  text: string,
  context: { calledName: string; sentArgs: Record<string, unknown>; intended: IntendedCall; offeredTools: readonly string[] },
): ScriptedDecision {
  const suggested = new Set<string>();
  for (const match of text.matchAll(SUGGESTED_TOOL)) {
    const name = match[1] as string;
    if (name !== context.calledName && context.offeredTools.includes(name)) suggested.add(name);
  }
  if (suggested.size === 1) return { action: 'follow', toolName: [...suggested][0] as string };
  const wrongKeys = new Set<string>();
  for (const key of new Set([...Object.keys(context.intended.args), ...Object.keys(context.sentArgs)])) {
    if (canonicalJson(context.intended.args[key]) !== canonicalJson(context.sentArgs[key])) wrongKeys.add(key);
  }
  const namesWrongKey = [...wrongKeys].some((key) => new RegExp(`(^|[^A-Za-z0-9_])${key}([^A-Za-z0-9_]|$)`).test(text));
  if (namesWrongKey && SAYS_WHAT_TO_SEND.test(text)) return { action: 'fix' };
  if (MAY_PASS.test(text) && !SAYS_DO_NOT_RETRY.test(text)) return { action: 'retry' };
  return { action: 'give_up' };
}

function parseArgs(args: unknown): Record<string, unknown> {
  if (typeof args === 'string') {
    try {
      const parsed: unknown = JSON.parse(args);
      return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  }
  return typeof args === 'object' && args !== null ? (args as Record<string, unknown>) : {};
}

/** A tool message's `duration_ms` counted at one digit, so the same run gives the same token count. */
const DURATION = /"duration_ms":\d+/g;

function characters(message: ChatMessage): number {
  let count = message.content?.replace(DURATION, '"duration_ms":0').length ?? 0;
  for (const call of message.toolCalls ?? []) count += call.name.length + (typeof call.args === 'string' ? call.args.length : JSON.stringify(call.args).length);
  return count;
}

/** The next step of the current turn: a call to make, or the turn's reply. */
function nextStep(
  task: EvalTask,
  messages: readonly ChatMessage[],
  offeredTools: readonly string[],
): { call: { name: string; args: Record<string, unknown> } } | { reply: string } {
  let lastUser = -1;
  let turnIndex = -1;
  messages.forEach((message, index) => {
    if (message.role === 'user') {
      lastUser = index;
      turnIndex += 1;
    }
  });
  const turn = task.turns[Math.max(0, turnIndex)];
  if (turn === undefined) return { reply: '' };
  let index = 0;
  let attempts = 0;
  let next: { name: string; args: Record<string, unknown> } | undefined = turn.calls[0] && { name: turn.calls[0].name, args: turn.calls[0].args };
  let last: ModelToolCall | undefined;
  const advance = () => {
    index += 1;
    attempts = 0;
    const intended = turn.calls[index];
    next = intended && { name: intended.name, args: intended.args };
  };
  for (const message of messages.slice(lastUser + 1)) {
    if (message.role === 'assistant' && message.toolCalls !== undefined && message.toolCalls.length > 0) {
      last = message.toolCalls[message.toolCalls.length - 1];
      attempts += 1;
    } else if (message.role === 'tool' && last !== undefined && message.toolCallId === last.id) {
      const text = message.content ?? '';
      const intended = turn.calls[index];
      if (intended === undefined || readsAsSuccess(text)) {
        advance();
        continue;
      }
      const sentArgs = parseArgs(last.args);
      const decision =
        attempts >= SCRIPTED_MAX_ATTEMPTS
          ? ({ action: 'give_up' } as const)
          : decideAfterFailure(text, { calledName: last.name, sentArgs, intended, offeredTools });
      if (decision.action === 'follow') next = { name: decision.toolName, args: sentArgs };
      else if (decision.action === 'fix') next = { name: last.name, args: intended.args };
      else if (decision.action === 'retry') next = { name: last.name, args: sentArgs };
      else advance();
    }
  }
  return next === undefined ? { reply: turn.reply } : { call: next };
}

/**
 * A model for one task that makes the task's intended calls in order, one per model call, and
 * answers each turn with its recorded reply once the turn's calls are done or given up. After a
 * failure it decides with {@link decideAfterFailure} (at most {@link SCRIPTED_MAX_ATTEMPTS}
 * attempts per intended call). Its decision depends only on the conversation (it keeps no state),
 * so the same conversation always gets the same answer.
 *
 * @returns a {@link Model}; `usage` is estimated as characters / 4 (rounded up) of the request's
 *   messages (input; an envelope's `duration_ms` counted as one digit, so timing never changes
 *   the count) and of the answer (output).
 */
export function createScriptedModel(task: EvalTask): Model {
  return async (request) => {
    request.signal.throwIfAborted();
    const offered = request.tools.map((tool) => tool.name);
    const step = nextStep(task, request.messages, offered);
    const input = Math.ceil(request.messages.reduce((sum, message) => sum + characters(message), 0) / 4);
    if ('reply' in step) return { text: step.reply, usage: { input, output: Math.ceil(step.reply.length / 4) } };
    const args = JSON.stringify(step.call.args);
    const id = `call_${request.stepIndex}`;
    return { toolCalls: [{ id, name: step.call.name, args }], usage: { input, output: Math.ceil((step.call.name.length + args.length) / 4) } };
  };
}
