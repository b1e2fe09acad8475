/**
 * Keeps the runs of each conversation in order. A run is the assistant's answer to one customer
 * message, and the customer's next message only exists once that answer was given, so a
 * conversation's next run is released only when its current run has answered:
 * - the run ended (completed, or another terminal status that is not a tool failure): release the next run;
 * - the run went to the tool DLQ (`tool_failed`): the conversation is parked — the customer is
 *   still waiting for that answer — until the drain completes the run ({@link ConversationScheduler.resume});
 * - the last run ended: the conversation is finished.
 * Different conversations are independent and run concurrently.
 */
import type { AirlineRun } from '../trajectories.ts';

/** What became of a conversation after one of its runs ended. */
export type ConversationStep = { state: 'next'; run: AirlineRun } | { state: 'parked'; runId: string } | { state: 'finished' } | { state: 'unknown-run' };

/** Where a conversation stands. */
export interface ConversationProgress {
  conversationKey: string;
  state: 'waiting' | 'running' | 'parked' | 'finished';
  /** Index (in the conversation) of the current, parked or last run. */
  runIndex: number;
  runCount: number;
}

/** The per-conversation ordering of a set of runs. Not safe to use from two processes. */
export interface ConversationScheduler {
  /** The first run of every conversation (marks them running). */
  start(): AirlineRun[];
  /** A run reached a terminal place with `status`: the next run to enqueue, if any. */
  runEnded(runId: string, status: string): ConversationStep;
  /** A parked run was completed by the drain: the conversation's next run, if any. */
  resume(runId: string): ConversationStep;
  /** Run ids of the parked runs (in the tool DLQ, their conversation waiting). */
  parkedRuns(): string[];
  /** True when no conversation has a run waiting or running. */
  isSettled(): boolean;
  progress(): ConversationProgress[];
}

/**
 * Creates a scheduler over `runs` (grouped by `trajectoryKey`, in the given order; the runs of a
 * conversation must be in conversation order, as `loadAirlineRuns` returns them).
 */
export function createConversationScheduler(runs: readonly AirlineRun[]): ConversationScheduler {
  const conversations = new Map<string, { runs: AirlineRun[]; state: ConversationProgress['state']; index: number }>();
  const runPlace = new Map<string, { conversationKey: string; index: number }>();
  for (const run of runs) {
    const conversation = conversations.get(run.trajectoryKey) ?? { runs: [], state: 'waiting' as const, index: 0 };
    runPlace.set(run.runId, { conversationKey: run.trajectoryKey, index: conversation.runs.length });
    conversation.runs.push(run);
    conversations.set(run.trajectoryKey, conversation);
  }

  const advance = (conversationKey: string, index: number): ConversationStep => {
    const conversation = conversations.get(conversationKey)!;
    const next = conversation.runs[index + 1];
    if (next === undefined) {
      conversation.state = 'finished';
      conversation.index = index;
      return { state: 'finished' };
    }
    conversation.state = 'running';
    conversation.index = index + 1;
    return { state: 'next', run: next };
  };

  const placeOf = (runId: string, expected: ConversationProgress['state']) => {
    const place = runPlace.get(runId);
    if (place === undefined) return undefined;
    const conversation = conversations.get(place.conversationKey)!;
    return conversation.state === expected && conversation.index === place.index ? place : undefined;
  };

  return {
    start() {
      const first: AirlineRun[] = [];
      for (const conversation of conversations.values()) {
        if (conversation.state !== 'waiting') continue;
        conversation.state = 'running';
        first.push(conversation.runs[0]!);
      }
      return first;
    },
    runEnded(runId, status) {
      const place = placeOf(runId, 'running');
      if (place === undefined) return { state: 'unknown-run' };
      if (status === 'tool_failed') {
        conversations.get(place.conversationKey)!.state = 'parked';
        return { state: 'parked', runId };
      }
      return advance(place.conversationKey, place.index);
    },
    resume(runId) {
      const place = placeOf(runId, 'parked');
      if (place === undefined) return { state: 'unknown-run' };
      return advance(place.conversationKey, place.index);
    },
    parkedRuns() {
      return [...conversations.values()]
        .filter((conversation) => conversation.state === 'parked')
        .map((conversation) => conversation.runs[conversation.index]!.runId);
    },
    isSettled() {
      return [...conversations.values()].every((conversation) => conversation.state === 'parked' || conversation.state === 'finished');
    },
    progress() {
      return [...conversations.entries()].map(([conversationKey, conversation]) => ({
        conversationKey,
        state: conversation.state,
        runIndex: conversation.index,
        runCount: conversation.runs.length,
      }));
    },
  };
}
