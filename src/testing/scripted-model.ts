import type { Model, ModelRequest, ModelResponse } from '../agent/messages.ts';

/** One scripted turn: a fixed response, or a function of the request. */
export type ScriptedTurn = ModelResponse | ((request: ModelRequest) => ModelResponse | Promise<ModelResponse>);

/** A scripted model plus what it was asked. */
export interface ScriptedModel extends Model {
  /**
   * Every request received, in order. Each holds the conversation as it was at that call (its own
   * array; the message objects are the caller's, which the agent loop never changes once sent).
   */
  readonly requests: ModelRequest[];
  /** How many times the model was called. */
  readonly calls: number;
}

/**
 * A model for tests: answers each call with the next scripted turn. After the script ends it
 * repeats the last turn (`repeatLast`, the default) or answers with a final text.
 *
 * @example
 * ```ts
 * createScriptedModel([
 *   { toolCalls: [{ id: 'c1', name: 'lookup', args: '{}' }], usage: { input: 10, output: 5 } },
 *   { text: 'done', usage: { input: 12, output: 2 } },
 * ]);
 * ```
 */
export function createScriptedModel(turns: readonly ScriptedTurn[], options: { afterScript?: 'repeatLast' | 'finish' } = {}): ScriptedModel {
  const requests: ModelRequest[] = [];
  const model = (async (request: ModelRequest) => {
    // the messages as they were at this call: the array is copied, its messages are shared (the
    // agent loop appends new messages and never changes one it has sent, so a deep copy per call,
    // which grows with the conversation, buys nothing)
    requests.push({ ...request, messages: [...request.messages] });
    const index = requests.length - 1;
    const turn =
      index < turns.length ? turns[index] : options.afterScript === 'finish' ? { text: 'done', usage: { input: 1, output: 1 } } : turns[turns.length - 1];
    if (turn === undefined) return { text: '', usage: { input: 0, output: 0 } };
    return typeof turn === 'function' ? turn(request) : structuredClone(turn);
  }) as ScriptedModel;
  Object.defineProperty(model, 'requests', { get: () => requests });
  Object.defineProperty(model, 'calls', { get: () => requests.length });
  return model;
}
