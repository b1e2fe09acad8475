import type { ToolResult } from '../ground/tool-result.ts';

/** How many call ids one adapter instance remembers (the oldest is forgotten first). */
export const MAX_REMEMBERED_CALL_IDS = 512;

/** Where a delivery comes from, as a host tells it. */
export interface CallDelivery {
  /** The host's tool-call id; without one the call always runs. */
  callId: string | undefined;
  /**
   * What identifies the run within the host (its conversation array, its run context, a thread id):
   * a call with this id still running under the same scope is the same call.
   */
  scope: unknown;
  /**
   * Whether the host's conversation already holds an answer to `callId` (a delivery in a later step
   * of the same run). Without a conversation, a settled call is reused only under the same scope.
   */
  answeredInConversation?: (callId: string) => boolean;
}

interface Remembered {
  result: Promise<ToolResult>;
  scope: unknown;
  settled: boolean;
}

/**
 * Runs each tool-call id of one run once: a host that delivers the same id again (twice in one
 * model turn, or again in a later step) gets the envelope of the first delivery instead of a second
 * execution. A remembered call is reused while it is still running under the same scope, or once
 * settled when the scope is the same or the host's conversation shows it answered; anything else
 * runs. Bounded to {@link MAX_REMEMBERED_CALL_IDS} ids.
 */
export interface RepeatedCalls {
  run(delivery: CallDelivery, execute: () => Promise<ToolResult>): Promise<ToolResult>;
}

/** A fresh {@link RepeatedCalls}: one per adapter instance. */
export function createRepeatedCalls(maxIds: number = MAX_REMEMBERED_CALL_IDS): RepeatedCalls {
  const calls = new Map<string, Remembered>();
  const reusable = (entry: Remembered, delivery: CallDelivery, callId: string): boolean => {
    if (entry.scope === delivery.scope) return true;
    return entry.settled && delivery.answeredInConversation?.(callId) === true;
  };
  return {
    run(delivery, execute) {
      const { callId } = delivery;
      if (callId === undefined || callId.length === 0) return execute();
      const known = calls.get(callId);
      if (known !== undefined && reusable(known, delivery, callId)) return known.result;
      const entry: Remembered = { result: execute(), scope: delivery.scope, settled: false };
      entry.result.then(
        () => {
          entry.settled = true;
        },
        () => {
          // a rejected run is not an envelope: forget it, so a later delivery runs again
          if (calls.get(callId) === entry) calls.delete(callId);
        },
      );
      calls.delete(callId);
      calls.set(callId, entry);
      if (calls.size > maxIds) calls.delete(calls.keys().next().value as string);
      return entry.result;
    },
  };
}
