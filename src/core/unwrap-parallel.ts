/**
 * OpenAI models sometimes answer several tool calls as one call of a tool they were never given,
 * `multi_tool_use.parallel`, whose arguments hold the real calls:
 * `{"tool_uses": [{"recipient_name": "functions.get_weather", "parameters": {"city": "Paris"}}, …]}`.
 * This module recognises the wrapper and takes the real calls out of it.
 */

/** The most inner calls taken out of one wrapper; past it the rest are dropped. */
export const MAX_UNWRAPPED_CALLS = 64;

/**
 * True when `name` is the wrapper, however spelled: `multi_tool_use.parallel`,
 * `multi_tool_use_parallel`, `functions.multi_tool_use.parallel` (case and separators ignored).
 */
export function isParallelWrapperName(name: string): boolean {
  if (typeof name !== 'string' || name.length > 80) return false;
  const compact = name.toLowerCase().replace(/[^a-z0-9]+/g, '');
  return compact === 'multitooluseparallel' || compact === 'functionsmultitooluseparallel';
}

/** A tool call as the agent loop and the adapters hold it: an id, a name and raw arguments. */
export interface UnwrappableToolCall {
  id: string;
  name: string;
  args: unknown;
}

/** Options of {@link unwrapParallelToolCalls}. */
export interface UnwrapParallelOptions {
  /** A registered tool of the wrapper's name is a real tool: its calls are left alone. @defaultValue no tool has it */
  isTool?: (name: string) => boolean;
}

/**
 * Replaces each `multi_tool_use.parallel` call by the calls inside it, in order, each with its own
 * id (`<wrapper id>_<index>`, made unique within the list) so each gets its own result:
 * - the inner name is `recipient_name` with a leading `functions.` removed;
 * - the inner arguments are `parameters` as sent (an object or JSON text; absent → `{}`).
 *
 * A wrapper whose arguments cannot be read (not JSON, no non-empty `tool_uses` array) is left as
 * it is, so the runtime answers it with `TOOL_NOT_FOUND` and advice to make one call per tool; an
 * item without a string `recipient_name` stays a wrapper call of its own, for the same answer.
 * Other calls pass unchanged (the same objects). At most {@link MAX_UNWRAPPED_CALLS} inner calls
 * per wrapper. Pure; never throws.
 */
export function unwrapParallelToolCalls<T extends UnwrappableToolCall>(
  calls: readonly T[],
  options: UnwrapParallelOptions = {},
): Array<T | UnwrappableToolCall> {
  if (!calls.some((call) => isParallelWrapperName(call?.name) && !(options.isTool?.(call.name) ?? false))) return [...calls];
  const taken = new Set(calls.map((call) => call.id));
  const uniqueId = (base: string): string => {
    let id = base;
    while (taken.has(id)) id = `${id}_`;
    taken.add(id);
    return id;
  };
  const result: Array<T | UnwrappableToolCall> = [];
  for (const call of calls) {
    const uses = isParallelWrapperName(call?.name) && !(options.isTool?.(call.name) ?? false) ? toolUsesOf(call.args) : undefined;
    if (uses === undefined) {
      result.push(call);
      continue;
    }
    uses.slice(0, MAX_UNWRAPPED_CALLS).forEach((use, index) => {
      const id = uniqueId(`${call.id}_${index}`);
      if (typeof use !== 'object' || use === null || Array.isArray(use)) {
        result.push({ id, name: call.name, args: { tool_uses: [use] } });
        return;
      }
      const record = use as Record<string, unknown>;
      if (typeof record.recipient_name !== 'string' || record.recipient_name.trim() === '') {
        result.push({ id, name: call.name, args: { tool_uses: [use] } });
        return;
      }
      const name = record.recipient_name.trim().replace(/^functions\./, '');
      result.push({ id, name, args: record.parameters ?? {} });
    });
  }
  return result;
}

/** The wrapper's `tool_uses`, or `undefined` when its arguments do not hold a non-empty list. */
function toolUsesOf(args: unknown): unknown[] | undefined {
  let value = args;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      return undefined;
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const uses = (value as Record<string, unknown>).tool_uses;
  return Array.isArray(uses) && uses.length > 0 ? uses : undefined;
}
