/**
 * The model the README's examples share: a scripted model from `toolrun/testing` standing in for an
 * LLM, so every example runs offline. It asks to cancel the reservation named in the user's message,
 * first in lower case (the pattern wants upper case), then fixed after reading the envelope; after
 * any other failure it calls again (as real models do); after a success it answers. With a real model: `createOpenAiChatModel({ model: 'gpt-4o-mini', apiKey })` from `toolrun/openai`.
 */
import type { ModelRequest, ModelResponse } from '../../src/index.ts';
import { createScriptedModel } from '../../src/testing/index.ts';

function nextTurn({ messages }: ModelRequest): ModelResponse {
  const usage = { input: 40, output: 8 };
  const last = messages.at(-1);
  const asked = messages.find((message) => message.role === 'user')?.content ?? '';
  const id = /\b[A-Z0-9]{6}\b/.exec(asked)?.[0] ?? 'ZFA04Y';
  if (last?.role !== 'tool') return { toolCalls: [{ id: 'call_1', name: 'cancel_reservation', args: { reservation_id: id.toLowerCase() } }], usage };
  if (last.content?.includes('"status":"success"') === true) return { text: `Reservation ${id} is cancelled.`, usage };
  return { toolCalls: [{ id: `call_${messages.length}`, name: 'cancel_reservation', args: { reservation_id: id } }], usage };
}

/** A model that plays one scripted turn per request, as a function of the conversation so far. */
export const model = createScriptedModel([nextTurn]);
