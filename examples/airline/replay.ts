/**
 * Replays the recorded tool calls of the τ-bench airline trajectories against the TypeScript tools
 * and compares each reply with the recorded one (the check behind the match rate in the README).
 */
import { ToolError } from '../../src/core/tool-error.ts';
import { formatAirlineRefusal } from './airline-refusal.ts';
import { createAirlineDatabase, type AirlineDatabase, type AirlineDataEra } from './database.ts';
import { airlineOperations, formatAirlineReply, isAirlineToolName } from './operations.ts';
import { trajectoryKeyOf, type RecordedTrajectory } from './trajectories.ts';

/** The outcome of one replayed call. */
export interface ReplayedCall {
  trajectoryKey: string;
  /** 0-based position of the call in its trajectory. */
  callIndex: number;
  callId: string;
  toolName: string;
  rawArguments: string;
  recordedReply: string;
  replayedReply: string;
  matched: boolean;
}

/** Totals of a replay. */
export interface ReplaySummary {
  calls: ReplayedCall[];
  callsMatched: number;
  callsTotal: number;
  trajectoriesMatched: number;
  trajectoriesTotal: number;
}

/**
 * Runs one tool call against `database` and returns the reply text the original tool would give:
 * the formatted result, or `Error: …` for a refusal. Anything else thrown (a bug, or arguments the
 * schema would have rejected) is returned as `Error: <message>` too, like the original harness did.
 */
export function replayToolCall(database: AirlineDatabase, toolName: string, args: Record<string, unknown>): string {
  if (!isAirlineToolName(toolName)) return `Error: unknown tool ${toolName}`;
  try {
    return formatAirlineReply(airlineOperations[toolName](database, args));
  } catch (error) {
    if (ToolError.is(error)) return formatAirlineRefusal(error);
    return `Error: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** Options of a replay. */
export interface ReplayOptions {
  /** The data version to replay against (see `AirlineDataEra`). @defaultValue 'shipped' */
  era?: AirlineDataEra;
}

/** Replays every recorded call of one trajectory, in order, against a fresh database. */
export function replayTrajectory(trajectory: RecordedTrajectory, options: ReplayOptions = {}): ReplayedCall[] {
  const database = createAirlineDatabase({ era: options.era ?? 'shipped' });
  const trajectoryKey = trajectoryKeyOf(trajectory);
  // Tool replies are paired with calls by position (each assistant call is followed by its reply):
  // some recorded trajectories reuse a tool-call id for two different calls.
  const replies: string[] = trajectory.traj.filter((message) => message.role === 'tool').map((message) => message.content ?? '');
  const calls: ReplayedCall[] = [];
  for (const message of trajectory.traj) {
    for (const call of message.tool_calls ?? []) {
      let args: Record<string, unknown>;
      try {
        args = JSON.parse(call.function.arguments) as Record<string, unknown>;
      } catch {
        args = {};
      }
      const replayedReply = replayToolCall(database, call.function.name, args);
      const recordedReply = replies[calls.length] ?? '';
      calls.push({
        trajectoryKey,
        callIndex: calls.length,
        callId: call.id,
        toolName: call.function.name,
        rawArguments: call.function.arguments,
        recordedReply,
        replayedReply,
        matched: replayedReply === recordedReply,
      });
    }
  }
  return calls;
}

/** Replays every trajectory and counts matches. */
export function replayTrajectories(trajectories: readonly RecordedTrajectory[], options: ReplayOptions = {}): ReplaySummary {
  const calls: ReplayedCall[] = [];
  let trajectoriesMatched = 0;
  for (const trajectory of trajectories) {
    const replayed = replayTrajectory(trajectory, options);
    if (replayed.every((call) => call.matched)) trajectoriesMatched += 1;
    calls.push(...replayed);
  }
  return {
    calls,
    callsMatched: calls.filter((call) => call.matched).length,
    callsTotal: calls.length,
    trajectoriesMatched,
    trajectoriesTotal: trajectories.length,
  };
}
